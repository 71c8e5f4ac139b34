"""Writes cylinder_golden.json: coal 3 (hpp-fcl) signed distances, normals and witness points of a finite cylinder
against a half-space, a sphere and a capsule, for test_cylinder_golden.py.

Run from the repository root: ``python3 tests/contact/generate_cylinder_golden.py`` (needs coal and scipy; the
tests never import them). Cylinder: radius 0.05, half-length 0.08 along z. Random rotations and directions; the
other shape's center is placed by bisection on coal's signed distance at separated (+0.03), grazing (+1e-6),
barely penetrating (-1e-6) and shallow (-0.005) targets, two poses each, and for the half-space also deep
(-0.05). Deep sphere/capsule poses are left out: coal's EPA on the cylinder then returns a non-minimal
translation (e.g. through the side where the cap is 0.0038 m nearer); test_cylinder_golden.py checks a deep
sphere in closed form instead.
"""

from __future__ import annotations

import json
import os

import coal
import numpy as np
from generate_convex_golden import coal_distance
from scipy.spatial.transform import Rotation

HERE = os.path.dirname(os.path.abspath(__file__))
CYLINDER = [0.05, 0.08]
SPHERE_RADIUS = 0.04
CAPSULE = [0.03, 0.06]
TARGETS = {"separated": 0.03, "grazing": 1e-6, "touching": -1e-6, "shallow": -0.005}


def main():
    cyl = coal.Cylinder(CYLINDER[0], 2 * CYLINDER[1])
    out = {"cylinder": CYLINDER, "sphere_radius": SPHERE_RADIUS, "capsule": CAPSULE, "cases": []}
    seed = 100
    for kind, other in (("sphere", coal.Sphere(SPHERE_RADIUS)), ("capsule", coal.Capsule(CAPSULE[0], 2 * CAPSULE[1]))):
        for regime, target in TARGETS.items():
            for _ in range(2):
                seed += 1
                rng = np.random.default_rng(seed)
                R1, R2 = (Rotation.random(random_state=rng).as_matrix() for _ in range(2))
                p1 = rng.normal(size=3) * 0.1
                d = rng.normal(size=3)
                d /= np.linalg.norm(d)
                lo, hi = 0.0, 1.0
                for _ in range(100):
                    mid = 0.5 * (lo + hi)
                    lo, hi = (mid, hi) if coal_distance(cyl, R1, p1, other, R2, p1 + mid * d)[0] < target else (lo, mid)
                p2 = p1 + 0.5 * (lo + hi) * d
                dist, normal, w1, w2 = coal_distance(cyl, R1, p1, other, R2, p2)
                out["cases"].append({"B": kind, "regime": regime, "R1": R1.tolist(), "p1": p1.tolist(), "R2": R2.tolist(),
                                     "p2": p2.tolist(), "distance": dist, "normal": normal.tolist(),
                                     "point_A": w1.tolist(), "point_B": w2.tolist()})
    for regime, target in dict(TARGETS, deep=-0.05).items():
        for _ in range(2):
            seed += 1
            rng = np.random.default_rng(seed)
            R_GH, R_GC = (Rotation.random(random_state=rng).as_matrix() for _ in range(2))
            p_GC = rng.normal(size=3) * 0.1
            x_H = R_GH[:, 0]
            # half-space x_H . (x - p_GH) >= 0 (jaxbody/Simbody) is coal's {n . x <= d} with n = -x_H
            sd = lambda s: coal_distance(coal.Halfspace(-x_H, float(-x_H @ (p_GC + s * x_H))), np.eye(3), np.zeros(3),
                                         cyl, R_GC, p_GC)[0]
            lo, hi = -1.0, 1.0  # p_GH = p_GC + s x_H: sd grows with s
            for _ in range(100):
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if sd(mid) < target else (lo, mid)
            p_GH = p_GC + 0.5 * (lo + hi) * x_H
            dist, normal, w1, w2 = coal_distance(coal.Halfspace(-x_H, float(-x_H @ p_GH)), np.eye(3), np.zeros(3), cyl, R_GC, p_GC)
            out["cases"].append({"B": "half_space", "regime": regime, "R_GH": R_GH.tolist(), "p_GH": p_GH.tolist(),
                                 "R_GC": R_GC.tolist(), "p_GC": p_GC.tolist(), "distance": dist, "normal": normal.tolist(),
                                 "point_A": w1.tolist(), "point_B": w2.tolist()})
    with open(os.path.join(HERE, "cylinder_golden.json"), "w") as dst:
        json.dump(out, dst, indent=1)


if __name__ == "__main__":
    main()
