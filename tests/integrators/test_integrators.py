"""Simbody's integrators on systems with known solutions: order, error control, statistics, step limit."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_grad_matches_fd
from oscillators import OMEGA, oscillator, oscillator_solution, with_lag

import jaxbody as jb

# Simbody's stated orders (getMethodMinOrder); Verlet's u is second order.
ORDERS = {
    jb.ExplicitEulerIntegrator: 1, jb.RungeKutta2Integrator: 2, jb.RungeKutta3Integrator: 3,
    jb.RungeKuttaIntegrator: 4, jb.RungeKuttaMersonIntegrator: 4, jb.RungeKuttaFeldbergIntegrator: 4,
    jb.SemiExplicitEulerIntegrator: 1, jb.SemiExplicitEuler2Integrator: 1, jb.VerletIntegrator: 2,
}
T_END = 1.0
STEPS = (1 / 16, 1 / 32, 1 / 64)


@pytest.fixture(scope="module")
def osc():
    return oscillator()


def _fixed_step_error(model, cls, h_values, x0=1.0):
    """Global error max(|q|, |u|) at T_END with fixed steps h (h is data: one compilation per method)."""
    ts = jb.TimeStepper(model, cls(model, 0.1, fixed_step_size=0.1))
    state = model.default_state().set_q(jnp.array([x0]))

    @jax.jit
    def final(h):
        run = eqx.tree_at(lambda r: r.h, ts.initialize(state), h)
        run, s = ts.step_to(run, T_END)
        return s.q[0], s.u[0], run.stats.steps_taken

    xe, ue = oscillator_solution(x0, T_END)
    errors = []
    for h in h_values:
        q, u, n = final(h)
        assert int(n) == round(T_END / h)
        errors.append(max(abs(float(q) - xe), abs(float(u) - ue)))
    return np.array(errors)


@pytest.mark.parametrize("cls", list(ORDERS), ids=lambda c: c.__name__)
def test_observed_order_matches_simbody(osc, cls):
    _, model = osc
    errors = _fixed_step_error(model, cls, STEPS)
    slope = np.polyfit(np.log(STEPS), np.log(errors), 1)[0]
    assert abs(slope - ORDERS[cls]) <= 0.3, f"{cls.__name__}: observed order {slope:.2f}, errors {errors}"


@pytest.fixture(scope="module")
def rkm_errors(osc):
    """RKM at accuracies 1e-6, 1e-8, 1e-10 on the oscillator over 2 s: (errors, stats)."""
    _, model = osc
    out = []
    for acc in (1e-6, 1e-8, 1e-10):
        ts = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=acc))
        run, traj = jax.jit(lambda s, t, ts=ts: ts.simulate(s, t))(model.default_state().set_q(jnp.array([1.0])), jnp.linspace(0.1, 2.0, 20))
        x, u = oscillator_solution(1.0, np.asarray(traj.t))
        err = max(np.abs(np.asarray(traj.q[:, 0]) - x).max(), np.abs(np.asarray(traj.u[:, 0]) - u).max())
        out.append((err, jax.tree_util.tree_map(int, run.stats), np.asarray(traj.t)))
    return out


def test_global_error_scales_with_accuracy(rkm_errors):
    errors = [e for e, _, _ in rkm_errors]
    assert errors[0] < 1e-4 and errors[2] < 1e-8, errors
    # Each factor 100 in accuracy buys at least a factor 10 in global error (an order-4 method: ~100^(4/5)).
    assert errors[1] < errors[0] / 10 and errors[2] < errors[1] / 10, errors


def test_report_times_hit_exactly_and_stats_plausible(rkm_errors):
    steps = []
    for _, stats, t in rkm_errors:
        np.testing.assert_array_equal(t, np.asarray(jnp.linspace(0.1, 2.0, 20)))  # landed exactly, no interpolation
        assert stats.steps_attempted == stats.steps_taken + stats.error_test_failures + stats.projection_failures
        assert stats.realizations == 1 + 4 * stats.steps_attempted + stats.steps_taken  # Simbody's count for RKM
        assert stats.projection_failures == 0 and not stats.step_limit_reached
        steps.append(stats.steps_taken)
    # Steps grow like accuracy^(-1/4) per decade pair: 100^(1/4) ~ 3.2.
    assert steps[0] < steps[1] < steps[2]
    assert 2 < steps[2] / steps[1] < 5, steps


def test_state_variables_z_integrated_with_q_and_u(osc):
    """z (a force element's state) is part of y: z(t) = target (1 - exp(-t / tau)) and its relative error
    enters the error norm."""
    _, model = osc
    model = with_lag(model)
    ts = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=1e-8))
    _, traj = jax.jit(lambda s: ts.simulate(s, jnp.array([0.1, 0.3])))(model.default_state().set_q(jnp.array([1.0])))
    np.testing.assert_allclose(np.asarray(traj.z[:, 0]), 2.0 * (1 - np.exp(-np.array([0.1, 0.3]) / 0.1)), atol=1e-7)
    x, _ = oscillator_solution(1.0, 0.3)
    assert abs(float(traj.q[1, 0]) - x) < 1e-7


def test_interpolated_report_times(osc, rkm_errors):
    """allow_interpolation: steps run past report times and the reports are cubic Hermite (then projected);
    fewer steps than landing on every report time, same accuracy class."""
    _, model = osc
    integ = jb.RungeKuttaMersonIntegrator(model, accuracy=1e-8, allow_interpolation=True, use_infinity_norm=True)
    ts = jb.TimeStepper(model, integ)
    times = jnp.linspace(0.1, 2.0, 20)
    run, traj = jax.jit(lambda s: ts.simulate(s, times))(model.default_state().set_q(jnp.array([1.0])))
    np.testing.assert_array_equal(np.asarray(traj.t), np.asarray(times))
    x, u = oscillator_solution(1.0, np.asarray(times))
    assert np.abs(np.asarray(traj.q[:, 0]) - x).max() < 1e-6 and np.abs(np.asarray(traj.u[:, 0]) - u).max() < 1e-6
    assert float(run.state.t) >= 2.0  # the last step may end past the last report time
    assert int(run.stats.steps_taken) < rkm_errors[1][1].steps_taken


def test_adjust_step_size_rule():
    """Simbody's adjustStepSize (catalogue 6.2) on hand-computed cases."""
    from jaxbody._integrators.control import adjust_step_size

    def adj(err, limited=False, h=1.0, bounds=(0.0, np.inf)):
        h_new, ok = adjust_step_size(jnp.asarray(h), jnp.asarray(err), 4, 1e-6, jnp.asarray(limited), bounds)
        return float(h_new), bool(ok)

    assert adj(0.0) == (5.0, True)
    assert adj(1e-6 / 2**4) == pytest.approx((0.9 * 2, True))  # growth 0.9 (acc/err)^(1/4) = 1.8 >= 1.2
    assert adj(1e-6 / 2**4, limited=True) == (1.0, True)  # limited steps never grow
    assert adj(0.9e-6) == (1.0, True)  # within accuracy: keep h
    assert adj(16e-6) == pytest.approx((0.45, False))  # 0.9 * (1/16)^(1/4)
    assert adj(1.0) == pytest.approx((0.1, False))  # clamped at 0.1 h
    assert adj(np.nan) == pytest.approx((0.1, False))
    assert adj(0.0, bounds=(0.0, 2.0)) == (2.0, True)


def test_step_limit_is_reported_per_lane(osc):
    """A lane that needs many steps stops at internal_step_limit, says so, and never hangs; the other finishes."""
    _, model = osc
    ts = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=1e-10, internal_step_limit=60))
    states = jax.vmap(lambda x: model.default_state().set_q(x[None]))(jnp.array([1e-6, 1e3]))
    run, _ = jax.jit(jax.vmap(lambda s: ts.simulate(s, jnp.array([1.0, 2.0]))))(states)
    np.testing.assert_array_equal(np.asarray(run.stats.step_limit_reached), [False, True])
    np.testing.assert_array_equal(np.asarray(run.terminated), [False, True])
    assert float(run.state.t[0]) == 2.0 and float(run.state.t[1]) < 1.0
    assert int(run.stats.steps_attempted[1]) == 60
    assert int(run.stats.steps_attempted[0]) < 60  # its own, shorter step sequence


