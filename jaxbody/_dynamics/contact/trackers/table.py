"""The pair table: for each pair of shape kinds, the tracker that finds their contact and the force model
that turns it into forces (Simbody's ContactTrackerSubsystem and CompliantContactSubsystem tables).

Every tracker has ONE signature, batched over the n pairs of its kind (no Python loop over pairs)::

    track(R_G1, p_G1, shape1, R_G2, p_G2, shape2) -> Contact

``R_Gi`` (n, 3, 3), ``p_Gi`` (n, 3): the frames S of the pairs' surfaces i in Ground (``X_GS = X_GB X_BS``);
``shape1``, ``shape2``: shape records (``shapes.py``) holding the n pairs' surfaces of kind1 and kind2 (each
leaf with leading axis n). It returns a ``Contact`` (``contact.py``) with a fixed point count m, its normal
pointing from surface 1 into surface 2. Trackers must be pure jnp, finite (values and gradients) for any pose
including coincident centers and separated pairs, and must not branch in Python on array values.

A pair (a, b) is looked up by ``find_rule(a, b)``: the table holds each unordered pair once, under the
order its tracker expects; ``swapped`` says that surfaces a and b are the table's 2 and 1. A pair no entry
covers raises InvalidArgument at ``realize_topology()`` naming both surfaces (Simbody silently ignores it).

Force models (by name, ``compliant_models.FORCE_MODELS``): "hertz_circular" and "hertz_elliptical" (Simbody's HertzCircular /
HertzElliptical with Hunt-Crossley dissipation, stiffness^(2/3) combination), "point_penalty" (Simbody's
BrickHalfSpacePenalty law per point: linear stiffness), "elastic_foundation" (Simbody's ElasticFoundation,
per patch element with the surfaces' thicknesses). To add a pair: write its tracker (``primitive.py`` or a
module of its own beside it) and add one line to ``PAIR_TABLE``.

Which law a pair gets: a curved surface touching with a finite radius in both directions gets Hertz
(circular for spheres and capsules, elliptical with an ellipsoid or a cylinder's side in the pair); flat faces,
corners and straight edges on flat faces get point_penalty, one point per vertex or rim point that can carry
load (bricks, convex meshes, cylinders against a half-space) or, for the GJK/EPA pairs of ``curved.py``, one
point (cylinders against bricks, meshes and cylinders: flat-on-flat and line contacts have no finite Hertz
radius). Every pair of two convex kinds is covered; only TriangleMesh pairs with other than half-spaces,
spheres and triangle meshes are not.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from jaxbody._dynamics.contact.trackers import convex, curved, cylinder, mesh, primitive

class PairRule(NamedTuple):
    """How a pair kind is tracked (``track``, the signature above) and which force model acts on it."""

    track: Callable
    force_model: str


PAIR_TABLE: dict[tuple[str, str], PairRule] = {
    ("HalfSpace", "Sphere"): PairRule(primitive.half_space_sphere, "hertz_circular"),
    ("HalfSpace", "Ellipsoid"): PairRule(primitive.half_space_ellipsoid, "hertz_elliptical"),
    ("HalfSpace", "Capsule"): PairRule(primitive.half_space_capsule, "hertz_circular"),
    ("HalfSpace", "Brick"): PairRule(primitive.half_space_brick, "point_penalty"),
    ("HalfSpace", "ConvexMesh"): PairRule(primitive.half_space_convex_mesh, "point_penalty"),
    ("Sphere", "Sphere"): PairRule(primitive.sphere_sphere, "hertz_circular"),
    ("Sphere", "Capsule"): PairRule(primitive.sphere_capsule, "hertz_circular"),
    ("Capsule", "Capsule"): PairRule(primitive.capsule_capsule, "hertz_circular"),
    ("Sphere", "Ellipsoid"): PairRule(primitive.sphere_ellipsoid, "hertz_elliptical"),
    ("Brick", "Sphere"): PairRule(primitive.brick_sphere, "hertz_circular"),
    ("Brick", "Capsule"): PairRule(primitive.brick_capsule, "hertz_circular"),
    ("Brick", "Brick"): PairRule(convex.polytope_pair, "point_penalty"),
    ("ConvexMesh", "Sphere"): PairRule(convex.convex_pair, "hertz_circular"),
    ("ConvexMesh", "Capsule"): PairRule(convex.convex_pair, "hertz_circular"),
    ("ConvexMesh", "Brick"): PairRule(convex.polytope_pair, "point_penalty"),
    ("ConvexMesh", "ConvexMesh"): PairRule(convex.polytope_pair, "point_penalty"),
    ("HalfSpace", "Cylinder"): PairRule(cylinder.half_space_cylinder, "point_penalty"),
    ("Cylinder", "Sphere"): PairRule(cylinder.cylinder_sphere, "hertz_elliptical"),
    ("Cylinder", "Capsule"): PairRule(cylinder.cylinder_capsule, "hertz_elliptical"),
    ("Ellipsoid", "Ellipsoid"): PairRule(curved.support_pair_hertz, "hertz_elliptical"),
    ("Capsule", "Ellipsoid"): PairRule(curved.support_pair_hertz, "hertz_elliptical"),
    ("Brick", "Ellipsoid"): PairRule(curved.support_pair_hertz, "hertz_elliptical"),
    ("ConvexMesh", "Ellipsoid"): PairRule(curved.support_pair_hertz, "hertz_elliptical"),
    ("Cylinder", "Ellipsoid"): PairRule(curved.support_pair_hertz, "hertz_elliptical"),
    ("Brick", "Cylinder"): PairRule(curved.support_pair_penalty, "point_penalty"),
    ("ConvexMesh", "Cylinder"): PairRule(curved.support_pair_penalty, "point_penalty"),
    ("Cylinder", "Cylinder"): PairRule(curved.support_pair_penalty, "point_penalty"),
    ("HalfSpace", "TriangleMesh"): PairRule(mesh.half_space_triangle_mesh, "elastic_foundation"),
    ("Sphere", "TriangleMesh"): PairRule(mesh.sphere_triangle_mesh, "elastic_foundation"),
    ("TriangleMesh", "TriangleMesh"): PairRule(mesh.triangle_mesh_triangle_mesh, "elastic_foundation"),
}


def find_rule(kind_a: str, kind_b: str) -> tuple[PairRule, bool] | None:
    """(rule, swapped) for surfaces of kinds a and b, or None if no tracker covers the pair."""
    if (kind_a, kind_b) in PAIR_TABLE:
        return PAIR_TABLE[(kind_a, kind_b)], False
    if (kind_b, kind_a) in PAIR_TABLE:
        return PAIR_TABLE[(kind_b, kind_a)], True
    return None
