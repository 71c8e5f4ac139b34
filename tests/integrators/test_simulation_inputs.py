"""Simulation inputs behave as Simbody's do, or are refused: a scheduled event time that is not in the future
fires once and is not re-armed until its function returns a later time; a final time before the state's time,
a NaN/inf/non-positive ``jb.simulate`` step and a negative CLI seed are refused before anything runs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from oscillators import oscillator, oscillator_solution

import jaxbody as jb
import jaxbody.cli as cli


@pytest.fixture(scope="module")
def model():
    return oscillator()[1]


def kick(m, s):
    return s.set_u(s.u + 1.0)


def run(model, next_time, times=(1.0,)):
    handler = jb.ScheduledEventHandler(next_event_time=next_time, handle=kick, name="kick")
    ts = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=1e-8), events=[handler])
    return ts.simulate(model.default_state().set_q(jnp.array([1.0])), list(times))


def test_one_shot_event_fires_once(model):
    """``lambda m, s: 0.5``: after firing at 0.5 the function still returns 0.5 (not in the future): Simbody
    does not fire it again (it fired 10,000 times at t = 0.5 before, u ended near 9996)."""
    final, rows = run(model, lambda m, s: 0.5)
    assert int(final.events.count[0]) == 1 and float(final.events.last_time[0]) == pytest.approx(0.5)
    x5, u5 = oscillator_solution(1.0, 0.5)       # then a free oscillation from (x5, u5 + 1)
    w = 2.0
    x1 = x5 * np.cos(w * 0.5) + (u5 + 1.0) / w * np.sin(w * 0.5)
    assert float(rows.q[0, 0]) == pytest.approx(x1, abs=1e-6) and float(rows.t[0]) == 1.0


@pytest.mark.long
def test_rearmed_by_a_later_time(model):
    final, _ = run(model, lambda m, s: jnp.where(s.t < 0.5, 0.5, 0.8))
    assert int(final.events.count[0]) == 2
    assert float(final.events.first_time[0]) == pytest.approx(0.5) and float(final.events.last_time[0]) == pytest.approx(0.8)


@pytest.mark.long
def test_past_time_fires_once_without_going_back(model):
    final, rows = run(model, lambda m, s: -1.0, times=(0.25, 0.5))
    assert int(final.events.count[0]) == 1
    assert np.all(np.diff(np.asarray(rows.t)) > 0) and float(final.state.t) == 0.5


def test_final_time_before_the_state_refused(model):
    ts = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, final_time=0.5))
    with pytest.raises(jb.InvalidArgument, match=r"final_time \(0.5\) is before the state's time \(1.0\)"):
        ts.initialize(model.default_state().set_time(1.0))


@pytest.mark.parametrize("dt", [float("nan"), float("inf"), 0.0, -1e-3, [1e-3, 2e-3]])
def test_simulate_checks_dt(model, dt):
    with pytest.raises(jb.InvalidArgument, match="jb.simulate: dt must be one finite step size > 0"):
        jb.simulate(model, model.default_state(), dt, 4)


def test_simulate_traced_dt_still_runs(model):
    final, _ = jax.jit(lambda dt: jb.simulate(model, model.default_state().set_q(jnp.array([1.0])), dt, 4))(1e-3)
    assert np.isfinite(float(final.q[0]))


def test_cli_negative_seed_is_a_usage_error(capsys):
    assert cli.main(["demo", "--seed", "-1"]) == 2
    err = capsys.readouterr().err
    assert "argument --seed: must be an integer >= 0, got -1" in err and "Traceback" not in err


def test_replace_parameters_keeps_the_model_dtype(model):
    """A float64 mass given to a float32 Model stays float32 (with a warning), so ``jb.simulate``'s carry keeps
    one dtype (it failed with a scan carry-type error)."""
    model32 = model.astype(jnp.float32)
    with pytest.warns(UserWarning, match="mass given as float64 was cast to the Model's float32"):
        heavier = jb.replace_parameters(model32, mass=np.asarray(model.parameters.mass) * 2.0)
    assert heavier.parameters.mass.dtype == jnp.float32
    state = model32.default_state().set_q(jnp.array([1.0], jnp.float32))
    final, _ = jb.simulate(heavier, state, 1e-3, 4)
    assert final.q.dtype == jnp.float32 and np.isfinite(float(final.q[0]))
    same = jb.replace_parameters(model, mass=model.parameters.mass)   # float64 into float64: no warning, no copy
    assert same.parameters.mass.dtype == jnp.float64


def test_cli_model_demo_takes_the_files_timestep(tmp_path, monkeypatch):
    """``jaxbody demo --model file.xml`` steps with the file's ``<option timestep>`` unless --dt is given."""
    pytest.importorskip("mujoco")
    import jaxbody.cli.demo_model as demo_model

    path = tmp_path / "one.xml"
    path.write_text('<mujoco><option timestep="0.004"/><worldbody><body><joint type="hinge"/><geom size="0.1"/>'
                    '</body></worldbody></mujoco>')
    seen = []
    monkeypatch.setattr(demo_model, "run_model_demo", lambda imported, **kw: seen.append(kw["dt"]))
    assert cli.main(["demo", "--model", str(path), "--animation", "", "--out", ""]) == 0
    assert cli.main(["demo", "--model", str(path), "--animation", "", "--out", "", "--dt", "0.01"]) == 0
    assert seen == [0.004, 0.01]
