"""WrapEllipsoid (OpenSim 4.6 WrapEllipsoid::wrapLine): an ellipsoid of semi-axes ``dimensions`` (3,) (m) along
W's axes, centred at W's origin.

OpenSim's construction, reproduced step by step in its normalized frame (lengths times ``3 / sum(dimensions)``):

1. no wrap when an end point is inside (ellipsoid value < -1e-4: INSIDE_RADIUS), when p1 and p2 are seen from
   the centre in the same direction (|cos - 1| < 1e-4) or when the segment does not cross the ellipsoid;
2. a point c1 on the surface fixing the wrapping plane through p1, p2 and c1, by the PathWrap's ``method``:
   ``hybrid`` (OpenSim's default) blends Frans' technique (the point where the segment crosses the coordinate
   plane most normal to it, projected onto the ellipsoid) with the "fan" (the mean direction from 298 points
   of the chord to their closest surface points); ``midpoint`` projects the chord's midpoint; ``axial`` is
   Frans' alone;
3. with a quadrant, c1 is mirrored to the active side (and pulled toward the bisecting plane by the fan's weight);
4. the tangent points from c1 toward p1 and p2 in that plane (ellipsoid_math.tangent_point, OpenSim's
   Levenberg-Marquardt search with its tolerance);
5. the surface length: the polyline of ``int(|r1 - r2| / 1 mm)`` segments (at most 499) through the plane's
   section of the ellipsoid (rays from the plane's point on its most normal axis), taken the far way round when,
   with a quadrant, the near way starts back toward p1 or p2.

A wrap is always a MANDATORY_WRAP (the quadrant only picks the side). As in OpenSim the plane and the polyline are
an approximation of the shortest path: -dL/dq (exact for these numbers, = central differences) differs from
OpenSim's moment arm (computed from the tangent points' motion): 1e-5..4e-4 m on arm26's BIClong, 5.6e-2 m at one
state where the hybrid plane turns fast with q. The closest-point and tangent-point searches are bounded loops
that end once converged (ellipsoid_math). Derivatives: one forward-mode Jacobian (:func:`wrap_numbers`). Cost per
segment: ~300 closest-point searches of up to 64 Newton steps, a tangent search of up to TANGENT_STEPS actions per
end, one or two polylines of 500 points; about 2700 HLO operations, traced once per path (GeometryPath shares one
current path among length, speed and forces; wrapping.py traces each wrap object once over all passes).
"""

from __future__ import annotations

import functools

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbody._dynamics.paths import ellipsoid_math as em
from jaxbody._dynamics.paths import wrap_math as wm
from jaxbody._dynamics.paths.wrap_objects import WrapLine, WrapObject

#: WrapEllipsoid.cpp constants: the fan/Frans blend, fan samples, the Frans-point boundary blend.
MU_BLEND_MIN = 0.7073
MU_BLEND_MAX = 0.9
NUM_FAN_SAMPLES = 300
SV_BOUNDARY_BLEND = 0.3
#: CalcDistanceOnEllipsoid: segment length (m) and at most 499 segments.
SEGMENT_LENGTH = 0.001
MAX_SEGMENTS = 499
#: PathWrap methods.
METHODS = ("hybrid", "midpoint", "axial")
#: A segment (normalized W) that crosses any ellipsoid: stands in for segments that do not wrap, so no NaN
#: from their degenerate geometry reaches a gradient.
_SAFE_P1 = (-2.0, 0.5, 0.3)
_SAFE_P2 = (2.0, 0.3, 0.5)


def _closest_in_turn(a, queries):
    """(len(queries), 3): the closest surface points of queries[0](results), queries[1](results), ..., each query
    computed from the results before it, with one closest-point search traced (a scan over the queries)."""
    def body(results, i):
        q = jax.lax.switch(i, [lambda r, f=f: f(r) for f in queries], results)
        return results.at[i].set(em.closest_point_on_ellipsoid(a, q)), None

    results, _ = jax.lax.scan(body, jnp.zeros((len(queries), 3), a.dtype), jnp.arange(len(queries)))
    return results


