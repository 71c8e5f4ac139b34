"""Planar: q = (angle about the common z, x along Fx, y along Fy); u = qdot."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from .. import spatial
from .base import Mobilizer, constant_H


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
