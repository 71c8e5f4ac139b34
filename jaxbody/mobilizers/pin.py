"""Pin (Revolute, Torsion): rotation q about the common z axis of F and M; u = qdot."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from .. import spatial
from .base import Mobilizer, constant_H


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
