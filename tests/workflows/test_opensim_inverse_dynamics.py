"""Workflow 6 (issue 16): inverse dynamics of the gait14dof22musc gait cycle matches OpenSim 4.6's
InverseDynamicsSolver (tests/workflows/golden/, written by generate_inverse_dynamics_golden.py) to 1e-8
relative to max(1, |tau|) at every frame, and its gradient w.r.t. segment masses matches a central difference;
the example script and notebook 08 run at their small sizes."""

import pathlib
import sys

import numpy as np
import pytest

TESTS = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from notebook_runner import run_notebook  # noqa: E402
from script_runner import load_example  # noqa: E402

TOL = 1e-8


@pytest.fixture(scope="module")
def example():
    return load_example("opensim_inverse_dynamics")


def test_inverse_dynamics_matches_opensim(example):
    r = example.main(small=True)
    assert r["n_frames"] == 15
    assert r["input_mismatch"] == 0.0, "the example's trajectory is the one OpenSim was given"
    tau, ref = r["tau"], r["tau_opensim"]
    assert np.abs(ref).max() > 100.0, "a motion with real loads"
    error = np.abs(tau - ref) / np.maximum(1.0, np.abs(ref))
    assert error.max() <= TOL, f"frame {np.unravel_index(error.argmax(), error.shape)}: {error.max():.3g}"
    assert r["max_relative_error"] == error.max()
    assert r["frames_per_s"] > 0
    # Gradient of the mean square joint moment w.r.t. segment mass scales: matches a central difference; the
    # pelvis's mass enters only the pelvis residuals (joint moments carry the bodies outboard of each joint).
    assert r["sensitivity_fd_relative_error"] < 1e-6
    s = r["mass_sensitivity"]
    assert abs(s["pelvis"]) <= 1e-10 * max(abs(v) for v in s.values())
    assert all(s[b] > 0 for b in ("femur_r", "tibia_r", "femur_l", "tibia_l", "torso"))


@pytest.mark.long  # the notebook recompiles what the script test compiled; CI time budget
def test_notebook_runs(monkeypatch):
    monkeypatch.chdir(TESTS.parent / "notebooks")
    ns = run_notebook("08_opensim_inverse_dynamics.ipynb",
                      {"FRAME_STRIDE": 15, "THROUGHPUT_REPS": 1, "SAVE_FIGURE": False}, monkeypatch)
    assert ns["max_relative_error"] <= TOL
