"""Workflow 5 (issue 16): the pendulum-chain sweep of examples/sharded_sweep.py, sharded over 4 forced host
devices with jb.sharded_vmap, gives the plain jit(vmap) numbers lane for lane (to 1e-12), with RK4's energy
error small on every lane; notebook 07 runs at its small size on the same 4 devices.

Runs in a subprocess: the device count is fixed when jax starts (XLA_FLAGS
``--xla_force_host_platform_device_count=4``), and this process's jax is already up.
"""

import pathlib
import sys
import textwrap

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/
from script_runner import run_on_cpu_devices  # noqa: E402

SCRIPT = textwrap.dedent(
    """
    import jax
    import numpy as np
    import pytest

    from notebook_runner import NOTEBOOKS, run_notebook
    from script_runner import load_example

    assert jax.device_count() == 4, jax.devices()
    r = load_example("sharded_sweep").main(small=True)
    assert (r["n_devices"], r["output_devices"], r["n_lanes"], r["n_steps"]) == (4, 4, 256, 10), r
    assert r["max_abs_difference"] <= 1e-12, r["max_abs_difference"]
    # Every lane is a physical simulation: RK4 keeps the energy (an independent check of the dynamics), and the
    # tip, released at height 0 from rest, is below its start and above its lowest possible point.
    drift, tip = r["energy_error"], r["tip_height"]
    assert np.median(drift) < 1e-5 and drift.max() < 1e-3, (np.median(drift), drift.max())
    lowest = -(2.0 + r["length_ratios"][:, None])  # rows: length ratio
    assert np.all(tip < 0) and np.all(tip > lowest), (tip.min(), tip.max())
    print("ok example")

    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.chdir(NOTEBOOKS)
    ns = run_notebook("07_sharded_sweep.ipynb", {"N_SIDE": 8, "DT": 0.05, "T_FINAL": 0.5, "SAVE_FIGURE": False}, monkeypatch)
    monkeypatch.undo()
    assert len(ns["out"].sharding.device_set) == 4 and ns["max_abs_difference"] <= 1e-12
    print("ok notebook")
    """
)


def test_sharded_sweep_example_and_notebook(tmp_path):
    run = run_on_cpu_devices(SCRIPT, tmp_path / "sharded_sweep_check.py")
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    assert [line for line in run.stdout.splitlines() if line.startswith("ok ")] == ["ok example", "ok notebook"], run.stdout
