"""Trackers of the primitive pairs (half-space, sphere, ellipsoid, capsule, brick), batched over pairs.

Each has the pair table's signature ``track(R_G1, p_G1, shape1, R_G2, p_G2, shape2) -> Contact``
(``table.py``); normals point from surface 1 into surface 2; every formula is finite, with finite gradients,
at any pose (coincident centers, parallel axes, separated pairs). Spheres, capsules and the bricks' corners
follow Simbody's trackers where Simbody has the pair; the rest are jaxbody's own, said so below.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.contact import geometry
from jaxbody._dynamics.contact.trackers.contact import Contact, circular_contact, point_contact
from jaxbody._math import spatial

#: Sphere/ellipsoid closest-point iterations (Newton on the ellipsoid's normal parameter; see sphere_ellipsoid).
ELLIPSOID_NEWTON_STEPS = 40
#: Golden-section steps locating a capsule's axis point closest to a box (interval shrinks by 0.618 each).
BOX_SEGMENT_STEPS = 60


def unit_or(v, fallback):
    """(v / |v|, |v|) of (..., 3) v, ``fallback`` (broadcastable unit vector) where |v| = 0; finite gradients."""
    length = spatial.safe_norm(v)
    nonzero = length > 0
    return jnp.where(nonzero[..., None], v / jnp.where(nonzero, length, 1.0)[..., None], fallback), length


def _sphere_pair(c1, r1, c2, r2, fallback):
    """Two spheres (Simbody's SphereSphere): depth ``r1 + r2 - d``, normal from 1 to 2, origin at
    ``c1 + (r1 - depth/2) n``, effective radius ``r1 r2 / (r1 + r2)``; arrays (n, ...)."""
    normal, d = unit_or(c2 - c1, fallback)
    depth = r1 + r2 - d
    return depth, c1 + (r1 - 0.5 * depth)[..., None] * normal, normal


def x_axis(like):
    """The unit x vector, shaped and typed as ``like`` (..., 3)."""
    return jnp.zeros_like(like).at[..., 0].set(1.0)


def half_space_sphere(R_G1, p_G1, half_space, R_G2, p_G2, sphere):
    """Simbody's HalfSpaceSphere (``geometry.half_space_sphere``): depth ``r + x`` (x: the center's half-space
    x), normal ``-x_H``, origin ``X_GH (depth/2, y, z)``, effective radius r."""
    depth, normal, origin = geometry.half_space_sphere(R_G1, p_G1, p_G2, sphere.radius)
    return circular_contact(depth, origin, normal, sphere.radius)


def half_space_capsule(R_G1, p_G1, half_space, R_G2, p_G2, capsule):
    """Capsule on a half-space (jaxbody's own): two points, each end sphere as half_space_sphere (m = 2), so a
    capsule lying flat rests on both ends and one standing on an end on that end alone."""
    axis = R_G2[:, :, 2] * capsule.half_length[:, None]
    parts = [half_space_sphere(R_G1, p_G1, half_space, R_G2, p_G2 + s * axis, capsule) for s in (-1.0, 1.0)]
    return Contact(*(jnp.concatenate(f, 1) for f in zip(*parts)))


def half_space_brick(R_G1, p_G1, half_space, R_G2, p_G2, brick):
    """Brick corners on a half-space: all 8 corners as penalty points (m = 8), depth ``x_H`` of the corner,
    origin halfway back to the plane. Simbody's BrickHalfSpace uses the 4 corners of the face most opposed to
    the normal; the two agree whenever only that face's corners penetrate."""
    signs = jnp.asarray([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], R_G2.dtype)
    corners_S = signs[None] * brick.half_lengths[:, None, :]  # (n, 8, 3)
    corners_G = p_G2[:, None] + jnp.einsum("nij,nkj->nki", R_G2, corners_S)
    x_H = jnp.einsum("ni,nki->nk", R_G1[:, :, 0], corners_G - p_G1[:, None])
    normal = jnp.broadcast_to(-R_G1[:, None, :, 0], corners_G.shape)
    origin = corners_G + (0.5 * x_H)[..., None] * normal
    return point_contact(x_H, origin, normal)


def half_space_convex_mesh(R_G1, p_G1, half_space, R_G2, p_G2, mesh):
    """Convex mesh on a half-space (as half_space_brick, and as MuJoCo collides a mesh with a plane): every hull
    vertex (those of the static ``faces``; all vertices if there are none) is a penalty point (m = nv_hull),
    depth ``x_H`` of the vertex, origin halfway back to the plane. Exact for a polytope: the deepest point of a
    convex hull below a plane is one of its vertices, and a mesh lying on a face rests on that face's vertices."""
    used = np.unique(np.asarray(mesh.faces, dtype=np.int64)) if len(mesh.faces) else np.arange(mesh.vertices.shape[-2])
    vertices_G = p_G2[:, None] + jnp.einsum("nij,nkj->nki", R_G2, mesh.vertices[:, used])
    x_H = jnp.einsum("ni,nki->nk", R_G1[:, :, 0], vertices_G - p_G1[:, None])
    normal = jnp.broadcast_to(-R_G1[:, None, :, 0], vertices_G.shape)
    return point_contact(x_H, vertices_G + (0.5 * x_H)[..., None] * normal, normal)


def _ellipsoid_curvatures(radii, point, normal):
    """Principal curvatures (kmax, kmin) (n, 2) of ellipsoids (semi-axes ``radii`` (n, 3)) at surface points
    (n, 3) with outward unit normals (n, 3), all in the ellipsoid's frame: the eigenvalues of the shape operator
    ``P H P / |grad f|`` on the tangent plane, f = sum x_i^2 / a_i^2."""
    inv2 = 1.0 / (radii * radii)
    grad_norm = 2 * spatial.safe_norm(point * inv2)
    helper = jnp.where(jnp.abs(normal[:, 0:1]) < 0.9, x_axis(normal), jnp.zeros_like(normal).at[:, 1].set(1.0))
    t1, _ = unit_or(jnp.cross(normal, helper), helper)
    t2 = jnp.cross(normal, t1)
    h = lambda a, b: 2 * jnp.sum(a * b * inv2, -1) / grad_norm  # noqa: E731
    a, b, c = h(t1, t1), h(t1, t2), h(t2, t2)
    disc = 0.25 * (a - c) ** 2 + b * b
    positive = disc > 0
    root = jnp.where(positive, jnp.sqrt(jnp.where(positive, disc, 1.0)), 0.0)
    mean = 0.5 * (a + c)
    return jnp.stack([mean + root, mean - root], -1)


def _ellipsoid_support(radii, direction):
    """Point (n, 3) of ellipsoids whose outward normal is the unit ``direction`` (n, 3) (ellipsoid frame)."""
    scaled = radii * radii * direction
    return scaled / jnp.sqrt(jnp.sum(direction * scaled, -1))[:, None]


def half_space_ellipsoid(R_G1, p_G1, half_space, R_G2, p_G2, ellipsoid):
    """Simbody's HalfSpaceEllipsoid (ContactTracker.cpp): the ellipsoid point Q whose outward normal is the
    half-space's inward x_H, depth = Q's half-space x, origin halfway back to the plane, and the ellipsoid's
    principal curvatures at Q (the half-space's are 0) for HertzElliptical."""
    R_EH = spatial.matmul(jnp.swapaxes(R_G2, -1, -2), R_G1)
    n_E = R_EH[:, :, 0]
    Q_E = _ellipsoid_support(ellipsoid.radii, n_E)
    Q_G = p_G2 + spatial.matvec(R_G2, Q_E)
    depth = jnp.sum(R_G1[:, :, 0] * (Q_G - p_G1), -1)
    normal = -R_G1[:, :, 0]
    origin = Q_G + (0.5 * depth)[:, None] * normal
    k = _ellipsoid_curvatures(ellipsoid.radii, Q_E, n_E)
    return point_contact(depth[:, None], origin[:, None], normal[:, None], k[:, None])


def sphere_sphere(R_G1, p_G1, sphere1, R_G2, p_G2, sphere2):
    """Simbody's SphereSphere: normal along the centers (x of Ground if they coincide), effective radius
    ``r1 r2 / (r1 + r2)``."""
    r1, r2 = sphere1.radius, sphere2.radius
    depth, origin, normal = _sphere_pair(p_G1, r1, p_G2, r2, x_axis(p_G1))
    return circular_contact(depth, origin, normal, r1 * r2 / (r1 + r2))


def _segment_point(p, axis, half_length, target):
    """Point of the segment ``p + t axis``, |t| <= half_length, closest to ``target`` (n, 3)."""
    t = jnp.clip(jnp.sum((target - p) * axis, -1), -half_length, half_length)
    return p + t[:, None] * axis


def sphere_capsule(R_G1, p_G1, sphere, R_G2, p_G2, capsule):
    """Sphere against a capsule (jaxbody's own): the capsule's sphere at its axis point closest to the sphere's
    center, then as sphere_sphere (circular Hertz, radius ``r_s r_c / (r_s + r_c)``)."""
    c2 = _segment_point(p_G2, R_G2[:, :, 2], capsule.half_length, p_G1)
    r1, r2 = sphere.radius, capsule.radius
    depth, origin, normal = _sphere_pair(p_G1, r1, c2, r2, R_G2[:, :, 0])
    return circular_contact(depth, origin, normal, r1 * r2 / (r1 + r2))


def _segments_closest(p1, d1, h1, p2, d2, h2):
    """Closest points of segments ``p_i + t_i d_i`` (unit d_i, |t_i| <= h_i) (Ericson's clamped solution; for
    parallel segments the point of segment 1 nearest segment 2's center)."""
    r = p1 - p2
    b = jnp.sum(d1 * d2, -1)
    c, f = jnp.sum(d1 * r, -1), jnp.sum(d2 * r, -1)
    denom = 1 - b * b
    general = denom > 1e-12
    t1 = jnp.where(general, (b * f - c) / jnp.where(general, denom, 1.0), -c)
    t1 = jnp.clip(t1, -h1, h1)
    t2 = jnp.clip(b * t1 + f, -h2, h2)
    t1 = jnp.clip(b * t2 - c, -h1, h1)
    return p1 + t1[:, None] * d1, p2 + t2[:, None] * d2


def capsule_capsule(R_G1, p_G1, capsule1, R_G2, p_G2, capsule2):
    """Capsules (jaxbody's own): the spheres at the closest points of the two axis segments, as sphere_sphere.
    One point: parallel overlapping capsules touch at one point of the overlap (not a line)."""
    c1, c2 = _segments_closest(p_G1, R_G1[:, :, 2], capsule1.half_length, p_G2, R_G2[:, :, 2], capsule2.half_length)
    r1, r2 = capsule1.radius, capsule2.radius
    fallback, _ = unit_or(jnp.cross(R_G1[:, :, 2], R_G2[:, :, 2]), R_G1[:, :, 0])
    depth, origin, normal = _sphere_pair(c1, r1, c2, r2, fallback)
    return circular_contact(depth, origin, normal, r1 * r2 / (r1 + r2))


def sphere_ellipsoid(R_G1, p_G1, sphere, R_G2, p_G2, ellipsoid):
    """Sphere against an ellipsoid (Simbody tracks it as a ConvexImplicitPair; this is jaxbody's own iteration):
    the ellipsoid point Q whose outward normal points at the sphere's center c, found by Newton's method on the
    normal parameter ``lambda`` of ``Q = (I + lambda A^-2)^-1 c`` (A = diag(radii)), ``ELLIPSOID_NEWTON_STEPS``
    steps from ``lambda0 = max_i(|c_i| a_i - a_i^2)``, where the convex decreasing normal equation is still
    positive, so that Newton's steps increase monotonically to its one root right of ``-min a_i^2``: the closest
    surface point, for centers inside or outside (converged to rounding for axis ratios up to 10). Depth
    ``r - |c - Q|`` (signed by the side), curvatures: the ellipsoid's at Q plus the sphere's 1/r (relative
    curvature, HertzElliptical). The iterations carry no gradient; one last Newton step is differentiated, which
    gives the implicit-function-theorem derivative of lambda (exact at convergence)."""
    c_E = spatial.mattvec(R_G2, p_G1 - p_G2)
    a2 = ellipsoid.radii ** 2

    def residual(lam):
        q = c_E * a2 / (a2 + lam[:, None])
        return jnp.sum(q * q / a2, -1) - 1, -2 * jnp.sum(q * q / (a2 * (a2 + lam[:, None])), -1)

    def newton(lam, _):
        g, dg = residual(lam)
        lam = lam - g / jnp.where(dg < 0, dg, -1.0)
        return jnp.maximum(lam, -0.999999 * jnp.min(a2, -1)), None

    radii = ellipsoid.radii
    lam0 = jnp.maximum(jnp.max(jnp.abs(c_E) * radii - a2, -1), -0.999999 * jnp.min(a2, -1))  # g(lam0) >= 0
    lam, _ = jax.lax.scan(newton, jax.lax.stop_gradient(lam0), None, ELLIPSOID_NEWTON_STEPS)
    lam = jax.lax.stop_gradient(lam)
    g, dg = residual(lam)
    lam = lam - g / jnp.where(dg < 0, dg, -1.0)  # one more step, differentiated: the implicit-function gradient
    q = c_E * a2 / (a2 + lam[:, None])
    normal_E, _ = unit_or(q / a2, x_axis(q))
    q = _ellipsoid_support(ellipsoid.radii, normal_E)  # on the surface exactly, with Q's gradient through n
    outside = jnp.sum((c_E - q) * normal_E, -1)
    depth = sphere.radius - outside
    normal_G = -spatial.matvec(R_G2, normal_E)  # from the sphere (1) into the ellipsoid (2)
    Q_G = p_G2 + spatial.matvec(R_G2, q)
    origin = Q_G + (0.5 * depth)[:, None] * normal_G
    k = _ellipsoid_curvatures(ellipsoid.radii, q, normal_E) + (1.0 / sphere.radius)[:, None]
    return point_contact(depth[:, None], origin[:, None], normal_G[:, None], k[:, None])


def _box_closest(half_lengths, c):
    """(closest box point q, outward normal at q, signed distance) for points c (n, 3) in the box frame."""
    q_out = jnp.clip(c, -half_lengths, half_lengths)
    inside = jnp.all(jnp.abs(c) <= half_lengths, -1)
    n_out, d_out = unit_or(c - q_out, x_axis(c))
    gap = half_lengths - jnp.abs(c)  # >= 0 inside
    face = jnp.argmin(gap, -1)
    onehot = jax.nn.one_hot(face, 3, dtype=c.dtype)
    sign = jnp.where(c >= 0, 1.0, -1.0)
    n_in = onehot * sign
    q_in = jnp.where(onehot > 0, sign * half_lengths, c)
    d_in = -jnp.sum(onehot * gap, -1)
    return (jnp.where(inside[:, None], q_in, q_out), jnp.where(inside[:, None], n_in, n_out),
            jnp.where(inside, d_in, d_out))


def brick_sphere(R_G1, p_G1, brick, R_G2, p_G2, sphere):
    """Sphere against a box (jaxbody's own): the box point closest to the center (a center inside: the nearest
    face's point), normal from the box to the center, depth ``r - signed distance``, origin halfway between the
    sphere's deepest point and the box point; circular Hertz with the sphere's radius (faces flat)."""
    c_B = spatial.mattvec(R_G1, p_G2 - p_G1)
    q, n, dist = _box_closest(brick.half_lengths, c_B)
    depth = sphere.radius - dist
    normal = spatial.matvec(R_G1, n)
    origin = p_G1 + spatial.matvec(R_G1, q) - (0.5 * depth)[:, None] * normal
    return circular_contact(depth, origin, normal, sphere.radius)


def brick_capsule(R_G1, p_G1, brick, R_G2, p_G2, capsule):
    """Capsule against a box (jaxbody's own): the capsule's axis point with the least signed distance to the
    box (a convex function of the axis parameter: ``BOX_SEGMENT_STEPS`` golden-section steps, no gradient
    through the search; the depth's gradient is exact at the minimum), then as brick_sphere with the capsule's
    radius. One point: a capsule lying flat on a face touches at one point of it."""
    p_B = spatial.mattvec(R_G1, p_G2 - p_G1)
    d_B = spatial.mattvec(R_G1, R_G2[:, :, 2])
    h = capsule.half_length

    t = minimize_along_axis(lambda t: _box_closest(brick.half_lengths, p_B + t[:, None] * d_B)[2], h,
                            BOX_SEGMENT_STEPS)
    center = p_G2 + t[:, None] * R_G2[:, :, 2]
    return brick_sphere(R_G1, p_G1, brick, R_G2, center, capsule)


def minimize_along_axis(distance, half_length, steps):
    """The axis parameter t in [-half_length, half_length] (n,) minimizing ``distance(t)`` (n,), a convex function
    of t, by ``steps`` golden-section steps (fixed count: jit and vmap; no gradient through the search, so a
    depth evaluated at t has its exact gradient at the minimum). Cost: 2 ``distance`` calls per step."""
    ratio = 0.6180339887498949

    def golden(bounds, _):
        lo, hi = bounds
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        left = distance(a) <= distance(b)
        return (jnp.where(left, lo, a), jnp.where(left, b, hi)), None

    h = jax.lax.stop_gradient(half_length)
    (lo, hi), _ = jax.lax.scan(golden, (-h, h), None, steps)
    return jax.lax.stop_gradient(0.5 * (lo + hi))
