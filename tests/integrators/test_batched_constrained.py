"""An adaptive, projected rollout of a closed loop (the parallelogram four-bar) under jit, vmap and grad:
every lane takes its own steps in one compiled loop, stays on the constraint manifold, conserves energy, and
the gradient of a final-state loss through a checkpointed rollout matches central differences."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from constraint_systems import fourbar_state, parallelogram_fourbar
from helpers import assert_grad_matches_fd

import jaxbody as jb

LANES = 16
TOL = 1e-8
REPORT_TIMES = jnp.linspace(0.1, 1.0, 10)


@pytest.fixture(scope="module")
def batched():
    model, _, _, _ = parallelogram_fourbar()
    integ = jb.RungeKuttaMersonIntegrator(model, accuracy=1e-6, constraint_tolerance=TOL)
    ts = jb.TimeStepper(model, integ)
    traces = []

    def rollout(theta, omega):
        traces.append(1)
        run, traj = ts.simulate(fourbar_state(model, theta, omega), REPORT_TIMES)

        def measures(s):
            r = model.realize(s, jb.Stage.Dynamics)
            return model.calc_energy(r), model.get_q_err(r), model.get_u_err(r)

        return run, traj, jax.vmap(measures)(traj)

    f = jax.jit(jax.vmap(rollout))
    thetas = jnp.linspace(-0.5, 1.0, LANES)
    omegas = jnp.linspace(-3.0, 3.0, LANES)
    out = f(thetas, omegas)
    out2 = f(thetas + 0.01, omegas)  # same shapes: no retrace
    return model, ts, rollout, thetas, omegas, out, out2, traces


def test_one_compilation_and_own_step_sequences(batched):
    _, _, _, _, _, (run, traj, _), (run2, _, _), traces = batched
    assert len(traces) == 1
    steps = np.asarray(run.stats.steps_taken)
    assert len(set(steps.tolist())) > LANES // 2, steps  # lanes step independently
    assert not np.any(np.asarray(run.stats.step_limit_reached)) and not np.any(np.asarray(run.terminated))
    np.testing.assert_array_equal(np.asarray(traj.t), np.broadcast_to(np.asarray(REPORT_TIMES), (LANES, 10)))
    assert np.all(np.isfinite(np.asarray(run2.state.q)))


@pytest.mark.long  # a second compilation (unbatched)
def test_lanes_equal_unbatched_runs(batched):
    _, _, rollout, thetas, omegas, (run, traj, _), _, _ = batched
    for lane in (0, LANES - 1):
        r, tr, _ = jax.jit(rollout)(thetas[lane], omegas[lane])
        np.testing.assert_allclose(np.asarray(tr.q), np.asarray(traj.q[lane]), rtol=0, atol=1e-12)
        assert int(r.stats.steps_taken) == int(run.stats.steps_taken[lane])


def test_constraints_within_tolerance_and_energy_conserved(batched):
    _, _, _, _, _, (_, _, (energy, q_err, u_err)), _, _ = batched
    rms = lambda e: np.sqrt(np.mean(np.asarray(e) ** 2, axis=-1))
    assert rms(q_err).max() <= TOL and rms(u_err).max() <= TOL
    e = np.asarray(energy)
    drift = np.abs(e - e[:, :1]).max(axis=1) / np.maximum(np.abs(e).max(axis=1), 1.0)
    assert drift.max() < 1e-4, drift


@pytest.mark.long  # compiling the checkpointed reverse pass through projection takes minutes on 2 cores
def test_gradient_of_final_state_matches_central_differences():
    model, _, _, _ = parallelogram_fourbar()
    integ = jb.RungeKuttaMersonIntegrator(model, accuracy=1e-10, constraint_tolerance=1e-12, internal_step_limit=200)
    ts = jb.TimeStepper(model, integ, differentiable=True)

    def loss(x):
        run, _ = ts.simulate(fourbar_state(model, x[0], x[1]), jnp.array([0.3]))
        return jnp.sum(jnp.sin(run.state.q)) + 0.1 * jnp.sum(run.state.u**2)

    x = jnp.array([0.4, 1.5])
    f = jax.jit(loss)
    grad = jax.jit(jax.grad(loss))(x)
    assert_grad_matches_fd(f, x, 1e-5, 1e-6, "four-bar rollout", grad=grad)
