"""Universal (U-joint, Hooke): body-fixed rotations q0 about Fx then q1 about the new y; u = qdot.

H_FM never loses rank (singularity_distance is +inf); Simbody warns of poor behaviour near q1 = +-pi/2.
Fits: q = two-angle body-fixed X-Y decomposition of R_FM (translation ignored); u0 = w_x (in F),
u1 = y component in M of (0, w_y, w_z).
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._math import spatial
from jaxbody._mobilizers import fitting
from jaxbody._mobilizers.base import Mobilizer


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

    def q_fit_rotation(self, q, R_FM, params):
        return fitting.two_axis_body_fixed_angles(R_FM, 0, 1)

    def q_fit_translation(self, q, p_FM, params):
        return q

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        R, _ = self.calc_X_FM(q, params)
        wyz_M = spatial.mattvec(R, w_FM.at[..., 0].set(0.0))
        return jnp.stack([w_FM[..., 0], wyz_M[..., 1]], -1)

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        return u
