"""Pin (Revolute, Torsion): rotation q about the common z axis of F and M; u = qdot.

Never singular. Fits: q = third body-fixed XYZ angle of R_FM, translation ignored; u = w_z.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._math import spatial
from jaxbody._mobilizers.base import Mobilizer, constant_H


@dataclasses.dataclass(frozen=True)
class Pin(Mobilizer):
    simbody_name = "Pin"
    nu = 1
    nq_alloc = 1

    def calc_X_FM(self, q, params):
        return spatial.rot_z(q[..., 0]), jnp.zeros(q.shape[:-1] + (3,), q.dtype)

    def calc_H_FM(self, q, params):
        return constant_H([[0, 0, 1, 0, 0, 0]], q.shape[0], q.dtype)

    def calc_HDot_FM(self, q, u, params):
        return jnp.zeros((q.shape[0], 6, 1), q.dtype)

    def q_fit_rotation(self, q, R_FM, params):
        return spatial.body_fixed_xyz_from_rotation(R_FM)[..., 2:3]

    def q_fit_translation(self, q, p_FM, params):
        return q

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        return w_FM[..., 2:3]

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        return u
