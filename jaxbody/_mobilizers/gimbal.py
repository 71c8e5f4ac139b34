"""Gimbal: q = body-fixed X-Y-Z angles of R_FM, u = qdot (angle rates).

Singular at q1 = +-pi/2 (gimbal lock: H_FM columns 0 and 2 become parallel); singularity_distance = |cos q1|.
Fits: q = XYZ angles of R_FM (translation ignored); u = N_P(q) w_FM (divides by cos q1).
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._math import spatial
from jaxbody._mobilizers import orientation
from jaxbody._mobilizers.base import Mobilizer


@dataclasses.dataclass(frozen=True)
class Gimbal(Mobilizer):
    simbody_name = "Gimbal"
    nu = 3
    nq_alloc = 3

    def calc_X_FM(self, q, params):
        return spatial.rotation_from_body_fixed_xyz(q), jnp.zeros(q.shape[:-1] + (3,), q.dtype)

    def calc_H_FM(self, q, params):
        return jnp.concatenate([orientation.euler_xyz_w_columns(q), jnp.zeros(q.shape[:-1] + (3, 3), q.dtype)], -2)

    def q_fit_rotation(self, q, R_FM, params):
        return spatial.body_fixed_xyz_from_rotation(R_FM)

    def q_fit_translation(self, q, p_FM, params):
        return q

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        return orientation.euler_xyz_qdot(q, w_FM)

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        return u

    def singularity_distance(self, q, params):
        return orientation.euler_singularity_distance(q)
