"""Workflow (issue 35 item 6): a Moco-style direct-collocation problem, muscle-driven (examples/moco_style_arm26.py).

CI solves the example's problem on a two-muscle elbow (tests/models/osim/elbow_two_muscles.osim: the same code
path as arm26, a model that compiles in seconds) with 11 nodes: the interior-point solve converges (defects and
stationarity <= 1e-6, bounds and boundary conditions hold), the assembled constraint Jacobian and the objective's
gradient equal central differences, and RK4 of the optimal excitations follows the collocation states (within
the trapezoidal rule's error at this coarse grid). ``--long``: arm26 at the example's full size (51 nodes)."""

import pathlib
import sys
import warnings

import jax.numpy as jnp
import numpy as np
import pytest

TESTS = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from script_runner import load_example  # noqa: E402

ELBOW = TESTS / "models" / "osim" / "elbow_two_muscles.osim"


@pytest.fixture(scope="module")
def example():
    return load_example("moco_style_arm26")


@pytest.fixture(scope="module")
def result(example):
    return example.main(small=True, model_file=ELBOW, coordinate="elbow_flex", log=lambda *a: None)


def test_muscles_are_replaced_as_moco_does(example):
    import jaxbody as jb

    text = example.replace_muscles_with_degroote(ELBOW.read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imported = jb.io.load_osim(text)
    model = imported.system.realize_topology()
    flexor = imported.forces_by_name["flexor"]
    assert "Thelen2003Muscle" not in text and flexor.state_names == ("activation",)
    assert float(flexor.get_parameter(model, "max_isometric_force")) == 400.0
    assert float(flexor.get_parameter(model, "tendon_slack_length")) == 0.16


def test_collocation_converges(example, result):
    problem, X, E = result["problem"], result["X"], result["E"]
    assert result["violation"] <= example.DEFECT_TOL and result["stationarity"] <= example.OPTIMALITY_TOL
    assert result["iterations"] < 150
    assert np.all(E >= 0.01) and np.all(E <= 1.0)
    activation = X[:, 2:]   # elbow_flex q, u, then the two activations
    assert np.all(activation >= 0.01) and np.all(activation <= 1.0)
    assert abs(X[0, 0]) < 1e-6 and abs(X[0, 1]) < 1e-6 and abs(X[-1, 1]) < 1e-6
    assert abs(X[-1, 0] - example.FLEXION) < 1e-6
    flexor, extensor = E[:, 0], E[:, 1]
    assert flexor.max() > 0.2 and extensor.max() < flexor.max()   # the flexor does the work
    assert result["objective"] < problem.objective(jnp.asarray(problem.guess))


def test_constraint_jacobian_and_objective_gradient_match_central_differences(example, result):
    """At an interior point off the solution: C v and grad J . v against central differences in 3 directions."""
    import jax

    problem = result["problem"]
    rng = np.random.default_rng(0)
    z = np.clip(problem.guess + 0.02 * rng.normal(size=problem.guess.shape), problem.lower + 1e-3,
                problem.upper - 1e-3)
    _, c, C = (np.asarray(v) for v in problem.evaluate(jnp.asarray(z)))
    grad = np.asarray(jax.grad(problem.objective)(jnp.asarray(z)))
    eps = 1e-6
    for _ in range(3):
        v = rng.normal(size=z.shape)
        fd = (np.asarray(problem.constraints(jnp.asarray(z + eps * v)))
              - np.asarray(problem.constraints(jnp.asarray(z - eps * v)))) / (2 * eps)
        scale = max(1.0, np.abs(fd).max())
        assert np.abs(C @ v - fd).max() <= 1e-6 * scale, np.abs(C @ v - fd).max()
        fd_J = (float(problem.objective(jnp.asarray(z + eps * v))) - float(problem.objective(jnp.asarray(z - eps * v)))) / (2 * eps)
        assert abs(grad @ v - fd_J) <= 1e-8 * max(1.0, abs(fd_J))


def test_forward_simulation_follows_the_collocation(result):
    """RK4 of the optimal excitations from the first node stays within the trapezoidal rule's error of the nodes'
    states (h = 0.08 s here; measured 0.16 rad, the arm26 example at 51 nodes is checked by --long)."""
    assert result["q_error"] < 0.25
    assert np.degrees(result["final_angle_error"]) < 5.0


@pytest.mark.long
def test_arm26_full_problem(example):
    result = example.main(log=lambda *a: None)
    assert result["violation"] <= example.DEFECT_TOL and result["stationarity"] <= example.OPTIMALITY_TOL
    assert result["q_error"] < 0.05
