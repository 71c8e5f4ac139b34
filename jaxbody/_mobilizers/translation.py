"""Translation (Cartesian): q = p_FM in F, u = v_FM in F; no rotation.

Never singular. Fits: q = p_FM (rotation ignored); u = v_FM.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._mobilizers.base import Mobilizer, constant_H


@dataclasses.dataclass(frozen=True)
class Translation(Mobilizer):
    simbody_name = "Translation"
    nu = 3
    nq_alloc = 3

    def calc_X_FM(self, q, params):
        return jnp.broadcast_to(jnp.eye(3, dtype=q.dtype), q.shape[:-1] + (3, 3)), q

    def calc_H_FM(self, q, params):
        cols = [[0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1]]
        return constant_H(cols, q.shape[0], q.dtype)

    def calc_HDot_FM(self, q, u, params):
        return jnp.zeros((q.shape[0], 6, 3), q.dtype)

    def q_fit_rotation(self, q, R_FM, params):
        return q

    def q_fit_translation(self, q, p_FM, params):
        return p_FM

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        return u

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        return v_FM
