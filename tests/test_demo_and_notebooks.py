"""The ``jaxbody demo`` CLI and the example notebooks run end to end (at tiny sizes)."""

from __future__ import annotations

import json
import pathlib
import re

import matplotlib
import pytest

matplotlib.use("Agg")

import jaxbody.cli as cli  # noqa: E402

NOTEBOOKS = pathlib.Path(__file__).resolve().parent.parent / "notebooks"

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
    with pytest.raises(SystemExit):
        cli.main(["demo", "--batch", "0"])
    assert cli.main([]) == 0  # prints help


def _code_cells(path):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        # Drop IPython magics and shell escapes, which plain exec cannot run.
        lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
        yield "\n".join(lines), "parameters" in cell.get("metadata", {}).get("tags", [])


@pytest.mark.parametrize("name", sorted(NOTEBOOK_OVERRIDES))
def test_notebook_runs(name, monkeypatch):
    import matplotlib.pyplot as plt

    monkeypatch.setattr(plt, "show", lambda *a, **k: None)
    path = NOTEBOOKS / name
    namespace = {"__name__": "__notebook__"}
    saw_parameters = False
    for i, (source, is_parameters) in enumerate(_code_cells(path)):
        exec(compile(source, f"{name}[cell {i}]", "exec"), namespace)
        if is_parameters:
            namespace.update(NOTEBOOK_OVERRIDES[name])
            saw_parameters = True
    assert saw_parameters, f"{name} has no cell tagged 'parameters'"
    plt.close("all")
