"""SphericalCoords: azimuth about Fz, then zenith about the new y, then a stretch along Mz (or Mx).

Static configuration (dataclass fields, part of the topology): ``negate_azimuth``, ``negate_zenith``,
``translation_axis`` (0 = Mx or 2 = Mz, the default; My is refused) and ``negate_translation``, giving signs
sAz, sZe, sT = -1 when negated. Parameters (array leaves, differentiable): offsets (az0, ze0) in rad.

``az = sAz q0 + az0``, ``ze = sZe q1 + ze0``, ``r = sT q2``; ``R_FM = Rz(az) Ry(ze)``, ``p_FM = r Mt_F``
(Mt_F = column ``translation_axis`` of R_FM). u = qdot. H_FM columns: [sAz ez ; sAz ez x p],
[sZe My_F ; sZe My_F x p], [0 ; sT Mt_F]; HDot as catalogue 1.7.

Singular (for particle-like bodies) at r = 0 or ze = n pi; singularity_distance = min(|r|, |sin ze|).
Fits (Simbody's, quirks kept): angles from the two-axis body-fixed Z-Y decomposition of R_FM,
``q0 = sAz (angle0 - az0)``, ``q1 = sZe (angle1 - ze0)``; ``q2 = sT p_FM . row_t(R_FM)`` with R_FM from the
current q; ``u0 = w_z``, ``u1 = (R_FM^T (w_x, w_y, 0))_y``, ``u2 = v_FM . row_t(R_FM)``. The translation fits
dot with a *row* of R_FM (not the column Mt_F) and the velocity fits apply no sign factors [Simbody quirk],
so they reproduce a target exactly only where row and column agree (e.g. ze = 0 with the z axis) and with
unnegated speeds.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._math import spatial
from jaxbody._mobilizers import fitting
from jaxbody._mobilizers.base import Mobilizer
from jaxbody.errors import InvalidArgument


@dataclasses.dataclass(frozen=True)
class SphericalCoords(Mobilizer):
    simbody_name = "SphericalCoords"
    nu = 3
    nq_alloc = 3
    n_params = 2

    negate_azimuth: bool = False
    negate_zenith: bool = False
    translation_axis: int = 2
    negate_translation: bool = False

    def __post_init__(self):
        if self.translation_axis not in (0, 2):
            raise InvalidArgument(
                f"SphericalCoords: the translation axis must be Mx (0) or Mz (2), got {self.translation_axis!r}"
            )

    @property
    def signs(self):
        """(sAz, sZe, sT), each +-1."""
        return tuple(-1.0 if neg else 1.0 for neg in (self.negate_azimuth, self.negate_zenith, self.negate_translation))

    def _angles(self, q, params):
        s_az, s_ze, _ = self.signs
        return s_az * q[..., 0] + params[..., 0], s_ze * q[..., 1] + params[..., 1]

    def calc_X_FM(self, q, params):
        az, ze = self._angles(q, params)
        R = spatial.matmul(spatial.rot_z(az), spatial.rot_y(ze))
        return R, (self.signs[2] * q[..., 2:3]) * R[..., :, self.translation_axis]

    def _signed_axes(self, R):
        """(sAz ez, sZe My_F, sT Mt_F), each (k, 3)."""
        s_az, s_ze, s_t = self.signs
        ez = jnp.zeros_like(R[..., 0]).at[..., 2].set(s_az)
        return ez, s_ze * R[..., :, 1], s_t * R[..., :, self.translation_axis]

    def calc_H_FM(self, q, params):
        R, p = self.calc_X_FM(q, params)
        sFz, sMy, sMt = self._signed_axes(R)
        zero = jnp.zeros_like(p)
        cols = [
            jnp.concatenate([sFz, jnp.cross(sFz, p)], -1),
            jnp.concatenate([sMy, jnp.cross(sMy, p)], -1),
            jnp.concatenate([zero, sMt], -1),
        ]
        return jnp.stack(cols, -1)

    def calc_HDot_FM(self, q, u, params):
        R, p = self.calc_X_FM(q, params)
        sFz, sMy, sMt = self._signed_axes(R)
        V = jnp.einsum("kij,kj->ki", self.calc_H_FM(q, params), u)
        w, v = V[..., :3], V[..., 3:]
        zero = jnp.zeros_like(p)
        w_x_sMy = jnp.cross(w, sMy)
        cols = [
            jnp.concatenate([zero, jnp.cross(sFz, v)], -1),
            jnp.concatenate([w_x_sMy, jnp.cross(w_x_sMy, p) + jnp.cross(sMy, v)], -1),
            jnp.concatenate([zero, jnp.cross(w, sMt)], -1),
        ]
        return jnp.stack(cols, -1)

    def q_fit_rotation(self, q, R_FM, params):
        s_az, s_ze, _ = self.signs
        angles = fitting.two_axis_body_fixed_angles(R_FM, 2, 1)
        q0 = s_az * (angles[..., 0] - params[..., 0])
        q1 = s_ze * (angles[..., 1] - params[..., 1])
        return jnp.stack([q0, q1, q[..., 2]], -1)

    def q_fit_translation(self, q, p_FM, params):
        R, _ = self.calc_X_FM(q, params)
        return q.at[..., 2].set(self.signs[2] * jnp.sum(p_FM * R[..., self.translation_axis, :], -1))

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        R, _ = self.calc_X_FM(q, params)
        wxy_M = spatial.mattvec(R, w_FM.at[..., 2].set(0.0))
        return u.at[..., 0].set(w_FM[..., 2]).at[..., 1].set(wxy_M[..., 1])

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        R, _ = self.calc_X_FM(q, params)
        return u.at[..., 2].set(jnp.sum(v_FM * R[..., self.translation_axis, :], -1))

    def singularity_distance(self, q, params):
        _, ze = self._angles(q, params)
        return jnp.minimum(jnp.abs(q[..., 2]), jnp.abs(jnp.sin(ze)))
