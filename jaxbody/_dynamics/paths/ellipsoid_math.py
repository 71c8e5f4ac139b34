"""WrapEllipsoid's iterative parts (OpenSim 4.6 WrapEllipsoid.cpp) as bounded JAX loops that end early
(``loop_until``), differentiable in forward mode.

All quantities are in OpenSim's normalized ellipsoid frame: the ellipsoid is centred at the origin with semi-axes
``a`` (3,) (OpenSim scales lengths by ``3 / sum(dimensions)`` so they are near 1).

* :func:`closest_point_on_ellipsoid` / :func:`closest_point_on_ellipse`: OpenSim's findClosestPoint and
  closestPointToEllipse (Eberly, Graphics Gems IV): Newton on the Lagrange parameter t from OpenSim's initial
  guess, stopping when OpenSim does (|f| < 1e-9, at most 64 steps), as a loop of at most 64 steps that ends
  once every lane has converged; points within 2e-13 of a coordinate plane (or axis) take OpenSim's 2-d (or closed)
  special cases.
* :func:`tangent_point`: OpenSim's calcTangentPoint, a Levenberg-Marquardt search for the point r on the ellipsoid,
  in the wrapping plane, whose tangent plane contains p. OpenSim's nested loops (at most 50 outer iterations, each
  an alpha search and a step-doubling search) are replayed action by action in one loop of at most
  TANGENT_STEPS steps (one action per step, every lane masked once it stops where OpenSim stops: residual sum of
  squares <= 1e-8 or 50 outer iterations). So the tangent point is OpenSim's, to round-off, as long as OpenSim
  takes at most TANGENT_STEPS actions; a lane needing more stops short (not seen: with 160, BIClong, its method and
  quadrant variants and MoBL_ARMS's single-ellipsoid paths match OpenSim to ~1e-15 m at 20 states each).

Derivatives are those of these iterations (forward mode through the loops; wrap_ellipsoid.wrap_numbers gives
reverse mode from that Jacobian), so they equal central differences of the computed numbers.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._dynamics.paths import wrap_math as wm

#: WrapEllipsoid.cpp: Newton steps of the closest-point searches, their stop test |f| < 1e-9.
CLOSEST_POINT_STEPS = 64
CLOSEST_POINT_TOLERANCE = 1e-9
#: calcTangentPoint: ELLIPSOID_TINY (stop test on the residual sum of squares), maxit, the skip test |p1e| < 1e-4.
TANGENT_TINY = 1e-8
TANGENT_MAX_OUTER = 50
TANGENT_ON_SURFACE = 1e-4
#: Actions (outer starts, alpha-search steps, doubling steps, finishes) replayed for calcTangentPoint.
TANGENT_STEPS = 160

_OUTER, _ALPHA, _DOUBLE, _DONE = 0, 1, 2, 3


def safe_sqrt(x):
    """sqrt(x) for x > 0, else 0, with a finite gradient."""
    pos = x > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, x, 1.0)), 0.0)


def _safe_div(x, y):
    ok = y != 0
    return jnp.where(ok, x / jnp.where(ok, y, 1.0), 0.0)


def loop_until(steps: int, step, carry, stopped):
    """``lax.fori_loop(0, steps, step, carry)`` for a ``step`` that leaves the carry unchanged once
    ``stopped(carry)``: a ``lax.while_loop`` that also ends there (under vmap, once every lane has stopped), so
    the result and its forward-mode derivative are the fixed-count loop's, in the iterations actually needed.
    Not reverse-differentiable (its callers' derivatives are forward mode: wrap_ellipsoid.wrap_numbers)."""
    def go(c):
        return (c[0] < steps) & ~stopped(c[1])

    return jax.lax.while_loop(go, lambda c: (c[0] + 1, step(c[0], c[1])), (jnp.asarray(0), carry))[1]


def _newton_ellipse(a, b, u, v):
    a2, b2 = a * a, b * b
    a2u2, b2v2 = a2 * (u * u), b2 * (v * v)
    inside = (u / a) * (u / a) + (v / b) * (v / b) < 1.0
    t0 = jnp.where(inside, 0.0, jnp.maximum(a, b) * safe_sqrt(u * u + v * v))

    def step(_, carry):
        t, t_eval, done = carry
        P, Q = t + a2, t + b2
        P2, Q2 = P * P, Q * Q
        f = P2 * Q2 - a2u2 * Q2 - b2v2 * P2
        fp = 2.0 * (P * Q * (P + Q) - a2u2 * Q - b2v2 * P)
        conv = jnp.abs(f) < CLOSEST_POINT_TOLERANCE
        move = ~done & ~conv
        return jnp.where(move, t - _safe_div(f, fp), t), jnp.where(done, t_eval, t), done | conv

    _, t, _ = loop_until(CLOSEST_POINT_STEPS, step, (t0, t0, jnp.asarray(False)), lambda c: c[2])
    return a2 * u / (t + a2), b2 * v / (t + b2)


def closest_point_on_ellipse(a, b, u, v):
    """(x, y): OpenSim's closestPointToEllipse of (u, v) to the ellipse (x/a)^2 + (y/b)^2 = 1."""
    a2, b2 = a * a, b * b
    near_x = jnp.abs(u) <= wm.ROUNDOFF_ERROR
    near_y = jnp.abs(v) <= wm.ROUNDOFF_ERROR
    # both near the axes
    xb, yb = jnp.where(a < b, jnp.where(u < 0.0, -a, a), u), jnp.where(a < b, v, jnp.where(v < 0.0, -b, b))
    # u == 0
    pole_x = (a >= b) | (jnp.abs(v) >= b - a2 / b)
    yx = _safe_div(b2 * v, b2 - a2)
    xx = jnp.where(pole_x, u, a * safe_sqrt(jnp.abs(1.0 - (yx / b) ** 2)))
    yx = jnp.where(pole_x, jnp.where(v >= 0, b, -b), yx)
    # v == 0
    pole_y = (b >= a) | (jnp.abs(u) >= a - b2 / a)
    xy = _safe_div(a2 * u, a2 - b2)
    yy = jnp.where(pole_y, v, b * safe_sqrt(jnp.abs(1.0 - (xy / a) ** 2)))
    xy = jnp.where(pole_y, jnp.where(u >= 0, a, -a), xy)
    xn, yn = _newton_ellipse(a, b, u, v)
    x = jnp.where(near_x & near_y, xb, jnp.where(near_x, xx, jnp.where(near_y, xy, xn)))
    y = jnp.where(near_x & near_y, yb, jnp.where(near_x, yx, jnp.where(near_y, yy, yn)))
    return x, y


def _newton_ellipsoid(a, p):
    a2 = a * a
    u, v, w = p[0], p[1], p[2]
    a2u2, b2v2, c2w2 = a2[0] * (u * u), a2[1] * (v * v), a2[2] * (w * w)
    inside = (u / a[0]) * (u / a[0]) + (v / a[1]) * (v / a[1]) + (w / a[2]) * (w / a[2]) < 1.0
    t0 = jnp.where(inside, 0.0, jnp.max(a) * safe_sqrt(u * u + v * v + w * w))

    def step(_, carry):
        t, t_eval, done = carry
        P, Q, R = t + a2[0], t + a2[1], t + a2[2]
        P2, Q2, R2 = P * P, Q * Q, R * R
        f = P2 * Q2 * R2 - a2u2 * Q2 * R2 - b2v2 * P2 * R2 - c2w2 * P2 * Q2
        PQ, PR, QR, PQR = P * Q, P * R, Q * R, P * Q * R
        fp = 2.0 * (PQR * (QR + PR + PQ) - a2u2 * QR * (Q + R) - b2v2 * PR * (P + R) - c2w2 * PQ * (P + Q))
        conv = jnp.abs(f) < CLOSEST_POINT_TOLERANCE
        move = ~done & ~conv
        return jnp.where(move, t - _safe_div(f, fp), t), jnp.where(done, t_eval, t), done | conv

    _, t, _ = loop_until(CLOSEST_POINT_STEPS, step, (t0, t0, jnp.asarray(False)), lambda c: c[2])
    return a2 * p / (t + a2)


def _on_plane(a, p, axis):
    """OpenSim's specialCaseAxis ``axis`` (static or traced): keep p[axis], the 2-d closest point in the plane of
    the other two coordinates, taken in the cyclic order (y, z), (z, x), (x, y)."""
    j, k = (axis + 1) % 3, (axis + 2) % 3
    x, y = closest_point_on_ellipse(a[j], a[k], p[j], p[k])
    return p.at[j].set(x).at[k].set(y)


#: closest_point_on_ellipsoid's ``mode``: OpenSim's choice of special case; the 3-d Newton only (0, 1, 2: that plane).
AUTO, GENERAL = -1, 3


def closest_point_on_ellipsoid(a, p, mode=AUTO):
    """OpenSim's findClosestPoint of p (3,) to the ellipsoid of semi-axes a (3,). ``mode`` (int, may be traced):
    AUTO is OpenSim's default (the 2-d case in the coordinate plane p is within 2e-13 of, the one whose ellipse has
    the smallest radii sum, else the 3-d Newton); 0, 1, 2 force the 2-d case in that plane (OpenSim's
    specialCaseAxis); GENERAL is the 3-d Newton alone. One Newton of each kind is traced, whatever the mode."""
    near = jnp.abs(p) <= wm.ROUNDOFF_ERROR
    sums = jnp.stack([a[1] + a[2], a[0] + a[2], a[0] + a[1]])
    nearest = jnp.argmin(jnp.where(near, sums, jnp.inf))
    auto_plane = (mode == AUTO) & jnp.any(near)
    axis = jnp.where(auto_plane, nearest, jnp.clip(mode, 0, 2))
    plane = auto_plane | ((mode >= 0) & (mode <= 2))
    return jnp.where(plane, _on_plane(a, p, axis), _newton_ellipsoid(a, p))


def _residuals(r, d, p, a, vs, vs4):
    """calcTangentPoint's four residuals: r in the plane (vs, vs4), on the ellipsoid, d its tangent plane's
    offset, p on that tangent plane."""
    nr = 2.0 * r / (a * a)
    q = (r / a) ** 2
    return jnp.stack([jnp.dot(vs, r) + vs4, ((-1.0 + q[0]) + q[1]) + q[2], jnp.dot(nr, r) + d, jnp.dot(nr, p) + d])


def tangent_point(r0, p, pe, a, vs, vs4, active):
    """OpenSim's calcTangentPoint: the tangent point (3,) reached from ``r0`` toward ``p`` (3,), in the plane
    vs . r + vs4 = 0; ``pe`` is p's ellipsoid value (|pe| < 1e-4: p itself). ``active`` False: r0 unchanged."""
    d0 = -jnp.dot(2.0 * r0 / (a * a), r0)
    e0 = _residuals(r0, d0, p, a, vs, vs4)
    ssq0 = jnp.sum(e0 * e0)
    skip = (jnp.abs(pe) < TANGENT_ON_SURFACE) | ~active
    z4, z44 = jnp.zeros(4, r0.dtype), jnp.zeros((4, 4), r0.dtype)
    x0 = jnp.concatenate([r0, d0[None]])

    def ssq_at(x):
        e = _residuals(x[:3], x[3], p, a, vs, vs4)
        return jnp.sum(e * e)

    def step(_, c):
        phase, x, ssq, ssqo, alpha, vt, fakt, nit, nit2, JJ, diag, v, dd = c
        is_o, is_a, is_d = phase == _OUTER, phase == _ALPHA, phase == _DOUBLE
        # _OUTER: OpenSim's loop test, then the Jacobian at x and the first alpha step
        outer_go = is_o & (ssq > TANGENT_TINY) & (nit < TANGENT_MAX_OUTER)
        r = x[:3]
        J = jnp.concatenate([jnp.stack([vs, 2.0 * r / (a * a), 2.0 * (2.0 * r) / (a * a), 2.0 * p / (a * a)], 1),
                             jnp.asarray([[0.0, 0.0, 1.0, 1.0]], r.dtype)])
        e = _residuals(r, x[3], p, a, vs, vs4)
        pcos = jnp.dot(wm.normalize_or_zero(p - r)[0], wm.normalize_or_zero(p)[0])
        JJ_n = J @ J.T
        JJ, diag = jnp.where(is_o, JJ_n, JJ), jnp.where(is_o, jnp.diagonal(JJ_n), diag)
        v, dd = jnp.where(is_o, -jnp.sum(J * e[None, :], axis=1), v), jnp.where(is_o & (pcos > 0.1), 1.0 - pcos ** 100,
                                                                               jnp.where(is_o, 1.0, dd))
        # _ALPHA: another alpha step while worse, else the first doubling step
        alpha_more = is_a & (ssq >= ssqo) & (nit2 < 1000)
        double_first = is_a & ~alpha_more
        # _DOUBLE: another doubling step while better, else step back and finish the outer iteration
        double_more = is_d & (ssq <= ssqo) & (nit2 < 1000)
        finish = is_d & ~double_more
        inv = jnp.linalg.inv(JJ.at[jnp.arange(4), jnp.arange(4)].set(diag * (1.0 + alpha)))
        vt_alpha = jnp.sum(dd * inv * v[None, :] / 16.0, axis=1)
        alpha_go = outer_go | alpha_more
        fakt = jnp.where(double_first, 1.0, jnp.where(double_more, 2.0 * fakt, fakt))
        x_new = jnp.where(alpha_go, x + vt_alpha, jnp.where(double_first | double_more, x + vt * fakt,
                                                            jnp.where(finish, x - vt * fakt, x)))
        moved = alpha_go | double_first | double_more
        ssq_new = jnp.where(moved | finish, ssq_at(x_new), ssq)
        ssqo = jnp.where(moved, ssq, jnp.where(finish, ssq_new, ssqo))
        alpha = jnp.where(alpha_go, alpha * 4.0, jnp.where(double_first, alpha / 8.0, alpha))
        phase = jnp.where(is_o, jnp.where(outer_go, _ALPHA, _DONE), jnp.where(
            double_first, _DOUBLE, jnp.where(finish, _OUTER, phase)))
        nit2 = jnp.where(is_o | double_first, 1, jnp.where(alpha_more | double_more, nit2 + 1, nit2))
        return (phase, x_new, ssq_new, ssqo, alpha, jnp.where(alpha_go, vt_alpha, vt), fakt,
                jnp.where(outer_go, nit + 1, nit), nit2, JJ, diag, v, dd)

    one = jnp.ones((), r0.dtype)
    start = (jnp.where(skip, _DONE, _OUTER), x0, ssq0, ssq0, 0.01 * one, z4, 0.5 * one, jnp.asarray(0),
             jnp.asarray(0), z44, z4, z4, one)
    final = loop_until(TANGENT_STEPS, step, start, lambda c: c[0] == _DONE)
    r = jnp.where(jnp.abs(pe) < TANGENT_ON_SURFACE, p, jnp.where(active, final[1][:3], r0))
    return r, final[0] == _DONE
