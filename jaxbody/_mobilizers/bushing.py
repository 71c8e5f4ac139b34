"""Bushing: six degrees of freedom as Euler-angle rates and translation rates; u = qdot.

q = (body-fixed XYZ angles of R_FM (rad), p_FM (m, in F)); ``X_FM = (R_XYZ(q0..2), (q3, q4, q5))``
(translate first, then rotate about the new origin; Force::LinearBushing's coordinates). H_FM: Gimbal's
angular columns for u0..2 (linear 0) and [0 ; I3] for u3..5; HDot as Gimbal (catalogue 1.17).
Equivalent to a Translation followed by Pins about x, y', z'' with massless intermediate bodies.

Singular at q1 = +-pi/2 (gimbal lock); singularity_distance = |cos q1|.
Fits: transform = translation first (q3..5 = p_FM), then q0..2 = XYZ angles of R_FM;
u0..2 = N_P(q) w_FM (divides by cos q1), u3..5 = v_FM.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._math import spatial
from jaxbody._mobilizers import orientation
from jaxbody._mobilizers.base import Mobilizer


@dataclasses.dataclass(frozen=True)
class Bushing(Mobilizer):
    simbody_name = "Bushing"
    nu = 6
    nq_alloc = 6

    def calc_X_FM(self, q, params):
        return spatial.rotation_from_body_fixed_xyz(q[..., :3]), q[..., 3:6]

    def _H(self, ang):
        """[ang ; 0 | 0 ; I3] (k, 6, 6) from the angular columns (k, 3, 3)."""
        zeros = jnp.zeros_like(ang)
        eye = jnp.broadcast_to(jnp.eye(3, dtype=ang.dtype), ang.shape)
        return jnp.concatenate([jnp.concatenate([ang, zeros], -1), jnp.concatenate([zeros, eye], -1)], -2)

    def calc_H_FM(self, q, params):
        return self._H(orientation.euler_xyz_w_columns(q[..., :3]))

    def calc_HDot_FM(self, q, u, params):
        ang = orientation.euler_xyz_w_columns_dot(q[..., :3], u[..., :3])
        zeros = jnp.zeros_like(ang)
        return jnp.concatenate([jnp.concatenate([ang, zeros], -1), jnp.concatenate([zeros, zeros], -1)], -2)

    def q_fit_rotation(self, q, R_FM, params):
        return q.at[..., :3].set(spatial.body_fixed_xyz_from_rotation(R_FM))

    def q_fit_translation(self, q, p_FM, params):
        return q.at[..., 3:6].set(p_FM)

    def q_fit_transform(self, q, R_FM, p_FM, params):
        return self.q_fit_rotation(self.q_fit_translation(q, p_FM, params), R_FM, params)

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        return u.at[..., :3].set(orientation.euler_xyz_qdot(q[..., :3], w_FM))

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        return u.at[..., 3:6].set(v_FM)

    def singularity_distance(self, q, params):
        return orientation.euler_singularity_distance(q[..., :3])
