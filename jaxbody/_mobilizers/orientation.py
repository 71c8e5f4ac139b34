"""Orientation coordinates shared by Ball, Free and Ellipsoid: quaternion or body-fixed X-Y-Z angles.

Angular velocity ``w_FM`` is expressed in the parent frame F in both modes
(catalogue 0.4). In quaternion mode the four q are (w, x, y, z), possibly
unnormalized: R normalizes, N uses the raw q exactly as Simbody does.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._math import spatial


def rotation(q_rot, euler: bool):
    """R_FM from the orientation q (k, 4) (Euler mode: first 3 are angles)."""
    if euler:
        return spatial.rotation_from_body_fixed_xyz(q_rot[..., :3])
    return spatial.rotation_from_quaternion(q_rot)


def quaternion_qdot(quat, w):
    """qdot = N(q) w = 1/2 [0; w] (x) q with w in the parent frame; (k, 4)."""
    e0, e1, e2, e3 = [quat[..., i] / 2 for i in range(4)]
    w0, w1, w2 = w[..., 0], w[..., 1], w[..., 2]
    return jnp.stack(
        [
            -e1 * w0 - e2 * w1 - e3 * w2,
            e0 * w0 + e3 * w1 - e2 * w2,
            -e3 * w0 + e0 * w1 + e1 * w2,
            e2 * w0 - e1 * w1 + e0 * w2,
        ],
        -1,
    )


def quaternion_w(quat, qdot):
    """w = NInv(q) qdot = 2 [-q1 q0 -q3 q2; -q2 q3 q0 -q1; -q3 -q2 q1 q0] qdot; (k, 3)."""
    q0, q1, q2, q3 = [quat[..., i] for i in range(4)]
    d0, d1, d2, d3 = [qdot[..., i] for i in range(4)]
    return 2 * jnp.stack(
        [
            -q1 * d0 + q0 * d1 - q3 * d2 + q2 * d3,
            -q2 * d0 + q3 * d1 + q0 * d2 - q1 * d3,
            -q3 * d0 - q2 * d1 + q1 * d2 + q0 * d3,
        ],
        -1,
    )


def euler_xyz_qdot(angles, w):
    """qdot = N_P(q) w for body-fixed XYZ angles with w in the parent frame; (k, 3).

    Singular where cos(q1) = 0 (gimbal lock): the result is inf/NaN there.
    """
    s0, c0 = jnp.sin(angles[..., 0]), jnp.cos(angles[..., 0])
    s1, c1 = jnp.sin(angles[..., 1]), jnp.cos(angles[..., 1])
    ooc1 = 1 / c1
    w0, w1, w2 = w[..., 0], w[..., 1], w[..., 2]
    return jnp.stack(
        [
            w0 + s1 * ooc1 * (s0 * w1 - c0 * w2),
            c0 * w1 + s0 * w2,
            ooc1 * (-s0 * w1 + c0 * w2),
        ],
        -1,
    )


def euler_xyz_w(angles, qdot):
    """w = NInv_P(q) qdot (never singular); (k, 3)."""
    s0, c0 = jnp.sin(angles[..., 0]), jnp.cos(angles[..., 0])
    s1, c1 = jnp.sin(angles[..., 1]), jnp.cos(angles[..., 1])
    d0, d1, d2 = qdot[..., 0], qdot[..., 1], qdot[..., 2]
    return jnp.stack([d0 + s1 * d2, c0 * d1 - s0 * c1 * d2, s0 * d1 + c0 * c1 * d2], -1)


def euler_xyz_w_columns(angles):
    """Columns of NInv_P as a (k, 3, 3) matrix: w = M qdot (the Gimbal hinge's angular part)."""
    s0, c0 = jnp.sin(angles[..., 0]), jnp.cos(angles[..., 0])
    s1, c1 = jnp.sin(angles[..., 1]), jnp.cos(angles[..., 1])
    one, zero = jnp.ones_like(s0), jnp.zeros_like(s0)
    return jnp.stack(
        [
            jnp.stack([one, zero, s1], -1),
            jnp.stack([zero, c0, -s0 * c1], -1),
            jnp.stack([zero, s0, c0 * c1], -1),
        ],
        -2,
    )


def qdot(q_rot, w, euler: bool):
    """Orientation-slot qdot (k, 4): Euler mode pads the unused 4th slot with 0."""
    if euler:
        return jnp.concatenate([euler_xyz_qdot(q_rot[..., :3], w), jnp.zeros_like(w[..., :1])], -1)
    return quaternion_qdot(q_rot, w)


def w_from_qdot(q_rot, qdot_rot, euler: bool):
    if euler:
        return euler_xyz_w(q_rot[..., :3], qdot_rot[..., :3])
    return quaternion_w(q_rot, qdot_rot)


def normalize(q_rot, euler: bool):
    if euler:
        return q_rot
    return q_rot / jnp.linalg.norm(q_rot, axis=-1, keepdims=True)


def euler_xyz_w_columns_dot(angles, rates):
    """Time derivative of ``euler_xyz_w_columns`` (k, 3, 3) given the angle rates (k, 3) (catalogue 1.8)."""
    s0, c0 = jnp.sin(angles[..., 0]), jnp.cos(angles[..., 0])
    s1, c1 = jnp.sin(angles[..., 1]), jnp.cos(angles[..., 1])
    d0, d1 = rates[..., 0], rates[..., 1]
    zero = jnp.zeros_like(s0)
    return jnp.stack(
        [
            jnp.stack([zero, zero, c1 * d1], -1),
            jnp.stack([zero, -s0 * d0, -c0 * d0 * c1 + s0 * s1 * d1], -1),
            jnp.stack([zero, c0 * d0, -s0 * d0 * c1 - c0 * s1 * d1], -1),
        ],
        -2,
    )


def euler_xyz_qdot_body(angles, w_M):
    """qdot = N_B(q) w_M for body-fixed XYZ angles with w expressed in the child frame M; (k, 3).

    Singular where cos(q1) = 0.
    """
    s1, c1 = jnp.sin(angles[..., 1]), jnp.cos(angles[..., 1])
    s2, c2 = jnp.sin(angles[..., 2]), jnp.cos(angles[..., 2])
    ooc1 = 1 / c1
    w0, w1, w2 = w_M[..., 0], w_M[..., 1], w_M[..., 2]
    return jnp.stack(
        [
            ooc1 * (c2 * w0 - s2 * w1),
            s2 * w0 + c2 * w1,
            s1 * ooc1 * (-c2 * w0 + s2 * w1) + w2,
        ],
        -1,
    )


def euler_xyz_w_body(angles, qdot):
    """w_M = NInv_B(q) qdot (never singular); (k, 3)."""
    s1, c1 = jnp.sin(angles[..., 1]), jnp.cos(angles[..., 1])
    s2, c2 = jnp.sin(angles[..., 2]), jnp.cos(angles[..., 2])
    d0, d1, d2 = qdot[..., 0], qdot[..., 1], qdot[..., 2]
    return jnp.stack([c1 * c2 * d0 + s2 * d1, -c1 * s2 * d0 + c2 * d1, s1 * d0 + d2], -1)


def fit_rotation(q_rot, R, euler: bool):
    """Orientation slots (k, 4) representing R_FM: XYZ angles (unused 4th slot kept) or the canonical quaternion."""
    if euler:
        return q_rot.at[..., :3].set(spatial.body_fixed_xyz_from_rotation(R))
    return spatial.quaternion_from_rotation(R)


def euler_singularity_distance(angles):
    """|cos q1| of body-fixed XYZ angles (k,): 0 at gimbal lock (q1 = +-pi/2)."""
    return jnp.abs(jnp.cos(angles[..., 1]))


def quaternion_from_body_fixed_xyz(angles):
    """Unit quaternion (w, x, y, z) of Rx(a0) Ry(a1) Rz(a2), the smooth product of the three half-angle
    quaternions (no sign canonicalization); angles (k, 3) -> (k, 4)."""
    h = angles / 2
    s0, c0 = jnp.sin(h[..., 0]), jnp.cos(h[..., 0])
    s1, c1 = jnp.sin(h[..., 1]), jnp.cos(h[..., 1])
    s2, c2 = jnp.sin(h[..., 2]), jnp.cos(h[..., 2])
    return jnp.stack(
        [
            c0 * c1 * c2 - s0 * s1 * s2,
            s0 * c1 * c2 + c0 * s1 * s2,
            c0 * s1 * c2 - s0 * c1 * s2,
            c0 * c1 * s2 + s0 * s1 * c2,
        ],
        -1,
    )
