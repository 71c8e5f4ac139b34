"""Issue 13's accuracy ladder: adaptive RungeKuttaMerson on the oscillator (x = x0 cos(w t), known solution) at
requested accuracies 1e-6, 1e-7, ..., 1e-12. The global error over 2 s scales with the requested accuracy:
log-log slope measured 0.78, the 4/5 expected of an order-4 method whose error estimate (O(h^5)) is held at
the accuracy per step (global error ~ h^4 ~ accuracy^(4/5)); required within [0.7, 0.9], every point within
0.3 decades of the fit, every tighter accuracy more accurate. The statistics are plausible: every attempt is
accounted for, the realizations are Simbody's count for RKM, the steps grow like accuracy^(-1/5) (slope
within -0.25 +- 0.08), few error-test failures, no projections (nothing to project), no step limit."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from oscillators import oscillator, oscillator_solution

import jaxbody as jb

ACCURACIES = tuple(10.0**-k for k in range(6, 13))
REPORT_TIMES = jnp.linspace(0.1, 2.0, 20)


@pytest.fixture(scope="module")
def ladder():
    """(global errors, stats) per accuracy: one compilation each (the accuracy is a static setting)."""
    _, model = oscillator()
    state = model.default_state().set_q(jnp.array([1.0]))
    x, u = oscillator_solution(1.0, np.asarray(REPORT_TIMES))
    errors, stats = [], []
    for acc in ACCURACIES:
        ts = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=acc))
        run, traj = jax.jit(lambda s, t, ts=ts: ts.simulate(s, t))(state, REPORT_TIMES)
        errors.append(max(np.abs(np.asarray(traj.q[:, 0]) - x).max(), np.abs(np.asarray(traj.u[:, 0]) - u).max()))
        stats.append(jax.tree_util.tree_map(int, run.stats))
    return np.array(errors), stats


def _slope(y):
    return np.polyfit(np.log10(ACCURACIES), np.log10(y), 1)[0]


@pytest.mark.long  # the ladder's seven adaptive rollouts compile for ~40 s of CPU; CI time budget
def test_global_error_scales_with_requested_accuracy(ladder):
    errors, _ = ladder
    slope, intercept = np.polyfit(np.log10(ACCURACIES), np.log10(errors), 1)
    assert 0.7 <= slope <= 0.9, (slope, errors)
    residual = np.log10(errors) - (slope * np.log10(ACCURACIES) + intercept)
    assert np.abs(residual).max() < 0.3, residual
    assert np.all(np.diff(errors) < 0), errors  # every tighter accuracy is more accurate


@pytest.mark.long  # shares the ladder fixture (see above)
def test_statistics_plausible(ladder):
    _, stats = ladder
    taken = np.array([s.steps_taken for s in stats])
    for s in stats:
        assert s.steps_attempted == s.steps_taken + s.error_test_failures + s.projection_failures
        assert s.realizations == 1 + 4 * s.steps_attempted + s.steps_taken  # Simbody's count for RKM
        assert s.projection_failures == 0 and s.projections == 0 and not s.step_limit_reached
        assert s.error_test_failures <= 0.1 * s.steps_taken + 3, s
    assert np.all(np.diff(taken) > 0), taken
    assert abs(_slope(taken) + 0.25) <= 0.08, (_slope(taken), taken)
