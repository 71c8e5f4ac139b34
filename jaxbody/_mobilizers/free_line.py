"""FreeLine: LineOrientation plus free translation; u = (w_x, w_y of w_FM in M ; v_FM in F).

q as Free: quaternion(4) + p_FM(3), or in Euler mode XYZ angles(3) + p_FM(3) + unused 0 (7 slots).
``X_FM = (R_FM, p_FM)``; H_FM = [Mx_F;0 | My_F;0 | 0;ex | 0;ey | 0;ez]; HDot rotational columns as
LineOrientation, translational zero (catalogue 1.13).

Singular only in Euler mode, at q1 = +-pi/2; singularity_distance |cos q1|, else +inf.
Fits: transform = translation first (p_FM copied), then rotation (as Ball); u0, u1 as LineOrientation,
u2..4 = v_FM.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._mobilizers import orientation
from jaxbody._mobilizers.free import Free
from jaxbody._mobilizers.line_orientation import (
    line_fit_u,
    line_hinge_angular,
    line_hinge_angular_dot,
    line_qdot,
    line_u,
)


@dataclasses.dataclass(frozen=True)
class FreeLine(Free):
    simbody_name = "FreeLine"
    nu = 5

    def _H(self, ang):
        """[ang ; 0 | 0 ; I3] (k, 6, 5) from the angular columns (k, 3, 2)."""
        k = ang.shape[:-2]
        zeros = jnp.zeros(k + (3, 3), ang.dtype)
        eye = jnp.broadcast_to(jnp.eye(3, dtype=ang.dtype), k + (3, 3))
        top = jnp.concatenate([ang, zeros], -1)
        bottom = jnp.concatenate([jnp.zeros_like(ang), eye], -1)
        return jnp.concatenate([top, bottom], -2)

    def calc_H_FM(self, q, params):
        q_rot, _ = self._split(q)
        return self._H(line_hinge_angular(orientation.rotation(q_rot, self.euler)))

    def calc_HDot_FM(self, q, u, params):
        q_rot, _ = self._split(q)
        ang = line_hinge_angular_dot(orientation.rotation(q_rot, self.euler), u[..., :2])
        return jnp.concatenate([jnp.concatenate([ang, jnp.zeros((q.shape[0], 3, 3), q.dtype)], -1),
                                jnp.zeros((q.shape[0], 3, 5), q.dtype)], -2)

    def multiply_by_n(self, q, u):
        q_rot, _ = self._split(q)
        return self._join(line_qdot(q_rot, u[..., :2], self.euler), u[..., 2:5])

    def multiply_by_n_inv(self, q, qdot):
        q_rot, _ = self._split(q)
        qd_rot, v = self._split(qdot)
        return jnp.concatenate([line_u(q_rot, qd_rot, self.euler), v], -1)

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        q_rot, _ = self._split(q)
        return u.at[..., :2].set(line_fit_u(q_rot, w_FM, self.euler))

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        return u.at[..., 2:5].set(v_FM)
