"""CantileverFreeBeam: the tip frame M of a cantilever beam of length L (a parameter, m) clamped at F.

q = body-fixed XYZ angles of R_FM (rad), u = qdot. ``R_FM = R_XYZ(q)``,
``p_FM = ((2/3) L q1, -(2/3) L q0, L - (4/15) L (q0^2 + q1^2))`` (small-deflection beam shape). H_FM angular
= Gimbal's columns; linear columns (0, -2L/3, -8L q0/15), (2L/3, 0, -8L q1/15), 0. HDot: Gimbal's angular
derivative; linear (0, 0, -8L u0/15), (0, 0, -8L u1/15), 0 (catalogue 1.18). Default L = 0.5 (Simbody's).

Singular at q1 = +-pi/2 (gimbal lock); singularity_distance = |cos q1|.
Fits (Simbody's, quirks kept): rotation -> q = XYZ angles of R_FM; translation -> direction only, as
Ellipsoid: ``R = Ry(longitude) Rx(latitude) Rz(q2)`` from e = p/|p| and q = its XYZ angles (nothing changes
when |p| < eps); in the default transform fit (rotation, then translation) the translation fit replaces the
fitted rotation. u = N_P(q) w_FM; linear velocity -> (u0, u1) = least-squares solution of the 3x2 linear
system of H_FM's first two columns, u2 kept.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from jaxbody._math import spatial
from jaxbody._math.linalg import small_spd_solve
from jaxbody._mobilizers import fitting, orientation
from jaxbody._mobilizers.base import Mobilizer

DEFLECTION = 2.0 / 3.0  # times L
DISPLACEMENT = 4.0 / 15.0  # times L


@dataclasses.dataclass(frozen=True)
class CantileverFreeBeam(Mobilizer):
    simbody_name = "CantileverFreeBeam"
    nu = 3
    nq_alloc = 3
    n_params = 1

    def default_params(self):
        return np.array([0.5])

    def calc_X_FM(self, q, params):
        L = params[..., 0]
        q0, q1 = q[..., 0], q[..., 1]
        p = jnp.stack([DEFLECTION * L * q1, -DEFLECTION * L * q0, L - DISPLACEMENT * L * (q0 * q0 + q1 * q1)], -1)
        return spatial.rotation_from_body_fixed_xyz(q), p

    def _linear_columns(self, q, params):
        """(k, 3, 2): the linear rows of H_FM's first two columns."""
        L = params[..., 0]
        zero = jnp.zeros_like(L)
        col0 = jnp.stack([zero, -DEFLECTION * L, -2 * DISPLACEMENT * L * q[..., 0]], -1)
        col1 = jnp.stack([DEFLECTION * L, zero, -2 * DISPLACEMENT * L * q[..., 1]], -1)
        return jnp.stack([col0, col1], -1)

    def calc_H_FM(self, q, params):
        lin = self._linear_columns(q, params)
        lin = jnp.concatenate([lin, jnp.zeros_like(lin[..., :1])], -1)
        return jnp.concatenate([orientation.euler_xyz_w_columns(q), lin], -2)

    def calc_HDot_FM(self, q, u, params):
        L = params[..., 0]
        zero = jnp.zeros_like(L)
        d = -2 * DISPLACEMENT * L
        lin = jnp.stack(
            [jnp.stack([zero, zero, d * u[..., 0]], -1), jnp.stack([zero, zero, d * u[..., 1]], -1), jnp.stack([zero] * 3, -1)],
            -1,
        )
        return jnp.concatenate([orientation.euler_xyz_w_columns_dot(q, u), lin], -2)

    def q_fit_rotation(self, q, R_FM, params):
        return spatial.body_fixed_xyz_from_rotation(R_FM)

    def q_fit_translation(self, q, p_FM, params):
        R, valid = fitting.direction_fit_rotation(p_FM, q[..., 2])
        return jnp.where(valid[..., None], spatial.body_fixed_xyz_from_rotation(R), q)

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        return orientation.euler_xyz_qdot(q, w_FM)

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        A = self._linear_columns(q, params)
        AtA = jnp.einsum("kmi,kmj->kij", A, A)
        u01 = small_spd_solve(AtA, jnp.einsum("kmi,km->ki", A, v_FM))
        return u.at[..., :2].set(u01)

    def singularity_distance(self, q, params):
        return orientation.euler_singularity_distance(q)
