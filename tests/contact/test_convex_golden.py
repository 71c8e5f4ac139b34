"""Convex tracker against coal 3 / hpp-fcl (golden file from generate_convex_golden.py): signed distance, normal
(A to B) and witness points on both surfaces to 1e-9, for box/box, box/sphere, box/capsule, box/convex mesh,
convex mesh/sphere, capsule and convex mesh, at separated, grazing (+1e-6 m), barely penetrating (-1e-6 m) and
deep (-0.045 m) random poses. (coal's boxes carry a ~1e-11 m offset of their own; its EPA runs at 1e-14.)
"""

import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbody._dynamics.contact.trackers import convex

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "convex_golden.json")) as _f:
    GOLDEN = json.load(_f)
MESH_V = np.asarray(GOLDEN["mesh_vertices"])
MESH_T = np.asarray(GOLDEN["mesh_triangles"])
MESH_E = convex.hull_edges(MESH_T)
KINDS = sorted({(c["A"], c["B"]) for c in GOLDEN["cases"]})


def shape(kind, R, p, second=False, vertices=MESH_V):
    """The golden file's shape ``kind`` at pose (R, p) as a convex.Polytope."""
    if kind == "box":
        return convex.box(R, p, jnp.asarray(GOLDEN["box_b" if second else "box"]))
    if kind == "sphere":
        return convex.sphere(R, p, GOLDEN["sphere_radius"])
    if kind == "capsule":
        return convex.capsule(R, p, *GOLDEN["capsule"])
    return convex.convex_mesh(R, p, jnp.asarray(vertices), MESH_T, MESH_E)


def pair_function(kind_a, kind_b):
    def f(R1, p1, R2, p2):
        return convex.signed_distance(shape(kind_a, R1, p1), shape(kind_b, R2, p2, second=True))

    return jax.jit(jax.vmap(f))


def cases_of(kind_a, kind_b):
    cases = [c for c in GOLDEN["cases"] if (c["A"], c["B"]) == (kind_a, kind_b)]
    arrays = [jnp.asarray(np.array([c[k] for c in cases])) for k in ("R1", "p1", "R2", "p2")]
    return cases, arrays


@pytest.mark.parametrize("kinds", KINDS, ids=lambda k: f"{k[0]}-{k[1]}")
def test_matches_coal(kinds):
    cases, arrays = cases_of(*kinds)
    got = pair_function(*kinds)(*arrays)
    for i, c in enumerate(cases):
        what = f"{kinds} {c['regime']}"
        assert abs(float(got.distance[i]) - c["distance"]) <= 1e-9, (what, float(got.distance[i]), c["distance"])
        np.testing.assert_allclose(got.normal[i], c["normal"], atol=1e-9, err_msg=what)
        np.testing.assert_allclose(got.point_A[i], c["point_A"], atol=1e-9, err_msg=what)
        np.testing.assert_allclose(got.point_B[i], c["point_B"], atol=1e-9, err_msg=what)
        np.testing.assert_allclose(got.point_B[i] - got.point_A[i], got.distance[i] * got.normal[i], atol=1e-12)


def test_golden_covers_regimes():
    regimes = {(c["A"], c["B"], c["regime"]) for c in GOLDEN["cases"]}
    assert len(regimes) == 4 * len(KINDS) == 28
