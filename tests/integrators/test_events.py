"""Event handlers and reporters (Simbody catalogue 6.4): a bouncing ball against its analytic bounce times,
a scheduled event hit exactly, a periodic reporter, per-lane events under vmap, and the gradient of an
event time (implicit-function derivative) against the analytic one and central differences."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_grad_matches_fd
from oscillators import ball

import jaxbody as jb

G = 9.81
RESTITUTION = 0.8
ACCURACY = 1e-6
WINDOW = ACCURACY * 0.1 * 0.1  # accuracy * time scale * default relative window


def analytic_bounces(h0, n, push_time=0.37, push=1.0):
    """Impact times of a 1 kg ball dropped from rest at h0 under g, with an upward force ``push`` (N) from
    ``push_time`` on; each bounce keeps RESTITUTION of the speed. Exact piecewise-parabolic flight."""
    t, x, v, times = 0.0, h0, 0.0, []
    while len(times) < n:
        a = -G if t < push_time else push - G
        tau = (v + np.sqrt(v * v - 2 * a * x)) / -a  # x + v tau + a tau^2 / 2 = 0, the later root
        if t < push_time < t + tau:
            dt = push_time - t
            t, x, v = push_time, x + v * dt + a * dt * dt / 2, v + a * dt
            continue
        t, v, x = t + tau, -RESTITUTION * (v + a * tau), 0.0
        times.append(t)
    return np.array(times)


def bounce(model, state):
    """Reverse the (downward) speed with restitution; the stepper re-projects afterwards."""
    return state.set_u(-RESTITUTION * state.u)


@pytest.fixture(scope="module")
def bouncing():
    system, _ = ball(G)
    system.add_event_handler(jb.TriggeredEventHandler(
        witness=lambda model, s: s.q[0], trigger_on="falling", handle=bounce, name="floor"))
    system.add_event_handler(jb.ScheduledEventHandler(
        next_event_time=lambda model, s: jnp.where(s.t < 0.37, 0.37, jnp.inf),
        handle=lambda model, s: s.set_mobility_forces(s.mobility_forces + 1.0), name="push at 0.37"))
    system.add_event_reporter(jb.PeriodicEventReporter(0.1, lambda model, s: s.q[0]))
    model = system.realize_topology()
    ts = jb.TimeStepper(system, jb.RungeKuttaMersonIntegrator(system, accuracy=ACCURACY))
    simulate = jax.jit(jax.vmap(lambda h0: ts.simulate(model.default_state().set_q(h0[None]), jnp.array([1.0, 2.0]))))
    run, traj = simulate(jnp.array([1.0, 2.0, 0.5]))
    return system, model, ts, run, traj


def test_system_event_interface(bouncing):
    system, model, _, _, _ = bouncing
    assert system.calc_event_trigger_info() == [(0, False, True, 0.1)]
    state = model.default_state().set_q(jnp.array([0.3]))
    t, ids = system.calc_time_of_next_scheduled_event(state)
    assert float(t) == 0.37 and ids == [1]
    t, ids = system.calc_time_of_next_scheduled_report(state.set_time(0.25))
    assert float(t) == pytest.approx(0.3) and ids == [2]
    np.testing.assert_allclose(system.calc_event_trigger_values(state), [0.3])
    handled, terminate = system.handle_events(state.set_u(jnp.array([-2.0])), "Triggered", [0])
    np.testing.assert_allclose(handled.u, [2.0 * RESTITUTION])
    assert not bool(terminate) and system.get_num_handle_event_calls() == 1
    assert system.report_events(state, "Scheduled", [2]) == [pytest.approx(0.3)]
    with pytest.raises(jb.InvalidArgument, match="reporter, not a handler"):
        system.handle_events(state, "Triggered", [2])
    with pytest.raises(jb.InvalidArgument, match="cause"):
        system.report_events(state, "Whenever", [2])
    with pytest.raises(jb.InvalidArgument, match="trigger_on"):
        jb.TriggeredEventHandler(witness=lambda m, s: s.q[0], trigger_on="up", handle=bounce)


def test_bounces_at_analytic_times_per_lane(bouncing):
    """Each lane (drop heights 1, 2, 0.5 m) localizes its own bounces to the localization window."""
    _, _, _, run, _ = bouncing
    for lane, h0 in enumerate([1.0, 2.0, 0.5]):
        count = int(run.events.count[lane, 0])
        expected = analytic_bounces(h0, count + 1)
        assert expected[count - 1] <= 2.0 < expected[count], f"lane {lane}: {count} bounces, expected {expected}"
        assert abs(float(run.events.first_time[lane, 0]) - expected[0]) <= 2 * WINDOW
        assert abs(float(run.events.last_time[lane, 0]) - expected[count - 1]) <= 4 * WINDOW * count


def test_scheduled_event_hit_exactly_and_periodic_reporter(bouncing):
    _, _, _, run, traj = bouncing
    np.testing.assert_array_equal(np.asarray(run.events.first_time[:, 1]), 0.37)
    np.testing.assert_array_equal(np.asarray(run.events.count[:, 1]), 1)
    np.testing.assert_array_equal(np.asarray(run.state.mobility_forces), 1.0)  # the handler's change persists
    count = np.asarray(run.events.count[:, 2])
    np.testing.assert_array_equal(count, 20)  # 0.1, 0.2, ..., 2.0
    times = np.asarray(run.events.report_times[:, 2, :20])
    np.testing.assert_array_equal(times, np.broadcast_to(np.arange(1, 21) * 0.1, times.shape))
    np.testing.assert_array_equal(np.asarray(traj.t[0]), [1.0, 2.0])


@pytest.mark.long  # CI budget (2026-11-29 CI run): 34 s; reverse mode through checkpointed adaptive rollouts stays in CI (test_integrators.py)
def test_first_bounce_time_gradient():
    """dt1/dh0 = 1 / sqrt(2 g h0), by reverse mode through a checkpointed rollout."""
    system, _ = ball(G)
    model = system.realize_topology()
    floor = jb.TriggeredEventHandler(witness=lambda m, s: s.q[0], trigger_on="falling", handle=bounce)
    integ = jb.RungeKuttaMersonIntegrator(model, accuracy=ACCURACY, internal_step_limit=100)
    ts = jb.TimeStepper(model, integ, events=(floor,), differentiable=True)

    def first_bounce(h0):
        run, _ = ts.simulate(model.default_state().set_q(h0[None]), jnp.array([0.6]))
        return run.events.first_time[0]

    h0 = jnp.asarray(1.0)
    grad = jax.jit(jax.grad(first_bounce))(h0)
    assert float(grad) == pytest.approx(1 / np.sqrt(2 * G * 1.0), rel=1e-6)
    assert_grad_matches_fd(jax.jit(first_bounce), h0, 1e-4, 1e-6, "first bounce time", grad=grad)


def test_handler_requests_termination():
    """A handler returning (state, True) stops the lane at the event; later report states repeat it."""
    system, _ = ball(G)
    model = system.realize_topology()
    stop = jb.TriggeredEventHandler(witness=lambda m, s: s.q[0] - 0.5, trigger_on="falling",
                                    handle=lambda m, s: (s, True))
    ts = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=ACCURACY), events=(stop,))
    run, traj = jax.jit(lambda s: ts.simulate(s, jnp.array([0.2, 0.5, 1.0])))(model.default_state().set_q(jnp.array([1.0])))
    assert bool(run.terminated) and not bool(run.stats.step_limit_reached)
    t_stop = np.sqrt(2 * 0.5 / G)
    assert abs(float(run.state.t) - t_stop) <= 2 * WINDOW
    assert float(traj.t[0]) == 0.2 and float(traj.t[1]) == float(traj.t[2]) == float(run.state.t)


def test_required_stage_realizes_localization_states_only_that_far():
    """Simbody's requiredStage: a witness of q alone declared at Position sees the localization's states
    realized to Position only (no dynamics traced for them) and finds the same bounces as the default."""
    system, _ = ball(G)
    model = system.realize_topology()
    seen = {}

    def runs(stage):
        stages = seen.setdefault(stage, set())

        def witness(m, s):
            stages.add(s.get_system_stage())
            return s.q[0]

        floor = jb.TriggeredEventHandler(witness=witness, trigger_on="falling", handle=bounce, required_stage=stage)
        ts = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=ACCURACY), events=(floor,))
        run, _ = jax.jit(lambda h0: ts.simulate(model.default_state().set_q(h0[None]), jnp.array([2.0])))(
            jnp.asarray(1.0))
        return run

    at_position, at_acceleration = runs(jb.Stage.Position), runs(jb.Stage.Acceleration)
    assert jb.Stage.Position in seen[jb.Stage.Position]
    assert seen[jb.Stage.Acceleration] == {jb.Stage.Acceleration}
    assert int(at_position.events.count[0]) == int(at_acceleration.events.count[0]) >= 1
    np.testing.assert_allclose(at_position.events.last_time, at_acceleration.events.last_time, rtol=0, atol=1e-12)
    np.testing.assert_allclose(at_position.state.q, at_acceleration.state.q, rtol=0, atol=1e-12)
    with pytest.raises(jb.InvalidArgument, match="required_stage"):
        jb.TriggeredEventHandler(witness=lambda m, s: s.q[0], handle=bounce, required_stage=jb.Stage.Report)