def test_gradient_through_adaptive_rollout(osc):
    """Reverse mode through a checkpointed adaptive rollout (differentiable=True) = the analytic derivative
    d x(T)/d x0 = cos(w T) and d u(T)/d x0 = -w sin(w T), and central differences."""
    _, model = osc
    ts = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=1e-10, internal_step_limit=400),
                        differentiable=True)

    def final(x0):
        run, _ = ts.simulate(model.default_state().set_q(x0[None]), jnp.array([0.5, 1.0]))
        return run.state.q[0] + 0.5 * run.state.u[0]

    x0 = jnp.asarray(0.7)
    grad = jax.jit(jax.grad(final))(x0)
    dx, du = oscillator_solution(1.0, 1.0)
    assert float(grad) == pytest.approx(dx + 0.5 * du, abs=1e-8)
    assert_grad_matches_fd(jax.jit(final), x0, 1e-4, 1e-7, "oscillator rollout", grad=grad)


def test_settings_are_checked():
    _, model = oscillator()
    with pytest.raises(jb.InvalidArgument, match="accuracy"):
        jb.RungeKuttaMersonIntegrator(model, accuracy=0.0)
    with pytest.raises(jb.InvalidArgument, match="fixed-step"):
        jb.SemiExplicitEulerIntegrator(model)
    with pytest.raises(jb.InvalidArgument, match="minimum_step_size"):
        jb.RungeKutta3Integrator(model, minimum_step_size=1.0, maximum_step_size=0.1)
    with pytest.raises(jb.InvalidArgument, match="internal_step_limit"):
        jb.RungeKutta2Integrator(model, internal_step_limit=0)
    with pytest.raises(jb.InvalidArgument, match="unexpected keyword"):
        jb.RungeKuttaMersonIntegrator(model, acuracy=1e-3)
    integ = jb.RungeKuttaMersonIntegrator(model, accuracy=1e-6)
    assert integ.settings.constraint_tolerance_in_use == pytest.approx(1e-7)
    assert integ.settings.initial_step_in_use == pytest.approx(0.01)  # time scale 0.1 / 10
    changed = integ.with_settings(use_infinity_norm=True)
    assert changed.settings.use_infinity_norm and changed.settings.accuracy == 1e-6
    assert type(changed) is jb.RungeKuttaMersonIntegrator and changed.model is integ.model
    assert not integ.settings.use_infinity_norm  # the original is unchanged
    with pytest.raises(jb.InvalidArgument, match="accuracy"):
        integ.with_settings(accuracy=-1.0)
    assert OMEGA == 2.0
