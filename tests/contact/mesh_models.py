"""Closed triangle meshes for the mesh tests, and the .obj reader/writer the tests and generators share.

``icosphere(radius, subdivisions)``: an icosahedron subdivided and projected onto the sphere, faces counter-
clockwise seen from outside (outward normals), written to ``tests/models/contact/*.obj`` by the generator.
"""

from __future__ import annotations

import os

import numpy as np

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models", "contact")


def icosphere(radius=1.0, subdivisions=1):
    """Vertices (nv, 3) and faces (nf, 3) of an icosphere: 20 * 4^subdivisions faces."""
    t = (1 + 5**0.5) / 2
    v = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t), (0, 1, -t),
         (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    f = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2), (10, 7, 6),
         (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10),
         (8, 6, 7), (9, 8, 1)]
    verts = [np.asarray(x, float) / np.linalg.norm(x) for x in v]
    for _ in range(subdivisions):
        cache, new = {}, []

        def mid(a, b):
            key = (min(a, b), max(a, b))
            if key not in cache:
                m = verts[a] + verts[b]
                verts.append(m / np.linalg.norm(m))
                cache[key] = len(verts) - 1
            return cache[key]

        for a, b, c in f:
            ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
            new += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        f = new
    return radius * np.asarray(verts), np.asarray(f, dtype=np.int64)


def write_obj(path, vertices, faces):
    with open(path, "w") as out:
        out.write("# written by tests/contact/mesh_models.py (jaxbody's tests)\n")
        for x in vertices:
            out.write("v %.17g %.17g %.17g\n" % tuple(x))
        for a, b, c in faces:
            out.write(f"f {a + 1} {b + 1} {c + 1}\n")


def read_obj(path):
    """Vertices (nv, 3) and triangular faces (nf, 3) of a plain .obj file (``v`` and ``f`` lines only)."""
    vertices, faces = [], []
    with open(path) as src:
        for line in src:
            parts = line.split()
            if parts and parts[0] == "v":
                vertices.append([float(x) for x in parts[1:4]])
            elif parts and parts[0] == "f":
                faces.append([int(x.split("/")[0]) - 1 for x in parts[1:4]])
    return np.asarray(vertices), np.asarray(faces, dtype=np.int64)
