"""``jaxbody demo --model`` on a model with muscles (issue 35 item 5): the demo drives the model by its muscles.
CI: a two-muscle elbow (tests/models/osim/elbow_two_muscles.osim, no wrapping, compiles in seconds) through
``run_model_demo`` and the choice of agonists on given moment arms; ``--long``: the CLI on arm26 (6 wrapped
Thelen2003 muscles: biceps and brachialis flex the elbow, the triceps extend it)."""

from __future__ import annotations

import pathlib
import warnings

import numpy as np
import pytest

import jaxbody as jb
import jaxbody.cli as cli
from jaxbody.cli import demo_muscles
from jaxbody.cli.demo_model import run_model_demo

MODELS = pathlib.Path(__file__).resolve().parents[1] / "models" / "osim"


def _record(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return jb.io.load_osim(str(MODELS / name))


def test_agonists_are_the_positive_moment_arms_of_the_most_spanned_coordinate():
    record = _record("elbow_two_muscles.osim")
    arms = np.array([[0.03], [-0.02]])
    assert demo_muscles.choose_agonists(record, arms, ["flexor", "extensor"]) == ("elbow_flex", ["flexor"], ["extensor"])
    assert demo_muscles.choose_agonists(record, -arms, ["flexor", "extensor"])[1] == ["extensor"]
    model = record.system.realize_topology()
    handles = demo_muscles.muscle_handles(record)
    controls = demo_muscles.phase_controls(model, handles, ["flexor"], demo_muscles.excitation_levels(3))
    assert np.allclose(controls[:, 0], [[1.0, 0.01], [0.6, 0.01], [0.2, 0.01]])   # phase 0: flexor at each level
    assert np.allclose(controls[:, 1], [[0.01, 1.0], [0.01, 0.6], [0.01, 0.2]])   # phase 1: swapped


def test_muscle_driven_demo_flexes_then_extends(tmp_path):
    record = _record("elbow_two_muscles.osim")
    gif, png = tmp_path / "elbow.gif", tmp_path / "elbow.png"
    results = run_model_demo(record, batch=2, steps=400, dt=1e-3, out=png, animation=gif, n_frames=8,
                             cylinder_axis="y", verbose=False)
    muscles = results["muscles"]
    assert results["finite"] and results["frames"] == 8 and png.stat().st_size > 10_000
    assert muscles["coordinate"] == "elbow_flex" and muscles["agonists"] == ["flexor"]
    assert muscles["max_deg"] > muscles["start_deg"] + 20        # the flexor flexes the elbow in the first half
    assert muscles["end_deg"] < muscles["max_deg"] - 10          # the extensor brings it back in the second
    assert muscles["peak_activation"]["flexor"] > 0.9 and muscles["peak_activation"]["extensor"] > 0.9
    assert muscles["lane_max_deg"][0] > muscles["lane_max_deg"][1]   # lane 1 is excited less


@pytest.mark.long
def test_cli_demo_drives_arm26_by_its_muscles(tmp_path, capsys):
    gif, png = tmp_path / "arm26.gif", tmp_path / "arm26.png"
    argv = ["demo", "--model", str(MODELS / "arm26.osim"), "--batch", "2", "--steps", "400",
            "--animation", str(gif), "--out", str(png), "--frames", "8"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "agonists of r_elbow_flex ['BIClong', 'BICshort', 'BRA']" in out
    assert "antagonists ['TRIlong', 'TRIlat', 'TRImed']" in out and png.exists()


@pytest.mark.long
def test_arm26_demo_flexes_the_elbow_with_its_flexors():
    """arm26 through run_model_demo, small (2 lanes, 2 x 30 RK4 steps): its flexors (biceps, brachialis, wrapped
    over an ellipsoid and a cylinder) flex the elbow in the first phase (lane 0, excitation 1: 7.9 -> 15.0 deg
    measured), more in the lane excited more (lane 1, 0.2: the elbow sinks to 4.7 deg). Measured at load ~14 on
    the 2-core machine: the simulation compiled in 232 s, 830 s in all (benchmarks/README.md, arm26_compile.py)."""
    results = run_model_demo(_record("arm26.osim"), batch=2, steps=60, dt=1e-3, out="", animation="", n_frames=2,
                             cylinder_axis="y", verbose=False)
    muscles = results["muscles"]
    assert results["finite"]
    assert muscles["coordinate"] == "r_elbow_flex" and muscles["agonists"] == ["BIClong", "BICshort", "BRA"]
    assert muscles["max_deg"] > muscles["start_deg"] + 5.0
    assert muscles["lane_max_deg"][0] > muscles["lane_max_deg"][1]   # lane 1 is excited less
    assert muscles["peak_activation"]["BIClong"] > 0.5
