"""``jaxbody demo --model``: the batch simulation and pictures on a hand-built import record (a stand-in for
``jaxbody.io``'s), and the CLI on a real URDF file when ``jaxbody.io`` is present."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageSequence
from viz_systems import build_decorated

import jaxbody as jb
import jaxbody.cli as cli
from jaxbody.cli.demo_model import load_model, run_model_demo


def gif_frames(path) -> int:
    with Image.open(path) as image:
        return sum(1 for _ in ImageSequence.Iterator(image))


def test_run_model_demo_on_an_import_record(tmp_path):
    record, _ = build_decorated()
    record.visuals = [dict(body="hand", kind="capsule", size=[0.02, 0.1], rgba=[0.2, 0.8, 0.2, 1.0])]
    jb.Constraint.ConstantSpeed(record.bodies["hand"], 0, 0.0)  # exercises the projection of the random speeds
    gif, png = tmp_path / "model.gif", tmp_path / "trajectory.png"
    results = run_model_demo(record, batch=3, steps=10, dt=0.01, out=png, animation=gif, n_frames=4, verbose=False)
    assert results["steps"] == 8 and results["frames"] == 4 == gif_frames(gif)   # exactly the frames asked for
    assert results["finite"] and png.stat().st_size > 10_000
    assert results["coordinates_out"] == str(tmp_path / "trajectory_coordinates.png")   # every coordinate
    assert (tmp_path / "trajectory_coordinates.png").stat().st_size > 10_000
    model = record.system.realize_topology()
    reach = np.linalg.norm(np.asarray(model.realize(model.default_state(), jb.Stage.Position).position.p_GB), axis=1).max()
    assert np.isclose(record.system.get_default_length_scale(), reach / 4)
    assert record.bodies["hand"].get_num_body_decorations() == 3  # the capsule: a cylinder and two spheres


def test_random_speeds_satisfy_the_constraints():
    from jaxbody.cli.demo_model import random_speeds

    record, _ = build_decorated()
    jb.Constraint.ConstantSpeed(record.bodies["hand"], 1, 0.0)
    model = record.system.realize_topology()
    states = random_speeds(record.system, model, np.random.default_rng(0), 4, 1.0)
    u = np.asarray(states.u)
    assert u.shape == (4, 4) and np.all(np.abs(u[:, 2]) < 1e-12) and np.all(np.std(u, axis=0)[[0, 1, 3]] > 1e-3)


def test_random_speeds_start_from_the_files_default_state():
    """A demo of an imported file starts where the file puts it (MJCF: MuJoCo's qpos0, the free body off the origin)."""
    import os
    import warnings

    pytest.importorskip("mujoco")
    from jaxbody.cli.demo_model import random_speeds

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        record = jb.io.load_mjcf(os.path.join(os.path.dirname(__file__), "..", "models", "keyframes.xml"))
    model = record.system.realize_topology()
    states = random_speeds(record.system, model, np.random.default_rng(0), 3, 1.0, record)
    assert np.array_equal(np.asarray(states.q), np.broadcast_to(record.default_q, (3, len(record.default_q))))
    assert float(states.q[0, record.q_index("root") + 6]) == 0.9


def test_cli_demo_model_wiring(tmp_path, monkeypatch, capsys):
    """The CLI's --model path with the importer replaced by the hand-built record (runs without jaxbody.io)."""
    import jaxbody.cli.demo_model as demo_model

    record, _ = build_decorated()
    seen = []
    monkeypatch.setattr(demo_model, "load_model", lambda path: seen.append(path) or record)
    arm = tmp_path / "arm.urdf"
    arm.write_text("<robot/>")  # it must exist; the stand-in loader does not read it
    gif, png = tmp_path / "m.gif", tmp_path / "m.png"
    argv = ["demo", "--model", str(arm), "--batch", "2", "--steps", "6", "--dt", "0.01", "--animation", str(gif),
            "--out", str(png), "--frames", "3"]
    assert cli.main(argv) == 0
    assert seen == [str(arm)] and gif_frames(gif) == 3 and png.exists()
    out = capsys.readouterr().out
    assert "2 lanes" in out and "nq=5, nu=4" in out


def test_load_model_checks_the_extension():
    with pytest.raises(jb.InvalidArgument, match="extension"):
        load_model("robot.stl")


URDF = """<?xml version="1.0"?>
<robot name="two_link">
  <link name="base"/>
  <link name="upper">
    <inertial><origin xyz="0 0 -0.25"/><mass value="1"/><inertia ixx="0.02" iyy="0.02" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 -0.25"/><geometry><cylinder radius="0.02" length="0.5"/></geometry></visual>
  </link>
  <link name="lower">
    <inertial><origin xyz="0 0 -0.2"/><mass value="0.5"/><inertia ixx="0.01" iyy="0.01" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><sphere radius="0.04"/></geometry></visual>
  </link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><axis xyz="1 0 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="lower"/><origin xyz="0 0 -0.5"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
</robot>
"""


def test_cli_demo_model_urdf(tmp_path, capsys):
    pytest.importorskip("jaxbody.io")
    path = tmp_path / "two_link.urdf"
    path.write_text(URDF)
    gif, png = tmp_path / "two_link.gif", tmp_path / "two_link.png"
    argv = ["demo", "--model", str(path), "--batch", "2", "--steps", "20", "--animation", str(gif), "--out", str(png)]
    assert cli.main(argv) == 0
    assert gif_frames(gif) == 20 and png.stat().st_size > 10_000
    assert "wrote" in capsys.readouterr().out
