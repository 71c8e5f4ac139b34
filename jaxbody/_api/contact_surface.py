"""Host-side contact description, Simbody's names: ``jb.ContactGeometry.*``, ``jb.ContactMaterial``,
``jb.ContactSurface`` (attached with ``body.add_contact_surface(X_BS, surface)``).

Everything here is checked on the host when created (InvalidArgument naming the shape or material) and read
by ``realize_topology()``, which turns each number into a Model leaf (``_dynamics/contact/shapes.py`` records
and the compliant contact element's per-surface arrays).
"""

from __future__ import annotations

import itertools

import jax.numpy as jnp
import numpy as np

from jaxbody._api.mesh_files import read_mesh_file
from jaxbody._dynamics.contact import shapes
from jaxbody._dynamics.contact.trackers import hull
from jaxbody.errors import InvalidArgument


def _positive(x, what, allow_zero=False):
    a = np.asarray(x, dtype=float)
    if a.shape != () or not np.isfinite(a) or a < 0 or (a == 0 and not allow_zero):
        raise InvalidArgument(f"{what} must be a finite {'non-negative' if allow_zero else 'positive'} number, got {x!r}")
    return float(a)


def _positive3(x, what):
    a = np.asarray(x, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)) or not np.all(a > 0):
        raise InvalidArgument(f"{what} must be 3 finite positive numbers, got {x!r}")
    return a


class _Geometry:
    """A shape description; ``kind`` names its record class in ``shapes.KINDS``; ``fields`` its numbers."""

    kind = ""

    def __init__(self, **fields):
        self.fields = fields

    def static_key(self) -> tuple:
        """Structure that must match for two surfaces to share a record (see ``shapes.Shape.static_key``)."""
        return ()

    def __repr__(self):
        return f"ContactGeometry.{self.kind}({', '.join(f'{k}={v!r}' for k, v in self.fields.items())})"


