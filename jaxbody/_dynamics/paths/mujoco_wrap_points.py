"""MuJoCo 4.0's tangent points of a tendon segment wrapping a sphere or a cylinder (``mju_wrap`` with its 2D
``wrap_circle`` and ``wrap_inside``), in the wrap geom's frame, as branch-free JAX.

Input: the segment's two end points p0, p1 (3,) and the optional side point s (3,) in the geom's frame (m), the
geom's radius r (m). Steps (MuJoCo's):

* a 2D frame: sphere: axis0 = p0 / |p0|, axis1 in the plane of (0, p0, p1) (when p0 and p1 are parallel, the
  normal is made from axis0 and the unit vector with a 0 at axis0's largest component); cylinder: the geom's
  x and y. The end points and the side point (rescaled to length r) are projected on it.
* inside wrap (a side point strictly inside the geom, |s| < r): the single point on the circle where the path
  touches it from inside, by MuJoCo's Newton iteration on phi = asin(z) for
  ``asin(A z) + asin(B z) - 2 asin(z) + G = 0`` (A = r/|d0|, B = r/|d1|, G the angle between the ends; from
  phi = pi/2, at most 20 iterations, tolerance 1e-6; its fall-back, the direction of the ends' mean, where it
  gives up); arc angle 0.
* circle wrap (``wrap_circle``): with a side point the path is the one homotopic to the polyline end - side -
  end (by winding angles about the centre), without one the shorter of the two tangent-point pairs.
* cylinder: the tangent points' heights split the height difference of the ends in proportion to the 2D
  lengths (end - point, arc, point - end).

Output ``(wraps, w0, w1, theta)``: whether the segment wraps, the two tangent points (3,) in the geom frame and
the arc angle (rad) between them (``r theta`` the 2D arc length). The tangent points of a circle wrap are
closed-form and differentiable (exact derivatives of every order; being a stationary point of the length, its
first derivative equals MuJoCo's ``ten_J``, which holds them fixed on the geom). The inside wrap's point comes
from an iteration: it is held fixed on the geom for derivatives, as MuJoCo's ``ten_J`` holds it (first
derivative MuJoCo's; higher derivatives omit the point's motion). The choice (wrap or not, which side) is
discrete. Every square root, normalization and arctangent has a finite gradient where it is not used. Cost:
O(1) (at most 20 Newton steps) per wrapping segment.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._math.spatial import safe_norm

MINVAL = 1e-15       # MuJoCo's mjMINVAL
_NEWTON_STEPS, _TOLERANCE = 20, 1e-6


def _normalize(v):
    """MuJoCo's mju_normalize: v / |v|, or (1, 0, ...) when |v| < mjMINVAL (gradient-safe)."""
    n = safe_norm(v)
    fallback = jnp.zeros_like(v).at[0].set(1.0)
    return jnp.where(n < MINVAL, fallback, v / jnp.where(n < MINVAL, 1.0, n))


def _cross2(a, b):
    return a[0] * b[1] - a[1] * b[0]


def _intersect(p1, p2, p3, p4):
    """MuJoCo's is_intersect: whether the 2D segments p1-p2 and p3-p4 cross (parameters in [0, 1) on each,
    tested without dividing by the determinant)."""
    u, v = p2 - p1, p4 - p3
    det = v[1] * u[0] - v[0] * u[1]
    s = jnp.where(det > 0, 1.0, -1.0)
    w, d = p1 - p3, p2 - p4
    a0, a1 = _cross2(v, w) * s, _cross2(v, d) * s
    b0, b1 = _cross2(u, w) * s, _cross2(u, d) * s
    return (jnp.abs(det) >= MINVAL) & (a0 >= 0) & (a1 < 0) & (b0 >= 0) & (b1 < 0)


def _atan2(y, x):
    """arctan2 with a finite gradient at (0, 0) (value 0 there)."""
    zero = (y == 0) & (x == 0)
    return jnp.where(zero, 0.0, jnp.arctan2(y, jnp.where(zero, 1.0, x)))


def _safe_sqrt(x):
    """sqrt(max(x, 0)) with a finite gradient at 0."""
    positive = x > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, x, 1.0)), 0.0)


def _winding(p, q):
    """The signed angle (rad) swept from p to q around the origin, in (-pi, pi]."""
    return _atan2(_cross2(p, q), p @ q)


