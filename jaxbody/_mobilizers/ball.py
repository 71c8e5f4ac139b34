"""Ball (Orientation, Spherical): free rotation, u = w_FM expressed in F.

Quaternion mode: q = (w, x, y, z) of R_FM (4 slots). Euler mode: q = body-fixed
X-Y-Z angles in the first 3 of the 4 slots, the 4th held at 0 (Simbody's
allocation); singular at q1 = +-pi/2 in Euler mode only (singularity_distance |cos q1|, else +inf).
Fits: q = canonical quaternion (w >= 0) or XYZ angles of R_FM (translation ignored); u = w_FM.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from jaxbody._mobilizers import orientation
from jaxbody._mobilizers.base import OrientationMobilizer, constant_H


@dataclasses.dataclass(frozen=True)
class Ball(OrientationMobilizer):
    simbody_name = "Ball"
    nu = 3
    nq_alloc = 4

    def calc_X_FM(self, q, params):
        return orientation.rotation(q, self.euler), jnp.zeros(q.shape[:-1] + (3,), q.dtype)

    def calc_H_FM(self, q, params):
        return constant_H(np.eye(6)[:3], q.shape[0], q.dtype)

    def calc_HDot_FM(self, q, u, params):
        return jnp.zeros((q.shape[0], 6, 3), q.dtype)

    def multiply_by_n(self, q, u):
        return orientation.qdot(q, u, self.euler)

    def multiply_by_n_inv(self, q, qdot):
        return orientation.w_from_qdot(q, qdot, self.euler)

    def normalize_q(self, q):
        return orientation.normalize(q, self.euler)

    def q_fit_rotation(self, q, R_FM, params):
        return orientation.fit_rotation(q, R_FM, self.euler)

    def q_fit_translation(self, q, p_FM, params):
        return q

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        return w_FM

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        return u
