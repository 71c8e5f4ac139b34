"""Workflow (issue 35 item 6): Moco's squat-to-stand prediction by direct collocation
(examples/moco_style_squat_to_stand.py, solver examples/_collocation.py).

Fast: the Hermite-Simpson and trapezoidal maps are exact on polynomials they integrate exactly (an independent
route: cubic and linear trajectories with their exact derivatives). ``--long`` (the per-node Jacobians take
minutes to compile): the coupler elimination (beta = -knee) from the model's constraint; the assembled sparse
constraint Jacobian equals central differences of the constraints; the problem on 3 Hermite-Simpson intervals
solves (defects <= 1e-6, stationarity <= 1e-3, the ends, bounds and midpoint controls hold, the
objective is Simpson's rule of the effort)."""

import pathlib
import sys

import jax.numpy as jnp
import numpy as np
import pytest

TESTS = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from script_runner import load_example  # noqa: E402

INTERVALS = 3


@pytest.fixture(scope="module")
def example():
    return load_example("moco_style_squat_to_stand")


@pytest.mark.parametrize("scheme, degree", [("hermite-simpson", 3), ("trapezoidal", 1)])
def test_transcription_is_exact_on_polynomials(example, scheme, degree):
    """x(t) = t^degree per state (f = x' exactly), E = a linear excitation: every defect vanishes, and the
    quadrature weights integrate e^2 exactly (Simpson: quadratics; trapezoid: constants)."""
    nodes, nx, ne, T = (2 * 4 + 1 if scheme == "hermite-simpson" else 5), 2, 1, 0.8
    h = T / (nodes - 1)
    LX, LE, LF, w = example.transcription(nodes, nx, ne, h, scheme)
    t = np.linspace(0, T, nodes)
    X = np.stack([t ** degree, 2 * t ** degree + 1], axis=1)
    F = np.stack([degree * t ** (degree - 1), 2 * degree * t ** (degree - 1)], axis=1)
    E = (0.3 + 0.5 * t)[:, None] if scheme == "hermite-simpson" else np.full((nodes, 1), 0.4)
    defects = LX @ X.ravel() + LE @ E.ravel() + LF @ F.ravel()
    assert np.abs(defects).max() < 1e-14
    exact = ((0.3 + 0.5 * T) ** 3 - 0.3 ** 3) / 1.5 if scheme == "hermite-simpson" else 0.16 * T
    assert abs(w @ E[:, 0] ** 2 - exact) < 1e-14


@pytest.fixture(scope="module")
def problem(example):
    imported = example.load(wraps=False)
    return example.build_problem(imported, INTERVALS)


@pytest.mark.long
def test_coupler_is_eliminated(example, problem):
    """q = q0 + P q_I: the patella's knee_angle_r_beta is -knee_angle_r (the model's LinearFunction -1, 0)."""
    imported = problem[0].imported
    P, q0, independent = example.coupled_coordinates(imported, problem[0].model)
    beta, knee = imported.q_index("knee_angle_r_beta"), list(example.COORDINATES).index("knee_angle_r")
    expected = np.zeros(len(independent))
    expected[knee] = -1.0
    np.testing.assert_allclose(P[beta], expected, atol=1e-14)
    assert abs(q0[beta]) < 1e-14


@pytest.mark.long
def test_constraint_jacobian_matches_central_differences(problem):
    problem, _ = problem
    z = problem.guess + 1e-3 * np.random.default_rng(1).standard_normal(problem.guess.size)
    _, _, C = problem.evaluate(z)
    C = C.toarray()
    step = 1e-6
    rng = np.random.default_rng(2)
    for j in rng.choice(z.size, 40, replace=False):
        e = np.zeros(z.size)
        e[j] = step
        fd = (np.asarray(problem.constraints(jnp.asarray(z + e))) -
              np.asarray(problem.constraints(jnp.asarray(z - e)))) / (2 * step)
        np.testing.assert_allclose(C[:, j], fd, rtol=0, atol=1e-6 * (1 + np.abs(fd).max()), err_msg=f"column {j}")


@pytest.mark.long
def test_small_problem_solves(example, problem):
    import _collocation

    problem, _ = problem
    result = _collocation.solve(problem, max_iterations=300, optimality_tol=1e-3, log=lambda *a: None)
    X, E = problem.split(result["z"])
    k = len(example.COORDINATES)
    assert result["violation"] <= 1e-6 and result["stationarity"] <= 1e-3
    np.testing.assert_allclose(X[0, :k], [v[2] for v in example.COORDINATES.values()], atol=1e-6)
    np.testing.assert_allclose(X[-1, :k], [v[3] for v in example.COORDINATES.values()], atol=1e-6)
    np.testing.assert_allclose(X[[0, -1], k:2 * k], 0.0, atol=1e-6)
    assert np.all(result["z"] >= problem.lower) and np.all(result["z"] <= problem.upper)
    h = problem.duration / INTERVALS   # Simpson's rule of sum e^2 over each interval, written out
    effort = sum(h / 6 * (np.sum(E[2 * i] ** 2) + 4 * np.sum(E[2 * i + 1] ** 2) + np.sum(E[2 * i + 2] ** 2))
                 for i in range(INTERVALS))
    assert 0 < result["objective"] and abs(result["objective"] - effort) < 1e-12
    np.testing.assert_allclose(E[1::2], 0.5 * (E[:-2:2] + E[2::2]), atol=1e-6)  # Moco's midpoint controls
