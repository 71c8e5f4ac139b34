"""Run a notebook's code cells in-process, with small sizes injected after its ``parameters`` cell.

Executing the cells with ``exec`` (rather than a Jupyter kernel through nbclient)
keeps the test cheap: no kernel start, and the already-imported jax and
jaxbody are reused. IPython magics and shell escapes are dropped.
"""

from __future__ import annotations

import json
import pathlib

NOTEBOOKS = pathlib.Path(__file__).resolve().parent.parent / "notebooks"


def code_cells(path):
    """Yield (source, is_parameters_cell) for each code cell of the notebook at ``path``."""
    nb = json.loads(pathlib.Path(path).read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
        yield "\n".join(lines), "parameters" in cell.get("metadata", {}).get("tags", [])


def run_notebook(name, overrides, monkeypatch):
    """Execute ``notebooks/<name>`` with ``overrides`` applied after its parameters cell; return its namespace."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.setattr(plt, "show", lambda *a, **k: None)
    namespace = {"__name__": "__notebook__"}
    saw_parameters = False
    for i, (source, is_parameters) in enumerate(code_cells(NOTEBOOKS / name)):
        exec(compile(source, f"{name}[cell {i}]", "exec"), namespace)
        if is_parameters:
            namespace.update(overrides)
            saw_parameters = True
    assert saw_parameters, f"{name} has no cell tagged 'parameters'"
    plt.close("all")
    return namespace
