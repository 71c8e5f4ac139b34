"""OpenSim 4.6's numbers for Moco's squat-to-stand model (tests/io/test_osim_squat_to_stand.py reads them), and the
model as Moco's squat-to-stand example prepares it (examples/moco_style_squat_to_stand.py solves on that file).

    python tests/io/generate_squat_to_stand_golden.py      # needs opensim 4.6 with Moco

1. ``tests/models/osim/squatToStand_3dof9musc.osim`` (Millard2012EquilibriumMuscles with WrapCylinders; a
   CoordinateCouplerConstraint drives the patella's knee_angle_r_beta from knee_angle_r): at N_STATES random
   states (hip, knee, ankle uniform in their ranges, the patella assembled, speeds normal(0, 1)) every
   coordinate's value and speed, the mass matrix (``calcM``, rows in the mobility order recorded beside it),
   and each muscle's path length, lengthening speed and
   ``computeMomentArm`` about hip, knee and ankle.
2. The prepared model, written to ``tests/models/osim/squatToStand_3dof9musc_degroote.osim``: OpenSim's
   ``DeGrooteFregly2016Muscle.replaceMuscles`` (Moco's ModOpReplaceMusclesWithDeGrooteFregly2016), then for every
   muscle what Moco's example helpers (``getMuscleDrivenModel``) set: max isometric force x 2, active force width
   scale 1.5, min control 0, activation dynamics kept; with rigid tendons (``ignore_tendon_compliance``, Moco's
   ModOpIgnoreTendonCompliance). The helpers also ignore soleus's passive fiber force, which jaxbody's importer
   does not model; this file keeps it (both solvers use this same file).
3. On the prepared model, at N_STATES random states (as in 1, activations uniform in [0.05, 1], excitations
   uniform in [0, 1]): ``computeStateVariableDerivatives``: every state variable's derivative by name (the
   speeds' derivatives with the coupler constraint enforced) and each muscle's tendon force; the same for the
   prepared model with its paths' wrap sets emptied ("prepared_unwrapped", the example's default).
Writes tests/io/golden/squat_to_stand.json.
"""

from __future__ import annotations

import json
import pathlib

import sys

import numpy as np
import opensim as osim

HERE = pathlib.Path(__file__).parent
MODELS = HERE.parent / "models" / "osim"
sys.path.insert(0, str(HERE.parents[1] / "examples"))
from moco_style_squat_to_stand import without_wraps  # noqa: E402  (the example's, so both drop the same wraps)
SOURCE = MODELS / "squatToStand_3dof9musc.osim"
PREPARED = MODELS / "squatToStand_3dof9musc_degroote.osim"
INDEPENDENT = ("hip_flexion_r", "knee_angle_r", "ankle_angle_r")
N_STATES = 4
STRENGTH = 2.0
ACTIVE_FORCE_WIDTH_SCALE = 1.5


def random_state(model, state, rng):
    """Hip, knee and ankle uniform in their ranges, speeds normal(0, 1); the patella's knee_angle_r_beta and its
    speed from the coupler (``assemble``, and the coupler function's derivative times the knee's speed)."""
    coords = model.getCoordinateSet()
    for name in INDEPENDENT:
        c = coords.get(name)
        c.setValue(state, float(rng.uniform(c.getRangeMin(), c.getRangeMax())), False)
    model.assemble(state)
    for name in INDEPENDENT:
        coords.get(name).setSpeedValue(state, float(rng.normal()))
    coupler = osim.CoordinateCouplerConstraint.safeDownCast(model.getConstraintSet().get(0))
    knee = osim.Vector(1, coords.get("knee_angle_r").getValue(state))
    slope = coupler.getFunction().calcDerivative(osim.StdVectorInt([0]), knee)
    coords.get("knee_angle_r_beta").setSpeedValue(state, slope * coords.get("knee_angle_r").getSpeedValue(state))
    return state


def coordinates(model, state):
    coords = [model.getCoordinateSet().get(i) for i in range(model.getCoordinateSet().getSize())]
    return ({c.getName(): c.getValue(state) for c in coords}, {c.getName(): c.getSpeedValue(state) for c in coords})


def mobility_order(model, state):
    """The coordinate names in Simbody's mobility (u) order, the order of ``calcM``'s rows."""
    coords = [model.getCoordinateSet().get(i) for i in range(model.getCoordinateSet().getSize())]
    probe = osim.State(state)
    probe.setU(osim.Vector(probe.getNU(), 0.0))
    names = [None] * probe.getNU()
    for i, c in enumerate(coords):
        c.setSpeedValue(probe, 1.0 + i)
        u = np.array([probe.getU().get(j) for j in range(probe.getNU())])
        names[int(np.flatnonzero(u == 1.0 + i)[0])] = c.getName()
    return names


