"""Mesh files (.obj, .stl, .ply, ...) read by trimesh (the ``io`` extra) into vertex and face arrays, for the
contact meshes (``ContactGeometry.TriangleMesh.from_file``, ``ConvexMesh.from_file``,
``ElasticFoundationForce.add_mesh_file``). Vertices are kept as written (no merging or reordering)."""

from __future__ import annotations

import os

import numpy as np

from jaxbody.errors import InvalidArgument


def read_mesh_file(path, what):
    """(vertices (nv, 3) float, faces (nf, 3) int) of the triangle mesh in ``path``; InvalidArgument naming
    ``what`` and the file when trimesh is missing, the file does not exist or holds no triangles."""
    try:
        import trimesh  # noqa: PLC0415  (optional dependency)
    except ImportError:
        raise InvalidArgument(f"{what}: reading {path!r} needs trimesh (pip install jaxbody[io])") from None
    if not os.path.isfile(path):
        raise InvalidArgument(f"{what}: no mesh file {path!r}")
    mesh = trimesh.load(path, force="mesh", process=False)
    faces = np.asarray(getattr(mesh, "faces", np.zeros((0, 3))))
    if faces.ndim != 2 or faces.shape[0] == 0:
        raise InvalidArgument(f"{what}: {path!r} holds no triangles")
    return np.asarray(mesh.vertices, dtype=float), faces.astype(np.int64)
