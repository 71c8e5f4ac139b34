"""Writes gjk_golden.json: coal 3 (hpp-fcl) signed distances, normals and witness points of the curved convex
pairs (GJK/EPA tracker, test_gjk_golden.py) and of convex meshes against a half-space.

Run from the repository root: ``python3 tests/contact/generate_gjk_golden.py`` (needs coal and scipy; the tests
never import them). Shapes: ellipsoids (semi-axes ELLIPSOID, ELLIPSOID_B), finite cylinders (radius,
half-length), a box, a capsule and the convex mesh of generate_convex_golden.py (hull of 30 seeded points).
Poses as in generate_convex_golden.py: random rotations and direction, B's center placed by bisection on coal's
signed distance at separated (+0.03 m), grazing (+1e-6), barely penetrating (-1e-6) and deep (-0.02) targets,
two poses each (a pose where coal's result misses the target by over 1e-8 m, a coal GJK/EPA failure on the
bisection, is counted under "rejected" and replaced); coal with signed distance on and GJK/EPA tolerances 1e-14. Half-space cases: coal's
Halfspace(n, 0) (material n.x <= 0) against the mesh at random poses, distance = minus the deepest vertex.
"""

from __future__ import annotations

import json
import os

import coal
import numpy as np
from scipy.spatial.transform import Rotation

from generate_convex_golden import coal_distance, hull_mesh

HERE = os.path.dirname(os.path.abspath(__file__))
ELLIPSOID, ELLIPSOID_B = [0.1, 0.06, 0.08], [0.05, 0.09, 0.07]
CYLINDER, CYLINDER_B = [0.06, 0.08], [0.05, 0.1]  # radius, half-length
BOX = [0.1, 0.06, 0.08]
CAPSULE = [0.04, 0.07]  # radius, half-length
TARGETS = {"separated": 0.03, "grazing": 1e-6, "touching": -1e-6, "deep": -0.02}
KINDS = [("ellipsoid", "ellipsoid"), ("capsule", "ellipsoid"), ("box", "ellipsoid"), ("mesh", "ellipsoid"),
         ("cylinder", "ellipsoid"), ("box", "cylinder"), ("mesh", "cylinder"), ("cylinder", "cylinder")]


def coal_shape(kind, mesh_vertices, second=False):
    if kind == "ellipsoid":
        return coal.Ellipsoid(*(ELLIPSOID_B if second else ELLIPSOID))
    if kind == "cylinder":
        r, h = CYLINDER_B if second else CYLINDER
        return coal.Cylinder(r, 2 * h)
    if kind == "box":
        return coal.Box(*(2 * np.asarray(BOX)))
    if kind == "capsule":
        return coal.Capsule(CAPSULE[0], 2 * CAPSULE[1])
    points = coal.StdVec_Vec3s()
    for x in mesh_vertices:
        points.append(x)
    return coal.Convex.convexHull(points, False, None)


def main():
    v, tri = hull_mesh()
    out = {"ellipsoid": ELLIPSOID, "ellipsoid_b": ELLIPSOID_B, "cylinder": CYLINDER, "cylinder_b": CYLINDER_B,
           "box": BOX, "capsule": CAPSULE, "mesh_vertices": v.tolist(), "mesh_triangles": tri.tolist(),
           "cases": [], "half_space_cases": [], "rejected": {}}
    seed = 100
    for ka, kb in KINDS:
        a, b = coal_shape(ka, v), coal_shape(kb, v, second=True)
        for regime, target in TARGETS.items():
            kept = 0
            while kept < 2:
                seed += 1
                rng = np.random.default_rng(seed)
                R1, R2 = (Rotation.random(random_state=rng).as_matrix() for _ in range(2))
                p1 = rng.normal(size=3) * 0.1
                d = rng.normal(size=3)
                d /= np.linalg.norm(d)
                lo, hi = 0.0, 1.0
                for _ in range(100):
                    mid = 0.5 * (lo + hi)
                    lo, hi = (mid, hi) if coal_distance(a, R1, p1, b, R2, p1 + mid * d)[0] < target else (lo, mid)
                p2 = p1 + 0.5 * (lo + hi) * d
                dist, normal, w1, w2 = coal_distance(a, R1, p1, b, R2, p2)
                if abs(dist - target) > 1e-8:  # coal's GJK/EPA failed somewhere on the bisection: another pose
                    key = f"{ka}-{kb} {regime}"
                    out["rejected"][key] = out["rejected"].get(key, 0) + 1
                    continue
                kept += 1
                out["cases"].append({"A": ka, "B": kb, "regime": regime, "R1": R1.tolist(), "p1": p1.tolist(),
                                     "R2": R2.tolist(), "p2": p2.tolist(), "distance": dist, "normal": normal.tolist(),
                                     "point_A": w1.tolist(), "point_B": w2.tolist()})
    mesh = coal_shape("mesh", v)
    for i in range(6):
        rng = np.random.default_rng(500 + i)
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        R2 = Rotation.random(random_state=rng).as_matrix()
        p2 = rng.normal(size=3) * 0.05
        dist = coal_distance(coal.Halfspace(n, 0.0), np.eye(3), np.zeros(3), mesh, R2, p2)[0]
        out["half_space_cases"].append({"n": n.tolist(), "R2": R2.tolist(), "p2": p2.tolist(), "distance": dist})
    with open(os.path.join(HERE, "gjk_golden.json"), "w") as dst:
        json.dump(out, dst, indent=1)


if __name__ == "__main__":
    main()