def wrap_circle(d0, d1, side, radius):
    """``(wraps, t0, t1, theta)``: MuJoCo's wrap_circle of the 2D ends d0, d1 with the optional 2D side point.
    With a side point the path is the one homotopic to the polyline d0 - side - d1: no wrap when the straight
    segment misses the circle and winds as that polyline does; else the tangent pair going round as the
    polyline does. Without one: no wrap when the segment misses the circle, else the pair with the shorter
    chord. No wrap either when an end is inside the circle or the chosen tangent lines cross."""
    sqlen0, sqlen1, sqrad = d0 @ d0, d1 @ d1, radius * radius
    dif = d1 - d0
    dd = dif @ dif
    a = jnp.clip(-(dif @ d0) / jnp.where(dd < MINVAL, 1.0, dd), 0.0, 1.0)
    nearest = a * dif + d0
    clear = nearest @ nearest > sqrad
    no_wrap = (sqlen0 < sqrad) | (sqlen1 < sqrad) | (radius < MINVAL) | (dd < MINVAL)
    if side is not None:
        wside = _winding(d0, side) + _winding(side, d1)
        no_wrap = no_wrap | (clear & (jnp.abs(wside - _winding(d0, d1)) < jnp.pi))
    else:
        no_wrap = no_wrap | clear
    root0, root1 = _safe_sqrt(sqlen0 - sqrad), _safe_sqrt(sqlen1 - sqrad)
    safe0, safe1 = jnp.where(sqlen0 > 0, sqlen0, 1.0), jnp.where(sqlen1 > 0, sqlen1, 1.0)
    sols, good, crossing = [], [], []
    for sgn in (1.0, -1.0):
        t0 = jnp.stack([d0[0] * sqrad + sgn * radius * d0[1] * root0, d0[1] * sqrad - sgn * radius * d0[0] * root0]) / safe0
        t1 = jnp.stack([d1[0] * sqrad - sgn * radius * d1[1] * root1, d1[1] * sqrad + sgn * radius * d1[0] * root1]) / safe1
        sols.append((t0, t1))
        crossing.append(_intersect(d0, t0, d1, t1))
        good.append(jnp.where(crossing[-1], -10000.0, -jnp.sum((t0 - t1) ** 2)))
    ind = jnp.where(wside > 0, 1, 0) if side is not None else jnp.where(good[0] > good[1], 0, 1)
    t0 = jnp.where(ind == 0, sols[0][0], sols[1][0])
    t1 = jnp.where(ind == 0, sols[0][1], sols[1][1])
    no_wrap = no_wrap | jnp.where(ind == 0, crossing[0], crossing[1])
    if side is not None:   # the path winds as the polyline: the arc is its winding less the tangent segments'
        theta = jnp.abs(wside - _winding(d0, t0) - _winding(t1, d1))
    else:                  # MuJoCo's length_circle
        cross = t0[1] * t1[0] - t0[0] * t1[1]
        theta = _atan2(jnp.abs(cross), t0 @ t1)
        flip = (theta > 1e-6) & (((cross > 0) & (ind != 0)) | ((cross < 0) & (ind == 0)))
        theta = jnp.where(flip, 2 * jnp.pi - theta, theta)
    return ~no_wrap, t0, t1, theta


