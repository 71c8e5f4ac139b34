"""Helpers for the q/u fitting methods of the mobilizers (catalogue 1.0.1).

All functions are batched over a leading axis of k bodies and are jit/vmap/grad safe.

* Closed-form pieces shared by the built-in types: Simbody's two-axis body-fixed
  angle decomposition and the "direction only" rotation used by the translation
  fits of Ellipsoid and CantileverFreeBeam.
* The generic fits used by types without closed forms (user-defined mobilizers):
  a fixed number of Gauss-Newton steps taken in u space, and least-squares
  velocity fits through H_FM (see ``Mobilizer.q_fit_rotation`` etc.).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._math import spatial
from jaxbody._math.linalg import SIGNIFICANT_REAL, small_spd_solve

#: Gauss-Newton steps of the generic q fits (quadratic convergence: far more than enough from a nearby start).
GENERIC_FIT_ITERATIONS = 25
#: Relative Levenberg damping of the normal equations (keeps rank-deficient steps finite and differentiable).
_DAMPING = 1e-13


def two_axis_body_fixed_angles(R, i: int, j: int):
    """Simbody's ``convertTwoAxesBodyFixedRotationToTwoAngles``: angles (k, 2) of R ~ Rot_i(a0) Rot_j(a1).

    Each sine and cosine is the mean of a direct matrix element and a norm-based estimate carrying its sign
    (a zero element counts as negative, as in Simbody), so a non-representable R gets a reasonable compromise.
    """
    k = 3 - i - j
    r = lambda a, b: R[..., a, b]  # noqa: E731

    def signed_mean(direct, other_a, other_b):
        sign = jnp.where(direct > 0, 1.0, -1.0)
        return 0.5 * (direct + sign * jnp.sqrt(other_a**2 + other_b**2))

    theta1 = jnp.arctan2(signed_mean(r(k, j), r(j, i), r(j, k)), signed_mean(r(j, j), r(k, i), r(k, k)))
    theta2 = jnp.arctan2(signed_mean(r(i, k), r(j, i), r(k, i)), signed_mean(r(i, i), r(j, k), r(k, k)))
    reverse = (j - i) % 3 == 2  # e.g. Z then Y
    angles = jnp.stack([theta1, theta2], -1)
    return -angles if reverse else angles


def direction_fit_rotation(p, spin):
    """R_FM whose z axis points roughly along p: Simbody's Ellipsoid/CantileverFreeBeam translation fit.

    ``R = Ry(longitude) Rx(latitude) Rz(spin)`` (the space-fixed X-Y sequence followed by the kept spin) with
    latitude = atan2(-e_y, e_z), longitude = atan2(e_x, e_z), e = p/|p|. Returns (R (k, 3, 3), valid (k,)):
    ``valid`` is False where |p| < eps, in which case Simbody leaves q unchanged.
    """
    n = spatial.safe_norm(p)
    valid = n >= jnp.finfo(p.dtype).eps
    e = p / jnp.where(valid, n, 1.0)[..., None]
    latitude = jnp.arctan2(-e[..., 1], e[..., 2])
    longitude = jnp.arctan2(e[..., 0], e[..., 2])
    R = spatial.matmul(spatial.matmul(spatial.rot_y(longitude), spatial.rot_x(latitude)), spatial.rot_z(spin))
    return R, valid


def rotation_error(R, R_target):
    """Rotation vector (k, 3), in F, of ``R_target R^T`` as 2 x (vector part of its w >= 0 quaternion).

    Equal to angle*axis to second order; zero exactly when R = R_target.
    """
    return 2.0 * spatial.quaternion_from_rotation(spatial.matmul_t(R_target, R))[..., 1:]


def least_squares(A, r):
    """Minimum-norm least-squares x (k, n) of ``A x ~ r`` for A (k, m, n), r (k, m).

    Damped normal equations with one refinement step: exact to round-off for well-conditioned columns, and
    directions A cannot move (zero columns, null space) get x = 0, so fits keep what they cannot set.
    """
    n = A.shape[-1]
    if n == 0:
        return jnp.zeros(r.shape[:-1] + (0,), r.dtype)
    AtA = jnp.einsum("kmi,kmj->kij", A, A)
    scale = jnp.trace(AtA, axis1=-2, axis2=-1)[..., None, None] / n + 1.0
    S = AtA + _DAMPING * scale * jnp.eye(n, dtype=A.dtype)

    def solve(rhs):
        return small_spd_solve(S, jnp.einsum("kmi,km->ki", A, rhs))

    x = solve(r)
    return x + solve(r - jnp.einsum("kmi,ki->km", A, x))


def gauss_newton_q_fit(mobilizer, q, params, R_target=None, p_target=None):
    """Generic q fit: GENERIC_FIT_ITERATIONS Gauss-Newton steps from the current q (k, nq_alloc).

    Residual: rotation error (rotation_error) when R_target is given and/or ``p_target - p_FM`` when p_target
    is given. Each step solves ``H_rows du = residual`` by least_squares and moves ``q += N(q) du`` (then
    normalizes quaternions). Converges to the local best fit nearest the current q; Simbody instead runs an
    L-BFGS optimizer from q_i = i + 0.12354, so results can differ where the fit is not unique. q moves only
    along N(q) du, so configurations the mobilities cannot reach from the current q (LineOrientation's spin
    about Mz) are fitted only in the directions they can.
    """
    if mobilizer.nu == 0:
        return q

    def residual_and_jacobian(qq):
        R, p = mobilizer.calc_X_FM(qq, params)
        H = mobilizer.calc_H_FM(qq, params)
        parts, blocks = [], []
        if R_target is not None:
            parts.append(rotation_error(R, R_target))
            blocks.append(H[..., :3, :])
        if p_target is not None:
            parts.append(p_target - p)
            blocks.append(H[..., 3:, :])
        return jnp.concatenate(parts, -1), jnp.concatenate(blocks, -2)

    def step(_, qq):
        r, A = residual_and_jacobian(qq)
        du = least_squares(A, r)
        return mobilizer.normalize_q(qq + mobilizer.multiply_by_n(qq, du))

    return jax.lax.fori_loop(0, GENERIC_FIT_ITERATIONS, step, q)


def least_squares_u_fit(H_rows, u, target):
    """u (k, nu) changed by the minimum-norm correction that makes ``H_rows u`` best match ``target``."""
    return u + least_squares(H_rows, target - jnp.einsum("kmi,ki->km", H_rows, u))
