"""Workflow (issue 35 item 6): arm26's muscle-driven forward simulation from excitations
(examples/arm26_forward_simulation.py, notebook 13), at the example's small size: two excitation levels,
20 ms of flexors then 20 ms of triceps.

``--long``: arm26's wrapped paths make the equilibration, the RK4 scan and the tendon-force pass compile for
minutes on the 2-core machine (README, "Not supported yet"); CI keeps the demo's elbow version
(tests/viz/test_demo_muscles.py)."""

import pathlib
import sys

import numpy as np
import pytest

TESTS = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from script_runner import load_example  # noqa: E402


@pytest.mark.long
def test_flexors_then_triceps_move_the_elbow_and_the_muscles_respond():
    out = load_example("arm26_forward_simulation").main(small=True, log=lambda *a: None)
    assert set(out["agonists"]) == {"BIClong", "BICshort", "BRA"} and out["coordinate"] == "r_elbow_flex"
    half = out["elbow_deg"].shape[1] // 2
    elbow = out["elbow_deg"]
    assert np.all(np.isfinite(elbow)) and np.all(np.isfinite(out["tendon_force"]))
    # the fully excited flexors flex the elbow more than the weaker lane, and the triceps phase slows it
    assert elbow[0, half - 1] > elbow[0, 0] and elbow[0, half - 1] > elbow[1, half - 1]
    flexors = [out["muscles"].index(n) for n in out["agonists"]]
    triceps = [k for k in range(len(out["muscles"])) if k not in flexors]
    act = out["activation"]
    assert np.all(act[0, half - 1, flexors] > act[0, 0, flexors])        # flexors activate in phase 1
    assert np.all(act[0, -1, triceps] > act[0, half - 1, triceps])       # triceps in phase 2
    assert np.all(out["tendon_force"] >= 0) and np.all(out["fiber_length"] > 0.2)
