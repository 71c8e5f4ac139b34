"""Cylinder trackers against coal 3 / hpp-fcl (golden file from generate_cylinder_golden.py): depth (= -signed
distance), normal (cylinder to the other shape; half-space to cylinder) and contact point (midway between the
witness points) for a finite cylinder against a sphere and a capsule (separated, grazing, touching, shallow) and
a half-space (also deep; the deepest of the eight rim points). Tolerance 1e-9, except the capsule's normal and
point: coal's GJK between two curved shapes stops with witness points ~1e-6 m off (its distance is a lower bound
~1e-11 below ours, whose witness points realize it exactly: the closest cylinder point of the capsule's axis
point), so they are compared to 1e-5 there and the signed distance to 1e-9. A sphere deep inside, where coal's EPA is not minimal, is checked in closed form; a
cylinder standing on a cap rests on four rim points.
"""

import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbody._dynamics.contact import shapes
from jaxbody._dynamics.contact.trackers import cylinder

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "cylinder_golden.json")) as _f:
    GOLDEN = json.load(_f)
CYL = shapes.Cylinder(radius=jnp.asarray([GOLDEN["cylinder"][0]]), half_length=jnp.asarray([GOLDEN["cylinder"][1]]))
OTHER = {"sphere": shapes.Sphere(radius=jnp.asarray([GOLDEN["sphere_radius"]])),
         "capsule": shapes.Capsule(radius=jnp.asarray([GOLDEN["capsule"][0]]), half_length=jnp.asarray([GOLDEN["capsule"][1]]))}


def _a(x):
    return jnp.asarray(x)[None]


def _track(case):
    if case["B"] == "half_space":
        c = jax.jit(cylinder.half_space_cylinder)(_a(case["R_GH"]), _a(case["p_GH"]), shapes.HalfSpace(), _a(case["R_GC"]),
                                                  _a(case["p_GC"]), CYL)
        k = int(np.argmax(c.depth[0]))
        return float(c.depth[0, k]), c.normal_G[0, k], c.point_G[0, k]
    track = cylinder.cylinder_sphere if case["B"] == "sphere" else cylinder.cylinder_capsule
    c = jax.jit(track)(_a(case["R1"]), _a(case["p1"]), CYL, _a(case["R2"]), _a(case["p2"]), OTHER[case["B"]])
    return float(c.depth[0, 0]), c.normal_G[0, 0], c.point_G[0, 0]


@pytest.mark.parametrize("kind", ["sphere", "capsule", "half_space"])
def test_matches_coal(kind):
    for case in (c for c in GOLDEN["cases"] if c["B"] == kind):
        depth, normal, point = _track(case)
        what = f"{kind} {case['regime']}"
        assert abs(depth + case["distance"]) <= 1e-9, (what, depth, case["distance"])
        tol = 1e-5 if kind == "capsule" else 1e-9
        np.testing.assert_allclose(normal, case["normal"], atol=tol, err_msg=what)
        np.testing.assert_allclose(point, 0.5 * (np.asarray(case["point_A"]) + case["point_B"]), atol=tol, err_msg=what)


def test_deep_sphere_leaves_through_the_nearest_cap():
    """Center at (0.01, -0.0095, -0.0446) in the cylinder (side gap 0.0362, cap gap 0.0354): out through -z."""
    c_S = jnp.asarray([[0.01, -0.0095, -0.0446]])
    out = cylinder.cylinder_sphere(jnp.eye(3)[None], jnp.zeros((1, 3)), CYL, jnp.eye(3)[None], c_S, OTHER["sphere"])
    np.testing.assert_allclose(out.depth[0, 0], GOLDEN["sphere_radius"] + GOLDEN["cylinder"][1] - 0.0446, rtol=1e-14)
    np.testing.assert_allclose(out.normal_G[0, 0], [0.0, 0.0, -1.0], atol=1e-15)
    np.testing.assert_allclose(out.curvatures[0, 0], [1 / GOLDEN["sphere_radius"]] * 2, rtol=1e-14)


def test_standing_cylinder_rests_on_four_rim_points():
    R_GH = jnp.asarray([[[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]])  # x_H = -y_G: floor y < 0
    R_GC = jnp.asarray([[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]]])  # cylinder axis z_C = +y_G (upright)
    p_GC = jnp.asarray([[0.0, GOLDEN["cylinder"][1] - 0.001, 0.0]])
    c = cylinder.half_space_cylinder(R_GH, jnp.zeros((1, 3)), shapes.HalfSpace(), R_GC, p_GC, CYL)
    np.testing.assert_allclose(np.sort(np.asarray(c.depth[0]))[-4:], 0.001, atol=1e-15)
    active = np.asarray(c.depth[0]) > 0
    assert np.sum(active) == 4
    points = np.asarray(c.point_G[0])[active]
    gaps = np.linalg.norm(points[:, None] - points[None], axis=-1)[np.triu_indices(4, 1)]
    assert np.min(gaps) >= np.sqrt(2) * GOLDEN["cylinder"][0] - 1e-12, "four distinct rim points, 90 degrees apart"
    np.testing.assert_allclose(points.mean(0)[[0, 2]], 0.0, atol=1e-15)  # centered under the axis


@pytest.mark.parametrize("kind", ["sphere", "half_space"])
def test_gradients_match_central_differences_under_vmap(kind):
    """jvp of the depths of all the golden poses of ``kind`` (one vmapped call) w.r.t. the other shape's
    position and the cylinder's radius and half-length, against central differences (active region fixed)."""
    from helpers import central_difference  # noqa: PLC0415

    cases = [c for c in GOLDEN["cases"] if c["B"] == kind]
    if kind == "sphere":
        R1, p1, R2, p2 = (jnp.asarray(np.array([c[k] for c in cases])) for k in ("R1", "p1", "R2", "p2"))
        fn = lambda x: cylinder.cylinder_sphere(R1, p1, shapes.Cylinder(x["r"], x["h"]), R2, x["p"],
                                                shapes.Sphere(jnp.full(len(cases), GOLDEN["sphere_radius"]))).depth
    else:
        R1, p1, R2, p2 = (jnp.asarray(np.array([c[k] for c in cases])) for k in ("R_GH", "p_GH", "R_GC", "p_GC"))
        fn = lambda x: cylinder.half_space_cylinder(R1, p1, shapes.HalfSpace(), R2, x["p"], shapes.Cylinder(x["r"], x["h"])).depth
    n = len(cases)
    x = {"p": p2, "r": jnp.full(n, GOLDEN["cylinder"][0]), "h": jnp.full(n, GOLDEN["cylinder"][1])}
    rng = np.random.default_rng(11)
    direction = jax.tree_util.tree_map(lambda a: jnp.asarray(rng.normal(size=a.shape)), x)
    ad = jax.jit(lambda x, d: jax.jvp(fn, (x,), (d,))[1])(x, direction)
    fd = central_difference(jax.jit(fn), x, 1e-7, direction)
    np.testing.assert_allclose(ad, fd, atol=1e-7)
