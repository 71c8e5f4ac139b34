"""Projection (catalogue 4.7): the projected q is the minimum-norm change (vs an independent constrained
least-squares solve), implicit gradients vs finite differences, per-lane failure reporting under vmap,
prescribed q untouched, error-estimate projection, counters. Every constraint type satisfied after ``system.project`` of the zoo: tests/constraints/test_constraint_geometry.py.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize

import jaxbody as jb
from jaxbody._constraints import projection
from constraint_systems import TETHERED_CHAIN_LINKS, fourbar_state, parallelogram_fourbar, tethered_chain
from helpers import central_difference

OPTS = jb.ProjectOptions(accuracy=1e-10)
# One compiled project_q (the model is an argument), shared by the tests that project a four-bar state.
project_q = jax.jit(lambda model, s: projection.project_q(model, s, OPTS))


def _fourbar_perturbed():
    model, ball, a, L = parallelogram_fourbar()
    s = fourbar_state(model, -1.0, 0.3)
    return model, s.set_q(s.q + jnp.array([0.01, -0.02, 0.015])).set_u(s.u + jnp.array([0.1, 0.0, -0.05]))


def test_projected_q_is_the_minimum_norm_change():
    model, s = _fourbar_perturbed()
    out, res = project_q(model, s)
    assert bool(res.success)
    perr = jax.jit(lambda q: model.calc_constraint_position_errors(s.set_q(q)))
    sol = scipy.optimize.minimize(
        lambda q: 0.5 * np.sum((q - np.asarray(s.q)) ** 2), np.asarray(s.q), jac=lambda q: q - np.asarray(s.q),
        constraints=[{"type": "eq", "fun": lambda q: np.asarray(perr(jnp.asarray(q)))[:2]}],  # 3rd row redundant
        method="SLSQP", options={"ftol": 1e-15, "maxiter": 200},
    )
    assert sol.success
    np.testing.assert_allclose(np.asarray(out.q), sol.x, atol=1e-7)
    # Simbody's plain Gauss-Newton (no anchoring) lands within O(perturbation^2) of it:
    first = np.asarray(s.q) - np.linalg.pinv(np.asarray(jax.jacfwd(perr)(s.q))) @ np.asarray(perr(s.q))
    assert np.max(np.abs(first - np.asarray(out.q))) < 1e-3


def test_projection_gradients_match_finite_differences():
    model, s = _fourbar_perturbed()
    cp = model.parameters.constraint_params

    def loss(q, u, station):
        m = jb.replace_parameters(model, constraint_params=(cp[0].at[0, :3].set(station),))
        out, _ = projection.project(m, s.set_q(q).set_u(u), jb.ProjectOptions(accuracy=1e-12))
        return jnp.sum(jnp.sin(out.q) * jnp.array([1.0, 2.0, 3.0])) + jnp.sum(out.u * jnp.array([0.5, -1.0, 2.0]))

    args = (s.q, s.u, cp[0][0, :3])
    grads = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))(*args)
    f = jax.jit(loss)
    h = 1e-6
    for i, (x, g) in enumerate(zip(args, grads)):
        fd = central_difference(lambda xi, i=i: f(*args[:i], xi, *args[i + 1:]), x, h)
        np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-6, atol=1e-8, err_msg=f"argument {i}")


def test_failure_is_reported_per_lane_under_vmap():
    """One compiled function, two lanes: a small perturbation projects, one above projection_limit fails."""
    model, _, _, _ = parallelogram_fourbar()
    base = fourbar_state(model, -1.0, 0.3)
    opts = jb.ProjectOptions(accuracy=1e-10, projection_limit=1e-2)
    run = jax.jit(jax.vmap(lambda dq: projection.project_q(model, base.set_q(base.q + dq), opts)))
    out, res = run(jnp.array([[1e-4, 0, 0], [0.5, 0, 0]]))
    assert list(np.asarray(res.success)) == [True, False]
    assert float(res.q_final_norm[0]) <= 1e-10
    # the failed lane is left where it was (Simbody restores the entry state) and says how far off it is
    np.testing.assert_array_equal(np.asarray(out.q[1]), np.asarray(base.q + jnp.array([0.5, 0, 0])))
    assert float(res.q_final_norm[1]) == float(res.q_entry_norm[1]) > 1e-2


def test_locked_coordinates_do_not_move_and_estimates_are_projected():
    model, s = _fourbar_perturbed()
    _, ball, _, _ = parallelogram_fourbar()
    crank = ball.bodies[0].parent  # the coupler's parent
    locked = crank.lock(s, jb.Motion.Position)
    out, res = project_q(model, locked)
    assert bool(res.success)
    assert float(out.q[0]) == float(locked.q[0])
    est = jnp.array([1e-3, -2e-3, 5e-4])
    _, r2 = jax.jit(lambda st: projection.project_q(model, st, OPTS, q_err_estimate=est))(s)
    out2, _ = projection.project_q(model, s, OPTS)
    Pq = jax.jacfwd(lambda q: model.calc_constraint_position_errors(out2.set_q(q)))(out2.q)
    assert np.max(np.abs(np.asarray(Pq @ r2.q_err_estimate))) < 1e-12
    _, r3 = jax.jit(lambda st: projection.project_u(model, st, OPTS, u_err_estimate=est))(out2)
    assert np.max(np.abs(np.asarray(model.calc_pv(model.realize(out2, jb.Stage.Position)) @ r3.u_err_estimate))) < 1e-12


def test_system_project_and_counters():
    model, ball, _, _ = parallelogram_fourbar()
    system = ball.matter.system
    system.reset_all_counters()
    s = fourbar_state(model, -1.0, 0.3)
    s = s.set_q(s.q + 1e-3)
    out, res = system.project(s, 1e-10)
    assert bool(res.success) and float(res.q_final_norm) <= 1e-10
    system.project_q(out, 1e-10)
    system.project_u(out, options=jb.ProjectOptions(accuracy=1e-8))
    assert system.get_num_project_q_calls() == 2 and system.get_num_project_u_calls() == 2
    r = model.realize(out, jb.Stage.Velocity)
    assert np.max(np.abs(np.asarray(model.get_u_err(r)))) < 1e-10


@pytest.mark.long  # 38 s of compile (CI budget); CI checks the implicit gradient near the manifold above
def test_gradient_far_off_a_curved_manifold():
    """A 20-link chain bent off its tether (Rod error 4.5 cm): the projected q is the closest point (KKT
    stationarity to round-off), so the implicit-function gradient matches central differences. Before the
    refinement took a Gauss-Newton step back whenever an anchored step left the manifold, it stopped short
    there (stationarity residual 7e-4) and the gradient was 0.259 against -0.009."""
    model, q_ref = tethered_chain()
    profile = jnp.linspace(1.0, -1.0, TETHERED_CHAIN_LINKS)
    weights = jnp.sin(jnp.arange(TETHERED_CHAIN_LINKS) + 1.0)
    options = jb.ProjectOptions(accuracy=1e-12)

    def projected(bend):
        state = model.default_state().set_q(q_ref + bend * profile)
        return model.project_q(state, options=options), state

    @jax.jit
    def loss(bend):
        return jnp.dot(projected(bend)[0][0].q, weights)

    (result, info), entry = projected(0.01)
    A = projection._pq(model, 0.0, result.q, entry.constraint_enabled, jnp.ones(TETHERED_CHAIN_LINKS))
    move = result.q - entry.q
    stationarity = move - A.T @ (jnp.linalg.pinv(A.T) @ move)
    assert bool(info.success) and float(jnp.max(jnp.abs(stationarity))) < 1e-12
    grad = float(jax.jit(jax.grad(loss))(0.01))
    fd = float(central_difference(loss, jnp.asarray(0.01), 1e-6))
    assert abs(grad - fd) < 1e-6 * max(1.0, abs(fd)), (grad, fd)
