"""OpenSim's WrapMath and SimmMacros helpers as gradient-safe JAX functions on 3-vectors (OpenSim 4.6
OpenSim/Simulation/Wrap/WrapMath.cpp), in the order of operations OpenSim uses so results agree to rounding."""

from __future__ import annotations

import jax.numpy as jnp

#: SimTK::Eps (float64 machine epsilon): NormalizeOrZero's threshold.
EPS = 2.220446049250313e-16
#: WrapMath.cpp LINE_EPSILON.
LINE_EPSILON = 1e-5
#: SimmMacros.h ROUNDOFF_ERROR.
ROUNDOFF_ERROR = 2e-13

# OpenSim's WrapObject::WrapAction codes.
NO_WRAP, INSIDE_RADIUS, WRAPPED, MANDATORY_WRAP = 0, 1, 2, 3


def norm(v):
    """|v| with a finite (zero) gradient at v = 0."""
    sq = jnp.sum(v * v, axis=-1)
    safe = jnp.where(sq > 0, sq, 1.0)
    return jnp.where(sq > 0, jnp.sqrt(safe), 0.0)


def normalize_or_zero(v):
    """(v / |v|, |v|), or (0, |v|) when |v| < Eps (WrapMath::NormalizeOrZero)."""
    mag = norm(v)
    ok = mag >= EPS
    return jnp.where(ok[..., None], v / jnp.where(ok, mag, 1.0)[..., None], 0.0), mag


def dsign(x):
    """SimmMacros DSIGN: 1 for x >= 0, else -1."""
    return jnp.where(x >= 0.0, 1, -1)


def safe_acos(x):
    """acos on [-1, 1] (clipped) with finite gradients at the ends."""
    return jnp.arccos(jnp.clip(x, -1.0 + 1e-16, 1.0 - 1e-16))


def most_aligned_pair(u1a, u1b, u2a, u2b, r1a, r1b, r2a, r2b):
    """OpenSim's unconstrained choice of tangent points (WrapSphere / WrapCylinder::wrapLine): of the candidates
    r1a, r1b at the first end and r2a, r2b at the second, the pair (r1, r2) whose unit directions u (from the
    centre or axis) have the largest dot product, ties going to the first of (a, a), (a, b), (b, a), (b, b)."""
    d1, d2, d3, d4 = jnp.dot(u1a, u2a), jnp.dot(u1a, u2b), jnp.dot(u1b, u2a), jnp.dot(u1b, u2b)
    pick1 = (d1 > d2) & (d1 > d3) & (d1 > d4)
    pick2 = ~pick1 & (d2 > d3) & (d2 > d4)
    pick3 = ~pick1 & ~pick2 & (d3 > d4)
    return jnp.where(pick1 | pick2, r1a, r1b), jnp.where(pick1 | pick3, r2a, r2b)


def closest_point_on_line(pt, line_pt, line):
    """(closest point, t) of WrapMath::GetClosestPointOnLineToPoint: t in units of |line|."""
    v1, mag = normalize_or_zero(pt - line_pt)
    v2, mag2 = normalize_or_zero(line)
    t = jnp.dot(v1, v2) * mag
    return line_pt + t * v2, t / jnp.where(mag2 > 0, mag2, 1.0)


def distance_squared_point_to_line(point, line_pt, line):
    """WrapMath::CalcDistanceSquaredPointToLine."""
    to_line = line_pt - point
    n = line / norm(line)
    d = to_line - jnp.dot(to_line, n) * n
    return jnp.dot(d, d)


def intersect_lines(p1, p2, p3, p4):
    """WrapMath::IntersectLines: (ok, pInt1, s, pInt2, t) for lines p1->p2 and p3->p4 (s, t in units of the
    segments' lengths); ok False (s = t = NaN) for parallel lines."""
    vec1, mag1 = normalize_or_zero(p2 - p1)
    vec2, mag2 = normalize_or_zero(p4 - p3)
    cross = jnp.cross(vec1, vec2)
    denom = jnp.dot(cross, cross)
    ok = jnp.abs(denom) > ROUNDOFF_ERROR
    safe_denom = jnp.where(ok, denom, 1.0)
    t = jnp.linalg.det(jnp.stack([p3 - p1, vec1, cross])) / safe_denom
    s = jnp.linalg.det(jnp.stack([p3 - p1, vec2, cross])) / safe_denom
    p_int2 = p3 + t * vec2
    p_int1 = p1 + s * vec1
    nan = jnp.nan
    return ok, p_int1, jnp.where(ok, s / mag1, nan), p_int2, jnp.where(ok, t / mag2, nan)


def intersect_segment_plane(pt1, pt2, plane, d):
    """WrapMath::IntersectLineSegPlane: (ok, intersection) of segment pt1->pt2 with the plane n.x + d = 0."""
    vec = pt2 - pt1
    dot = jnp.dot(vec, plane)
    ok = jnp.abs(dot) >= LINE_EPSILON
    t = (-d - plane[0] * pt1[0] - plane[1] * pt1[1] - plane[2] * pt1[2]) / jnp.where(ok, dot, 1.0)
    ok = ok & (t >= -LINE_EPSILON) & (t <= 1.0 + LINE_EPSILON)
    return ok, pt1 + t * vec


def rotation_about_z(angle):
    """R (3, 3) rotating by ``angle`` (rad) about z."""
    c, s = jnp.cos(angle), jnp.sin(angle)
    z, o = jnp.zeros_like(c), jnp.ones_like(c)
    return jnp.stack([jnp.stack([c, -s, z]), jnp.stack([s, c, z]), jnp.stack([z, z, o])])
