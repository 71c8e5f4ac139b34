"""The constraint-type interface: Simbody's error equations, evaluated on all constraints of one type at once.

A constraint type is a small frozen (hashable) dataclass; its configuration
(for example whether rolling is enforced, or a user function) is static. Its
numbers (stations, directions, lengths) are ``params`` array leaves of the
model, one row per constraint, so they can be swept and differentiated.

Every method receives a :class:`ConstrainedKinematics` for the ``k``
constraints of that type and returns ``(k, n)`` arrays:

* ``position_errors`` -> perr (k, mp);
* ``velocity_errors`` -> (pverr, verr) stacked (k, mp + mv);
* ``acceleration_errors`` -> (paerr, vaerr, aerr) stacked (k, mp + mv + ma).

These are Simbody's formulas (catalogue section 2), written in the
constraint's Ancestor frame A. They are affine in the highest derivative, so
the constraint matrices (P, V, A: together G) and the constraint forces
(G^T lambda) follow from them exactly by forward- and reverse-mode
differentiation with respect to udot (see ``jaxbody._constraints.multipliers``).
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any, ClassVar

import jax
import jax.numpy as jnp


@dataclasses.dataclass
class ConstrainedKinematics:
    """Kinematics of the constrained bodies relative to, and expressed in, each constraint's Ancestor A.

    Shapes for k constraints with nb constrained bodies, nq selected q's and nu selected u's:
    R (k, nb, 3, 3) = R_AB; p (k, nb, 3) = p_AB (m); w, v (k, nb, 3) = angular velocity of B in A and
    velocity of Bo in A (rad/s, m/s); alpha, a (k, nb, 3) the matching accelerations; q, qdot, qdotdot
    (k, nq); u, udot (k, nu); t scalar time (s); params (k, n_params). Levels not yet available are None.
    """

    t: Any
    params: Any
    R: Any
    p: Any
    q: Any
    w: Any = None
    v: Any = None
    qdot: Any = None
    u: Any = None
    alpha: Any = None
    a: Any = None
    qdotdot: Any = None
    udot: Any = None

    # -- stations and material points (all vectors in A) -------------------

    def station_offset(self, i, s_B):
        """``R_AB s`` (k, 3): station s (k, 3), given in body i's frame, as a vector in A."""
        return jnp.einsum("kij,kj->ki", self.R[:, i], s_B)

    def station_location(self, i, s_B):
        return self.p[:, i] + self.station_offset(i, s_B)

    def station_velocity(self, i, s_B):
        return self.point_velocity(i, self.station_location(i, s_B))

    def station_acceleration(self, i, s_B):
        return self.point_acceleration(i, self.station_location(i, s_B))

    def point_velocity(self, i, p_A):
        """Velocity in A of body i's material point now at p_A (k, 3)."""
        return self.v[:, i] + jnp.cross(self.w[:, i], p_A - self.p[:, i])

    def point_acceleration(self, i, p_A):
        """Acceleration in A of body i's material point now at p_A (k, 3)."""
        r = p_A - self.p[:, i]
        w = self.w[:, i]
        return self.a[:, i] + jnp.cross(self.alpha[:, i], r) + jnp.cross(w, jnp.cross(w, r))

    def direction(self, i, d_B):
        """A direction fixed in body i (k, 3), expressed in A."""
        return self.station_offset(i, d_B)


@dataclasses.dataclass(frozen=True)
class ConstraintType(abc.ABC):
    """Base class of every constraint type (see module docstring)."""

    simbody_name: ClassVar[str] = ""
    #: Number of constrained bodies (kinematics relative to the Ancestor are gathered for them, in order).
    n_bodies: ClassVar[int] = 0
    #: Number of constrained q's and u's (each given as (mobilized body, index within its q or u)).
    n_q: ClassVar[int] = 0
    n_u: ClassVar[int] = 0
    #: Whether the selected q's mobilizers are constrained mobilizers (False: the q's are only read, as
    #: Simbody's SpeedCoupler coordinates; the constraint applies no force to them).
    q_constrained: ClassVar[bool] = True
    n_params: ClassVar[int] = 0
    mp: ClassVar[int] = 0
    mv: ClassVar[int] = 0
    ma: ClassVar[int] = 0

    @property
    def num_equations(self) -> tuple[int, int, int]:
        """(mp, mv, ma): holonomic, nonholonomic and acceleration-only equation counts."""
        return self.mp, self.mv, self.ma

    def position_errors(self, k: ConstrainedKinematics):
        """perr (k, mp)."""
        return jnp.zeros(k.params.shape[:1] + (0,), k.params.dtype)

    def velocity_errors(self, k: ConstrainedKinematics):
        """(pverr, verr) stacked, (k, mp + mv)."""
        return jnp.zeros(k.params.shape[:1] + (0,), k.params.dtype)

    @abc.abstractmethod
    def acceleration_errors(self, k: ConstrainedKinematics):
        """(paerr, vaerr, aerr) stacked, (k, mp + mv + ma)."""


@dataclasses.dataclass(frozen=True)
class HolonomicByLevel(ConstraintType):
    """A holonomic type whose three levels are one formula with a static ``level`` switch."""

    @abc.abstractmethod
    def errors(self, k: ConstrainedKinematics, level: int):
        """perr (level 0), pverr (1) or paerr (2), each (k, mp)."""

    def position_errors(self, k):
        return self.errors(k, 0)

    def velocity_errors(self, k):
        return self.errors(k, 1)

    def acceleration_errors(self, k):
        return self.errors(k, 2)


def dot(a, b):
    return jnp.sum(a * b, axis=-1)


def safe_unit(p, fallback):
    """``(p / |p|, |p|)`` for p (k, 3); where |p| is below Simbody's TinyReal the unit vector is ``fallback``.

    The norm is evaluated so that neither the value nor its gradient is NaN at p = 0.
    """
    tiny = jnp.finfo(p.dtype).eps ** 1.25  # SimTK::TinyReal
    r2 = dot(p, p)
    singular = r2 < tiny * tiny
    r = jnp.sqrt(jnp.where(singular, 1.0, r2))
    unit = jnp.where(singular[..., None], fallback, p / r[..., None])
    return unit, jnp.where(singular, 0.0, r), singular


_POSITION_INPUTS = ("R", "p", "q", "t")
_VELOCITY_INPUTS = ("w", "v", "qdot", "u")


def time_derivative(fn, k: ConstrainedKinematics, level: int):
    """Exact d/dt of ``fn(k)`` along the motion, by forward-mode differentiation.

    ``level`` 0: fn reads positions (R, p, q, t); their rates are ``[w]x R``, v, qdot, 1.
    ``level`` 1: fn may also read velocities (w, v, qdot, u), whose rates are alpha, a, qdotdot, udot.
    Body kinematics are relative to A and expressed in A, so these are A-frame derivatives.
    """
    names = _POSITION_INPUTS + (_VELOCITY_INPUTS if level >= 1 else ())
    rates = {
        "R": jnp.cross(k.w[..., None, :], jnp.swapaxes(k.R, -1, -2)).swapaxes(-1, -2) if k.w is not None else None,
        "p": k.v, "q": k.qdot, "t": jnp.ones_like(k.t),
        "w": k.alpha, "v": k.a, "qdot": k.qdotdot, "u": k.udot,
    }

    def wrapped(*values):
        return fn(dataclasses.replace(k, **dict(zip(names, values))))

    return jax.jvp(wrapped, tuple(getattr(k, n) for n in names), tuple(rates[n] for n in names))[1]
