"""Pair-table trackers of the curved convex pairs by support functions (``support.py``) and GJK/EPA (``gjk.py``):
ellipsoids and finite cylinders against each other, capsules, bricks and convex meshes. Table signature
(``table.py``), batched over the n pairs by vmap, one point per pair (m = 1).

The point is the midpoint of the two witness points, ``depth = -signed distance``, the normal points from
surface 1 into surface 2. The curvatures are those of the relative surface: the sum of the two surfaces'
curvature tensors at their witness points (``support.curvature_tensor``, each at its own outward normal),
whose principal values are (kmax, kmin) (Simbody's EllipsoidEllipsoid combines the two paraboloids the same
way). Force models (in ``table.py``): ``hertz_elliptical`` for every pair with an ellipsoid (it makes the
relative surface curved in both directions, kmin > 0, against a flat face, an edge or a capsule);
``point_penalty`` for cylinders against bricks, convex meshes and cylinders, whose flat caps and straight side
lines give flat-on-flat or line contacts with no finite Hertz radius.

Simbody 3.9 tracks two ellipsoids as a ConvexImplicitPair (ContactTracker.cpp): an MPR estimate, Newton
refinement of the points P, Q whose outward normals are antiparallel, depth ``(P - Q) . n_P``, the origin at
their midpoint, ``combineParaboloids`` for the relative curvatures, an EllipticalPointContact. This tracker
gives the same quantities (GJK/EPA then Newton on the normal for two smooth cores; test_gjk_golden checks the
optimality conditions). One point per pair: a cylinder lying on a brick's face rests on one point (it can
rock); Simbody has none of the other pairs. Cost per pair: at most ``gjk.GJK_STEPS`` + ``gjk.EPA_STEPS``
support evaluations (a convex mesh's is O(nv)) and 15 small solves per GJK step; under vmap the
slowest lane's count (``gjk``'s docstring).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._dynamics.contact.trackers import gjk, support
from jaxbody._dynamics.contact.trackers.contact import point_contact

#: Kinds whose cores have smooth support functions (the normal gets its implicit derivative, ``gjk``).
SMOOTH_KINDS = ("Sphere", "Ellipsoid")


def _track(R_G1, p_G1, shape1, R_G2, p_G2, shape2, curvatures: bool):
    smooth = type(shape1).kind in SMOOTH_KINDS and type(shape2).kind in SMOOTH_KINDS

    def one(R1, p1, s1, R2, p2, s2):
        c = gjk.signed_distance(s1, R1, p1, s2, R2, p2, smooth)
        if curvatures:
            K = (support.curvature_tensor(s1, R1, p1, c.point_A, c.normal)
                 + support.curvature_tensor(s2, R2, p2, c.point_B, -c.normal))
            k = support.principal_curvatures(K, c.normal)
        else:
            k = jnp.zeros(2, c.normal.dtype)
        return -c.distance, 0.5 * (c.point_A + c.point_B), c.normal, k

    depth, point, normal, k = jax.vmap(one)(R_G1, p_G1, shape1, R_G2, p_G2, shape2)
    return point_contact(depth[:, None], point[:, None], normal[:, None], k[:, None])


def support_pair_hertz(R_G1, p_G1, shape1, R_G2, p_G2, shape2):
    """A pair with an ellipsoid (module docstring): one point with the relative surface's curvatures."""
    return _track(R_G1, p_G1, shape1, R_G2, p_G2, shape2, curvatures=True)


def support_pair_penalty(R_G1, p_G1, shape1, R_G2, p_G2, shape2):
    """A cylinder against a brick, convex mesh or cylinder: one penalty point (curvatures 0)."""
    return _track(R_G1, p_G1, shape1, R_G2, p_G2, shape2, curvatures=False)
