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

Fitting (Simbody's setQToFit*/setUToFit*, catalogue 1.0.1): ``q_fit_*`` and
``u_fit_*`` take the current q (k, nq_alloc) / u (k, nu) and return them with the
coordinates the target determines replaced; everything else is kept. The
generic implementations here work for any type (user-defined ones included):
q fits take a fixed number of Gauss-Newton steps in u space from the current q
(``fitting.gauss_newton_q_fit``; Simbody uses an L-BFGS optimizer there),
velocity fits are least-squares solutions through H_FM with minimum change of
u. Every built-in type overrides them with Simbody's closed forms.

Singularities: ``singularity_distance(q, params)`` (k,) is a nonnegative
measure that reaches 0 at the type's singular configuration (+inf for types
without one); each module docstring names its singular configuration.
"""

from __future__ import annotations

import abc
import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._mobilizers import fitting, orientation


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

    def calc_X_FM_and_H_FM(self, q, params):
        """(R_FM (k, 3, 3), p_FM (k, 3), H_FM (k, 6, nu)) together; a subclass whose two share work (e.g.
        FunctionBased's functions and their partials) overrides this to evaluate it once."""
        R_FM, p_FM = self.calc_X_FM(q, params)
        return R_FM, p_FM, self.calc_H_FM(q, params)

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

    # -- fitting (generic; built-in types override with Simbody's closed forms) --------

    def q_fit_rotation(self, q, R_FM, params):
        """q (k, nq_alloc) whose R_FM best matches the target R_FM (k, 3, 3); generic Gauss-Newton fit."""
        return fitting.gauss_newton_q_fit(self, q, params, R_target=R_FM)

    def q_fit_translation(self, q, p_FM, params):
        """q whose p_FM best matches the target p_FM (k, 3) (m, in F); generic Gauss-Newton fit."""
        return fitting.gauss_newton_q_fit(self, q, params, p_target=p_FM)

    def q_fit_transform(self, q, R_FM, p_FM, params):
        """q best matching X_FM = (R_FM, p_FM): rotation first, then translation (Simbody's default order)."""
        return self.q_fit_translation(self.q_fit_rotation(q, R_FM, params), p_FM, params)

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        """u (k, nu) whose angular velocity best matches w_FM (k, 3) (rad/s, in F); least squares through H_FM."""
        return fitting.least_squares_u_fit(self.calc_H_FM(q, params)[..., :3, :], u, w_FM)

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        """u whose velocity of Mo best matches v_FM (k, 3) (m/s, in F); least squares through H_FM."""
        return fitting.least_squares_u_fit(self.calc_H_FM(q, params)[..., 3:, :], u, v_FM)

    def u_fit_velocity(self, q, u, w_FM, v_FM, params):
        """u best matching V_FM = (w_FM, v_FM): angular first, then linear (Simbody's default order)."""
        return self.u_fit_linear_velocity(q, self.u_fit_angular_velocity(q, u, w_FM, params), v_FM, params)

    # -- singularities --------------------------------------------------------------

    def singularity_distance(self, q, params):
        """(k,) distance from the type's singular configuration (0 there); +inf for types without one."""
        return jnp.full(q.shape[:-1], jnp.inf, q.dtype)


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

    def singularity_distance(self, q, params):
        """Euler mode: |cos q1| (gimbal lock at q1 = +-pi/2). Quaternion mode: +inf (never singular)."""
        if self.euler:
            return orientation.euler_singularity_distance(q[..., :3])
        return super().singularity_distance(q, params)
