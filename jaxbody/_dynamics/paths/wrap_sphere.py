"""WrapSphere (OpenSim 4.6 WrapSphere::wrapLine): a sphere of ``radius`` (m) centred at W's origin.

The segment wraps only when the straight line p1-p2 crosses the sphere between the points; the tangent points
lie in the plane through p1, p2 and the centre (a great circle: the shortest path, so the length's derivative
is the sum of the straight segments' end-point velocities along them). With a quadrant the tangent points on
that side are chosen and a far-side wrap is taken the long way, with OpenSim's negative length
``-(2 pi - angle) r``. Not reproduced: OpenSim reuses the previous wrap's points when the line passes within
1e-5 of the centre (a history dependence); here the construction proceeds.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._dynamics.paths import wrap_math as wm
from jaxbody._dynamics.paths.wrap_objects import WrapLine, WrapObject


def _tangent_candidates(p, n, R):
    """OpenSim's two tangent point candidates from p about the centre, in the plane with normal n."""
    y, _ = wm.normalize_or_zero(-p)
    z = jnp.cross(n, y)
    dist = wm.norm(p)
    a = jnp.arcsin(jnp.clip(R / dist, -1.0, 1.0))
    c, s = jnp.cos(a), jnp.sin(a)
    return p + (c * y - s * z) * dist * c, p + (c * y + s * z) * dist * c


class WrapSphere(WrapObject):
    radius: jnp.ndarray

    def wrap_line(self, p1, p2, single_wrap: bool) -> WrapLine:
        R = self.radius
        axis, sign = self.quadrant
        inside = (wm.norm(p1) < R) | (wm.norm(p2) < R)
        ri, mp = p1 - p2, -p2
        a, b, c = jnp.dot(ri, ri), -2.0 * jnp.dot(mp, ri), jnp.dot(mp, mp) - R * R
        disc = b * b - 4.0 * a * c
        root = jnp.sqrt(jnp.where(disc >= 0, disc, 0.0))
        l1, l2 = (-b + root) / (2.0 * a), (-b - root) / (2.0 * a)
        crosses = (disc >= 0.0) & (0.0 < l1) & (l1 < 1.0) & (0.0 < l2) & (l2 < 1.0) & ~(l1 < l2)
        p1p2, _ = wm.normalize_or_zero(p1 - p2)
        np2, _ = wm.normalize_or_zero(p2)
        n, _ = wm.normalize_or_zero(jnp.cross(p1p2, np2))
        r1a, r1b = _tangent_candidates(p1, n, R)
        r2a, r2b = _tangent_candidates(p2, n, R)
        u1a, u1b = wm.normalize_or_zero(r1a)[0], wm.normalize_or_zero(r1b)[0]
        u2a, u2b = wm.normalize_or_zero(r2a)[0], wm.normalize_or_zero(r2b)[0]
        r1, r2 = wm.most_aligned_pair(u1a, u1b, u2a, u2b, r1a, r1b, r2a, r2b)
        code = jnp.asarray(wm.WRAPPED)
        far = jnp.asarray(False)
        proceed = crosses & ~inside
        if sign != 0:
            s1, s2 = wm.dsign(p1[axis]), wm.dsign(p2[axis])
            either_on_side = (s1 == sign) | (s2 == sign)
            mm, tt = wm.closest_point_on_line(jnp.zeros(3, p1.dtype), p1, p1p2)
            tt = -tt
            mandatory = (jnp.dot(mm, mm) < R * R) & (tt > 0.0) & (tt < 1.0)
            potential = (s1 != s2) & (wm.dsign(mm[axis]) != sign)
            code = jnp.where(either_on_side, jnp.where(mandatory, wm.MANDATORY_WRAP, wm.WRAPPED), code)
            proceed = proceed & ~(either_on_side & ~mandatory & ~potential)
            constrain = (s1 != sign) | (s2 != sign)
            e = jnp.zeros(3, p1.dtype).at[axis].set(float(sign))
            sum_musc, _ = wm.normalize_or_zero(-p1 - p2)
            c1 = jnp.dot(u1a, sum_musc) > jnp.dot(u1b, sum_musc)
            c2 = jnp.dot(u2a, sum_musc) > jnp.dot(u2b, sum_musc)
            q1, o1 = jnp.where(c1, r1a, r1b), jnp.where(c1, r1b, r1a)
            q2, o2 = jnp.where(c2, r2a, r2b), jnp.where(c2, r2b, r2a)
            flip_dir, _ = wm.normalize_or_zero((q1 - p1) + (q2 - p2))
            flip = jnp.dot(flip_dir, e) < 0.0
            q1, q2 = jnp.where(flip, o1, q1), jnp.where(flip, o2, q2)
            far_q = jnp.dot(q1 + q2, (q1 - p1) + (q2 - p2)) < 0.0
            r1, r2 = jnp.where(constrain, q1, r1), jnp.where(constrain, q2, r2)
            far = constrain & far_q
        n1, _ = wm.normalize_or_zero(r1)
        n2, _ = wm.normalize_or_zero(r2)
        angle = wm.safe_acos(jnp.dot(n1, n2))
        angle = jnp.where(far, -(2.0 * jnp.pi - angle), angle)
        code = jnp.where(inside, wm.INSIDE_RADIUS, jnp.where(proceed, code, wm.NO_WRAP))
        return WrapLine(code, r1, r2, jnp.where(proceed, R * angle, 0.0))
