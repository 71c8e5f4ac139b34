"""ElasticFoundationForce under vmap (1024 lanes, 256 for mesh against mesh; one shared Model), jit, jax.grad vs
central differences, NaN isolation, and an independent route: with zero velocity the force is conservative, so the
ball's spatial force equals minus the gradient of the potential energy with respect to its pose.

Models are the golden file's (test_mesh_golden.meshed_ball) at its penetrating states.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ball_models import golden_q_u
from helpers import central_difference
from test_mesh_golden import GOLDEN, KINDS, forces_and_energy, meshed_ball


@pytest.fixture(scope="module")
def models():
    return {kind: meshed_ball(kind)[0] for kind in KINDS}


def _lanes(case, n, seed=0):
    """``n`` ball states spread around ``case``: translations of +-2 cm (from separated to deep), random speeds."""
    q, u = golden_q_u(case)
    rng = np.random.default_rng(seed)
    qs = np.tile(np.asarray(q), (n, 1))
    qs[:, 4:] += rng.uniform(-0.02, 0.02, (n, 3))
    us = np.asarray(u) + rng.normal(0, 0.3, (n, 6))
    return jnp.asarray(qs), jnp.asarray(us)


#: Lanes per kind. Mesh against mesh tests every face of one mesh against every vertex of the other in each lane
#: (~4.3 MB of intermediates per lane here), so 1024 of them took 4.4 GB, the suite's largest allocation; 256 lanes
#: check the same batching rule.
LANES = {"half_space": 1024, "sphere": 1024, "mesh": 256}


@pytest.mark.parametrize("kind", KINDS)
def test_vmap_lanes_match_single_lanes(models, kind):
    model = models[kind]
    n = LANES[kind]
    qs, us = _lanes(GOLDEN[kind]["cases"][0], n)
    F, pe = jax.jit(jax.vmap(forces_and_energy, in_axes=(None, 0, 0)))(model, qs, us)
    assert np.all(np.isfinite(F)) and np.sum(pe > 0) > n // 10 and np.sum(pe == 0) > 0, "lanes must mix contact and none"
    for i in (0, 1, n // 2 - 1, n - 1):
        F1, pe1 = forces_and_energy(model, qs[i], us[i])
        np.testing.assert_allclose(F[i], F1, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(pe[i], pe1, rtol=1e-12, atol=1e-12)


def test_nan_lane_stays_in_its_lane(models):
    model = models["mesh"]
    qs, us = _lanes(GOLDEN["mesh"]["cases"][0], 8)
    qs = qs.at[3, 5].set(jnp.nan)
    F, pe = jax.vmap(forces_and_energy, in_axes=(None, 0, 0))(model, qs, us)
    assert np.all(np.isnan(F[3]).any()) and np.all(np.isfinite(np.delete(np.asarray(F), 3, 0)))
    assert np.all(np.isfinite(np.delete(np.asarray(pe), 3)))


def _ball_pose(q, x):
    """q moved by a small spatial displacement x = (rotation vector in G, translation of Bo in G)."""
    angle = jnp.sqrt(jnp.sum(x[:3] ** 2) + 1e-300)
    a, b = jnp.concatenate([jnp.cos(angle / 2)[None], jnp.sin(angle / 2) / angle * x[:3]]), q[:4]
    product = jnp.concatenate([(a[0] * b[0] - a[1:] @ b[1:])[None], a[0] * b[1:] + b[0] * a[1:] + jnp.cross(a[1:], b[1:])])
    return jnp.concatenate([product, q[4:] + x[3:]])


@pytest.mark.parametrize("kind", KINDS)
def test_static_force_is_minus_energy_gradient(models, kind):
    model = models[kind]
    q, _ = golden_q_u(GOLDEN[kind]["cases"][0])
    u = jnp.zeros(6)
    energy = lambda x: forces_and_energy(model, _ball_pose(q, x), u)[1]
    grad = jax.grad(energy)(jnp.zeros(6))
    F = forces_and_energy(model, q, u)[0][1].reshape(6)  # the ball's (torque about Bo, force), in G
    np.testing.assert_allclose(-grad, F, rtol=1e-10, atol=1e-10 * np.max(np.abs(F)))
    np.testing.assert_allclose(central_difference(energy, jnp.zeros(6), 1e-7), grad, rtol=1e-5, atol=1e-6 * np.max(np.abs(F)))


@pytest.mark.parametrize("kind", KINDS)
def test_gradient_matches_central_differences(models, kind):
    """d/d(q, u, vertices, parameters) of w . body_forces at a sliding penetrating state (active set constant)."""
    model = models[kind]
    q, u = golden_q_u(GOLDEN[kind]["cases"][0])
    w = jnp.asarray(np.random.default_rng(1).normal(size=(model.topology.nbodies, 2, 3)))
    ef = model.forces[0]

    def objective(x):
        m = eqx.tree_at(lambda m: (m.forces[0].vertices, m.forces[0].parameters), model, (x["vertices"], x["parameters"]))
        F, pe = forces_and_energy(m, x["q"], x["u"])
        return jnp.sum(w * F) + pe

    x = {"q": q, "u": u, "vertices": ef.vertices, "parameters": ef.parameters}
    rng = np.random.default_rng(2)
    direction = jax.tree_util.tree_map(lambda a: jnp.asarray(rng.normal(size=a.shape)) * (np.abs(np.asarray(a)) + 1e-3) * 1e-2, x)
    direction["q"] = direction["q"].at[:4].set(0.0)  # quaternion entries: moved through test_static_force_...
    ad = jax.jvp(objective, (x,), (direction,))[1]
    fd = central_difference(objective, x, 1e-6, direction)
    assert abs(float(ad) - float(fd)) <= 1e-6 * max(abs(float(fd)), 1.0), (kind, float(ad), float(fd))
