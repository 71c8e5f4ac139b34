"""Simbody's generic event causes and the System's event counters: Initialization handlers at
TimeStepper.initialize, TimeAdvanced handlers after every accepted step when the system has time-advanced
events (System::setHasTimeAdvancedEvents), and getNumHandlerCallsThatChangedStage / getNumHandleEventCalls /
getNumReportEventCalls, per lane under jit(vmap) and on eager System calls."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from oscillators import ball

import jaxbody as jb

G = 9.81
V0 = 1.5  # m/s, set by the Initialization handler
GAIN = 5.0  # N/m, the zero-order-hold feedback the TimeAdvanced handler writes
REPORT_TIMES = jnp.array([0.25, 0.5])


def _system(time_advanced: bool):
    system, _ = ball(G)
    system.add_event_handler(jb.InitializationEventHandler(lambda m, s: s.set_u(jnp.full_like(s.u, V0))))
    system.add_event_handler(jb.TimeAdvancedEventHandler(lambda m, s: s.set_mobility_forces(-GAIN * s.q)))
    system.add_event_reporter(jb.PeriodicEventReporter(0.1, lambda m, s: s.q[0]))
    system.set_has_time_advanced_events(time_advanced)
    return system


@pytest.fixture(scope="module")
def runs():
    """Three drop heights, with and without time-advanced events, one jit(vmap) each."""
    out = {}
    h0 = jnp.array([1.0, 2.0, 3.0])
    for flag in (False, True):
        system = _system(flag)
        model = system.realize_topology()
        ts = jb.TimeStepper(system, jb.RungeKuttaMersonIntegrator(system, accuracy=1e-8))
        sim = jax.jit(jax.vmap(lambda h: ts.simulate(model.default_state().set_q(h[None]), REPORT_TIMES)))
        out[flag] = (system, sim(h0))
    return h0, out


def test_flag_and_validation():
    system = _system(False)
    assert not system.has_time_advanced_events()
    system.set_has_time_advanced_events(True)
    assert system.has_time_advanced_events()
    with pytest.raises(jb.InvalidArgument, match="bool"):
        system.set_has_time_advanced_events("yes")
    with pytest.raises(jb.InvalidArgument, match="handle"):
        jb.TimeAdvancedEventHandler(handle=None)
    with pytest.raises(jb.InvalidArgument, match="stage"):
        system.get_num_handler_calls_that_changed_stage("Velocity")


def test_initialization_handler_runs_once_at_initialize(runs):
    """The handler's u0 = V0 gives the exact free flight q = h0 + V0 t - g t^2 / 2 (RKM is exact on it)."""
    h0, out = runs
    system, (run, traj) = out[False]
    t = np.asarray(REPORT_TIMES)
    expected = np.asarray(h0)[:, None] + V0 * t - G * t**2 / 2
    np.testing.assert_allclose(np.asarray(traj.q[..., 0]), expected, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(np.asarray(run.events.count[:, 0]), 1)
    np.testing.assert_array_equal(np.asarray(run.events.first_time[:, 0]), 0.0)


def test_time_advanced_handlers_only_with_the_flag(runs):
    """Without the flag the TimeAdvanced handler never runs; with it, once per accepted step of each lane, and
    the last one leaves the feedback force of the final state."""
    _, out = runs
    _, (run_off, _) = out[False]
    np.testing.assert_array_equal(np.asarray(run_off.events.count[:, 1]), 0)
    np.testing.assert_array_equal(np.asarray(run_off.state.mobility_forces), 0.0)
    _, (run, _) = out[True]
    steps = np.asarray(run.stats.steps_taken)
    np.testing.assert_array_equal(np.asarray(run.events.count[:, 1]), steps)
    np.testing.assert_allclose(np.asarray(run.state.mobility_forces), -GAIN * np.asarray(run.state.q), rtol=1e-14)
    np.testing.assert_array_equal(np.asarray(run.events.last_time[:, 1]), 0.5)


def test_event_counters_per_lane(runs):
    """Simbody's counters: handleEvents once at initialize (it changed u: Velocity) and, with the flag, once
    per accepted step (the handler changes an applied force: Dynamics); reportEvents at each 0.1 s report
    (Stage.Report)."""
    _, out = runs
    for flag in (False, True):
        system, (run, _) = out[flag]
        steps = np.asarray(run.stats.steps_taken) if flag else 0
        np.testing.assert_array_equal(np.asarray(system.get_num_handle_event_calls(run)), 1 + steps)
        np.testing.assert_array_equal(np.asarray(system.get_num_report_event_calls(run)), 5)
        changed = lambda stage, run=run: np.asarray(system.get_num_handler_calls_that_changed_stage(stage, run))
        np.testing.assert_array_equal(changed(jb.Stage.Velocity), 1)
        np.testing.assert_array_equal(changed(jb.Stage.Report), 5)
        if flag:  # the first step's handler changes the force from 0; every later one changes it again
            np.testing.assert_array_equal(changed(jb.Stage.Dynamics), steps)
        np.testing.assert_array_equal(changed("Infinity"), 0)
        total = np.asarray(run.events.calls_that_changed_stage).sum(-1)
        np.testing.assert_array_equal(total, 1 + steps + 5)


def test_eager_system_calls_count_the_lowest_modified_stage():
    system = _system(True)
    model = system.realize_topology()
    state = model.default_state().set_q(jnp.array([0.4]))
    handled, terminate = system.handle_events(state, "TimeAdvanced", [])  # no ids: every TimeAdvanced handler
    np.testing.assert_allclose(handled.mobility_forces, [-GAIN * 0.4])
    assert not bool(terminate)
    handled, _ = system.handle_events(state, "Initialization", [])
    np.testing.assert_allclose(handled.u, [V0])
    system.handle_events(state.set_mobility_forces(jnp.array([-GAIN * 0.4])), "TimeAdvanced", [1])  # no change
    system.report_events(state, "Scheduled", [2])
    assert system.get_num_handle_event_calls() == 3 and system.get_num_report_event_calls() == 1
    assert [system.get_num_handler_calls_that_changed_stage(s) for s in
            (jb.Stage.Velocity, jb.Stage.Dynamics, jb.Stage.Report, "Infinity")] == [1, 1, 1, 1]
    system.reset_all_counters()
    assert system.get_num_handle_event_calls() == 0 and system.get_num_handler_calls_that_changed_stage("Infinity") == 0
