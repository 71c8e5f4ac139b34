"""Regenerate OpenSim 4.6's StaticOptimization of the gait cycle in examples/static_optimization_gait.py.

    pip install -e ".[golden]"        # opensim 4.6 (Simbody 3.9)
    PYTHONPATH=. python3 tests/workflows/generate_static_optimization_golden.py

Model: tests/models/osim/gait9dof18musc.osim read by OpenSim itself, every force but its 18 muscles removed
(contact and coordinate-limit forces, as the example leaves them out) and the example's ``RESERVES`` added as
CoordinateActuators (optimal force as given, controls unbounded). States: the example's ``coordinate_trajectory``
with OpenSim's coordinate metadata, q and u = qdot, sampled every millisecond over the cycle. OpenSim's
StaticOptimization analysis (its defaults: activation exponent 2, use_muscle_physiology, IPOPT) runs through the
AnalyzeTool over every sample (convergence criterion 1e-4, at most 100 iterations; timed: ``seconds_per_frame``,
one thread). Its desired accelerations are the derivatives of the GCV splines (degree 5) it fits to the
states, not the exact qddot (jaxbody uses the exact qddot).

Writes tests/workflows/golden/gait9dof18musc_static_optimization.json: the muscle names, the example's
GOLDEN_TIMES, the muscles' activations (frame x muscle) and the reserves' controls by coordinate.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
import tempfile
import time

import numpy as np
import opensim as osim

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent)]
from script_runner import load_example  # noqa: E402

example = load_example("static_optimization_gait")
_KEEP = []
SAMPLES = 1001  # states every ms over the cycle, both ends included


def build_model():
    """gait9dof18musc with its muscles only plus the example's reserve CoordinateActuators."""
    model = osim.Model(str(example.MODEL_FILE))
    forces = model.updForceSet()
    for k in reversed(range(forces.getSize())):
        if osim.Muscle.safeDownCast(forces.get(k)) is None:
            forces.remove(k)
    for coordinate, optimal_force in example.RESERVES.items():
        reserve = osim.CoordinateActuator(coordinate)
        reserve.setName(f"reserve_{coordinate}")
        reserve.setOptimalForce(optimal_force)
        reserve.setMinControl(-np.inf)
        reserve.setMaxControl(np.inf)
        model.addForce(reserve)
    model.finalizeConnections()
    for m in model.getMuscles():
        assert (m.getMinControl(), m.getMaxControl()) == example.MUSCLE_BOUNDS, m.getName()
    return model


def write_states(model, path):
    """The gait cycle's q and u at SAMPLES times as an OpenSim states file."""
    state = model.initSystem()
    times = np.linspace(0.0, example.CYCLE, SAMPLES)
    coords = list(model.getCoordinateSet())
    names = [c.getName() for c in coords]
    columns = {}
    for c in coords:
        q, qdot, _ = example.coordinate_trajectory(sorted(names).index(c.getName()), c.getDefaultValue(),
                                                     c.getRangeMin(), c.getRangeMax(), c.getDefaultLocked(), times)
        path_name = c.getAbsolutePathString()
        columns[f"{path_name}/value"], columns[f"{path_name}/speed"] = q, qdot
    # every state variable, in the model's order (the AnalyzeTool requires them all): the muscles' activation and
    # fiber length at their defaults (StaticOptimization sets only q and u from the states)
    state_names = model.getStateVariableNames()
    names_all = [state_names.get(k) for k in range(state_names.getSize())]
    defaults = model.getStateVariableValues(state)
    columns = {n: columns.get(n, np.full(len(times), defaults.get(k))) for k, n in enumerate(names_all)}
    labels = ["time", *columns]
    rows = np.column_stack([times, *columns.values()])
    header = f"states\nversion=1\nnRows={len(rows)}\nnColumns={len(labels)}\ninDegrees=no\nendheader\n"
    path.write_text(header + "\t".join(labels) + "\n" + "\n".join("\t".join(f"{v:.17g}" for v in r) for r in rows))


def run_static_optimization(states_file, results_dir):
    """(activation table rows at GOLDEN_TIMES by column name, wall seconds of the AnalyzeTool run, frames, muscle
    names)."""
    model = build_model()
    model.initSystem()
    so = osim.StaticOptimization()
    so.setName("so")
    model.addAnalysis(so)
    tool = osim.AnalyzeTool(model)
    tool.setName("gait")
    tool.setModel(model)
    states = osim.Storage(str(states_file))
    tool.setStatesStorage(states)
    tool.setInitialTime(0.0)
    tool.setFinalTime(example.CYCLE)
    tool.setResultsDir(str(results_dir))
    t0 = time.perf_counter()
    tool.run()
    wall = time.perf_counter() - t0
    _KEEP.append((model, so, tool, states))  # the model owns the analysis: never let Python free them
    table = osim.TimeSeriesTable(str(results_dir / "gait_so_activation.sto"))
    times = np.array(table.getIndependentColumn())
    labels = list(table.getColumnLabels())
    rows = {}
    for t in example.GOLDEN_TIMES:
        k = int(np.argmin(np.abs(times - t)))
        assert abs(times[k] - t) < 1e-9, (times[k], t)
        row = table.getRowAtIndex(k)
        rows[t] = {label: row[j] for j, label in enumerate(labels)}
    return rows, wall, len(times), [m.getName() for m in model.getMuscles()]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        states_file = tmp / "gait_states.sto"
        write_states(build_model(), states_file)
        rows, wall, n_frames, muscles = run_static_optimization(states_file, tmp)
    out = {
        "opensim_version": osim.__version__,
        "muscle_names": muscles,
        "times": list(example.GOLDEN_TIMES),
        "reserves": example.RESERVES,
        "frames": n_frames,
        "seconds_per_frame": wall / n_frames,
        "activations": [[rows[t][m] for m in muscles] for t in example.GOLDEN_TIMES],
        "reserve_controls": {c: [rows[t][f"reserve_{c}"] for t in example.GOLDEN_TIMES] for c in example.RESERVES},
    }
    example.GOLDEN_FILE.parent.mkdir(exist_ok=True)
    example.GOLDEN_FILE.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {example.GOLDEN_FILE}: {n_frames} frames, {1e3 * out['seconds_per_frame']:.2f} ms per frame")


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)  # skip freeing the OpenSim objects that Python and the model both think they own
