"""Planar: q = (angle about the common z, x along Fx, y along Fy); u = qdot.

Never singular. Fits: transform = translation first (x, y from p_FM, z ignored), then q0 = third XYZ angle of
R_FM; u = (w_z, v_x, v_y).
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._math import spatial
from jaxbody._mobilizers.base import Mobilizer, constant_H


@dataclasses.dataclass(frozen=True)
class Planar(Mobilizer):
    simbody_name = "Planar"
    nu = 3
    nq_alloc = 3

    def calc_X_FM(self, q, params):
        p = jnp.concatenate([q[..., 1:3], jnp.zeros_like(q[..., :1])], -1)
        return spatial.rot_z(q[..., 0]), p

    def calc_H_FM(self, q, params):
        cols = [[0, 0, 1, 0, 0, 0], [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 1, 0]]
        return constant_H(cols, q.shape[0], q.dtype)

    def calc_HDot_FM(self, q, u, params):
        return jnp.zeros((q.shape[0], 6, 3), q.dtype)

    def q_fit_rotation(self, q, R_FM, params):
        return q.at[..., 0].set(spatial.body_fixed_xyz_from_rotation(R_FM)[..., 2])

    def q_fit_translation(self, q, p_FM, params):
        return q.at[..., 1:3].set(p_FM[..., :2])

    def q_fit_transform(self, q, R_FM, p_FM, params):
        return self.q_fit_rotation(self.q_fit_translation(q, p_FM, params), R_FM, params)

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        return u.at[..., 0].set(w_FM[..., 2])

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        return u.at[..., 1:3].set(v_FM[..., :2])
