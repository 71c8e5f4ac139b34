"""Screw: rotation q about the common z axis with translation pitch*q along it; u = qdot.

Parameter: pitch (m/rad), an array leaf of the model.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from .. import spatial
from .base import Mobilizer


@dataclasses.dataclass(frozen=True)
class Screw(Mobilizer):
    simbody_name = "Screw"
    nu = 1
    nq_alloc = 1
    n_params = 1

    def calc_X_FM(self, q, params):
        zeros = jnp.zeros(q.shape[:-1] + (2,), q.dtype)
        return spatial.rot_z(q[..., 0]), jnp.concatenate([zeros, params[..., :1] * q[..., :1]], -1)

    def calc_H_FM(self, q, params):
        zero = jnp.zeros_like(q[..., 0])
        one = jnp.ones_like(zero)
        return jnp.stack([zero, zero, one, zero, zero, params[..., 0]], -1)[..., None]

    def calc_HDot_FM(self, q, u, params):
        return jnp.zeros((q.shape[0], 6, 1), q.dtype)
