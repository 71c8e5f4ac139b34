"""WrapCylinder (OpenSim 4.6 WrapCylinder::wrapLine): a cylinder of ``radius`` and ``length`` (m) along W's z
axis, centred at W's origin.

Without a quadrant the segment wraps only when it passes within the radius of the axis between the points
(a mandatory wrap). OpenSim's construction, reproduced operation by operation: tangent point candidates in
the planes normal to the axis through each end point, the pair chosen by the quadrant, slid along the axis
to the plane through p1, p2 and an apex point; no wrap when both tangent points lie beyond the cylinder's
ends; the surface length is the helix ``sqrt((r theta)^2 + axial^2)`` (``_make_spiral_path``). When the
path has more than one wrap object (``single_wrap`` False), OpenSim then slides the tangent points (up to
100 times, factor 1.5) until each straight segment meets the helix within 0.1 degree; so does this code, as a
fixed-count loop that stops changing once converged.

This is OpenSim's approximation of the shortest path, not the exact geodesic: the length's derivative then
differs slightly from OpenSim's lengthening speed (which moves the tangent points with the cylinder).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._dynamics.paths import wrap_math as wm
from jaxbody._dynamics.paths.wrap_objects import WrapLine, WrapObject

#: WrapCylinder.cpp MAX_ITERATIONS and TANGENCY_THRESHOLD (0.1 degree, in rad).
MAX_ITERATIONS = 100
TANGENCY_THRESHOLD = 0.1 * jnp.pi / 180.0
#: OpenSim samples the helix every 2 mm (``numWrapSegments = int(length / 0.002)``).
SEGMENT_LENGTH = 0.002

P0 = (0.0, 0.0, -1.0)
DN = (0.0, 0.0, 1.0)


def _helix(r1, r2, far, dtype):
    """(length, theta, axial) of OpenSim's spiral from r1 to r2 about the z axis (``_make_spiral_path``)."""
    p0, dn = jnp.asarray(P0, dtype), jnp.asarray(DN, dtype)
    r1a, _ = wm.closest_point_on_line(r1, p0, dn)
    r2a, _ = wm.closest_point_on_line(r2, p0, dn)
    axial = jnp.dot(r2a - r1a, dn)
    uu, vv = r1 - r1a, r2 - r2a
    theta = jnp.arctan2(jnp.dot(jnp.cross(uu, vv), dn), jnp.dot(uu, vv))
    theta = jnp.where(far, 2.0 * jnp.pi - theta, theta)
    return theta, axial


def _adjust_tangent_point(pt1, dn, r1, w1):
    """(adjusted?, r1'): WrapCylinder::_adjust_tangent_point."""
    pr, _ = wm.normalize_or_zero(r1 - pt1)
    rw, _ = wm.normalize_or_zero(w1 - r1)
    alpha, omega = wm.safe_acos(jnp.dot(pr, dn)), wm.safe_acos(jnp.dot(rw, dn))
    adjust = jnp.abs(alpha - omega) > TANGENCY_THRESHOLD
    p1a, _ = wm.closest_point_on_line(pt1, r1, dn)
    w1a, _ = wm.closest_point_on_line(w1, r1, dn)
    _, _, _, p_int2, _ = wm.intersect_lines(pt1, w1, p1a, w1a)
    return adjust, jnp.where(adjust, r1 + 1.5 * (p_int2 - r1), r1)


def _spiral_point(r1, theta, axial, sense, t, dn):
    return wm.rotation_about_z(sense * t * theta) @ r1 + dn * (t * axial)


