"""Free: six degrees of freedom. u = (w_FM in F, v_FM = d/dt p_FM in F).

Quaternion mode q = (quaternion(4), p_FM(3)); Euler mode q = (XYZ angles(3),
p_FM(3), unused 0), keeping Simbody's 7-slot allocation. Singular only in Euler mode (q1 = +-pi/2).
Fits: transform = translation first, then rotation (as Ball); u = (w_FM, v_FM) copied.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from jaxbody._mobilizers import orientation
from jaxbody._mobilizers.base import OrientationMobilizer, constant_H


@dataclasses.dataclass(frozen=True)
class Free(OrientationMobilizer):
    simbody_name = "Free"
    nu = 6
    nq_alloc = 7

    def _split(self, q):
        """(orientation slots (k, 4), p_FM (k, 3)) from the 7 slots."""
        if self.euler:
            return jnp.concatenate([q[..., :3], q[..., 6:7]], -1), q[..., 3:6]
        return q[..., :4], q[..., 4:7]

    def _join(self, q_rot, p):
        if self.euler:
            return jnp.concatenate([q_rot[..., :3], p, q_rot[..., 3:4]], -1)
        return jnp.concatenate([q_rot, p], -1)

    def calc_X_FM(self, q, params):
        q_rot, p = self._split(q)
        return orientation.rotation(q_rot, self.euler), p

    def calc_H_FM(self, q, params):
        return constant_H(np.eye(6), q.shape[0], q.dtype)

    def calc_HDot_FM(self, q, u, params):
        return jnp.zeros((q.shape[0], 6, 6), q.dtype)

    def multiply_by_n(self, q, u):
        q_rot, _ = self._split(q)
        return self._join(orientation.qdot(q_rot, u[..., :3], self.euler), u[..., 3:6])

    def multiply_by_n_inv(self, q, qdot):
        q_rot, _ = self._split(q)
        qd_rot, v = self._split(qdot)
        return jnp.concatenate([orientation.w_from_qdot(q_rot, qd_rot, self.euler), v], -1)

    def normalize_q(self, q):
        q_rot, p = self._split(q)
        return self._join(orientation.normalize(q_rot, self.euler), p)

    def q_fit_rotation(self, q, R_FM, params):
        q_rot, p = self._split(q)
        return self._join(orientation.fit_rotation(q_rot, R_FM, self.euler), p)

    def q_fit_translation(self, q, p_FM, params):
        q_rot, _ = self._split(q)
        return self._join(q_rot, p_FM)

    def q_fit_transform(self, q, R_FM, p_FM, params):
        return self.q_fit_rotation(self.q_fit_translation(q, p_FM, params), R_FM, params)

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        return u.at[..., :3].set(w_FM)

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        return u.at[..., 3:6].set(v_FM)