def _frans_and_fan(a, r1, r1r2, mu, fan: bool):
    """Frans' technique (per axis i: t[i] where the chord crosses plane i, c1 its closest surface point in that
    plane; the axis most parallel to the segment) and, when ``fan``, the fan point (the chord's midpoint plus the
    normalized sum of the directions from 298 chord points to their closest surface points), in one search."""
    t = jnp.stack([jnp.where(r1r2[i] != 0, (0.0 - r1[i]) / jnp.where(r1r2[i] != 0, r1r2[i], 1.0), 0.0)
                   for i in range(3)])
    tt = jnp.arange(1, NUM_FAN_SAMPLES - 1, dtype=r1.dtype) / NUM_FAN_SAMPLES
    along = jnp.concatenate([t, tt]) if fan else t
    sv = r1[None, :] + along[:, None] * r1r2[None, :]
    modes = jnp.concatenate([jnp.arange(3), jnp.full(tt.shape, em.AUTO)]) if fan else jnp.arange(3)
    c = jax.vmap(lambda p, m: em.closest_point_on_ellipsoid(a, p, m))(sv, modes)
    best = jnp.where(mu[1] > mu[0], 1, 0)
    best = jnp.where(mu[2] > mu[best], 2, best)
    if not fan:
        return t[best], c[best], best, None
    blades = jax.vmap(lambda d: wm.normalize_or_zero(d)[0])(c[3:] - sv[3:])
    v_sum, _ = wm.normalize_or_zero(jnp.sum(blades, axis=0))
    return t[best], c[best], best, r1 + 0.5 * r1r2 + v_sum


def _plane_point(a, r1, r2, p1p2, method: str, quadrant):
    """(c1, r1_start, r2_start): the surface point fixing the wrapping plane (by ``method``, then the quadrant's
    mirror and pull) and where the two tangent searches start (r1, r2: the chord's ends on the surface)."""
    axis, sign = quadrant
    r1r2 = r2 - r1
    weight = jnp.asarray(-jnp.inf, a.dtype)
    if method == "midpoint":
        queries, pick = [lambda res: r1 + 0.5 * (r2 - r1)], lambda res: res[0]
    else:
        mu = jnp.abs(wm.normalize_or_zero(p1p2)[0])
        tb, c1_frans, best, fan = _frans_and_fan(a, r1, r1r2, mu, method == "hybrid")
        queries, pick = [], lambda res: c1_frans
        if method == "hybrid":
            mub = mu[best]
            s = jnp.where((tb < 0.0) | (tb > 1.0), 0.0, jnp.where(tb < SV_BOUNDARY_BLEND, tb / SV_BOUNDARY_BLEND,
                          jnp.where(tb > 1.0 - SV_BOUNDARY_BLEND, (1.0 - tb) / SV_BOUNDARY_BLEND, 1.0)))
            mub = jnp.where((mub > MU_BLEND_MIN) & (s < 1.0), MU_BLEND_MIN + s * (mub - MU_BLEND_MIN), mub)
            tt = (mub - MU_BLEND_MIN) / (MU_BLEND_MAX - MU_BLEND_MIN)
            queries = [lambda res: fan, lambda res: tt * c1_frans + (1.0 - tt) * res[0]]
            pick = lambda res: jnp.where(mub <= MU_BLEND_MIN, res[0], jnp.where(  # noqa: E731
                mub < MU_BLEND_MAX, res[1], c1_frans))
            weight = jnp.where(mub <= MU_BLEND_MIN, 1.0, jnp.where(mub < MU_BLEND_MAX, 1.0 - tt, -jnp.inf))
    if sign != 0:
        def pulled(res):
            """c1 mirrored to the active side, pulled toward the bisecting plane by the fan's weight."""
            c1 = pick(res)
            mirrored, bisection = -c1[axis], (c1[axis] + -c1[axis]) / 2.0
            return c1.at[axis].set(mirrored + jnp.clip(weight, 0.0, 1.0) * (bisection - mirrored))
        queries.append(pulled)
    res = _closest_in_turn(a, queries) if queries else None
    c1 = pick(res)
    r1s = r2s = c1
    if method == "axial":
        inside_chord = (tb > 0.0) & (tb < 1.0)
        r1s, r2s = jnp.where(inside_chord, c1, r1), jnp.where(inside_chord, c1, r2)
    if sign != 0:
        flip = wm.dsign(c1[axis]) != sign
        mirrored = c1.at[axis].set(-c1[axis])
        r1s, r2s = jnp.where(flip, mirrored, r1s), jnp.where(flip, mirrored, r2s)
        c1 = jnp.where(flip, jnp.where(weight > 0.0, res[-1], mirrored), c1)
    return c1, r1s, r2s


