"""Simbody's PLUS impulse solver (jaxbody._integrators.plus_impulse_solver) against independent formulas and
against PGS: exact where PGS is iterative (a box hitting the ground on four redundant corners), the closed-form
Coulomb impulse of a point mass (stick, slide, stick reached inside the impulse), per-lane active sets and
status under vmap with one compilation, jit, and gradients through the solve by the implicit function theorem.

References: the impulse problem is Simbody's (ImpulseSolver.h: ``verr + A pi = 0`` on the enforced rows,
``pi_n >= 0``, ``|pi_t| <= mu pi_n``); the expected values are written in each test from Newton's laws."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from contact_systems import BOX_HALF, BOX_MASS, box_on_four_points
from helpers import assert_close, assert_grad_matches_fd

import jaxbody as jb
from jaxbody._integrators.impulse_solvers import solve_pgs
from jaxbody._integrators.plus_impulse_solver import solve_plus

MU = 0.5


@pytest.fixture(scope="module")
def box():
    """(G (12, 6), M^-1 G^T (6, 12), A (12, 12)) of the box resting on its four corners (rank 6 of 12 rows)."""
    stepper, _ = box_on_four_points(MU)
    state = stepper.model.default_state().set_q(jnp.array([1.0, 0, 0, 0, 0.0, BOX_HALF[1], 0.0]))
    G = stepper.calc_contact_kinematics(state).G.reshape(12, 6)
    minv_gt = jnp.linalg.solve(stepper.model.calc_m(stepper.model.realize(state, jb.Stage.Position)), G.T)
    return G, minv_gt, G @ minv_gt


@pytest.fixture(scope="module")
def solvers():
    return jax.jit(solve_plus), jax.jit(solve_pgs)


def test_redundant_box_impact_is_exact(box, solvers):
    """The box (free, 6 dofs) hits the ground with all four corners approaching at 0.37 .. 0.63 m/s and small slip:
    a perfectly inelastic sticking impact stops it, u+ = u + M^-1 G^T pi = 0. PLUS (pseudo-inverse Newton steps,
    several sliding intervals) gets u+ = 0 and the velocity errors to 1e-14; PGS at its default tolerance only
    to its tolerance (> 1e-8), with a different split of the redundant impulses. A straight drop at 0.1 m/s:
    PLUS gives the minimum-norm split, exactly m v / 4 per corner; both cones hold."""
    G, minv_gt, A = box
    plus, pgs = solvers
    part, mu = jnp.ones((4, 3), bool), jnp.full(4, MU)
    u = jnp.array([0.2, 0.1, -0.3, 0.02, -0.5, 0.01])
    exact = plus(A, (G @ u).reshape(4, 3), part, mu)
    iterative = pgs(A, (G @ u).reshape(4, 3), part, mu)
    assert bool(exact.converged) and bool(iterative.converged)
    assert_close(u + minv_gt @ exact.impulse.reshape(-1), np.zeros(6), 1e-14, "PLUS u+")
    assert_close(exact.verr, np.zeros((4, 3)), 1e-14, "PLUS velocity errors")
    assert float(jnp.max(jnp.abs(u + minv_gt @ iterative.impulse.reshape(-1)))) > 1e-8
    for sol in (exact, iterative):
        pi = np.asarray(sol.impulse)
        assert np.all(pi[:, 0] >= 0) and np.all(np.hypot(pi[:, 1], pi[:, 2]) <= MU * pi[:, 0] + 1e-12)
    drop = plus(A, (G @ jnp.array([0, 0, 0, 0, -0.1, 0.0])).reshape(4, 3), part, mu)
    assert_close(drop.impulse, np.array([[BOX_MASS * 0.1 / 4, 0, 0]] * 4), 1e-15, "minimum-norm split")
    assert int(drop.iterations) == 1


def _point_mass_problem(v):
    """A 1 kg point mass with velocity v (3,) at a floor (normal +y, friction mu 0.5) and a frictionless wall
    (normal +x): rows (floor n, x, z), (wall n, y, z); G u is the separation rate and slip; A = G G^T."""
    G = jnp.array([[0, 1, 0], [1, 0, 0], [0, 0, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])
    return G, G @ G.T, (G @ v).reshape(2, 3)


def _coulomb_velocity(v):
    """Independent closed form: the wall stops vx < 0; the floor stops vy < 0 (N = -vy) and its friction removes up
    to mu N of the slip (vx, vz) along the slip: stick when |slip| <= mu N, else slip (1 - mu N / |slip|)."""
    v = np.array(v, float)
    if v[1] < 0:
        n, slip = -v[1], v[[0, 2]]
        mag = np.hypot(*slip)
        v[[0, 2]] = 0.0 if mag <= MU * n else slip * (1 - MU * n / mag)
        v[1] = 0.0
    v[0] = max(v[0], 0.0)
    return v


LANES = np.array([
    [0.3, 0.2, 0.0],  # separating from both: no impulse
    [0.0, -1.0, -0.3],  # floor: slides at first, stops inside the impulse (a second sliding interval), sticks
    [2.0, -1.0, 1.0],  # floor: keeps sliding (the wall is released)
    [-0.5, 0.3, 0.2],  # wall only (the floor is released)
    [-0.2, -1.0, 0.0],  # floor and wall: slides, stops inside the impulse, sticks
])


def test_point_mass_lanes_match_coulomb_formula(solvers):
    """Five lanes with different active sets and friction states in one vmapped, jitted solve (traced once for
    two calls): every lane's final velocity matches the closed form to 1e-12 and reports convergence; with a
    single sliding interval allowed, exactly the lanes whose slip stops inside the impulse (1 and 4) report
    non-convergence (per-lane status)."""
    traces = []

    def solve(v, max_intervals=6):
        traces.append(1)
        G, A, verr = _point_mass_problem(v)
        sol = solve_plus(A, verr, jnp.ones((2, 3), bool), jnp.array([MU, 0.0]), max_intervals=max_intervals)
        return v + G.T @ sol.impulse.reshape(-1), sol.converged

    batched = jax.jit(jax.vmap(solve))
    final, ok = batched(jnp.asarray(LANES))
    batched(jnp.asarray(LANES[::-1]))
    assert len(traces) == 1
    assert bool(jnp.all(ok))
    assert_close(final, np.array([_coulomb_velocity(v) for v in LANES]), 1e-12, "final velocities")
    _, ok1 = jax.jit(jax.vmap(lambda v: solve(v, 1)))(jnp.asarray(LANES))
    assert np.asarray(ok1).tolist() == [True, False, True, True, False]


def test_plus_and_pgs_agree_on_point_mass(solvers):
    """The same five lanes one by one with PGS (tolerance 1e-6): both solvers give the same final velocities to
    PGS's tolerance (PLUS to the closed form above)."""
    plus, pgs = solvers
    for v in LANES:
        G, A, verr = _point_mass_problem(jnp.asarray(v))
        args = (A, verr, jnp.ones((2, 3), bool), jnp.array([MU, 0.0]))
        a, b = plus(*args), pgs(*args)
        assert_close(v + G.T @ a.impulse.reshape(-1), v + G.T @ b.impulse.reshape(-1), 1e-5, f"lane {v}")


def test_gradient_through_sliding_impulse():
    """A sliding lane's final tangential speed vx+ = vx (1 - mu N / |slip|) with N = 1, |slip| = sqrt(5):
    d vx+/d mu = -vx / sqrt(5) (reverse mode through the loops by the implicit-function step), also by central
    differences."""
    v = jnp.array([2.0, -1.0, 1.0])

    def vx_after(mu):
        G, A, verr = _point_mass_problem(v)
        sol = solve_plus(A, verr, jnp.ones((2, 3), bool), jnp.stack([mu, 0.0]))
        return (v + G.T @ sol.impulse.reshape(-1))[0]

    grad, _ = assert_grad_matches_fd(jax.jit(vx_after), jnp.asarray(MU), 1e-4, 1e-8, "d vx+/d mu")
    assert_close(grad, -2.0 / np.sqrt(5.0), 1e-12, "d vx+/d mu closed form")
