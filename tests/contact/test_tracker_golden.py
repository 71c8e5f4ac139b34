"""Primitive trackers against coal 3.0 (hpp-fcl; golden file from generate_tracker_golden.py) on random poses,
separated, grazing (|distance| 1e-7 m) and deep: depth = -coal's signed distance and the normal (from shape 1 to
shape 2) to 1e-9 (ellipsoid: see below), and the contact origin = the midpoint of coal's witness points where the closest points are
unique (sphere pairs and capsule pairs; a box's face can touch along a segment)."""

import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbody._dynamics.contact import shapes
from jaxbody._dynamics.contact.trackers.table import PAIR_TABLE

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tracker_golden.json")) as _f:
    GOLDEN = json.load(_f)


def _record(kind, sizes):
    a = jnp.asarray(sizes)
    if kind == "Sphere":
        return shapes.Sphere(a[:, 0])
    if kind == "Capsule":
        return shapes.Capsule(a[:, 0], a[:, 1])
    return shapes.Brick(a) if kind == "Brick" else shapes.Ellipsoid(a)


@pytest.mark.parametrize("pair", sorted(GOLDEN))
def test_tracker_matches_coal(pair):
    cases = GOLDEN[pair]
    k1, k2 = pair.split("/")
    arr = lambda key: jnp.asarray([c[key] for c in cases])  # noqa: E731
    c = jax.jit(PAIR_TABLE[(k1, k2)].track)(arr("R1"), arr("p1"), _record(k1, [x["size1"] for x in cases]),
                                             arr("R2"), arr("p2"), _record(k2, [x["size2"] for x in cases]))
    np.testing.assert_allclose(c.depth[:, 0], -arr("distance"), atol=1e-9)
    # coal's GJK/EPA normal on a curved ellipsoid is good to ~1e-6 only (its distance to 1e-12: the distance is
    # second order in the normal's error); there the optimality conditions check jaxbody's normal instead
    # at 1e-7 m a witness point's rounding (1e-15) tilts a normal taken between witnesses by 1e-8: 1e-6 there
    grazing = np.asarray([x["regime"] == "grazing" for x in cases])[:, None]
    # coal's GJK/EPA (box/capsule) stops at ~1e-8 in the normal; its sphere and capsule pairs are analytic
    tolerance = {"Ellipsoid": 1e-5, "Capsule": 3e-8 if k1 == "Brick" else 1e-9}.get(k2, 1e-9)
    tolerance = np.where(grazing, 1e-6, tolerance)
    assert np.all(np.abs(np.asarray(c.normal_G[:, 0]) - np.asarray(arr("normal"))) <= tolerance)
    if k2 == "Ellipsoid":
        R2, radii = np.asarray(arr("R2")), np.asarray([x["size2"] for x in cases])
        Q = np.asarray(c.point_G[:, 0] - 0.5 * c.depth * c.normal_G[:, 0])  # the ellipsoid's surface point
        Q_E = np.einsum("nji,nj->ni", R2, Q - np.asarray(arr("p2")))
        gradient = np.einsum("nij,nj->ni", R2, Q_E / radii**2)
        gradient /= np.linalg.norm(gradient, axis=1, keepdims=True)
        np.testing.assert_allclose(np.sum(Q_E**2 / radii**2, 1), 1.0, atol=1e-13)  # on the surface
        np.testing.assert_allclose(-np.asarray(c.normal_G[:, 0]), gradient, atol=1e-12)  # normal to it
        to_center = np.asarray(arr("p1")) - Q
        np.testing.assert_allclose(np.cross(to_center, gradient), 0.0, atol=1e-12)  # toward the center
    if k1 != "Brick":
        middle = 0.5 * (arr("witness1") + arr("witness2"))
        np.testing.assert_allclose(c.point_G[:, 0], middle, atol=1e-6 if k2 == "Ellipsoid" else 1e-9)