def _surface_polyline(r1, r2, a, vs, vs4, factor, far):
    """CalcDistanceOnEllipsoid: (length, segments N, second point, second-to-last point) of the polyline from r1
    to r2 over the section of the ellipsoid by the plane (vs, vs4), the far way round when ``far``."""
    chord = wm.norm(r1 - r2) / factor
    short = chord < SEGMENT_LENGTH
    n = jnp.minimum(jnp.floor(chord / SEGMENT_LENGTH), MAX_SEGMENTS)
    n = jnp.where(short, 1.0, n)
    imax = jnp.where(jnp.abs(vs[1]) > jnp.abs(vs[0]), 1, 0)
    imax = jnp.where(jnp.abs(vs[2]) > jnp.abs(vs[imax]), 2, imax)
    u = jax.nn.one_hot(imax, 3, dtype=r1.dtype)
    vs_u = jnp.dot(vs, u)
    a0 = (-vs4 / jnp.where(vs_u != 0, vs_u, 1.0)) * u
    ar1, _ = wm.normalize_or_zero(r1 - a0)
    ar2, _ = wm.normalize_or_zero(r2 - a0)
    phi0 = wm.safe_acos(jnp.dot(ar1, ar2))
    dphi = jnp.where(far, -(2.0 * jnp.pi - phi0), phi0) / n
    vsz, _ = wm.normalize_or_zero(jnp.cross(ar1, ar2))
    vsy = jnp.cross(vsz, ar1)
    phi = jnp.arange(1, MAX_SEGMENTS, dtype=r1.dtype) * dphi
    rays = jnp.cos(phi)[:, None] * ar1[None, :] + jnp.sin(phi)[:, None] * vsy[None, :]
    f1, f2 = rays / a, a0 / a
    aa, bb, cc = jnp.sum(f1 * f1, -1), 2.0 * jnp.sum(f1 * f2, -1), jnp.dot(f2, f2) - 1.0
    mu3 = (-bb + em.safe_sqrt(bb * bb - 4.0 * aa * cc)) / (2.0 * aa)
    interior = a0[None, :] + mu3[:, None] * rays
    k = jnp.arange(MAX_SEGMENTS + 1)
    pts = jnp.concatenate([r1[None], interior, r2[None]])
    pts = jnp.where((k == 0)[:, None], r1, jnp.where((k >= n)[:, None], r2, pts))
    seg = wm.norm(pts[1:] - pts[:-1])
    length = jnp.where(short, chord * factor, jnp.sum(jnp.where(k[:-1] < n, seg, 0.0)))
    last = jnp.maximum(n.astype(jnp.int32) - 1, 0)
    return length, jnp.where(short, 1.0, n), pts[1], pts[last]


def _classify(p1, p2, a):
    """(inside, proceed, p1e, p2e) of the normalized segment: an end inside (INSIDE_RADIUS), or it wraps."""
    q1, q2 = (p1 / a) ** 2, (p2 / a) ** 2
    p1e, p2e = ((-1.0 + q1[0]) + q1[1]) + q1[2], ((-1.0 + q2[0]) + q2[1]) + q2[2]
    inside = (p1e < -0.0001) | (p2e < -0.0001)
    ppm = jnp.dot(wm.normalize_or_zero(p1)[0], wm.normalize_or_zero(p2)[0]) - 1.0
    f1, f2 = (p1 - p2) / a, p2 / a
    aa, bb, cc = jnp.dot(f1, f1), 2.0 * jnp.dot(f1, f2), jnp.dot(f2, f2) - 1.0
    disc = bb * bb - 4.0 * aa * cc
    root = em.safe_sqrt(disc)
    l1, l2 = (-bb + root) / (2.0 * aa), (-bb - root) / (2.0 * aa)
    crosses = (disc >= 0.0) & (0.0 < l1) & (l1 < 1.0) & (0.0 < l2) & (l2 < 1.0)
    return inside, ~inside & (jnp.abs(ppm) >= 0.0001) & crosses, p1e, p2e


