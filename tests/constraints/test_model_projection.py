"""``model.project`` projects with the Model's own parameters (regression: ``system.project`` always used the
System's realized Model, so a Model with replaced parameters, e.g. one being differentiated, could not be
projected through the public API)."""

import jax.numpy as jnp
import numpy as np
import pytest
from constraint_systems import fourbar_state, parallelogram_fourbar

import jaxbody as jb


def test_model_project_uses_the_models_parameters():
    model, _, a, L = parallelogram_fourbar()
    cp = model.parameters.constraint_params
    longer = jb.replace_parameters(model, constraint_params=(cp[0].at[0, 0].set(1.1 * L),))  # coupler 10% longer
    s = fourbar_state(model, 0.7, 0.4)
    out, results = longer.project(s, options=jb.ProjectOptions(accuracy=1e-12))
    assert bool(results.success)
    r = longer.realize(out, jb.Stage.Velocity)
    assert np.max(np.abs(np.asarray(longer.get_q_err(r)))) < 1e-12
    assert np.max(np.abs(np.asarray(longer.get_u_err(r)))) < 1e-12
    # Independent geometry: the coupler's far end (1.1 L along its x axis) is the rocker's tip.
    q = np.asarray(out.q)
    crank_tip = a * np.array([np.cos(q[0]), np.sin(q[0])])
    coupler_end = crank_tip + 1.1 * L * np.array([np.cos(q[0] + q[1]), np.sin(q[0] + q[1])])
    rocker_tip = np.array([L, 0.0]) + a * np.array([np.cos(q[2]), np.sin(q[2])])
    np.testing.assert_allclose(coupler_end, rocker_tip, atol=1e-12)
    assert float(jnp.abs(out.q[0] - s.q[0])) > 1e-3  # it had to move: the original state is off the new manifold


def test_system_and_model_project_take_the_same_arguments():
    """One signature: (state, accuracy=None, options=None); the System adds its counters only. Options passed
    where the accuracy goes get a message, not a float() traceback."""
    model, ball, _, _ = parallelogram_fourbar()
    system = ball.matter.system
    s = fourbar_state(model, 0.7, 0.4)
    s = s.set_q(s.q.at[1].add(0.01))
    by_model, r_model = model.project(s, 1e-11)
    by_system, r_system = system.project(s, 1e-11)
    np.testing.assert_array_equal(np.asarray(by_model.q), np.asarray(by_system.q))
    assert bool(r_model.success) and bool(r_system.success)
    q_only, _ = model.project_q(s, options=jb.ProjectOptions(accuracy=1e-11))
    np.testing.assert_array_equal(np.asarray(q_only.q), np.asarray(system.project_q(s, 1e-11)[0].q))
    with pytest.raises(jb.InvalidArgument, match="options=jb.ProjectOptions"):
        model.project(s, jb.ProjectOptions())
