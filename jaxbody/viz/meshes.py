"""Mesh files for ``DecorativeMesh``: read through ``trimesh`` (STL, OBJ, DAE, ...; ``pip install jaxbody[viz]``),
found on search folders, and thinned to a face budget so that an animation stays fast.

    library = MeshLibrary(["robots/panda"])             # folders to search, e.g. the model file's folder
    vertices, faces = library("package://panda/meshes/link0.stl")   # or None: drawn as a primitive instead

A file name is tried as written (absolute, or relative to each search folder), and a ``package://`` or
``file://`` URI by its path under each search folder and under every folder of ``ROS_PACKAGE_PATH``, with leading
folders dropped one at a time (``package://pkg/meshes/a.stl`` finds ``<folder>/meshes/a.stl`` and
``<folder>/a.stl``). Meshes given by name (``meshes={"name": (vertices, faces)}``, e.g. MuJoCo's compiled
mesh assets) are used as they are. A mesh with more faces than ``max_faces`` is thinned by vertex clustering
(vertices merged on a grid, collapsed faces dropped; the winding is kept).
"""

from __future__ import annotations

import os
import pathlib

import numpy as np

MAX_FACES = 300  # faces per mesh after thinning
_CLUSTER_CELLS = (96, 64, 48, 32, 24, 16, 12, 8, 6, 4)


def decimate(vertices, faces, max_faces=MAX_FACES):
    """(vertices (n, 3), faces (m, 3)) with at most ``max_faces`` faces, by vertex clustering on the coarsest of
    a few grids that is fine enough; the faces keep their winding."""
    vertices, faces = np.asarray(vertices, float), np.asarray(faces, int)
    if len(faces) <= max_faces:
        return vertices, faces
    lo, extent = vertices.min(0), max(float(np.ptp(vertices, 0).max()), 1e-12)
    for cells in _CLUSTER_CELLS:
        keys = np.floor((vertices - lo) / (extent / cells)).astype(np.int64)
        _, cluster = np.unique(keys, axis=0, return_inverse=True)
        cluster = cluster.reshape(-1)
        merged = cluster[faces]
        merged = merged[(merged[:, 0] != merged[:, 1]) & (merged[:, 1] != merged[:, 2]) & (merged[:, 0] != merged[:, 2])]
        _, first = np.unique(np.sort(merged, axis=1), axis=0, return_index=True)
        merged = merged[np.sort(first)]
        if len(merged) <= max_faces:
            break
    count = np.bincount(cluster)
    centers = np.stack([np.bincount(cluster, vertices[:, k]) for k in range(3)], -1) / count[:, None]
    return centers, merged


def candidates(filename, search_dirs):
    """The paths where ``filename`` (a path, or a ``package://``/``file://`` URI) may be, in the order tried."""
    text = str(filename)
    uri = text.startswith(("package://", "file://"))
    rest = text.split("://", 1)[1] if uri else text
    parts = pathlib.PurePosixPath(rest).parts
    folders = [pathlib.Path(d) for d in search_dirs]
    folders += [pathlib.Path(d) for d in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if d]
    found = [] if uri and not pathlib.Path(rest).is_absolute() else [pathlib.Path(rest)]
    return found + [folder.joinpath(*parts[k:]) for folder in folders for k in range(len(parts) if uri else 1)]


class MeshLibrary:
    """File name -> ``(vertices (n, 3), faces (m, 3))`` in the mesh's own frame and units, or None when the file
    cannot be found or read (or ``trimesh`` is not installed); each file is read and thinned once.

    Args:
        search_dirs: folders to look in (see the module docstring).
        meshes: name -> (vertices, faces) used as given (no file is read for these names).
        max_faces: the face budget of each mesh.
    """

    def __init__(self, search_dirs=(), meshes=None, max_faces=MAX_FACES):
        self.search_dirs = [search_dirs] if isinstance(search_dirs, (str, os.PathLike)) else list(search_dirs)
        self.max_faces = int(max_faces)
        self._cache = {name: decimate(v, f, self.max_faces) for name, (v, f) in (meshes or {}).items()}

    def __call__(self, filename):
        if filename not in self._cache:
            self._cache[filename] = self._read(filename)
        return self._cache[filename]

    def _read(self, filename):
        path = next((p for p in candidates(filename, self.search_dirs) if p.is_file()), None)
        if path is None:
            return None
        try:
            import trimesh
        except ImportError:
            return None
        try:
            mesh = trimesh.load(str(path), force="mesh")
        except Exception:  # noqa: BLE001  (any unreadable file, missing optional reader: drawn as a primitive)
            return None
        if not len(getattr(mesh, "faces", ())):
            return None
        trimesh.repair.fix_normals(mesh)  # outward winding, so that back faces can be culled
        return decimate(mesh.vertices, mesh.faces, self.max_faces)


def as_library(meshes) -> MeshLibrary:
    """A MeshLibrary from None (the working folder only), a folder or list of folders, a name -> (vertices,
    faces) dict, or a MeshLibrary (returned as is)."""
    if isinstance(meshes, MeshLibrary):
        return meshes
    if meshes is None:
        return MeshLibrary()
    if isinstance(meshes, dict):
        return MeshLibrary(meshes=meshes)
    return MeshLibrary(meshes)


__all__ = ["MeshLibrary", "as_library", "decimate", "candidates", "MAX_FACES"]
