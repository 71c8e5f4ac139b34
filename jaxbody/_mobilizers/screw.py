"""Screw: rotation q about the common z axis with translation pitch*q along it; u = qdot.

Parameter: pitch (m/rad), an array leaf of the model. Never singular as a joint.
Fits: rotation -> q = third XYZ angle of R_FM; translation -> q = p_z / pitch (it overrides the rotation fit
in the default rotation-then-translation transform fit, as in Simbody); u = w_z, or v_z / pitch. With
pitch = 0 Simbody divides by zero; here the translation/linear-velocity fits then keep q/u unchanged.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._math import spatial
from jaxbody._mobilizers.base import Mobilizer


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

    def q_fit_rotation(self, q, R_FM, params):
        return spatial.body_fixed_xyz_from_rotation(R_FM)[..., 2:3]

    def q_fit_translation(self, q, p_FM, params):
        return _divide_by_pitch(p_FM[..., 2:3], params, q)

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        return w_FM[..., 2:3]

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        return _divide_by_pitch(v_FM[..., 2:3], params, u)


def _divide_by_pitch(x, params, keep):
    """x / pitch (k, 1); ``keep`` where the pitch is 0 (finite values and gradients)."""
    pitch = params[..., :1]
    zero = pitch == 0
    return jnp.where(zero, keep, x / jnp.where(zero, 1.0, pitch))
