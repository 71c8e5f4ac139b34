"""LineOrientation: the orientation of a body inertialess about Mz (a line); u = (w_x, w_y) of w_FM in M.

q as Ball: quaternion (w, x, y, z) of R_FM (4 slots) or, in Euler mode, body-fixed XYZ angles in the first 3
of the 4 slots (4th held at 0). ``X_FM = (R_FM, 0)``; H_FM angular columns Mx_F, My_F (the rotation about Mz
is not a mobility); HDot columns w_FM x Mx_F, w_FM x My_F. qdot = N_quat(q) R_FM (u0, u1, 0) or
N_B(q) (u0, u1, 0) (catalogue 0.4, 1.12).

Singular only in Euler mode, at q1 = +-pi/2 (Mx aligns with Fz); singularity_distance |cos q1|, else +inf.
Fits: rotation as Ball (translation ignored); u = first two components of R_FM^T w_FM with R_FM from the
current q (normalized); linear velocity ignored.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._math import spatial
from jaxbody._mobilizers import orientation
from jaxbody._mobilizers.ball import Ball


def _w_M(u):
    """(u0, u1, 0): the angular velocity in M, (k, 3)."""
    return jnp.concatenate([u[..., :2], jnp.zeros_like(u[..., :1])], -1)


def line_hinge_angular(R):
    """Angular part of H_FM (k, 3, 2): columns Mx_F and My_F."""
    return R[..., :, :2]


def line_hinge_angular_dot(R, u):
    """Its time derivative (k, 3, 2): w_FM x Mx_F, w_FM x My_F with w_FM = R (u0, u1, 0)."""
    w = spatial.matvec(R, _w_M(u))
    return jnp.stack([jnp.cross(w, R[..., :, 0]), jnp.cross(w, R[..., :, 1])], -1)


def line_qdot(q_rot, u, euler):
    """Orientation-slot qdot (k, 4) for u = (w_x, w_y) in M."""
    if euler:
        qd = orientation.euler_xyz_qdot_body(q_rot[..., :3], _w_M(u))
        return jnp.concatenate([qd, jnp.zeros_like(qd[..., :1])], -1)
    return orientation.quaternion_qdot(q_rot, spatial.matvec(orientation.rotation(q_rot, False), _w_M(u)))


def line_u(q_rot, qdot_rot, euler):
    """u = NInv qdot (k, 2): first two rows of NInv_B, or of R_FM^T NInv_quat (|q|^2 times u for raw q)."""
    if euler:
        return orientation.euler_xyz_w_body(q_rot[..., :3], qdot_rot[..., :3])[..., :2]
    w_F = orientation.quaternion_w(q_rot, qdot_rot)
    return spatial.mattvec(orientation.rotation(q_rot, False), w_F)[..., :2]


def line_fit_u(q_rot, w_FM, euler):
    """(k, 2): the x, y components of w_FM expressed in M."""
    return spatial.mattvec(orientation.rotation(q_rot, euler), w_FM)[..., :2]


@dataclasses.dataclass(frozen=True)
class LineOrientation(Ball):
    simbody_name = "LineOrientation"
    nu = 2

    def calc_H_FM(self, q, params):
        ang = line_hinge_angular(orientation.rotation(q, self.euler))
        return jnp.concatenate([ang, jnp.zeros_like(ang)], -2)

    def calc_HDot_FM(self, q, u, params):
        ang = line_hinge_angular_dot(orientation.rotation(q, self.euler), u)
        return jnp.concatenate([ang, jnp.zeros_like(ang)], -2)

    def multiply_by_n(self, q, u):
        return line_qdot(q, u, self.euler)

    def multiply_by_n_inv(self, q, qdot):
        return line_u(q, qdot, self.euler)

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        return line_fit_u(q, w_FM, self.euler)
