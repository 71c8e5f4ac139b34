"""Contact shapes as JAX records (Simbody's ContactGeometry kinds), one record per kind.

A record holds every surface of one kind (and one static structure) of a model: each array field is a
leaf with a leading axis over those surfaces (n,), so every size is a Model number a user may sweep or
differentiate. Shapes are described in their own frame S; where S sits on its body (``X_BS``: R (3, 3),
p (3,)) is stored beside the record by the compliant contact element (per surface, also leaves).
Lengths in meters. The host-side builders are ``jb.ContactGeometry.*`` (``_api/contact_geometry.py``).

Conventions (Simbody's where Simbody has the shape):

* ``HalfSpace``: material at x > 0 of S, outward normal -x; no numbers.
* ``Sphere(radius)``: centered at S's origin.
* ``Ellipsoid(radii)``: semi-axes (n, 3) along S's x, y, z.
* ``Brick(half_lengths)``: box (n, 3) centered at S's origin, faces normal to S's axes.
* ``Cylinder(radius, half_length)``: *finite* cylinder along S's z, flat caps at z = +-half_length.
  Simbody's ContactGeometry::Cylinder is infinite; this one is MuJoCo's and URDF's.
* ``Capsule(radius, half_length)``: the points within ``radius`` of S's z axis segment
  [-half_length, half_length] (jaxbody's own; MuJoCo's and URDF's capsule).
* ``ConvexMesh(vertices)``: the convex hull of (n, nv, 3) vertices (jaxbody's own); all surfaces of one
  record have the same nv.
* ``TriangleMesh(vertices, faces)``: closed triangle mesh, vertices (n, nv, 3) leaves, ``faces`` static
  (nf, 3) ints (counter-clockwise seen from outside, outward normals); one record per face list.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp


class Shape(eqx.Module):
    """Base of the shape records. ``kind``: the name the pair table uses (Simbody's class name)."""

    kind: ClassVar[str] = ""

    def static_key(self) -> tuple:
        """Static structure that must agree for two surfaces to share a record (mesh faces, vertex counts)."""
        return ()

    def take(self, index):
        """The record of surfaces ``index`` (static int array (m,)): every leaf gathered along axis 0."""
        return jax.tree.map(lambda a: a[index], self)


class HalfSpace(Shape):
    """Simbody's half-space: material at x > 0 of S, outward normal -x_S. No numbers."""

    kind: ClassVar[str] = "HalfSpace"


class Sphere(Shape):
    """Sphere of ``radius`` (n,) m centered at S's origin."""

    kind: ClassVar[str] = "Sphere"
    radius: jnp.ndarray


class Ellipsoid(Shape):
    """Ellipsoid of semi-axes ``radii`` (n, 3) m along S's x, y, z axes."""

    kind: ClassVar[str] = "Ellipsoid"
    radii: jnp.ndarray


class Brick(Shape):
    """Box of ``half_lengths`` (n, 3) m along S's axes, centered at S's origin (Simbody's Brick)."""

    kind: ClassVar[str] = "Brick"
    half_lengths: jnp.ndarray


class Cylinder(Shape):
    """Finite cylinder along S's z: ``radius`` (n,), ``half_length`` (n,) m (Simbody's is infinite)."""

    kind: ClassVar[str] = "Cylinder"
    radius: jnp.ndarray
    half_length: jnp.ndarray


class Capsule(Shape):
    """Points within ``radius`` (n,) of S's z segment [-half_length, half_length] (n,) (jaxbody's own)."""

    kind: ClassVar[str] = "Capsule"
    radius: jnp.ndarray
    half_length: jnp.ndarray


class ConvexMesh(Shape):
    """Convex hull of ``vertices`` (n, nv, 3) m in S (jaxbody's own); ``faces`` static (nt, 3): the hull's
    outward triangles, found at build from the initial vertices (trackers/hull.py)."""

    kind: ClassVar[str] = "ConvexMesh"
    vertices: jnp.ndarray
    faces: tuple = eqx.field(static=True, default=())

    def static_key(self) -> tuple:
        return (self.vertices.shape[-2], self.faces)


class TriangleMesh(Shape):
    """Closed triangle mesh: ``vertices`` (n, nv, 3) m in S, ``faces`` static (nf, 3) vertex indices,
    counter-clockwise seen from outside (Simbody's ContactGeometry::TriangleMesh)."""

    kind: ClassVar[str] = "TriangleMesh"
    vertices: jnp.ndarray
    faces: tuple = eqx.field(static=True)

    def static_key(self) -> tuple:
        return (self.vertices.shape[-2], self.faces)


KINDS: dict[str, type[Shape]] = {
    cls.kind: cls for cls in (HalfSpace, Sphere, Ellipsoid, Brick, Cylinder, Capsule, ConvexMesh, TriangleMesh)
}
