"""Ellipsoid: orientation as Ball; Mo slides on an ellipsoid fixed in F.

With n = Mz expressed in F (third column of R_FM) and semi-axes (a, b, c)
(parameters, default (0.5, 1/3, 0.25)): ``p_FM = (a n_x, b n_y, c n_z)``. u = w_FM
in F. At q = identity p_FM = (0, 0, c). Mz is the surface normal only for a sphere [Simbody quirk].
Singular only in Euler mode (q1 = +-pi/2). Fits (Simbody's quirks kept):

* rotation as Ball; translation uses only the direction e = p/|p|: ``R = Ry(longitude) Rx(latitude) Rz(spin)``
  with latitude = atan2(-e_y, e_z), longitude = atan2(e_x, e_z) and the current spin (third XYZ angle), so
  even for a sphere Mz is along p only when e_x = 0 or e_y = 0; nothing changes when |p| < eps. In the default
  transform fit (rotation, then translation) the translation fit replaces the fitted rotation.
* u = w_FM; linear velocity: with v, p and the current w expressed in M, ``w_M = (-v_y/p_z, v_x/p_z, w_z)``
  (exact only for a sphere).
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from jaxbody._math import spatial
from jaxbody._mobilizers import fitting, orientation
from jaxbody._mobilizers.ball import Ball
from jaxbody._mobilizers.base import Mobilizer


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

    def q_fit_translation(self, q, p_FM, params):
        if self.euler:
            spin = q[..., 2]
        else:
            spin = spatial.body_fixed_xyz_from_rotation(orientation.rotation(q, False))[..., 2]
        R, valid = fitting.direction_fit_rotation(p_FM, spin)
        return jnp.where(valid[..., None], orientation.fit_rotation(q, R, self.euler), q)

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        R, p = self.calc_X_FM(q, params)
        v_M, r_M, w_now_M = (spatial.mattvec(R, x) for x in (v_FM, p, u))
        w_M = jnp.stack([-v_M[..., 1] / r_M[..., 2], v_M[..., 0] / r_M[..., 2], w_now_M[..., 2]], -1)
        return spatial.matvec(R, w_M)