def original_numbers(rng) -> dict:
    model = osim.Model(str(SOURCE))
    state = model.initSystem()
    matter = model.getMatterSubsystem()
    muscles = [model.getMuscles().get(i) for i in range(model.getMuscles().getSize())]
    coords = model.getCoordinateSet()
    records = []
    for _ in range(N_STATES):
        random_state(model, state, rng)
        model.realizeVelocity(state)
        q, u = coordinates(model, state)
        M = osim.Matrix()
        matter.calcM(state, M)
        records.append({
            "q": q, "u": u, "M": [[M.get(i, j) for j in range(M.ncol())] for i in range(M.nrow())],
            "mobility_coordinates": mobility_order(model, state),
            "paths": {m.getName(): {"length": m.getGeometryPath().getLength(state),
                                    "speed": m.getGeometryPath().getLengtheningSpeed(state),
                                    "moment_arms": {c: m.getGeometryPath().computeMomentArm(state, coords.get(c))
                                                    for c in INDEPENDENT}} for m in muscles}})
    return {"states": records, "wrapped": {m.getName(): m.getGeometryPath().getWrapSet().getSize() > 0
                                           for m in muscles}}


def prepared_model():
    model = osim.Model(str(SOURCE))
    model.finalizeConnections()
    osim.DeGrooteFregly2016Muscle.replaceMuscles(model)
    for i in range(model.getMuscles().getSize()):
        muscle = osim.DeGrooteFregly2016Muscle.safeDownCast(model.updMuscles().get(i))
        muscle.setMinControl(0.0)
        muscle.setMaxControl(1.0)
        muscle.set_ignore_activation_dynamics(False)
        muscle.set_ignore_tendon_compliance(True)
        muscle.set_max_isometric_force(STRENGTH * muscle.get_max_isometric_force())
        muscle.set_active_force_width_scale(ACTIVE_FORCE_WIDTH_SCALE)
    model.finalizeConnections()
    model.initSystem()
    return model


def prepared_numbers(model, rng) -> dict:
    state = model.initSystem()
    muscles = [osim.DeGrooteFregly2016Muscle.safeDownCast(model.getMuscles().get(i))
               for i in range(model.getMuscles().getSize())]
    array = model.getStateVariableNames()
    names = [array.get(i) for i in range(array.getSize())]
    records = []
    for _ in range(N_STATES):
        random_state(model, state, rng)
        activations = {m.getName(): float(rng.uniform(0.05, 1.0)) for m in muscles}
        excitations = {m.getName(): float(rng.uniform(0.0, 1.0)) for m in muscles}
        for m in muscles:
            m.setActivation(state, activations[m.getName()])
        model.realizeVelocity(state)
        controls = model.getControls(state)
        for i, m in enumerate(muscles):
            controls.set(i, excitations[m.getName()])
        model.setControls(state, controls)
        model.realizeAcceleration(state)
        q, u = coordinates(model, state)
        records.append({"q": q, "u": u, "activations": activations, "excitations": excitations,
                        "derivatives": {n: model.getStateVariableDerivativeValue(state, n) for n in names},
                        "tendon_force": {m.getName(): m.getTendonForce(state) for m in muscles}})
    return {"states": records, "control_order": [m.getName() for m in muscles]}


def main():
    rng = np.random.default_rng(2020)
    out = {"opensim_version": osim.__version__, "original": original_numbers(rng)}
    model = prepared_model()
    model.printToXML(str(PREPARED))
    out["prepared"] = prepared_numbers(osim.Model(str(PREPARED)), rng)
    unwrapped = HERE / "golden" / "squat_to_stand_unwrapped.osim"
    unwrapped.write_text(without_wraps(PREPARED.read_text()))
    out["prepared_unwrapped"] = prepared_numbers(osim.Model(str(unwrapped)), rng)
    unwrapped.unlink()
    (HERE / "golden").mkdir(exist_ok=True)
    (HERE / "golden" / "squat_to_stand.json").write_text(json.dumps(out, indent=1))
    print(len(out["original"]["states"]), "states;", sum(out["original"]["wrapped"].values()), "wrapped paths")


if __name__ == "__main__":
    main()
