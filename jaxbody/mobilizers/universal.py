"""Universal (U-joint, Hooke): body-fixed rotations q0 about Fx then q1 about the new y; u = qdot."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from .. import spatial
from .base import Mobilizer


@dataclasses.dataclass(frozen=True)
class Universal(Mobilizer):
    simbody_name = "Universal"
    nu = 2
    nq_alloc = 2

    def calc_X_FM(self, q, params):
        R = spatial.rot_x(q[..., 0]) @ spatial.rot_y(q[..., 1])
        return R, jnp.zeros(q.shape[:-1] + (3,), q.dtype)

    def calc_H_FM(self, q, params):
        # Angular columns: Fx and My expressed in F = (0, cos q0, sin q0).
        c0, s0 = jnp.cos(q[..., 0]), jnp.sin(q[..., 0])
        one, zero = jnp.ones_like(c0), jnp.zeros_like(c0)
        col0 = jnp.stack([one, zero, zero, zero, zero, zero], -1)
        col1 = jnp.stack([zero, c0, s0, zero, zero, zero], -1)
        return jnp.stack([col0, col1], -1)
