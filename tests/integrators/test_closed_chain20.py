"""Issue 13's 20-body constrained system: a planar chain of 20 pinned links whose tip is tethered to Ground by
a Rod constraint, simulated by an adaptive RungeKuttaMerson TimeStepper under jit(vmap) (one compilation,
every lane its own step sequence, on the constraint manifold) and differentiated through a checkpointed
rollout (the gradient of a final-state loss against central differences).

CI runs 16 lanes over 0.1 s; the 256-lane run and the gradient are ``--long`` (each compiles a 20-body
projected rollout, minutes on a shared 2-core machine)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from constraint_systems import TETHERED_CHAIN_LINKS as N
from constraint_systems import tethered_chain as closed_chain
from helpers import assert_grad_matches_fd

import jaxbody as jb

TOL = 1e-8
REPORT_TIMES = jnp.array([0.05, 0.1])


def lane_state(model, q_ref, dq, w):
    """q_ref bent by dq (off the manifold: TimeStepper.initialize assembles it) with speeds w on every pin."""
    return model.default_state().set_q(q_ref + dq * jnp.linspace(1.0, -1.0, N)).set_u(w * jnp.ones(N))


@pytest.fixture(scope="module")
def chain():
    return closed_chain()


def _batched_rollout(chain, lanes):
    model, q_ref = chain
    ts = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=1e-5, constraint_tolerance=TOL))
    traces = []

    def rollout(dq, w):
        traces.append(1)
        run, traj = ts.simulate(lane_state(model, q_ref, dq, w), REPORT_TIMES)
        errors = jax.vmap(lambda s: (lambda r: (model.get_q_err(r), model.get_u_err(r)))(
            model.realize(s, jb.Stage.Velocity)))(traj)
        return run, traj, errors

    f = jax.jit(jax.vmap(rollout))
    dq, w = jnp.linspace(-0.02, 0.02, lanes), jnp.linspace(-0.5, 0.5, lanes)
    out = f(dq, w)
    f(dq[::-1], w)  # new values, same shapes: no retrace
    return out, traces


def _check_batch(out, traces, lanes):
    run, traj, (q_err, u_err) = out
    assert len(traces) == 1
    steps = np.asarray(run.stats.steps_taken)
    assert steps.shape == (lanes,) and len(set(steps.tolist())) > 1, steps  # every lane its own steps
    assert not np.any(np.asarray(run.stats.step_limit_reached)) and not np.any(np.asarray(run.terminated))
    np.testing.assert_array_equal(np.asarray(traj.t), np.broadcast_to(np.asarray(REPORT_TIMES), (lanes, 2)))
    assert np.all(np.isfinite(np.asarray(traj.q)))
    # On the manifold at every report time: |rod error| (m, m/s) within the constraint tolerance.
    assert np.abs(np.asarray(q_err)).max() <= TOL and np.abs(np.asarray(u_err)).max() <= TOL
    # Lanes started apart end apart (the last link's angle differs by more than a milliradian).
    assert np.ptp(np.asarray(traj.q[:, -1, 0])) > 1e-3


@pytest.mark.long  # ~50 s of CPU compiling a 20-body projected rollout; CI time budget
def test_16_lanes_one_compilation_on_manifold(chain):
    out, traces = _batched_rollout(chain, 16)
    _check_batch(out, traces, 16)


@pytest.mark.long  # 256 lanes of a 20-body projected rollout
def test_256_lanes_one_compilation_on_manifold(chain):
    out, traces = _batched_rollout(chain, 256)
    _check_batch(out, traces, 256)


@pytest.mark.long  # compiling the checkpointed reverse pass through projection takes minutes on 2 cores
def test_gradient_of_final_state_matches_central_differences(chain):
    """Reverse mode through 10 ms of a checkpointed rollout at accuracy 1e-10 (about 100 steps: the light
    links make the chain stiff), w.r.t. the bend dq (at dq = 0: on the manifold) and the speeds w, against
    central differences. (Off the manifold, the derivative through initialize's projection is the
    closest-point one while the projected q is not exactly the closest point: 1% off at dq = 1e-3.)"""
    model, q_ref = chain
    integ = jb.RungeKuttaMersonIntegrator(model, accuracy=1e-10, constraint_tolerance=1e-12, internal_step_limit=300)
    ts = jb.TimeStepper(model, integ, differentiable=True)

    def loss(x):
        run, _ = ts.simulate(lane_state(model, q_ref, x[0], x[1]), jnp.array([0.01]))
        return jnp.sum(jnp.sin(run.state.q)) + 0.1 * jnp.sum(run.state.u**2), run.stats

    x = jnp.array([0.0, 0.3])
    grad, stats = jax.jit(jax.grad(loss, has_aux=True))(x)
    assert not bool(stats.step_limit_reached) and int(stats.steps_taken) > 20, stats
    assert np.all(np.abs(np.asarray(grad)) > 1e-3)
    assert_grad_matches_fd(jax.jit(lambda x: loss(x)[0]), x, 1e-5, 1e-6, "20-link closed chain rollout", grad=grad)
