"""Gimbal: q = body-fixed X-Y-Z angles of R_FM, u = qdot (angle rates). Singular at q1 = +-pi/2."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from .. import spatial
from . import orientation
from .base import Mobilizer


@dataclasses.dataclass(frozen=True)
class Gimbal(Mobilizer):
    simbody_name = "Gimbal"
    nu = 3
    nq_alloc = 3

    def calc_X_FM(self, q, params):
        return spatial.rotation_from_body_fixed_xyz(q), jnp.zeros(q.shape[:-1] + (3,), q.dtype)

    def calc_H_FM(self, q, params):
        return jnp.concatenate([orientation.euler_xyz_w_columns(q), jnp.zeros(q.shape[:-1] + (3, 3), q.dtype)], -2)
