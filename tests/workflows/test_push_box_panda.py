"""Workflow: a URDF Panda pushes a box on a table through compliant contact, and the push is tuned by gradients
through the contact rollout (examples/push_box_panda.py, notebooks/10_push_box_panda.ipynb).

Small run (0.8 s at 1 ms: a 5 cm minimum-jerk stroke, the sphere starting 2 cm behind the box): the box slides
along x by less than the stroke minus the gap (the sphere indents the soft box and the controller lags) and
stays flat on the table, the forward-mode derivative of its displacement with respect to the stroke through
all contact steps equals central differences, and two Newton steps with it land the box on its target.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/
from notebook_runner import run_notebook  # noqa: E402
from script_runner import load_example  # noqa: E402


def test_arm_holds_its_pose_and_the_box_rests_on_the_table():
    """Fast core check (0.15 s at 1 ms): the computed-torque controller holds the arm at a pose above the table
    (joint errors < 1e-6 rad) and the box stays at rest on its four corners at the penalty law's static depth
    (brick/half-space: each corner carries m g / 4 = k_combined depth), under jit."""
    import jax
    import jax.numpy as jnp

    example = load_example("push_box_panda")
    _, model, parts = example.load_scene()
    state0 = example.initial_state(model, parts)
    q_hold = jnp.tile(state0.q[parts["arm_q"]], (150, 1))
    q, u, tau = jax.jit(example.make_closed_loop(model, parts, state0))(q_hold, 0 * q_hold, 0 * q_hold)
    assert float(jnp.max(jnp.abs(q[:, parts["arm_q"]] - q_hold[0]))) < 1e-6
    box = np.asarray(q[:, parts["box_q"]])
    k = example.TABLE_MATERIAL.get_stiffness() * example.BOX_MATERIAL.get_stiffness() / (
        example.TABLE_MATERIAL.get_stiffness() + example.BOX_MATERIAL.get_stiffness())
    depth = example.BOX_MASS * 9.81 / 4 / k
    np.testing.assert_allclose(box[-1, 6], example.BOX_HALF[2] - depth, atol=1e-7)
    np.testing.assert_allclose(box[-1, 4:6], box[0, 4:6], atol=1e-9)
    assert float(np.max(np.abs(np.asarray(u)[:, parts["box_u"]]))) < 1e-4


@pytest.fixture(scope="module")
def outcome():
    return load_example("push_box_panda").main(small=True, quiet=True)


@pytest.mark.long  # ~75 s: compiles the push with the IK reference and its forward-mode derivative
def test_box_slides_the_stroke_minus_the_gap(outcome):
    example = load_example("push_box_panda")
    first = outcome["first"]
    most = example.SIZES[True]["stroke"] - example.GAP  # the sphere closes the gap, then carries the box
    assert 0.6 * most < first["dx"] < most, first
    assert abs(first["dy"]) < 1e-3 and abs(first["dz"]) < 1e-3 and first["max_tilt"] < 0.01, first  # flat on the table
    assert np.all(np.isfinite(outcome["q"]))


@pytest.mark.long
def test_gradient_through_contact_equals_central_differences_and_newton_hits_the_target(outcome):
    assert outcome["derivative"] == pytest.approx(outcome["central_difference"], rel=1e-4)
    assert 0.5 < outcome["derivative"] < 1.5  # the box moves about as far as the sphere does
    assert outcome["history"][-1, 1] == pytest.approx(outcome["target"], abs=1e-3)


@pytest.mark.long  # the full 15 cm push with three Newton steps and the notebook's figures
def test_notebook_runs_full(monkeypatch):
    ns = run_notebook("10_push_box_panda.ipynb", {"SMALL": False, "WRITE_FIGURES": False}, monkeypatch)
    r = ns["r"]
    assert 0.06 < r["first"]["dx"] < 0.1
    assert r["reverse_mode"] == pytest.approx(r["derivative"], rel=1e-8)
    assert r["history"][-1, 1] == pytest.approx(0.15, abs=1e-3)
