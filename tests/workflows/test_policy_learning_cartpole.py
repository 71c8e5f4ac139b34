"""Workflow: an MLP policy balancing a jaxbody cart-pole, trained through batched differentiable rollouts
(examples/ and notebook 06, small sizes)."""

from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/
from notebook_runner import run_notebook  # noqa: E402
from script_runner import load_example  # noqa: E402


def test_trained_policy_balances_held_out_starts():
    example = load_example("policy_learning_cartpole")
    r = example.main(small=True)
    assert (example.SUCCESS_ANGLE, example.SUCCESS_X, r["horizon_s"]) == (0.3, 2.0, 4.0)
    # 64 held-out initial states, 4 s each (4x the 1 s training rollouts): the policy trained for 60 Adam steps on
    # 32 rollouts keeps |theta| < 0.3 rad and |x| < 2 m in >= 90 % of them (measured 97 %); the untrained one
    # (zero output) in none (measured 0 %), so the pass is the training's doing.
    assert r["success_rate"] >= 0.9, r["success_rate"]
    assert r["untrained_success_rate"] <= 0.1, r["untrained_success_rate"]
    assert r["loss_final"] < r["loss_initial"] / 50, (r["loss_initial"], r["loss_final"])


@pytest.mark.long  # ~1 min more: compiles the training step again (the notebook's own copy of the code)
def test_notebook_runs_small(monkeypatch):
    ns = run_notebook("06_policy_learning_cartpole.ipynb",
                      {"BATCH": 32, "TRAIN_STEPS": 40, "ITERATIONS": 60, "EVAL_BATCH": 64, "WIDTH": 16,
                       "WRITE_FIGURES": False}, monkeypatch)
    assert ns["success_rate"] >= 0.9 and ns["untrained_success_rate"] <= 0.1
