"""Prescribed motion and locks are honoured at every stage evaluation of the adaptive integrators (catalogue
6.1): Position-level Motions follow their function exactly, Velocity-level ones their u(t, q), Acceleration
level ones integrate their udot; a locked body does not move; locked and free lanes share one compilation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from systems import MOTION_CHAIN, motion_chain, motion_chain_velocity

import jaxbody as jb

TIMES = jnp.array([0.25, 0.5])


@pytest.fixture(scope="module")
def rolled():
    model, bodies = motion_chain()
    ts = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=1e-9))
    free = model.default_state()
    locked = bodies["pin"].lock_at(free, jnp.array([0.3]))
    states = jax.tree_util.tree_map(lambda a, b: jnp.stack([a, b]), free, locked)
    run, traj = jax.jit(jax.vmap(lambda s: ts.simulate(s, TIMES)))(states)
    return model, bodies, run, traj


def test_motions_followed_at_report_times(rolled):
    _, bodies, _, traj = rolled
    c, t = MOTION_CHAIN, np.asarray(TIMES)
    for lane in range(2):
        q, u = np.asarray(traj.q[lane]), np.asarray(traj.u[lane])
        sin_q = bodies["sin_pin"].q_start
        np.testing.assert_allclose(q[:, sin_q], c["amplitude"] * np.sin(c["rate"] * t + c["phase"]), atol=1e-13)
        slider_u = bodies["slider"].u_start
        expected = np.array([float(motion_chain_velocity(ti, qi)[0]) for ti, qi in zip(t, q)])
        np.testing.assert_allclose(u[:, slider_u], expected, atol=1e-13)
        acc_u = bodies["acc_pin"].u_start
        a, r, p = c["accel_amplitude"], c["accel_rate"], c["accel_phase"]
        np.testing.assert_allclose(u[:, acc_u], a / r * (np.cos(p) - np.cos(r * t + p)), atol=1e-7)


def test_locked_lane_does_not_move(rolled):
    _, bodies, run, traj = rolled
    pin_q, pin_u = bodies["pin"].q_start, bodies["pin"].u_start
    np.testing.assert_array_equal(np.asarray(traj.q[1, :, pin_q]), 0.3)
    np.testing.assert_array_equal(np.asarray(traj.u[1, :, pin_u]), 0.0)
    assert abs(float(traj.q[0, -1, pin_q])) > 1e-3  # the free lane's pin swings
    assert int(run.stats.steps_taken[0]) != int(run.stats.steps_taken[1])