def _wrap_numbers(x, method: str, quadrant):
    """(7,): r1, r2 (W, m) and the surface length (m) of the segment x[:3] -> x[3:6] (W, m) over the ellipsoid of
    semi-axes x[6:] (zeros for a segment that does not wrap)."""
    sign = quadrant[1]
    factor = 3.0 / jnp.sum(x[6:])
    a = x[6:] * factor
    p1, p2 = x[:3] * factor, x[3:6] * factor
    _, proceed, p1e, p2e = _classify(p1, p2, a)
    # every later step on a segment that wraps, or on a stand-in that does
    p1 = jnp.where(proceed, p1, jnp.asarray(_SAFE_P1, p1.dtype) * a)
    p2 = jnp.where(proceed, p2, jnp.asarray(_SAFE_P2, p2.dtype) * a)
    p1e, p2e = jnp.where(proceed, p1e, 1.0), jnp.where(proceed, p2e, 1.0)
    p1p2, f1, f2 = p1 - p2, (p1 - p2) / a, p2 / a
    aa, bb, cc = jnp.dot(f1, f1), 2.0 * jnp.dot(f1, f2), jnp.dot(f2, f2) - 1.0
    root = em.safe_sqrt(bb * bb - 4.0 * aa * cc)
    r1, r2 = p2 + (-bb + root) / (2.0 * aa) * p1p2, p2 + (-bb - root) / (2.0 * aa) * p1p2
    c1, r1, r2 = _plane_point(a, r1, r2, p1p2, method, quadrant)
    vs, _ = wm.normalize_or_zero(jnp.cross(p1p2, p1 - c1))
    vs4 = -jnp.dot(vs, c1)
    ends = jax.vmap(lambda r, p, pe: em.tangent_point(r, p, pe, a, vs, vs4, proceed)[0])
    r1, r2 = ends(jnp.stack([r1, r2]), jnp.stack([p1, p2]), jnp.stack([p1e, p2e]))
    if sign == 0:
        length, *_ = _surface_polyline(r1, r2, a, vs, vs4, factor, jnp.asarray(False))
    else:
        lengths, n, w1, w2 = jax.vmap(lambda far: _surface_polyline(r1, r2, a, vs, vs4, factor, far))(
            jnp.asarray([False, True]))
        back = ((jnp.dot(wm.normalize_or_zero(p1 - r1)[0], wm.normalize_or_zero(w1[0] - r1)[0]) > 0.0)
                | (jnp.dot(wm.normalize_or_zero(p2 - r2)[0], wm.normalize_or_zero(w2[0] - r2)[0]) > 0.0))
        length = jnp.where((n[0] >= 2.0) & back, lengths[1], lengths[0])
    return jnp.where(proceed, jnp.concatenate([r1, r2, length[None]]) / factor, 0.0)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def wrap_numbers(x, method: str, quadrant):
    """:func:`_wrap_numbers` with its derivative by forward mode: the 9 x 7 Jacobian is one vmapped ``jax.jvp``
    through the iterations, so reverse mode transposes only that matrix product, never the loops (whose
    transposition makes XLA's compile slow)."""
    return _wrap_numbers(x, method, quadrant)


@wrap_numbers.defjvp
def _wrap_numbers_jvp(method, quadrant, primals, tangents):
    (x,), (dx,) = primals, tangents
    f = functools.partial(_wrap_numbers, method=method, quadrant=quadrant)
    y, J = jax.vmap(lambda t: jax.jvp(f, (x,), (t,)), out_axes=(None, 0))(jnp.eye(x.shape[0], dtype=x.dtype))
    return y, dx @ J


class WrapEllipsoid(WrapObject):
    """``dimensions`` (3,): the semi-axes along W's x, y, z (m); ``method`` (static): the PathWrap's method."""

    dimensions: jnp.ndarray
    method: str = eqx.field(static=True, default="hybrid")

    def wrap_line(self, p1, p2, single_wrap: bool) -> WrapLine:
        factor = 3.0 / jnp.sum(self.dimensions)
        inside, proceed, _, _ = _classify(p1 * factor, p2 * factor, self.dimensions * factor)
        y = wrap_numbers(jnp.concatenate([p1, p2, self.dimensions]), self.method, self.quadrant)
        code = jnp.where(inside, wm.INSIDE_RADIUS, jnp.where(proceed, wm.MANDATORY_WRAP, wm.NO_WRAP))
        return WrapLine(code, y[:3], y[3:6], y[6])
