"""Workflow (issue 35 item 6): arm26's muscle-driven forward simulation from excitations
(examples/arm26_forward_simulation.py, notebook 13) against OpenSim 4.6's forward simulation of the same
excitations on the same file (tests/workflows/generate_arm26_forward_golden.py: RungeKuttaMerson, accuracy 1e-9),
over the protocol's first 0.1 s (the fully excited flexors' swing, where the elbow moves fastest).

``--long``: two lanes of 1000 RK4 steps through arm26's wrapped paths take three to five minutes on the 2-core
machine (compiles and run); CI keeps the demo's muscle-driven run on the two-muscle elbow
(tests/viz/test_demo_muscles.py).
"""

import json
import pathlib
import sys

import numpy as np
import pytest

TESTS = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from script_runner import load_example  # noqa: E402

GOLDEN = json.loads((TESTS / "workflows" / "golden" / "arm26_forward_simulation.json").read_text())
#: RK4 at 0.1 ms against OpenSim's error-controlled run: what is left is RK4's truncation error, largest where
#: TRIlong is stretched fast at minimum activation (measured: 0.003 deg, 1.4 N of TRIlong's 48 N at 0.08 s, in
#: the fully excited lane; the quarter-excited lane 3e-8 deg, 1e-5 N). At 0.25 ms: 0.04 deg and 48 N there.
ANGLE_TOL = 0.01     # deg
FORCE_TOL = 2.0      # N (tendon forces up to ~500 N)
ACTIVATION_TOL = 1e-6


@pytest.mark.long
def test_arm26_follows_opensim_from_the_same_excitations():
    out = load_example("arm26_forward_simulation").main(small=True, log=lambda *a: None)
    assert out["muscles"] == GOLDEN["muscles"] and list(out["levels"]) == GOLDEN["levels"]
    assert set(out["flexors"]) == {"BIClong", "BICshort", "BRA"} and out["coordinate"] == "r_elbow_flex"
    frames = len(out["t"])
    assert np.allclose(out["t"], GOLDEN["t"][:frames])
    for lane, level in enumerate(out["levels"]):
        opensim = {k: np.asarray(v)[:frames] for k, v in GOLDEN["lanes"][lane].items()}
        for key, tol in (("elbow_deg", ANGLE_TOL), ("shoulder_deg", ANGLE_TOL), ("activation", ACTIVATION_TOL),
                         ("tendon_force", FORCE_TOL)):
            error = np.abs(out[key][lane] - opensim[key]).max()
            assert error < tol, (level, key, error)
    # the fully excited flexors flex the elbow (OpenSim: 87.7 deg at 0.1 s), faster than the quarter-excited ones
    assert out["elbow_deg"][0, -1] > 80.0 and out["elbow_deg"][0, -1] > 2 * out["elbow_deg"][1, -1]
