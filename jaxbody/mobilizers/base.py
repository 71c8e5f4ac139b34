"""The mobilizer interface: per-type kinematics evaluated on a whole batch of bodies at once.

A mobilizer type is a small frozen (hashable) dataclass; its configuration
(for example Euler-angle mode) is part of the static topology. Every method
receives arrays for the ``k`` bodies of that type together:

* ``q`` (k, nq_alloc): the mobilizer's q slots, laid out exactly as Simbody
  allocates them (Euler mode keeps the quaternion-mode slot count and the
  unused last slot stays 0);
* ``u`` (k, nu);
* ``params`` (k, n_params): per-body constants (screw pitch, ellipsoid radii),
  array leaves of the model so they can be differentiated.

Frames: ``X_FM`` gives M in F; ``H_FM`` (k, 6, nu) maps u to the spatial
velocity of M in F, expressed in F, rows (angular xyz, linear xyz) with the
linear part at Mo. HDot_FM and NDot are the exact time derivatives of H_FM
and N, obtained here by forward-mode differentiation along qdot = N u; a type
may override them with closed forms.
"""

from __future__ import annotations

import abc
import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np


@dataclasses.dataclass(frozen=True)
class Mobilizer(abc.ABC):
    """Base class. Subclasses set the class constants and implement calc_X_FM and calc_H_FM."""

    simbody_name: ClassVar[str] = ""
    nu: ClassVar[int] = 0
    nq_alloc: ClassVar[int] = 0
    n_params: ClassVar[int] = 0
    #: True for types whose rotation may be a quaternion (Ball, Free, Ellipsoid, ...).
    has_quaternion_mode: ClassVar[bool] = False

    @property
    def nq_in_use(self) -> int:
        """Number of q slots in use (Simbody's MobilizedBody::getNumQ)."""
        return self.nq_alloc

    def with_euler(self, euler: bool) -> "Mobilizer":
        """This mobilizer in Euler-angle (True) or quaternion (False) mode; itself for types without the choice."""
        return self

    @property
    def uses_quaternion(self) -> bool:
        return False

    @property
    def qdot_is_u(self) -> bool:
        return self.nq_alloc == self.nu

    def default_q(self) -> np.ndarray:
        """Simbody's default q (all zeros; quaternions (1, 0, 0, 0)), shape (nq_alloc,)."""
        return np.zeros(self.nq_alloc)

    def default_params(self) -> np.ndarray:
        return np.zeros(self.n_params)

    # -- kinematics (override in subclasses) --------------------------------

    @abc.abstractmethod
    def calc_X_FM(self, q, params):
        """Returns (R_FM (k, 3, 3), p_FM (k, 3))."""

    @abc.abstractmethod
    def calc_H_FM(self, q, params):
        """Returns H_FM (k, 6, nu) in F."""

    def multiply_by_n(self, q, u):
        """qdot = N(q) u, shape (k, nq_alloc). Default: qdot = u."""
        return u

    def multiply_by_n_inv(self, q, qdot):
        """u = NInv(q) qdot, shape (k, nu). Default: u = qdot."""
        return qdot

    # -- derived quantities -----------------------------------------------

    def calc_HDot_FM(self, q, u, params):
        """Time derivative of H_FM taken in F, (k, 6, nu)."""
        qdot = self.multiply_by_n(q, u)
        return jax.jvp(lambda qq: self.calc_H_FM(qq, params), (q,), (qdot,))[1]

    def multiply_by_n_dot(self, q, u, v):
        """NDot(q, u) v, shape (k, nq_alloc)."""
        if self.qdot_is_u:
            return jnp.zeros_like(v)
        qdot = self.multiply_by_n(q, u)
        return jax.jvp(lambda qq: self.multiply_by_n(qq, v), (q,), (qdot,))[1]

    def calc_qdotdot(self, q, u, udot):
        """qdotdot = N udot + NDot u, shape (k, nq_alloc)."""
        return self.multiply_by_n(q, udot) + self.multiply_by_n_dot(q, u, u)

    def multiply_by_n_transpose(self, q, v):
        """N^T v for v (k, nq_alloc) -> (k, nu) (exact: N is linear in its argument)."""
        _, vjp = jax.vjp(lambda uu: self.multiply_by_n(q, uu), jnp.zeros(q.shape[:-1] + (self.nu,), q.dtype))
        return vjp(v)[0]

    def multiply_by_n_inv_transpose(self, q, v):
        """NInv^T v for v (k, nu) -> (k, nq_alloc)."""
        _, vjp = jax.vjp(lambda qd: self.multiply_by_n_inv(q, qd), jnp.zeros_like(q))
        return vjp(v)[0]

    def multiply_by_n_dot_transpose(self, q, u, v):
        """NDot^T v for v (k, nq_alloc) -> (k, nu)."""
        if self.qdot_is_u:
            return jnp.zeros(q.shape[:-1] + (self.nu,), q.dtype)
        _, vjp = jax.vjp(lambda w: self.multiply_by_n_dot(q, u, w), jnp.zeros(q.shape[:-1] + (self.nu,), q.dtype))
        return vjp(v)[0]

    def normalize_q(self, q):
        """Return q with any quaternion normalized (identity for other types)."""
        return q


def constant_H(columns, k, dtype):
    """Broadcast a constant (6, nu) hinge matrix to (k, 6, nu)."""
    H = jnp.asarray(np.asarray(columns, dtype=float).T, dtype=dtype)
    return jnp.broadcast_to(H, (k,) + H.shape)


@dataclasses.dataclass(frozen=True)
class OrientationMobilizer(Mobilizer):
    """A type whose rotation is a quaternion (default) or body-fixed X-Y-Z angles (``euler=True``).

    Both modes keep the quaternion-mode slot count; in Euler mode the last slot is unused and held at 0.
    """

    has_quaternion_mode: ClassVar[bool] = True
    euler: bool = False

    @property
    def nq_in_use(self):
        return self.nq_alloc - 1 if self.euler else self.nq_alloc

    def with_euler(self, euler: bool) -> "OrientationMobilizer":
        return dataclasses.replace(self, euler=euler)

    @property
    def uses_quaternion(self):
        return not self.euler

    @property
    def qdot_is_u(self):
        return False

    def default_q(self):
        q = np.zeros(self.nq_alloc)
        if not self.euler:
            q[0] = 1.0  # identity quaternion (w, x, y, z) in the first four slots
        return q
