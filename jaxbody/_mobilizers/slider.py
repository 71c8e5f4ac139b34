"""Slider (Prismatic): translation q of Mo along Fx (= Mx); u = qdot.

Never singular. Fits: q = p_x (rotation ignored); u = v_x.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._mobilizers.base import Mobilizer, constant_H


@dataclasses.dataclass(frozen=True)
class Slider(Mobilizer):
    simbody_name = "Slider"
    nu = 1
    nq_alloc = 1

    def calc_X_FM(self, q, params):
        R = jnp.broadcast_to(jnp.eye(3, dtype=q.dtype), q.shape[:-1] + (3, 3))
        p = jnp.concatenate([q[..., :1], jnp.zeros(q.shape[:-1] + (2,), q.dtype)], -1)
        return R, p

    def calc_H_FM(self, q, params):
        return constant_H([[0, 0, 0, 1, 0, 0]], q.shape[0], q.dtype)

    def calc_HDot_FM(self, q, u, params):
        return jnp.zeros((q.shape[0], 6, 1), q.dtype)

    def q_fit_rotation(self, q, R_FM, params):
        return q

    def q_fit_translation(self, q, p_FM, params):
        return p_FM[..., 0:1]

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        return u

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        return v_FM[..., 0:1]
