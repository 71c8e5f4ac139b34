"""Convex tracker: jit + vmap over 1024 random poses against single evaluations, NaN isolation, gradients of the
signed distance against central differences (generic poses: separated and penetrating), and the pair table's
route through the CompliantContactSubsystem (a convex mesh and a box on a box floor: penalty force k x per
vertex under the floor, forces summing to zero over the bodies, jit and grad through realize; a box lying flat
rests on four corners).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import central_difference
from scipy.spatial.transform import Rotation
from test_convex_golden import GOLDEN, MESH_V, shape

import jaxbody as jb
from jaxbody._dynamics.contact.trackers import convex

PAIRS = [("box", "box"), ("mesh", "capsule"), ("mesh", "mesh")]


def _poses(n, seed):
    rng = np.random.default_rng(seed)
    R1, R2 = (jnp.asarray(Rotation.random(n, random_state=rng).as_matrix()) for _ in range(2))
    p1 = jnp.asarray(rng.normal(size=(n, 3)) * 0.02)
    p2 = jnp.asarray(rng.normal(size=(n, 3)) * 0.15)
    return R1, p1, R2, p2


def _distance_fn(ka, kb):
    return lambda R1, p1, R2, p2: convex.signed_distance(shape(ka, R1, p1), shape(kb, R2, p2, second=True))


@pytest.mark.parametrize("kinds", PAIRS, ids=lambda k: f"{k[0]}-{k[1]}")
def test_vmap_1024_poses_match_single(kinds):
    f = _distance_fn(*kinds)
    poses = _poses(1024, 3)
    batch = jax.jit(jax.vmap(f))(*poses)
    assert np.all(np.isfinite(batch.distance)) and np.any(batch.distance < 0) and np.any(batch.distance > 0)
    for i in (0, 17, 1023):
        one = f(*(x[i] for x in poses))
        for a, b in zip(batch, one):
            np.testing.assert_allclose(a[i], b, rtol=1e-12, atol=1e-14)


def test_nan_pose_stays_in_its_lane():
    f = jax.jit(jax.vmap(_distance_fn("mesh", "mesh")))
    R1, p1, R2, p2 = _poses(8, 4)
    out = f(R1, p1.at[2, 0].set(jnp.nan), R2, p2)
    good = np.delete(np.arange(8), 2)
    assert np.isnan(out.distance[2]) and np.all(np.isfinite(np.asarray(out.distance)[good]))
    assert np.all(np.isfinite(np.asarray(out.normal)[good]))


@pytest.mark.parametrize("kinds", PAIRS + [("box", "sphere")], ids=lambda k: f"{k[0]}-{k[1]}")
def test_distance_gradient_matches_central_differences(kinds):
    """d(distance)/d(p1, p2, rotation of 2, mesh vertices) at separated and penetrating golden poses."""
    cases = [c for c in GOLDEN["cases"] if (c["A"], c["B"]) == kinds and c["regime"] in ("separated", "deep")]
    ka, kb = kinds

    def distance(x, R1, R2):
        w = x["w"]
        R = jax.scipy.linalg.expm(jnp.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]]))
        A = shape(ka, R1, x["p1"], vertices=x["v"])
        return convex.signed_distance(A, shape(kb, R @ R2, x["p2"], second=True)).distance

    jvp = jax.jit(lambda x, d, R1, R2: jax.jvp(lambda x: distance(x, R1, R2), (x,), (d,))[1])
    value = jax.jit(distance)
    for c in cases:
        R1, p1, R2, p2 = (jnp.asarray(c[k]) for k in ("R1", "p1", "R2", "p2"))
        x = {"p1": p1, "p2": p2, "w": jnp.zeros(3), "v": jnp.asarray(MESH_V)}
        direction = jax.tree_util.tree_map(lambda a: jnp.asarray(np.random.default_rng(5).normal(size=a.shape)), x)
        ad = jvp(x, direction, R1, R2)
        fd = central_difference(lambda x: value(x, R1, R2), x, 1e-7, direction)
        assert abs(float(ad) - float(fd)) <= 1e-6 * max(1.0, abs(float(fd))), (kinds, c["regime"], float(ad), float(fd))


def _floor_model():
    """Ground: a box floor (top face at y = 0); body "mesh": a convex mesh; body "box": a box. Penalty pairs."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    tracker = jb.ContactTrackerSubsystem(system)
    jb.CompliantContactSubsystem(system, tracker)
    mp = jb.MassProperties.from_central_inertia(1.0, [0, 0, 0], jb.Inertia(0.01, 0.01, 0.01))
    mat = jb.ContactMaterial(1e6, 0.5, 0.8, 0.6, 0.0)
    matter.Ground().update_body().add_contact_surface(
        jb.Transform(jb.Rotation(), [0.0, -0.5, 0.0]), jb.ContactSurface(jb.ContactGeometry.Brick([2.0, 0.5, 2.0]), mat))
    bodies = []
    for name, geometry, x in (("mesh", jb.ContactGeometry.ConvexMesh(MESH_V), -0.6),
                              ("box", jb.ContactGeometry.Brick([0.1, 0.06, 0.08]), 0.6)):
        body = jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name=name)
        body.update_body().add_contact_surface(jb.Transform(), jb.ContactSurface(geometry, mat))
        bodies.append((body, x))
    return system.realize_topology(), bodies


