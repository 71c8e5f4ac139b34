"""Host-side builder of ``jb.ElasticFoundationForce`` (Simbody's ElasticFoundationForce on a contact set).

Surfaces are declared before ``realize_topology()``: triangle meshes (vertices and faces, or a mesh file through
trimesh, the ``io`` extra) with Simbody's ``setBodyParameters`` numbers, and the spheres and half-spaces they
press against. Meshes must be closed 2-manifolds with consistently ordered faces (Simbody's TriangleMesh
requires it); every bad argument raises InvalidArgument naming the body.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.contact_force import frame_on_body
from jaxbody._api.force_checks import check_mobod as _check_mobod
from jaxbody._api.force_checks import positive
from jaxbody._api.force_checks import scalar as _scalar
from jaxbody._api.force_checks import vec3 as _vec3
from jaxbody._api.force_handles import ForceHandle
from jaxbody._api.mesh_files import read_mesh_file
from jaxbody._dynamics.contact import elastic_foundation
from jaxbody.errors import InvalidArgument


def check_triangle_mesh(vertices, faces, label):
    """(vertices (nv, 3) float, faces (nf, 3) int) numpy arrays of a closed, consistently oriented triangle mesh
    with positive face areas; InvalidArgument naming ``label`` otherwise."""
    v = np.asarray(vertices, dtype=float)
    f = np.asarray(faces)
    if v.ndim != 2 or v.shape[1] != 3 or len(v) < 4 or not np.all(np.isfinite(v)):
        raise InvalidArgument(f"{label}: vertices must be an (nv >= 4, 3) array of finite numbers, got shape {v.shape}")
    if f.ndim != 2 or f.shape[1] != 3 or len(f) < 4 or not np.issubdtype(f.dtype, np.integer):
        raise InvalidArgument(f"{label}: faces must be an (nf >= 4, 3) integer array, got {f.dtype} {f.shape}")
    if f.min() < 0 or f.max() >= len(v):
        raise InvalidArgument(f"{label}: a face refers to a vertex outside 0..{len(v) - 1}")
    area = np.linalg.norm(np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]]), axis=1)
    if np.any(area <= 0):
        raise InvalidArgument(f"{label}: face {int(np.argmin(area))} has zero area")
    directed = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    keys = {tuple(e) for e in directed.tolist()}
    if len(keys) != len(directed) or any((b, a) not in keys for a, b in keys):
        raise InvalidArgument(f"{label}: the mesh is not closed with consistently ordered faces (every edge must "
                              "bound exactly two faces, traversed in opposite directions)")
    return v, f.astype(np.int64)


class ElasticFoundationForce(ForceHandle):
    """Simbody's ElasticFoundationForce (see jaxbody._dynamics.contact.elastic_foundation for the formulas).

    ``ef = jb.ElasticFoundationForce(forces, transition_velocity=0.01)``; ``ef.add_mesh(body, vertices, faces,
    X_BM, stiffness, dissipation, static_friction, dynamic_friction, viscous_friction)`` (or
    ``add_mesh_file(body, path, ...)``), ``ef.add_sphere(body, radius, station)``, ``ef.add_half_space(body,
    X_BH)``. Every mesh acts against every other surface of the set on a different body; only meshes carry
    parameters (as in Simbody, where the other surface's are unused). Vertices are Model leaves, faces static.
    """

    def __init__(self, forces, transition_velocity=0.01):
        self._forces = forces
        self._meshes, self._spheres, self._half_spaces = [], [], []
        self._transition_velocity = positive(transition_velocity, "ElasticFoundationForce transition_velocity")
        super().__init__(forces, self._make, "ElasticFoundationForce")

    def add_mesh(self, body, vertices, faces, X_BM=None, stiffness=1.0, dissipation=0.0, static_friction=0.0,
                 dynamic_friction=0.0, viscous_friction=0.0) -> int:
        """A closed triangle mesh (vertices (nv, 3) m in frame M, faces (nf, 3)) fixed to ``body`` at ``X_BM``."""
        _check_mobod(self._forces, body, "ElasticFoundationForce mesh")
        label = f"ElasticFoundationForce mesh on {body.name!r}"
        v, f = check_triangle_mesh(vertices, faces, label)
        values = (stiffness, dissipation, static_friction, dynamic_friction, viscous_friction)
        names = ("stiffness", "dissipation", "static_friction", "dynamic_friction", "viscous_friction")
        row = [float(_scalar(x, f"{label}: {n}", nonnegative=True)) for x, n in zip(values, names)]
        if row[0] <= 0:
            raise InvalidArgument(f"{label}: stiffness must be positive, got {stiffness!r}")
        self._meshes.append((body, v, f, *frame_on_body(X_BM, f"{label}: X_BM"), row))
        return len(self._meshes) - 1

    def add_mesh_file(self, body, path, X_BM=None, **parameters) -> int:
        """``add_mesh`` with vertices and faces read from an .obj/.stl/.ply file by trimesh (the ``io`` extra)."""
        vertices, faces = read_mesh_file(path, f"ElasticFoundationForce mesh on {body.name!r}")
        return self.add_mesh(body, vertices, faces, X_BM, **parameters)

    def add_sphere(self, body, radius, station=(0.0, 0.0, 0.0)) -> int:
        """A sphere of ``radius`` (m) centered at ``station`` (in B) of ``body``."""
        _check_mobod(self._forces, body, "ElasticFoundationForce sphere")
        label = f"ElasticFoundationForce sphere on {body.name!r}"
        self._spheres.append((body, np.asarray(_vec3(station, f"{label}: station")), float(positive(radius, f"{label}: radius"))))
        return len(self._spheres) - 1

    def add_half_space(self, body, X_BH=None) -> int:
        """The half-space x > 0 of frame ``X_BH`` (a jb.Transform on ``body``, e.g. Ground)."""
        _check_mobod(self._forces, body, "ElasticFoundationForce half-space")
        self._half_spaces.append((body, *frame_on_body(X_BH, f"ElasticFoundationForce half-space on {body.name!r}: X_BH")))
        return len(self._half_spaces) - 1

    def _make(self):
        m, s, h = self._meshes, self._spheres, self._half_spaces
        pairs = [("half_space", i, j) for i in range(len(m)) for j in range(len(h)) if m[i][0].index != h[j][0].index]
        pairs += [("sphere", i, j) for i in range(len(m)) for j in range(len(s)) if m[i][0].index != s[j][0].index]
        pairs += [("mesh", i, j) for i in range(len(m)) for j in range(i + 1, len(m)) if m[i][0].index != m[j][0].index]
        if not pairs:
            raise InvalidArgument("ElasticFoundationForce: no mesh has a half-space, sphere or other mesh on a "
                                  "different body; add surfaces with add_mesh, add_sphere, add_half_space")
        stack = lambda rows, shape: jnp.asarray(np.stack(rows) if rows else np.zeros(shape))
        return elastic_foundation.ElasticFoundationForce(
            mesh_body=tuple(x[0].index for x in m), faces=tuple(tuple(map(tuple, x[2].tolist())) for x in m),
            sphere_body=tuple(x[0].index for x in s), half_space_body=tuple(x[0].index for x in h),
            pairs=tuple(pairs), vertices=tuple(jnp.asarray(x[1]) for x in m),
            R_BM=stack([x[3] for x in m], (0, 3, 3)), p_BM=stack([x[4] for x in m], (0, 3)),
            parameters=stack([x[5] for x in m], (0, 5)),
            sphere_center=stack([x[1] for x in s], (0, 3)), radius=stack([x[2] for x in s], (0,)),
            R_BH=stack([x[1] for x in h], (0, 3, 3)), p_BH=stack([x[2] for x in h], (0, 3)),
            transition_velocity=self._transition_velocity,
        )
