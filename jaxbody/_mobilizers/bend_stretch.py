"""BendStretch (PolarCoords): rotation q0 about the common z axis, then translation q1 along the rotated Mx.

``X_FM = (Rz(q0), Rz(q0) (q1, 0, 0))``; u = qdot (rad/s, m/s). H_FM column 0 = [ez ; ez x p_FM], column 1 =
[0 ; Mx_F]; HDot column 0 = [0 ; ez x v_FM], column 1 = [0 ; w_FM x Mx_F] (catalogue 1.5).

Singular at q1 = 0 for a particle (rotating it about z then moves nothing); singularity_distance = |q1|.
Fits (Simbody's): rotation -> q0 = third XYZ angle of R_FM; translation -> q0 = atan2(p_y, p_x),
q1 = |(p_x, p_y)| when that is >= 4 eps, else q1 = 0 and q0 kept; u0 = w_z; linear velocity -> u1 = v . Mx and,
when |q1| >= SignificantReal, u0 = (v . My) / q1 (else u0 kept).
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._math import spatial
from jaxbody._math.linalg import SIGNIFICANT_REAL
from jaxbody._mobilizers.base import Mobilizer


@dataclasses.dataclass(frozen=True)
class BendStretch(Mobilizer):
    simbody_name = "BendStretch"
    nu = 2
    nq_alloc = 2

    def calc_X_FM(self, q, params):
        R = spatial.rot_z(q[..., 0])
        return R, q[..., 1:2] * R[..., :, 0]

    def calc_H_FM(self, q, params):
        R, p = self.calc_X_FM(q, params)
        zero = jnp.zeros_like(p)
        ez = zero.at[..., 2].set(1.0)
        col0 = jnp.concatenate([ez, jnp.cross(ez, p)], -1)
        col1 = jnp.concatenate([zero, R[..., :, 0]], -1)
        return jnp.stack([col0, col1], -1)

    def calc_HDot_FM(self, q, u, params):
        H = self.calc_H_FM(q, params)
        V = jnp.einsum("kij,kj->ki", H, u)
        w, v = V[..., :3], V[..., 3:]
        zero = jnp.zeros_like(v)
        ez = zero.at[..., 2].set(1.0)
        col0 = jnp.concatenate([zero, jnp.cross(ez, v)], -1)
        col1 = jnp.concatenate([zero, jnp.cross(w, H[..., 3:, 1])], -1)
        return jnp.stack([col0, col1], -1)

    def q_fit_rotation(self, q, R_FM, params):
        return q.at[..., 0].set(spatial.body_fixed_xyz_from_rotation(R_FM)[..., 2])

    def q_fit_translation(self, q, p_FM, params):
        d = spatial.safe_norm(p_FM[..., :2])
        ok = d >= 4 * jnp.finfo(q.dtype).eps
        angle = jnp.arctan2(jnp.where(ok, p_FM[..., 1], 0.0), jnp.where(ok, p_FM[..., 0], 1.0))
        return jnp.stack([jnp.where(ok, angle, q[..., 0]), jnp.where(ok, d, 0.0)], -1)

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        return u.at[..., 0].set(w_FM[..., 2])

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        v_M = spatial.mattvec(spatial.rot_z(q[..., 0]), v_FM)
        x = q[..., 1]
        ok = jnp.abs(x) >= SIGNIFICANT_REAL
        u0 = jnp.where(ok, v_M[..., 1] / jnp.where(ok, x, 1.0), u[..., 0])
        return jnp.stack([u0, v_M[..., 0]], -1)

    def singularity_distance(self, q, params):
        return jnp.abs(q[..., 1])
