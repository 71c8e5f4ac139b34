"""Convex hull triangles of a point set (host-side numpy, at model build): the static face list of a ConvexMesh.

Incremental hull (start from a non-degenerate tetrahedron, add each point outside the current hull, replace
the faces it sees by a fan to their horizon). Faces are counter-clockwise seen from outside. Points within
``1e-12 * size`` of a face plane count as on it (not added). Cost O(n * faces); meant for meshes of up to a
few thousand vertices. Raises ValueError for fewer than 4 non-coplanar points.
"""

from __future__ import annotations

import numpy as np


def convex_hull_triangles(points) -> np.ndarray:
    """Outward triangles (nt, 3) of the convex hull of ``points`` (nv, 3), as indices into ``points``."""
    p = np.asarray(points, dtype=float)
    size = np.max(np.ptp(p, axis=0)) if len(p) else 0.0
    eps = 1e-12 * max(size, 1e-300)
    i0 = 0
    i1 = int(np.argmax(np.linalg.norm(p - p[i0], axis=1)))
    i2 = int(np.argmax(np.linalg.norm(np.cross(p - p[i0], p[i1] - p[i0]), axis=1)))
    normal = np.cross(p[i1] - p[i0], p[i2] - p[i0])
    height = (p - p[i0]) @ normal
    i3 = int(np.argmax(np.abs(height)))
    if np.linalg.norm(normal) <= eps * size or abs(height[i3]) <= eps * np.linalg.norm(normal):
        raise ValueError("convex hull: the points are coplanar or fewer than 4 distinct")
    faces = [(i0, i1, i2), (i0, i3, i1), (i1, i3, i2), (i2, i3, i0)]
    if height[i3] > 0:
        faces = [(a, c, b) for a, b, c in faces]

    def plane(face):
        a, b, c = p[list(face)]
        n = np.cross(b - a, c - a)
        return n / np.linalg.norm(n), a

    for k in range(len(p)):
        if k in (i0, i1, i2, i3):
            continue
        visible = [f for f in faces if (lambda n, a: (p[k] - a) @ n > eps)(*plane(f))]
        if not visible:
            continue
        edges = {(a, b) for f in visible for a, b in ((f[0], f[1]), (f[1], f[2]), (f[2], f[0]))}
        horizon = [(a, b) for a, b in edges if (b, a) not in edges]
        faces = [f for f in faces if f not in visible] + [(a, b, k) for a, b in horizon]
    return np.asarray(faces, dtype=np.int64)