def _slide_to_tangency(p1, p2, r1, r2, far, radius, dtype):
    """OpenSim's restart loop of ``_make_spiral_path`` for a path with several wrap objects."""
    dn = jnp.asarray(DN, dtype)
    sense = jnp.where(far, -1.0, 1.0)

    def step(_, carry):
        r1, r2, done = carry
        theta, axial = _helix(r1, r2, far, dtype)
        length = jnp.sqrt((radius * theta) ** 2 + axial ** 2)
        segments = jnp.maximum(jnp.floor(length / SEGMENT_LENGTH), 1.0)
        t = 1.0 / segments
        w1 = _spiral_point(r1, theta, axial, sense, t, dn)
        adjust1, n1 = _adjust_tangent_point(p1, dn, r1, w1)
        w2 = _spiral_point(n1, theta, axial, sense, 1.0 - t, dn)
        adjust2, n2 = _adjust_tangent_point(p2, dn, r2, w2)
        move = ~done & (segments > 1.0) & (adjust1 | adjust2)
        return jnp.where(move, n1, r1), jnp.where(move, n2, r2), done | ~move

    r1, r2, _ = jax.lax.fori_loop(0, MAX_ITERATIONS, step, (r1, r2, jnp.asarray(False)))
    return r1, r2


class WrapCylinder(WrapObject):
    radius: jnp.ndarray
    length: jnp.ndarray

    def wrap_line(self, p1, p2, single_wrap: bool) -> WrapLine:
        R, dtype = self.radius, p1.dtype
        r_sq = R * R
        axis, sign = self.quadrant
        constrained = sign != 0
        p0, dn = jnp.asarray(P0, dtype), jnp.asarray(DN, dtype)
        inside = (wm.distance_squared_point_to_line(p1, p0, dn) < r_sq) | (wm.distance_squared_point_to_line(p2, p0, dn) < r_sq)
        half = 0.5 * self.length
        cyl_start = jnp.stack([jnp.zeros((), dtype), jnp.zeros((), dtype), -half])
        cyl_end = jnp.stack([jnp.zeros((), dtype), jnp.zeros((), dtype), half])
        _, near12, t12, near00, _ = wm.intersect_lines(p1, p2, cyl_start, cyl_end)
        d12 = near12 - near00
        hits = (jnp.dot(d12, d12) < r_sq) & (t12 > 0.0) & (t12 < 1.0)
        proceed = ~inside
        code = jnp.asarray(wm.WRAPPED)
        if not constrained:
            proceed = proceed & hits
            code = jnp.asarray(wm.MANDATORY_WRAP)
        p11, _ = wm.closest_point_on_line(p1, p0, dn)
        p22, _ = wm.closest_point_on_line(p2, p0, dn)

        def candidates(p, pax):
            vv, dist_axis = wm.normalize_or_zero(p - pax)
            sin_theta = R / dist_axis
            dist = R * sin_theta
            pp = pax + dist * vv
            dist = jnp.sqrt(jnp.maximum(r_sq - dist * dist, 0.0))
            uu = jnp.cross(dn, vv)
            return pp + dist * uu, pp - dist * uu, dist_axis

        r1a, r1b, p11_dist = candidates(p1, p11)
        r2a, r2b, p22_dist = candidates(p2, p22)
        far = jnp.asarray(False)
        long_wrap = jnp.asarray(False)
        if constrained:
            s = lambda v: wm.dsign(v[axis])  # noqa: E731
            either_on_side = (s(p1) == sign) | (s(p2) == sign)
            potential = (s(p1) != s(p2)) & (s(near12) != sign)
            code = jnp.where(either_on_side & hits, wm.MANDATORY_WRAP, wm.WRAPPED)
            proceed = proceed & ~(either_on_side & ~hits & ~potential)
            r1am, r1bm, r2am, r2bm = r1a - p11, r1b - p11, r2a - p22, r2b - p22
            alpha = wm.safe_acos(jnp.dot(r1am, r2bm) / (wm.norm(r1am) * wm.norm(r2bm)))
            beta = wm.safe_acos(jnp.dot(r1bm, r2am) / (wm.norm(r1bm) * wm.norm(r2am)))
            on1a, on1b, on2a, on2b = s(r1a) == sign, s(r1b) == sign, s(r2a) == sign, s(r2b) == sign
            # OpenSim's cascade: (r1b, r2a) "B" or (r1a, r2b) "A", and far_side_wrap.
            both = on1a & on1b
            neither = ~on1a & ~on1b
            choose_b = jnp.where(both, on2a, jnp.where(on1a & ~on1b, False, jnp.where(~on1a & on1b, True,
                                 jnp.where(on2a, True, jnp.where(on2b, False, ~(alpha > beta))))))
            far = jnp.where(neither & ~on2a & ~on2b, True, jnp.where(choose_b, ~(alpha > beta), alpha > beta))
            r1 = jnp.where(choose_b, r1b, r1a)
            r2 = jnp.where(choose_b, r2a, r2b)
            sum_musc = (r1 - p1) + (r2 - p2)
            sum_r = (r1 - p11) + (r2 - p22)
            long_wrap = jnp.dot(sum_r, sum_musc) < 0.0
        else:
            u1a, u1b = wm.normalize_or_zero(r1a - p11)[0], wm.normalize_or_zero(r1b - p11)[0]
            u2a, u2b = wm.normalize_or_zero(r2a - p22)[0], wm.normalize_or_zero(r2b - p22)[0]
            r1, r2 = wm.most_aligned_pair(u1a, u1b, u2a, u2b, r1a, r1b, r2a, r2b)
        # apex edge: bisect r1 and r2 about the axis, at the point of the muscle line split by the axis distances
        vv, _ = wm.normalize_or_zero((r1 - p11) + (r2 - p22))
        t = p11_dist / (p11_dist + p22_dist)
        mpt = p1 + t * (p2 - p1)
        axispt, _ = wm.closest_point_on_line(mpt, p0, dn)
        l1, _ = wm.normalize_or_zero(p1 - axispt)
        l2, _ = wm.normalize_or_zero(p2 - axispt)
        plane_normal, _ = wm.normalize_or_zero(jnp.cross(l1, l2))
        vert1, _ = wm.normalize_or_zero(jnp.cross(dn, plane_normal))
        vert2, _ = wm.normalize_or_zero(jnp.cross(plane_normal, dn))
        apex1, apex2 = axispt + R * vert1, axispt + R * vert2
        dist1, dist2 = jnp.sum((mpt - apex1) ** 2), jnp.sum((mpt - apex2) ** 2)
        apex = jnp.where(far == (dist1 < dist2), apex2, apex1)
        uu, _ = wm.normalize_or_zero(p1 - apex)
        vv, _ = wm.normalize_or_zero(p2 - apex)
        plane_normal, _ = wm.normalize_or_zero(jnp.cross(uu, vv))
        d = -p1[0] * plane_normal[0] - p1[1] * plane_normal[1] - p1[2] * plane_normal[2]
        ok1, r1p = wm.intersect_segment_plane(r1 - 10.0 * dn, r1 + 10.0 * dn, plane_normal, d)
        ok2, r2p = wm.intersect_segment_plane(r2 - 10.0 * dn, r2 + 10.0 * dn, plane_normal, d)
        # OpenSim passes p22 (a point) as the line direction here; kept as written.
        c1, _ = wm.closest_point_on_line(r1p, p11, p22)
        c2, _ = wm.closest_point_on_line(r2p, p11, p22)
        r1 = jnp.where(ok1 & (jnp.sum((c1 - p22) ** 2) < jnp.sum((p11 - p22) ** 2)), r1p, r1)
        r2 = jnp.where(ok2 & (jnp.sum((c2 - p11) ** 2) < jnp.sum((p22 - p11) ** 2)), r2p, r2)
        beyond = ((r1[2] < -half) | (r1[2] > half)) & ((r2[2] < -half) | (r2[2] > half))
        proceed = proceed & ~beyond
        if not single_wrap:
            r1, r2 = _slide_to_tangency(p1, p2, r1, r2, long_wrap, R, dtype)
        theta, axial = _helix(r1, r2, long_wrap, dtype)
        length = jnp.sqrt((R * theta) ** 2 + axial ** 2)
        code = jnp.where(inside, wm.INSIDE_RADIUS, jnp.where(proceed, code, wm.NO_WRAP))
        return WrapLine(code, r1, r2, jnp.where(proceed, length, 0.0))
