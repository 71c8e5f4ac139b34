"""Writes convex_golden.json: coal 3 (hpp-fcl) signed distances, normals and witness points, for test_convex_golden.py.

Run from the repository root: ``python3 tests/contact/generate_convex_golden.py`` (needs coal and scipy; the tests
never import them). Shapes: a box (half-sizes BOX), a second box, a sphere, a capsule (radius, half-length along
z) and a convex mesh (the hull of 30 seeded random points, its outward triangles written with it). For every pair
kind the tracker handles, random rotations and a random direction d; shape B's center is put at ``t d`` from A's,
with t found by bisection on coal's signed distance to hit a target: separated (+0.03), grazing (+1e-6),
barely penetrating (-1e-6) and deep (-0.045; not -0.04, where the capsule cores would just touch and the normal is ill-posed), two poses each. coal runs with signed distance on and GJK/EPA
tolerances 1e-14.
"""

from __future__ import annotations

import json
import os

import coal
import numpy as np
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

HERE = os.path.dirname(os.path.abspath(__file__))
BOX, BOX_B = [0.1, 0.06, 0.08], [0.05, 0.09, 0.07]
SPHERE_RADIUS = 0.05
CAPSULE = [0.04, 0.07]  # radius, half-length
TARGETS = {"separated": 0.03, "grazing": 1e-6, "touching": -1e-6, "deep": -0.045}
KINDS = [("box", "box"), ("box", "sphere"), ("box", "capsule"), ("box", "mesh"), ("mesh", "sphere"),
         ("mesh", "capsule"), ("mesh", "mesh")]


def hull_mesh():
    rng = np.random.default_rng(7)
    pts = rng.normal(size=(30, 3)) * [0.1, 0.08, 0.12]
    v = pts[np.unique(ConvexHull(pts).simplices)]
    tri = ConvexHull(v).simplices.copy()
    c = v.mean(0)
    for i, t in enumerate(tri):
        if np.cross(v[t[1]] - v[t[0]], v[t[2]] - v[t[0]]) @ (v[t[0]] - c) < 0:
            tri[i] = t[[0, 2, 1]]
    return v, tri


def coal_shape(kind, mesh_vertices, second=False):
    if kind == "box":
        return coal.Box(*(2 * np.asarray(BOX_B if second else BOX)))
    if kind == "sphere":
        return coal.Sphere(SPHERE_RADIUS)
    if kind == "capsule":
        return coal.Capsule(CAPSULE[0], 2 * CAPSULE[1])
    points = coal.StdVec_Vec3s()
    for x in mesh_vertices:
        points.append(x)
    return coal.Convex.convexHull(points, False, None)


def coal_distance(a, R1, p1, b, R2, p2):
    req = coal.DistanceRequest()
    req.enable_signed_distance = True
    req.gjk_tolerance = req.epa_tolerance = 1e-14
    req.gjk_max_iterations = req.epa_max_iterations = 1000
    res = coal.DistanceResult()
    d = coal.distance(a, coal.Transform3s(R1, p1), b, coal.Transform3s(R2, p2), req, res)
    return d, np.array(res.normal), np.array(res.getNearestPoint1()), np.array(res.getNearestPoint2())


def main():
    v, tri = hull_mesh()
    out = {"box": BOX, "box_b": BOX_B, "sphere_radius": SPHERE_RADIUS, "capsule": CAPSULE,
           "mesh_vertices": v.tolist(), "mesh_triangles": tri.tolist(), "cases": []}
    seed = 0
    for ka, kb in KINDS:
        a, b = coal_shape(ka, v), coal_shape(kb, v, second=True)
        for regime, target in TARGETS.items():
            for _ in range(2):
                seed += 1
                rng = np.random.default_rng(seed)
                R1, R2 = (Rotation.random(random_state=rng).as_matrix() for _ in range(2))
                p1 = rng.normal(size=3) * 0.1
                d = rng.normal(size=3)
                d /= np.linalg.norm(d)
                lo, hi = 0.0, 1.0  # sd(lo) < target < sd(hi)
                for _ in range(100):
                    mid = 0.5 * (lo + hi)
                    lo, hi = (mid, hi) if coal_distance(a, R1, p1, b, R2, p1 + mid * d)[0] < target else (lo, mid)
                p2 = p1 + 0.5 * (lo + hi) * d
                dist, normal, w1, w2 = coal_distance(a, R1, p1, b, R2, p2)
                out["cases"].append({"A": ka, "B": kb, "regime": regime, "R1": R1.tolist(), "p1": p1.tolist(),
                                     "R2": R2.tolist(), "p2": p2.tolist(), "distance": dist, "normal": normal.tolist(),
                                     "point_A": w1.tolist(), "point_B": w2.tolist()})
    with open(os.path.join(HERE, "convex_golden.json"), "w") as dst:
        json.dump(out, dst, indent=1)


if __name__ == "__main__":
    main()
