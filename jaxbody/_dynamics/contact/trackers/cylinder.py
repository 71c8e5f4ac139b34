"""Trackers of the finite cylinder (radius r, half-length h, axis z of its frame S; jaxbody's own: Simbody's
Cylinder is infinite) against a half-space, a sphere and a capsule; pair-table signature (``table.py``),
batched over the n pairs, normals from surface 1 into surface 2.

* half-space: eight rim points, four per cap at 90 degree steps starting from the rim point deepest in the
  half-space, each a penalty point as a brick's corner (Simbody's BrickHalfSpacePenalty law): a cylinder
  lying on its side rests on one point per cap, one standing on a cap on four points of its rim.
* sphere: exact closest point of the solid cylinder to the center (a center inside: the nearest of side and
  caps); depth ``radius - signed distance``; curvatures of the relative surface (Hertz elliptical):
  side ``(1/rs + 1/r, 1/rs)``, cap or rim ``(1/rs, 1/rs)``.
* capsule: the capsule axis point of least signed distance to the cylinder (the signed distance of a convex
  body is convex along a line: ``SEGMENT_STEPS`` golden-section steps, no gradient through the search, exact
  gradient at the minimum), then as the sphere. Exact when the deepest axis point's normal frees the whole axis
  (separated and shallow contacts); a capsule axis deep across the cylinder gets less than the true depth.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._dynamics.contact.trackers.contact import point_contact
from jaxbody._dynamics.contact.trackers.primitive import minimize_along_axis, unit_or, x_axis
from jaxbody._math import spatial

#: Golden-section steps for the capsule's axis point (the interval shrinks by 0.618 per step).
SEGMENT_STEPS = 60


def _unit_or_x(v):
    """(v / |v| with the x axis where |v| = 0, |v|) for (n, 3) v; finite gradients."""
    return unit_or(v, x_axis(v))


def half_space_cylinder(R_G1, p_G1, half_space, R_G2, p_G2, cylinder):
    """Half-space (surface 1, material x_H > 0) against a cylinder: 8 rim points (m = 8), see the module."""
    x_H = R_G1[:, :, 0]
    z = R_G2[:, :, 2]
    radial, length = _unit_or_x(x_H - jnp.sum(x_H * z, -1, keepdims=True) * z)  # deepest rim direction, G
    radial = jnp.where((length > 1e-12)[:, None], radial, R_G2[:, :, 0])  # cap parallel to the surface
    other = jnp.cross(z, radial)
    points = []
    for cap in (-1.0, 1.0):
        for c, s in ((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)):
            points.append(p_G2 + (cap * cylinder.half_length)[:, None] * z
                          + cylinder.radius[:, None] * (c * radial + s * other))
    rim = jnp.stack(points, 1)  # (n, 8, 3)
    c_H = jnp.einsum("nji,nmj->nmi", R_G1, rim - p_G1[:, None])
    depth = c_H[..., 0]
    origin = p_G1[:, None] + jnp.einsum("nij,nmj->nmi", R_G1, jnp.stack([0.5 * depth, c_H[..., 1], c_H[..., 2]], -1))
    return point_contact(depth, origin, jnp.broadcast_to(-x_H[:, None], rim.shape))


def _cylinder_closest(radius, half_length, c):
    """(closest point q, outward normal at q, signed distance, on_side) for points c (n, 3) in the cylinder frame."""
    axial, rho = _unit_or_x(c * jnp.array([1.0, 1.0, 0.0]))
    z = c[:, 2]
    sign = jnp.where(z >= 0, 1.0, -1.0)
    ez = jnp.zeros_like(c).at[:, 2].set(1.0)
    q_out = jnp.clip(rho, None, radius)[:, None] * axial + jnp.clip(z, -half_length, half_length)[:, None] * ez
    n_out, d_out = _unit_or_x(c - q_out)
    inside = (rho <= radius) & (jnp.abs(z) <= half_length)
    side_gap, cap_gap = radius - rho, half_length - jnp.abs(z)
    side_first = side_gap <= cap_gap
    q_in = jnp.where(side_first[:, None], radius[:, None] * axial + z[:, None] * ez,
                     c * jnp.array([1.0, 1.0, 0.0]) + (sign * half_length)[:, None] * ez)
    n_in = jnp.where(side_first[:, None], axial, sign[:, None] * ez)
    d_in = -jnp.minimum(side_gap, cap_gap)
    on_side = jnp.where(inside, side_first, (rho > radius) & (jnp.abs(z) < half_length))
    return (jnp.where(inside[:, None], q_in, q_out), jnp.where(inside[:, None], n_in, n_out),
            jnp.where(inside, d_in, d_out), on_side)


def _round_against_cylinder(R_G1, p_G1, cylinder, center, rs):
    c_S = spatial.mattvec(R_G1, center - p_G1)
    q, n, dist, on_side = _cylinder_closest(cylinder.radius, cylinder.half_length, c_S)
    depth = rs - dist
    normal = spatial.matvec(R_G1, n)
    origin = p_G1 + spatial.matvec(R_G1, q) - (0.5 * depth)[:, None] * normal
    kmin = 1.0 / rs
    kmax = kmin + jnp.where(on_side, 1.0 / cylinder.radius, 0.0)
    curvatures = jnp.stack([kmax, kmin], -1)
    return point_contact(depth[:, None], origin[:, None], normal[:, None], curvatures[:, None])


def cylinder_sphere(R_G1, p_G1, cylinder, R_G2, p_G2, sphere):
    """Cylinder (surface 1) against a sphere (m = 1), see the module docstring."""
    return _round_against_cylinder(R_G1, p_G1, cylinder, p_G2, sphere.radius)


def cylinder_capsule(R_G1, p_G1, cylinder, R_G2, p_G2, capsule):
    """Cylinder (surface 1) against a capsule (m = 1): its axis point nearest the cylinder, then as a sphere."""
    p_S = spatial.mattvec(R_G1, p_G2 - p_G1)
    d_S = spatial.mattvec(R_G1, R_G2[:, :, 2])
    h = capsule.half_length

    t = minimize_along_axis(lambda t: _cylinder_closest(cylinder.radius, cylinder.half_length, p_S + t[:, None] * d_S)[2],
                            h, SEGMENT_STEPS)
    return _round_against_cylinder(R_G1, p_G1, cylinder, p_G2 + t[:, None] * R_G2[:, :, 2], capsule.radius)