@pytest.mark.long  # 16 s in CI
def test_table_route_penalty_forces():
    model, _ = _floor_model()
    rng = np.random.default_rng(9)
    R = [Rotation.random(random_state=rng).as_matrix() for _ in range(2)]
    y_low = [-np.min(MESH_V @ R[0].T, 0)[1], (np.abs(R[1]) @ [0.1, 0.06, 0.08])[1]]
    depth = [0.004, 0.002]
    q = jnp.concatenate([jnp.concatenate([jnp.asarray(jb.Rotation(Ri).to_quaternion()), jnp.asarray([x, yl - d, 0.1])])
                         for Ri, x, yl, d in zip(R, (-0.6, 0.6), y_low, depth)])

    @jax.jit
    def forces(q):
        s = model.default_state().set_q(q)
        return model.realize(s, jb.Stage.Dynamics).dynamics.body_forces

    F = np.asarray(forces(q))
    k = 0.5e6  # two equal penalty stiffnesses in series
    corners = np.array([[i, j, l] for i in (-1, 1) for j in (-1, 1) for l in (-1, 1)]) * [0.1, 0.06, 0.08]
    for body, vertices, Ri, yl, d in zip((1, 2), (MESH_V, corners), R, y_low, depth):
        below = np.maximum(0.0, -(vertices @ Ri.T)[:, 1] - (yl - d))  # every vertex under the floor pushes
        np.testing.assert_allclose(F[body, 1], [0.0, k * below.sum(), 0.0], rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(F[:, 1].sum(0), 0.0, atol=1e-9)
    g = jax.grad(lambda q: forces(q)[1, 1, 1])(q)
    n_below = np.sum(-(MESH_V @ R[0].T)[:, 1] > y_low[0] - depth[0])
    assert abs(float(g[5]) + k * n_below) <= 1e-6 * k  # d(force_y)/d(y) = -k per vertex under the floor


def test_flat_box_rests_on_its_four_corners():
    """A box lying on the floor box: four corner points (the vertex manifold), force 4 k d, no torque."""
    model, _ = _floor_model()
    d = 0.001
    q_mesh = jnp.asarray([1.0, 0, 0, 0, -0.6, 1.0, 0.1])  # the mesh body far above the floor
    q_box = jnp.asarray([1.0, 0, 0, 0, 0.6, 0.06 - d, 0.1])
    s = model.default_state().set_q(jnp.concatenate([q_mesh, q_box]))
    F = np.asarray(jax.jit(lambda s: model.realize(s, jb.Stage.Dynamics).dynamics.body_forces)(s))
    np.testing.assert_allclose(F[2], [[0.0, 0.0, 0.0], [0.0, 4 * 0.5e6 * d, 0.0]], atol=1e-9)
    np.testing.assert_allclose(F[1], 0.0, atol=0)
