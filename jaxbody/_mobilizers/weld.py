"""Weld: no q, no u; X_FM is the identity. Ground is a Weld to nothing. Fits change nothing."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._mobilizers.base import Mobilizer


@dataclasses.dataclass(frozen=True)
class Weld(Mobilizer):
    simbody_name = "Weld"
    nu = 0
    nq_alloc = 0

    def calc_X_FM(self, q, params):
        k = q.shape[0]
        return jnp.broadcast_to(jnp.eye(3, dtype=q.dtype), (k, 3, 3)), jnp.zeros((k, 3), q.dtype)

    def calc_H_FM(self, q, params):
        return jnp.zeros((q.shape[0], 6, 0), q.dtype)

    def q_fit_rotation(self, q, R_FM, params):
        return q

    def q_fit_translation(self, q, p_FM, params):
        return q

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        return u

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        return u