class ContactGeometry:
    """Simbody's ContactGeometry kinds (shapes in their own frame S; lengths in m). See ``shapes.py``."""

    class HalfSpace(_Geometry):
        """The half-space x > 0 of S (Simbody's convention: outward normal -x)."""

        kind = "HalfSpace"

        def __init__(self):
            super().__init__()

    class Sphere(_Geometry):
        """Sphere of ``radius`` centered at S's origin."""

        kind = "Sphere"

        def __init__(self, radius):
            super().__init__(radius=_positive(radius, "ContactGeometry.Sphere radius"))

    class Ellipsoid(_Geometry):
        """Ellipsoid with semi-axes ``radii`` (3,) along S's x, y, z."""

        kind = "Ellipsoid"

        def __init__(self, radii):
            super().__init__(radii=_positive3(radii, "ContactGeometry.Ellipsoid radii"))

    class Brick(_Geometry):
        """Box of ``half_lengths`` (3,) centered at S's origin."""

        kind = "Brick"

        def __init__(self, half_lengths):
            super().__init__(half_lengths=_positive3(half_lengths, "ContactGeometry.Brick half_lengths"))

    class Cylinder(_Geometry):
        """*Finite* cylinder along S's z (caps at z = +-half_length); Simbody's Cylinder is infinite."""

        kind = "Cylinder"

        def __init__(self, radius, half_length):
            super().__init__(radius=_positive(radius, "ContactGeometry.Cylinder radius"),
                             half_length=_positive(half_length, "ContactGeometry.Cylinder half_length"))

    class Capsule(_Geometry):
        """Points within ``radius`` of S's z segment [-half_length, half_length] (jaxbody's own, for MJCF/URDF);
        ``half_length`` 0 is a sphere."""

        kind = "Capsule"

        def __init__(self, radius, half_length):
            super().__init__(radius=_positive(radius, "ContactGeometry.Capsule radius"),
                             half_length=_positive(half_length, "ContactGeometry.Capsule half_length", allow_zero=True))

    class ConvexMesh(_Geometry):
        """Convex hull of ``vertices`` (nv, 3), nv >= 4, in S (jaxbody's own, for MJCF/URDF meshes)."""

        kind = "ConvexMesh"

        def __init__(self, vertices):
            v = np.asarray(vertices, dtype=float)
            if v.ndim != 2 or v.shape[1] != 3 or v.shape[0] < 4 or not np.all(np.isfinite(v)):
                raise InvalidArgument(f"ContactGeometry.ConvexMesh vertices must be (nv >= 4, 3) finite numbers, got shape {v.shape}")
            try:
                faces = hull.convex_hull_triangles(v)
            except ValueError as e:
                raise InvalidArgument(f"ContactGeometry.ConvexMesh: {e}") from None
            super().__init__(vertices=v)
            self.faces = tuple(tuple(int(i) for i in row) for row in faces)

        def static_key(self) -> tuple:
            return (self.fields["vertices"].shape[0], self.faces)

        @classmethod
        def from_file(cls, path):
            """The convex hull of a mesh file's vertices (trimesh, the ``io`` extra)."""
            return cls(read_mesh_file(path, "ContactGeometry.ConvexMesh")[0])

    class TriangleMesh(_Geometry):
        """Closed triangle mesh: ``vertices`` (nv, 3) in S, ``faces`` (nf, 3) vertex indices, counter-clockwise
        seen from outside (Simbody's TriangleMesh; ``jb.io`` reads mesh files into these arrays)."""

        kind = "TriangleMesh"

        def __init__(self, vertices, faces):
            v = np.asarray(vertices, dtype=float)
            f = np.asarray(faces)
            if v.ndim != 2 or v.shape[1] != 3 or v.shape[0] < 3 or not np.all(np.isfinite(v)):
                raise InvalidArgument(f"ContactGeometry.TriangleMesh vertices must be (nv >= 3, 3) finite numbers, got shape {v.shape}")
            if f.ndim != 2 or f.shape[1] != 3 or f.shape[0] < 1 or not np.issubdtype(f.dtype, np.integer) \
                    or f.min() < 0 or f.max() >= v.shape[0]:
                raise InvalidArgument(f"ContactGeometry.TriangleMesh faces must be (nf, 3) integer indices into the {v.shape[0]} vertices")
            super().__init__(vertices=v)
            self.faces = tuple(tuple(int(i) for i in row) for row in f)

        @classmethod
        def from_file(cls, path):
            """A TriangleMesh from an .obj/.stl/.ply file (trimesh, the ``io`` extra; vertices kept as written)."""
            return cls(*read_mesh_file(path, "ContactGeometry.TriangleMesh"))

        def static_key(self) -> tuple:
            return (self.fields["vertices"].shape[0], self.faces)


def stack_records(geometries) -> shapes.Shape:
    """One shape record (leaves with a leading axis) of geometries of one kind and static key."""
    cls = shapes.KINDS[geometries[0].kind]
    leaves = {k: jnp.asarray(np.stack([g.fields[k] for g in geometries])) for k in geometries[0].fields}
    if cls in (shapes.TriangleMesh, shapes.ConvexMesh):
        leaves["faces"] = geometries[0].faces
    return cls(**leaves)


