"""Cylinder: rotation q0 about the common z axis and translation q1 along it; u = qdot.

Never singular. Fits: q0 = third XYZ angle of R_FM, q1 = p_z; u = (w_z, v_z).
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._math import spatial
from jaxbody._mobilizers.base import Mobilizer, constant_H


@dataclasses.dataclass(frozen=True)
class Cylinder(Mobilizer):
    simbody_name = "Cylinder"
    nu = 2
    nq_alloc = 2

    def calc_X_FM(self, q, params):
        zeros = jnp.zeros(q.shape[:-1] + (2,), q.dtype)
        return spatial.rot_z(q[..., 0]), jnp.concatenate([zeros, q[..., 1:2]], -1)

    def calc_H_FM(self, q, params):
        return constant_H([[0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 0, 1]], q.shape[0], q.dtype)

    def calc_HDot_FM(self, q, u, params):
        return jnp.zeros((q.shape[0], 6, 2), q.dtype)

    def q_fit_rotation(self, q, R_FM, params):
        return q.at[..., 0].set(spatial.body_fixed_xyz_from_rotation(R_FM)[..., 2])

    def q_fit_translation(self, q, p_FM, params):
        return q.at[..., 1].set(p_FM[..., 2])

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        return u.at[..., 0].set(w_FM[..., 2])

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        return u.at[..., 1].set(v_FM[..., 2])
