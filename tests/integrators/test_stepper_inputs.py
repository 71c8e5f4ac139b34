"""Bad simulation inputs never give silently wrong rows: report times that are not finite or go back, step_to an
earlier time and a NaN scheduled time raise when concrete, and under jit set the lane's run.stats.status,
stop that lane and make its rows NaN from there on (the other lanes are untouched); event functions that return
the wrong thing and a reporter without room for reports are named."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from oscillators import oscillator, oscillator_solution

import jaxbody as jb

BAD_TIME, BAD_EVENT = jb.IntegratorStats.BAD_REPORT_TIME, jb.IntegratorStats.BAD_EVENT_TIME


@pytest.fixture(scope="module")
def stepper():
    _, model = oscillator()
    ts = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=1e-6))
    return ts, model.default_state().set_q(jnp.array([1.0]))


@pytest.mark.parametrize("times,match", [
    ([0.2, 0.1, 0.3], r"strictly increasing; entry 1 \(0.1\) follows 0.2"),
    ([0.1, 0.1], "strictly increasing"),
    ([0.1, float("nan")], "finite; entry 1 is nan"),
    ([-0.5, 0.1], "before the run's time 0.0"),
])
def test_concrete_report_times_are_checked(stepper, times, match):
    ts, state = stepper
    with pytest.raises(jb.InvalidArgument, match=match):
        ts.simulate(state, times)


def test_traced_report_times_flag_their_lane(stepper):
    ts, state = stepper
    times = jnp.array([[0.1, 0.2, 0.3], [0.2, 0.1, 0.3], [0.1, jnp.nan, 0.3]])
    run, rows = jax.jit(jax.vmap(lambda t: ts.simulate(state, t)))(times)
    np.testing.assert_array_equal(np.asarray(run.stats.status), [0, BAD_TIME, BAD_TIME])
    np.testing.assert_array_equal(np.asarray(run.terminated), [False, True, True])
    q = np.asarray(rows.q[..., 0])
    np.testing.assert_allclose(q[0], oscillator_solution(1.0, np.array([0.1, 0.2, 0.3]))[0], atol=1e-5)
    np.testing.assert_allclose(q[1:, 0], oscillator_solution(1.0, np.array([0.2, 0.1]))[0], atol=1e-5)  # before it
    assert np.isnan(q[1:, 1:]).all() and np.isnan(np.asarray(rows.t)[1:, 1:]).all()  # from the bad time on


def test_step_to_never_goes_back(stepper):
    ts, state = stepper
    run, _ = ts.step_to(ts.initialize(state), 0.5)
    with pytest.raises(jb.InvalidArgument, match="before the run's time 0.5"):
        ts.step_to(run, 0.25)
    step_to = jax.jit(lambda r, t: ts.step_to(r, t))
    back, s = step_to(run, jnp.asarray(0.25))
    assert int(back.stats.status) == BAD_TIME and bool(back.terminated) and np.isnan(float(s.q[0]))
    again, s = step_to(run, jnp.asarray(0.5))  # the same time again is allowed
    assert int(again.stats.status) == 0 and float(s.q[0]) == float(run.state.q[0])


def test_nan_scheduled_time_is_reported(stepper):
    ts, state = stepper
    model = ts.integrator.model
    handler = jb.ScheduledEventHandler(
        next_event_time=lambda m, s: jnp.where(s.t < 0.3, 0.3, jnp.nan), handle=lambda m, s: s, name="NaN after 0.3")
    nan_ts = jb.TimeStepper(model, ts.integrator, events=[handler])
    run, rows = jax.jit(lambda s: nan_ts.simulate(s, jnp.array([0.2, 0.4])))(state)
    assert int(run.stats.status) == BAD_EVENT and bool(run.terminated) and not bool(run.stats.step_limit_reached)
    assert float(run.state.t) == pytest.approx(0.3) and np.isfinite(np.asarray(run.state.q)).all()  # stopped there
    assert np.isfinite(float(rows.q[0, 0])) and np.isnan(float(rows.q[1, 0]))


def _run(model, item, **kw):
    ts = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=1e-4), events=[item], **kw)
    return ts.simulate(model.default_state().set_q(jnp.array([1.0])), [0.5])


def test_event_functions_returning_the_wrong_thing(stepper):
    osc = stepper[0].integrator.model
    vector_witness = jb.TriggeredEventHandler(witness=lambda m, s: jnp.zeros(3), handle=lambda m, s: s, name="w3")
    with pytest.raises(jb.InvalidArgument, match=r"event w3: witness must return a scalar, got shape \(3,\)"):
        _run(osc, vector_witness)
    returns_u = jb.TriggeredEventHandler(witness=lambda m, s: s.q[0], handle=lambda m, s: s.u, name="half")
    with pytest.raises(jb.InvalidArgument, match=r"event half: handle must return a State .* got an array of shape"):
        _run(osc, returns_u)
    reporter = jb.PeriodicEventReporter(0.1, lambda m, s: s.q, name="q every 0.1 s")
    with pytest.raises(jb.InvalidArgument, match="max_reports=0 leaves no room for the reports of q every 0.1 s"):
        jb.TimeStepper(osc, jb.RungeKuttaMersonIntegrator(osc), events=[reporter], max_reports=0)