class ContactMaterial:
    """Simbody's ContactMaterial: ``stiffness`` (Pa: force per area per strain; Hertz uses stiffness^(2/3)),
    ``dissipation`` c (s/m, Hunt-Crossley), ``static_friction`` >= ``dynamic_friction`` >= 0, and
    ``viscous_friction`` (s/m) >= 0."""

    def __init__(self, stiffness, dissipation, static_friction, dynamic_friction, viscous_friction=0.0):
        self.stiffness = _positive(stiffness, "ContactMaterial stiffness")
        self.dissipation = _positive(dissipation, "ContactMaterial dissipation", allow_zero=True)
        self.static_friction = _positive(static_friction, "ContactMaterial static_friction", allow_zero=True)
        self.dynamic_friction = _positive(dynamic_friction, "ContactMaterial dynamic_friction", allow_zero=True)
        self.viscous_friction = _positive(viscous_friction, "ContactMaterial viscous_friction", allow_zero=True)
        if self.dynamic_friction > self.static_friction:
            raise InvalidArgument(f"ContactMaterial: dynamic_friction {dynamic_friction!r} exceeds static_friction "
                                  f"{static_friction!r} (Simbody requires static >= dynamic)")

    def get_stiffness(self) -> float:
        return self.stiffness

    def get_stiffness23(self) -> float:
        """stiffness^(2/3), what the Hertz models combine."""
        return self.stiffness ** (2.0 / 3.0)

    def get_dissipation(self) -> float:
        return self.dissipation

    def get_static_friction(self) -> float:
        return self.static_friction

    def get_dynamic_friction(self) -> float:
        return self.dynamic_friction

    def get_viscous_friction(self) -> float:
        return self.viscous_friction

    def as_row(self) -> list[float]:
        """(stiffness, dissipation, static, dynamic, viscous friction)."""
        return [self.stiffness, self.dissipation, self.static_friction, self.dynamic_friction, self.viscous_friction]

    @staticmethod
    def calc_plane_strain_stiffness(youngs_modulus, poissons_ratio) -> float:
        """Simbody's plane-strain modulus ``E / (1 - nu^2)`` (what Hertz contact wants as stiffness)."""
        E, nu = _check_elastic(youngs_modulus, poissons_ratio)
        return E / (1 - nu * nu)

    @staticmethod
    def calc_confined_compression_stiffness(youngs_modulus, poissons_ratio) -> float:
        """Simbody's ``E (1 - nu) / ((1 + nu)(1 - 2 nu))`` (what an elastic foundation wants)."""
        E, nu = _check_elastic(youngs_modulus, poissons_ratio)
        return E * (1 - nu) / ((1 + nu) * (1 - 2 * nu))

    @staticmethod
    def calc_dissipation_from_observed_restitution(restitution, speed) -> float:
        """Simbody's ``c = (1 - e) / v`` from a coefficient of restitution e observed at a small impact speed v."""
        e = float(restitution)
        if e == 1:
            return 0.0
        if not (0 <= e <= 1) or not float(speed) > 0:
            raise InvalidArgument(f"ContactMaterial: restitution must be in [0, 1] and speed positive, got {restitution!r}, {speed!r}")
        return (1 - e) / float(speed)


def _check_elastic(youngs_modulus, poissons_ratio):
    E = _positive(youngs_modulus, "ContactMaterial youngs_modulus")
    nu = np.asarray(poissons_ratio, dtype=float)
    if nu.shape != () or not (0 <= nu < 0.5):
        raise InvalidArgument(f"ContactMaterial poissons_ratio must be in [0, 0.5), got {poissons_ratio!r}")
    return E, float(nu)


_cliques = itertools.count(1)


class ContactSurface:
    """Simbody's ContactSurface: a ``ContactGeometry`` with a ``ContactMaterial`` and a ``thickness`` (m; the
    elastic foundation's layer; Simbody's default is 0, which that model cannot use, so jaxbody's is 1), and
    the contact cliques it belongs to (surfaces sharing a clique never touch). Attach it with
    ``body.add_contact_surface(X_BS, surface)``; it is read at ``realize_topology()``."""

    def __init__(self, geometry, material, thickness=1.0):
        if not isinstance(geometry, _Geometry):
            raise InvalidArgument(f"ContactSurface needs a jb.ContactGeometry.* shape, got {type(geometry).__name__}")
        if not isinstance(material, ContactMaterial):
            raise InvalidArgument(f"ContactSurface needs a jb.ContactMaterial, got {type(material).__name__}")
        self.geometry, self.material = geometry, material
        self.thickness = _positive(thickness, "ContactSurface thickness")
        self.cliques: set[int] = set()

    @staticmethod
    def create_new_contact_clique() -> int:
        """A new ContactCliqueId (an int, unique in this process)."""
        return next(_cliques)

    def join_clique(self, clique: int) -> "ContactSurface":
        """Add this surface to ``clique`` (from ``create_new_contact_clique``); returns the surface."""
        if not isinstance(clique, (int, np.integer)) or clique <= 0:
            raise InvalidArgument(f"ContactSurface.join_clique needs a clique from create_new_contact_clique(), got {clique!r}")
        self.cliques.add(int(clique))
        return self

    def is_in_same_clique(self, other: "ContactSurface") -> bool:
        return bool(self.cliques & other.cliques)

    def get_shape(self):
        return self.geometry

    def get_material(self) -> ContactMaterial:
        return self.material

    def get_thickness(self) -> float:
        return self.thickness
