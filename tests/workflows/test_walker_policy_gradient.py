"""Workflow: dm_control's walker (MJCF, contact from the file) learns to move forward by analytic policy
gradients through batched contact rollouts (examples/walker_policy_gradient.py,
notebooks/11_walker_policy_gradient.ipynb).

Smoke run (tiny batch, horizon and iterations): the imported contact and motors work under jit, vmap and reverse
mode: the gradients through contact are finite and nonzero and the first Adam steps already move the walker
forward. The full training (``--long``) must make the forward distance grow clearly.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/
from notebook_runner import run_notebook  # noqa: E402
from script_runner import load_example  # noqa: E402

pytest.importorskip("mujoco", reason="load_mjcf parses with MuJoCo's compiler (extra jaxbody[io])")


def test_smoke_gradients_through_contact_are_finite_and_move_the_walker_forward():
    r = load_example("walker_policy_gradient").main(small=True, quiet=True)
    h = r["history"]
    assert np.all(np.isfinite(h["loss"])) and np.all(np.isfinite(h["grad_norm"]))
    assert np.all(h["grad_norm"] > 0)
    assert np.all(np.isfinite(r["q"]))
    assert h["distance"][-1] > h["distance"][0]


@pytest.mark.long  # the full training (minutes) and the notebook's figures
def test_full_training_moves_the_walker_forward(monkeypatch):
    ns = run_notebook("11_walker_policy_gradient.ipynb", {"SMALL": False, "WRITE_FIGURES": False}, monkeypatch)
    r = ns["r"]
    h = r["history"]
    assert h["distance"][-5:].mean() > h["distance"][:5].mean() + 0.1
    assert r["distance_trained"] > r["distance_untrained"] + 0.1
