"""Ellipsoid: orientation as Ball; Mo slides on an ellipsoid fixed in F.

With n = Mz expressed in F (third column of R_FM) and semi-axes (a, b, c)
(parameters, default (0.5, 1/3, 0.25)): ``p_FM = (a n_x, b n_y, c n_z)``. u = w_FM
in F. At q = identity p_FM = (0, 0, c).
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from . import orientation
from .ball import Ball
from .base import Mobilizer


@dataclasses.dataclass(frozen=True)
class Ellipsoid(Ball):
    simbody_name = "Ellipsoid"
    n_params = 3

    def default_params(self):
        return np.array([0.5, 1.0 / 3.0, 0.25])

    def calc_X_FM(self, q, params):
        R = orientation.rotation(q, self.euler)
        return R, params * R[..., :, 2]

    def calc_H_FM(self, q, params):
        n = orientation.rotation(q, self.euler)[..., :, 2]
        eye = jnp.eye(3, dtype=q.dtype)
        # Column i: [e_i ; radii * (e_i x n)]
        lin = params[..., :, None] * jnp.cross(eye[None, :, :], n[:, None, :]).swapaxes(-1, -2)
        ang = jnp.broadcast_to(eye, lin.shape)
        return jnp.concatenate([ang, lin], -2)

    # Not constant like Ball's: use the base class's exact derivative along qdot.
    calc_HDot_FM = Mobilizer.calc_HDot_FM