def wrap_inside(d0, d1, radius):
    """``(wraps, t)``: MuJoCo's wrap_inside of the 2D ends d0, d1 (one touching point t, module doc). The point is
    held fixed on the circle for derivatives (its direction's gradient is stopped; the radius scales it)."""
    d0, d1, r = jax.lax.stop_gradient(d0), jax.lax.stop_gradient(d1), radius
    radius = jax.lax.stop_gradient(radius)
    len0, len1 = jnp.sqrt(d0 @ d0), jnp.sqrt(d1 @ d1)
    dif = d1 - d0
    dd = dif @ dif
    a = -(dif @ d0) / jnp.where(dd > MINVAL, dd, 1.0)
    nearest = d0 + a * dif
    crosses = (dd > MINVAL) & (a > 0) & (a < 1) & (jnp.sqrt(nearest @ nearest) <= radius)
    no_wrap = (len0 <= radius) | (len1 <= radius) | (radius < MINVAL) | (len0 < MINVAL) | (len1 < MINVAL) | crosses
    fallback = _normalize(0.5 * (d0 + d1)) * radius
    safe_len0, safe_len1 = jnp.where(len0 > 0, len0, 1.0), jnp.where(len1 > 0, len1, 1.0)
    A, B = radius / safe_len0, radius / safe_len1
    cosG = (len0 * len0 + len1 * len1 - dd) / (2 * safe_len0 * safe_len1)
    no_wrap = no_wrap | (cosG < -1 + MINVAL)
    G = jnp.arccos(jnp.clip(cosG, -1.0, 1.0))
    asin = lambda x: jnp.arcsin(jnp.clip(x, -1.0, 1.0))  # noqa: E731

    def step(_, carry):   # one Newton step on phi = asin(z) while running (MuJoCo's loop body)
        phi, z, f, running, gave_up, iters = carry
        running = running & (jnp.abs(f) > _TOLERANCE)
        root = lambda x: jnp.maximum(MINVAL, jnp.sqrt(jnp.maximum(1 - z * z * x * x, 0.0)))  # noqa: E731
        df = jnp.cos(phi) * (A / root(A) + B / root(B)) - 2.0
        phi1 = phi - f / jnp.where(df > -MINVAL, -1.0, df)
        bad = running & ((df > -MINVAL) | (phi1 > phi))
        gave_up, running = gave_up | bad, running & ~bad
        phi = jnp.where(running, phi1, phi)
        z = jnp.where(running, jnp.sin(phi), z)
        f = jnp.where(running, asin(A * z) + asin(B * z) - 2.0 * phi + G, f)
        bad = running & (f > _TOLERANCE)
        gave_up, running = gave_up | bad, running & ~bad
        return phi, z, f, running, gave_up, iters + running.astype(int)

    f0 = asin(A) + asin(B) - jnp.pi + G
    gave_up = (cosG > 1 - MINVAL) | (f0 > 0)
    phi, z, f, running, gave_up, iters = jax.lax.fori_loop(
        0, _NEWTON_STEPS, step, (jnp.asarray(jnp.pi / 2, d0.dtype), jnp.ones((), d0.dtype), f0, ~gave_up, gave_up,
                                 jnp.zeros((), int)))
    gave_up = gave_up | (iters >= _NEWTON_STEPS)   # MuJoCo: not converged within its iterations
    left = _cross2(d0, d1) > 0
    vec = _normalize(jnp.where(left, d0, d1))
    ang = phi - asin(jnp.where(left, A, B) * z)
    t = radius * jnp.stack([jnp.cos(ang) * vec[0] - jnp.sin(ang) * vec[1], jnp.sin(ang) * vec[0] + jnp.cos(ang) * vec[1]])
    return ~no_wrap, jnp.where(gave_up, fallback, t) * (r / jnp.where(radius > 0, radius, 1.0))


def _plane_axes(p0, p1, cylinder: bool):
    """The wrap's 2D frame (axis0, axis1) in the geom frame (module doc)."""
    if cylinder:
        return jnp.array([1.0, 0.0, 0.0], p0.dtype), jnp.array([0.0, 1.0, 0.0], p0.dtype)
    axis0 = _normalize(p0)
    normal = jnp.cross(p0, p1)
    parallel = safe_norm(normal) < MINVAL
    mag = jnp.abs(axis0)
    i = jnp.where((mag[1] > mag[0]) & (mag[1] > mag[2]), 1, jnp.where((mag[2] > mag[0]) & (mag[2] > mag[1]), 2, 0))
    other = jnp.ones(3, p0.dtype).at[i].set(0.0)
    normal = _normalize(jnp.where(parallel, jnp.cross(axis0, other), normal))
    return axis0, _normalize(jnp.cross(normal, axis0))


def wrap_points(p0, p1, side, radius, cylinder: bool):
    """``(wraps, w0, w1, theta)`` of one segment (module doc); ``side`` (3,) or None; ``cylinder`` static."""
    axis0, axis1 = _plane_axes(p0, p1, cylinder)
    d0, d1 = jnp.stack([p0 @ axis0, p0 @ axis1]), jnp.stack([p1 @ axis0, p1 @ axis1])
    wraps, t0, t1, theta = wrap_circle(d0, d1, None if side is None else
                                       _normalize(jnp.stack([side @ axis0, side @ axis1])) * radius, radius)
    if side is not None:
        inside_wraps, t = wrap_inside(d0, d1, radius)
        inside = safe_norm(side) < radius
        wraps = jnp.where(inside, inside_wraps, wraps)
        t0, t1, theta = jnp.where(inside, t, t0), jnp.where(inside, t, t1), jnp.where(inside, 0.0, theta)
    w0, w1 = axis0 * t0[0] + axis1 * t0[1], axis0 * t1[0] + axis1 * t1[1]
    far = (safe_norm(p0) >= MINVAL) & (safe_norm(p1) >= MINVAL)
    if cylinder:
        L0, L1 = safe_norm(p0[:2] - w0[:2]), safe_norm(p1[:2] - w1[:2])
        total = L0 + radius * theta + L1
        total = jnp.where(total > 0, total, 1.0)
        w0 = w0.at[2].set(p0[2] + (p1[2] - p0[2]) * L0 / total)
        w1 = w1.at[2].set(p0[2] + (p1[2] - p0[2]) * (L0 + radius * theta) / total)
    return wraps & far, w0, w1, theta
