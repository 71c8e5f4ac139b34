"""Trackers of the primitive pairs (half-space, sphere, ellipsoid, capsule, brick), batched over pairs.

Each has the pair table's signature ``track(R_G1, p_G1, shape1, R_G2, p_G2, shape2) -> Contact``
(``table.py``); normals point from surface 1 into surface 2.
"""

from __future__ import annotations


def half_space_sphere(R_G1, p_G1, half_space, R_G2, p_G2, sphere):
    """Simbody's HalfSpaceSphere: one point, effective radius the sphere's."""
    raise NotImplementedError


def half_space_ellipsoid(R_G1, p_G1, half_space, R_G2, p_G2, ellipsoid):
    """Simbody's HalfSpaceEllipsoid: the ellipsoid point whose normal opposes the half-space's; its curvatures."""
    raise NotImplementedError


def half_space_capsule(R_G1, p_G1, half_space, R_G2, p_G2, capsule):
    """Capsule against a half-space: one point at the deeper end sphere (jaxbody's own)."""
    raise NotImplementedError


def half_space_brick(R_G1, p_G1, half_space, R_G2, p_G2, brick):
    """Brick corners against a half-space: 8 points (Simbody's BrickHalfSpace with every corner)."""
    raise NotImplementedError


def sphere_sphere(R_G1, p_G1, sphere1, R_G2, p_G2, sphere2):
    """Simbody's SphereSphere: effective radius r1 r2 / (r1 + r2)."""
    raise NotImplementedError


def sphere_capsule(R_G1, p_G1, sphere, R_G2, p_G2, capsule):
    """Sphere against the capsule's closest axis point's sphere."""
    raise NotImplementedError


def capsule_capsule(R_G1, p_G1, capsule1, R_G2, p_G2, capsule2):
    """Capsules as spheres at the closest points of their axis segments."""
    raise NotImplementedError


def sphere_ellipsoid(R_G1, p_G1, sphere, R_G2, p_G2, ellipsoid):
    """Sphere against an ellipsoid: closest point by a fixed number of Newton iterations (elliptical)."""
    raise NotImplementedError


def brick_sphere(R_G1, p_G1, brick, R_G2, p_G2, sphere):
    """Sphere against a box: closest box point to the center (inside: the nearest face)."""
    raise NotImplementedError


def brick_capsule(R_G1, p_G1, brick, R_G2, p_G2, capsule):
    """Capsule against a box: the capsule's axis point closest to the box, then as brick_sphere."""
    raise NotImplementedError
