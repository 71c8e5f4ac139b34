"""Cylinder: rotation q0 about the common z axis and translation q1 along it; u = qdot."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from .. import spatial
from .base import Mobilizer, constant_H


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
