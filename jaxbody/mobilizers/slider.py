"""Slider (Prismatic): translation q of Mo along Fx (= Mx); u = qdot."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from .base import Mobilizer, constant_H


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
