"""``jaxbody demo``'s arguments are checked before anything is simulated, and a user's error is one line on
stderr (``jaxbody: error: ...``), exit status 2, no traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

import jaxbody.cli as cli
import jaxbody.cli.demo_model as demo_model

URDF = """<robot name="one"><link name="base"/><link name="arm"><inertial><mass value="1"/>
<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="1 0 0"/>
<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>"""


@pytest.fixture
def robot(tmp_path, monkeypatch):
    """A valid URDF in tmp_path, and a simulation that fails the test if it is ever reached."""
    path = tmp_path / "robot.urdf"
    path.write_text(URDF)

    def never(*args, **kwargs):
        raise AssertionError("simulated before the arguments were checked")

    monkeypatch.setattr(demo_model, "run_model_demo", never)
    return path


def one_line_error(capsys, *words):
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jaxbody") and "error:" in lines[0], captured.err
    assert "Traceback" not in captured.err + captured.out
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.mark.parametrize("animation, words", [
    ("out.avi", [".gif", ".mp4"]),
    ("missing_folder/out.gif", ["does not exist"]),
])
def test_bad_animation_is_refused_before_simulating(robot, tmp_path, capsys, animation, words):
    assert cli.main(["demo", "--model", str(robot), "--animation", str(tmp_path / animation)]) == 2
    one_line_error(capsys, *words)


@pytest.mark.parametrize("out, words", [("plot.xyz", [".png"]), ("nowhere/plot.png", ["does not exist"])])
def test_bad_plot_path_is_refused_before_simulating(robot, tmp_path, capsys, out, words):
    assert cli.main(["demo", "--model", str(robot), "--out", str(tmp_path / out)]) == 2
    one_line_error(capsys, *words)


def test_missing_or_unknown_model_file(tmp_path, capsys):
    assert cli.main(["demo", "--model", str(tmp_path / "absent.urdf")]) == 2
    one_line_error(capsys, "no such file")
    (tmp_path / "robot.stl").write_text("solid")
    assert cli.main(["demo", "--model", str(tmp_path / "robot.stl")]) == 2
    one_line_error(capsys, "extension", ".urdf")


def test_unreadable_model_file(tmp_path, capsys):
    pytest.importorskip("jaxbody.io")
    path = tmp_path / "broken.urdf"
    path.write_text("<robot><link")
    assert cli.main(["demo", "--model", str(path), "--animation", ""]) == 2
    one_line_error(capsys, "URDF")


@pytest.mark.parametrize("option, value, words", [
    ("--batch", "0", [">= 1"]), ("--batch", "abc", ["integer", "'abc'"]), ("--steps", "-5", [">= 1"]),
    ("--dt", "nan", ["finite"]), ("--dt", "inf", ["finite"]), ("--dt", "-1e-3", ["> 0"]), ("--dt", "fast", ["'fast'"]),
    ("--seed", "x", ["--seed"]),
])
def test_bad_numbers(robot, capsys, option, value, words):
    assert cli.main(["demo", "--model", str(robot), f"{option}={value}"]) == 2
    one_line_error(capsys, option, *words)


def test_unknown_option(capsys):
    assert cli.main(["demo", "--no-such-option", "3"]) == 2
    one_line_error(capsys, "--no-such-option")


@pytest.mark.parametrize("option", ["--frames", "--animation"])
def test_model_only_options_need_a_model(capsys, option):
    assert cli.main(["demo", option, "3"]) == 2
    one_line_error(capsys, option, "--model")


def test_the_installed_command_exits_2_without_a_traceback(tmp_path):
    result = subprocess.run([sys.executable, "-c", "import sys, jaxbody.cli; sys.exit(jaxbody.cli.main())", "demo",
                             "--model", str(tmp_path / "absent.xml")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [f"jaxbody: error: --model {tmp_path / 'absent.xml'}: no such file"]
