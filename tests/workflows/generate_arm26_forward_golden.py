"""Regenerate OpenSim 4.6's forward simulation of examples/arm26_forward_simulation.py's protocol.

    pip install -e ".[golden]"        # opensim 4.6 (Simbody 3.9)
    PYTHONPATH=. python3 tests/workflows/generate_arm26_forward_golden.py

Model: tests/models/osim/arm26.osim read by OpenSim itself, with a PrescribedController giving every muscle the
example's excitations (``PROTOCOL`` at each of ``LEVELS``) as PiecewiseConstantFunctions (the flexors are the
example's: BIClong, BICshort, BRA). The default State, ``Model.equilibrateMuscles``, then OpenSim's Manager
(RungeKuttaMerson, accuracy 1e-9) integrating to every FRAME; each frame realized to Dynamics.

Writes tests/workflows/golden/arm26_forward_simulation.json: the muscle names (file order), the levels, the frame
times, and per level and frame the shoulder and elbow angles (deg), each muscle's activation, fiber length (m)
and tendon force (N).
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import opensim as osim

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent)]
from script_runner import load_example  # noqa: E402

example = load_example("arm26_forward_simulation")
FLEXORS = ("BIClong", "BICshort", "BRA")
ACCURACY = 1e-9


def excitation(name, level):
    """The muscle's excitation as OpenSim's PiecewiseConstantFunction of time."""
    f, t = osim.PiecewiseConstantFunction(), 0.0
    for duration, flexor, triceps in example.PROTOCOL:
        share = flexor if name in FLEXORS else triceps
        value = example.EXCITATION_OFF if share is None else share * level
        f.addPoint(t, value)
        t += duration
    f.addPoint(100.0, value)
    return f


def simulate(level):
    model = osim.Model(str(example.ARM26))
    controller = osim.PrescribedController()
    muscles = model.getMuscles()
    names = [muscles.get(i).getName() for i in range(muscles.getSize())]
    for i, name in enumerate(names):
        controller.addActuator(muscles.get(i))
        controller.prescribeControlForActuator(name, excitation(name, level))
    model.addController(controller)
    state = model.initSystem()
    model.equilibrateMuscles(state)
    manager = osim.Manager(model)
    manager.setIntegratorAccuracy(ACCURACY)
    manager.initialize(state)
    coords = model.getCoordinateSet()
    frames = int(round(sum(p[0] for p in example.PROTOCOL) / example.FRAME))
    rows = dict(shoulder_deg=[], elbow_deg=[], activation=[], fiber_length=[], tendon_force=[])
    for k in range(1, frames + 1):
        state = manager.integrate(k * example.FRAME)
        model.realizeDynamics(state)
        rows["shoulder_deg"].append(np.degrees(coords.get("r_shoulder_elev").getValue(state)))
        rows["elbow_deg"].append(np.degrees(coords.get("r_elbow_flex").getValue(state)))
        for key, get in (("activation", "getActivation"), ("fiber_length", "getFiberLength"),
                         ("tendon_force", "getTendonForce")):
            rows[key].append([getattr(muscles.get(i), get)(state) for i in range(len(names))])
    return names, frames, rows


def main():
    out = dict(levels=list(example.LEVELS), accuracy=ACCURACY, lanes=[])
    for level in example.LEVELS:
        names, frames, rows = simulate(level)
        out["lanes"].append(rows)
        print(f"level {level}: elbow max {max(rows['elbow_deg']):.2f} deg, end {rows['elbow_deg'][-1]:.2f} deg")
    out["muscles"] = names
    out["t"] = [example.FRAME * k for k in range(1, frames + 1)]
    (HERE / "golden" / "arm26_forward_simulation.json").write_text(json.dumps(out))


if __name__ == "__main__":
    main()
