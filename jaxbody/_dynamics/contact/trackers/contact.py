"""``Contact``: what a tracker returns for the n pairs of one pair kind (Simbody's Contact subclasses).

Every field has a pair axis n and a point axis m (m = 1 for a point contact such as sphere/half-space;
m = 8 for a brick's corners against a half-space; a fixed patch size for mesh trackers). A point with
``depth <= 0`` is inactive: it makes no force, and its other fields must still be finite (any value).
Everything is in Ground, meters. Surface 1 and surface 2 are the pair's surfaces in the order of the
table entry (``table.PAIR_TABLE``); the force computed from a Contact acts on surface 2 along +normal
and on surface 1 opposite.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp


class Contact(NamedTuple):
    """Fixed-size contact data of n pairs with m points each.

    ``depth`` (n, m): overlap of the undeformed surfaces along the normal, m (> 0 overlapping).
    ``point_G`` (n, m, 3): Simbody's contact "origin": halfway between the two undeformed surfaces along
        the normal (the force models move it by the materials' stiffness split).
    ``normal_G`` (n, m, 3): unit normal pointing from surface 1 into surface 2.
    ``curvatures`` (n, m, 2): relative principal curvatures (kmax, kmin), 1/m, kmax >= kmin >= 0: the sums of
        the two surfaces' curvatures in the principal directions of the relative surface (Hertz's A, B times
        2). Circular contacts give kmax = kmin = 1 / R_eff (R_eff = r1 r2 / (r1 + r2), a half-space's radius
        infinite). Used by the Hertz models, which need kmax + kmin > 0 (circular) and kmin > 0 (elliptical);
        0 for points of the penalty and elastic-foundation models.
    ``area`` (n, m): area of the patch element each point stands for, m^2 (ElasticFoundation: a mesh face's
        area); 0 for Hertz and penalty points.

    For ElasticFoundation (triangle mesh trackers) a point is one mesh face: ``point_G`` the spring's
    location on the face (Simbody: the face center projected to the other surface, midway), ``depth`` the
    spring's compression, ``normal_G`` the face's direction into surface 2, ``area`` the face area; faces not
    in contact have depth <= 0 (m = nf, the mesh's face count, fixed).
    """

    depth: jnp.ndarray
    point_G: jnp.ndarray
    normal_G: jnp.ndarray
    curvatures: jnp.ndarray
    area: jnp.ndarray


def point_contact(depth, point_G, normal_G, curvatures=None) -> Contact:
    """A Contact with m points from (n, m) depths, (n, m, 3) points and normals, (n, m, 2) curvatures
    (default 0) and zero areas."""
    if curvatures is None:
        curvatures = jnp.zeros(depth.shape + (2,), depth.dtype)
    return Contact(depth, point_G, normal_G, curvatures, jnp.zeros_like(depth))


def circular_contact(depth, point_G, normal_G, effective_radius) -> Contact:
    """A one-point Contact (m = 1) from (n,) depths, (n, 3) points and normals, (n,) effective radii
    (``jnp.inf`` allowed only where an infinite radius is meant; pass finite radii)."""
    k = 1.0 / effective_radius
    return point_contact(depth[:, None], point_G[:, None], normal_G[:, None], jnp.stack([k, k], -1)[:, None])
