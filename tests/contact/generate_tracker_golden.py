"""Writes tracker_golden.json: coal (hpp-fcl) 3.0 signed distances, normals and witness points for the pairs
Simbody lacks (capsule/capsule, sphere/capsule, box/sphere, box/capsule) and sphere/ellipsoid, for
test_tracker_golden.py.

Run from the repository root: ``python3 tests/contact/generate_tracker_golden.py`` (needs coal; the tests never
import it). Poses are random rotations and offsets; for each pair kind a third are separated, a third grazing
(|distance| ~ 1e-7 m, placed by moving the second shape along coal's normal) and a third deep (overlap 30% of the
smaller size). coal's conventions: Capsule(radius, full length along z), Box(full sizes), normal from shape 1
to shape 2 (jaxbody's too), distance negative when overlapping (penetration depth by EPA).
"""

from __future__ import annotations

import json
import os

import coal
import numpy as np
from scipy.spatial.transform import Rotation

HERE = os.path.dirname(os.path.abspath(__file__))
PER_KIND = 9


def _shape(kind, size):
    if kind == "Sphere":
        return coal.Sphere(size[0])
    if kind == "Capsule":
        return coal.Capsule(size[0], 2 * size[1])
    if kind == "Brick":
        return coal.Box(*(2 * np.asarray(size)))
    return coal.Ellipsoid(*size)


def _size(kind, rng):
    if kind == "Sphere":
        return [rng.uniform(0.05, 0.2)]
    if kind == "Capsule":
        return [rng.uniform(0.04, 0.15), rng.uniform(0.05, 0.3)]
    return list(rng.uniform(0.06, 0.3, 3))


def _distance(s1, R1, p1, s2, R2, p2):
    req = coal.DistanceRequest()
    req.gjk_tolerance = 1e-13
    req.epa_tolerance = 1e-13
    req.gjk_max_iterations = 1000
    req.epa_max_iterations = 1000
    res = coal.DistanceResult()
    d = coal.distance(s1, coal.Transform3s(R1, p1), s2, coal.Transform3s(R2, p2), req, res)
    return d, np.asarray(res.normal), np.asarray(res.getNearestPoint1()), np.asarray(res.getNearestPoint2())


def main():
    rng = np.random.default_rng(7)
    out = {}
    for kinds in (("Capsule", "Capsule"), ("Sphere", "Capsule"), ("Brick", "Sphere"), ("Brick", "Capsule"),
                  ("Sphere", "Ellipsoid")):
        cases = []
        for i in range(PER_KIND):
            size1, size2 = _size(kinds[0], rng), _size(kinds[1], rng)
            s1, s2 = _shape(kinds[0], size1), _shape(kinds[1], size2)
            R1, R2 = Rotation.random(random_state=rng).as_matrix(), Rotation.random(random_state=rng).as_matrix()
            p1 = rng.normal(size=3) * 0.1
            p2 = p1 + rng.normal(size=3) * 0.25
            d, n, _, _ = _distance(s1, R1, p1, s2, R2, p2)
            regime = ("separated", "grazing", "deep")[i % 3]
            target = {"separated": max(d, 0.02), "grazing": 1e-7 * (1 if i % 2 else -1),
                      "deep": -0.3 * min(min(size1), min(size2))}[regime]
            for _ in range(6):  # move shape 2 along the normal until the distance is the target
                p2 = p2 + (target - d) * n
                d, n, w1, w2 = _distance(s1, R1, p1, s2, R2, p2)
            cases.append({"regime": regime, "size1": size1, "size2": size2, "R1": R1.tolist(), "p1": p1.tolist(),
                          "R2": R2.tolist(), "p2": p2.tolist(), "distance": d, "normal": n.tolist(),
                          "witness1": w1.tolist(), "witness2": w2.tolist()})
        out["/".join(kinds)] = cases
    with open(os.path.join(HERE, "tracker_golden.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
