"""The ``jaxbody demo`` CLI and the example notebooks run end to end (at tiny sizes)."""

from __future__ import annotations

import re

import matplotlib
import pytest

matplotlib.use("Agg")

import jaxbody.cli as cli  # noqa: E402
from notebook_runner import run_notebook  # noqa: E402

# Small sizes injected after each notebook's "parameters" cell.
NOTEBOOK_OVERRIDES = {
    "01_quickstart_pendulum.ipynb": {"N_STEPS": 100, "DT": 1e-3},
    "02_vmap_parameter_sweep.ipynb": {"N_SWEEP": 4, "T_FINAL": 0.6, "DT": 5e-3, "OPT_STEPS": 3,
                                      "METHOD": "semi_explicit_euler"},
}


def test_demo_cli_tiny(tmp_path, capsys):
    out = tmp_path / "demo.png"
    assert cli.main(["demo", "--batch", "8", "--steps", "50", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert out.exists() and out.stat().st_size > 10_000
    drifts = {k: float(v) for k, v in re.findall(r"(max|median) relative energy drift:\s+(\S+)", text)}
    assert set(drifts) == {"max", "median"}, text
    assert 0 <= drifts["median"] <= drifts["max"] < 1e-7, text
    for label in ("compile time:", "wall time:", "system-steps/s"):
        assert label in text


def test_cli_rejects_bad_sizes(capsys):
    assert cli.main(["demo", "--batch", "0"]) == 2  # a one-line error, exit status 2
    assert "--batch" in capsys.readouterr().err
    assert cli.main([]) == 0  # prints help


@pytest.mark.parametrize("name", sorted(NOTEBOOK_OVERRIDES))
def test_notebook_runs(name, monkeypatch):
    run_notebook(name, NOTEBOOK_OVERRIDES[name], monkeypatch)
