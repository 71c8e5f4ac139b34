"""Golden numbers of OpenSim 4.6's muscle equilibria for Millard2012EquilibriumMuscle and DeGrooteFregly2016Muscle
(not run by CI; needs the ``opensim`` package).

The model is arm26 with its muscles replaced (written to ``golden/equilibrium_arm26.osim``):
DeGrooteFregly2016Muscle on TRIlat (fiber damping 0.05, "implicit" tendon dynamics) and BRA (no activation
dynamics) (OpenSim's ``replaceMuscles``), Millard2012EquilibriumMuscle on TRImed (fiber damping 0.1) and
BICshort (no damping, no activation dynamics), each with the Thelen muscle's path and numbers; TRIlong and
BIClong (paths over WrapEllipsoids) are removed. At random states (coordinates uniform within their ranges,
speeds uniform in [-2, 2] rad/s, activations uniform in [0.01, 1], excitations uniform in [0, 1]) each muscle's
``computeEquilibrium`` (what ``Model::equilibrateMuscles`` calls) is run and its path length and speed, the
activation it used, and the equilibrium fiber length, normalized tendon force (DeGroote) and tendon force
recorded (``null`` where OpenSim threw).

Also DeGroote's ``calcEquilibriumResidual`` (implicit tendon compliance) at random (length, speed, activation,
normalized tendon force, its derivative) for each DeGroote muscle; and TRIlat in implicit mode at random states
with random normalized tendon force and implicitderiv_normalized_tendon_force (its discrete variable): its
mechanics, state derivatives and getImplicitResidualNormalizedTendonForce.

Run: ``python3 tests/muscles/generate_equilibrium_golden.py`` from the repository root.
"""

import json
import pathlib

import numpy as np
import opensim as osim

HERE = pathlib.Path(__file__).parent
MODELS = HERE.parent / "models" / "osim"
NUM_STATES = 8
DEGROOTE = {"TRIlat": dict(fiber_damping=0.05, tendon_compliance_dynamics_mode="implicit"),
            "BRA": dict(ignore_activation_dynamics=True)}
MILLARD = {"TRImed": dict(fiber_damping=0.1), "BICshort": dict(fiber_damping=0.0, ignore_activation_dynamics=True)}
REMOVED = ("TRIlong", "BIClong")  # their paths wrap WrapEllipsoids


def build_model() -> osim.Model:
    thelen = osim.Model(str(MODELS / "arm26.osim"))
    model = osim.Model(str(MODELS / "arm26.osim"))
    for name in REMOVED:
        model.updForceSet().remove(model.getForceSet().getIndex(name))
    osim.DeGrooteFregly2016Muscle.replaceMuscles(model)
    for name, props in DEGROOTE.items():
        m = osim.DeGrooteFregly2016Muscle.safeDownCast(model.updForceSet().get(name))
        for key, value in props.items():
            getattr(m, "set_" + key)(value)
    forces = model.updForceSet()
    for name, props in MILLARD.items():
        t = osim.Thelen2003Muscle.safeDownCast(thelen.getForceSet().get(name))
        m = osim.Millard2012EquilibriumMuscle(name, t.getMaxIsometricForce(), t.getOptimalFiberLength(),
                                              t.getTendonSlackLength(), t.getPennationAngleAtOptimalFiberLength())
        m.set_path(t.get_path())
        for key, value in props.items():
            getattr(m, "set_" + key)(value)
        forces.remove(forces.getIndex(name))
        model.addForce(m)
    model.setName("arm26_equilibrium")
    model.finalizeConnections()
    return model


def equilibrium_states(model: osim.Model, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    state = model.initSystem()
    coords = model.getCoordinateSet()
    muscles = [model.getMuscles().get(i) for i in range(model.getMuscles().getSize())]
    slot, start = {}, 0
    for i in range(model.getActuators().getSize()):
        actuator = model.getActuators().get(i)
        slot[actuator.getName()] = start
        start += actuator.numControls()
    records = []
    for _ in range(NUM_STATES):
        for i in range(coords.getSize()):
            c = coords.get(i)
            c.setValue(state, float(rng.uniform(c.getRangeMin(), c.getRangeMax())), False)
            c.setSpeedValue(state, float(rng.uniform(-2.0, 2.0)))
        act = rng.uniform(0.01, 1.0, len(muscles))
        exc = rng.uniform(0.0, 1.0, len(muscles))
        for k, m in enumerate(muscles):
            if not m.get_ignore_activation_dynamics():
                m.setActivation(state, float(act[k]))
            if m.getConcreteClassName() == "Millard2012EquilibriumMuscle":
                m.setStateVariableValue(state, "fiber_length", m.getOptimalFiberLength())
            else:
                m.setStateVariableValue(state, "normalized_tendon_force", 0.5)
        model.realizeVelocity(state)
        controls = model.updControls(state)
        for k, m in enumerate(muscles):
            controls.set(slot[m.getName()], float(exc[k]))
        model.setControls(state, controls)
        rec = {"coordinates": {coords.get(i).getName(): [coords.get(i).getValue(state), coords.get(i).getSpeedValue(state)]
                               for i in range(coords.getSize())}, "muscles": {}}
        for k, m in enumerate(muscles):
            rec["muscles"][m.getName()] = {
                "class": m.getConcreteClassName(), "length": m.getLength(state),
                "lengthening_speed": m.getLengtheningSpeed(state), "activation_state": float(act[k]),
                "excitation": float(exc[k])}
        for m in muscles:
            r = rec["muscles"][m.getName()]
            r["control_seen"] = m.getControl(state)
            try:
                m.computeEquilibrium(state)
                model.realizeVelocity(state)
                r["equilibrium_fiber_length"] = m.getFiberLength(state)
                r["equilibrium_tendon_force"] = m.getTendonForce(state)
                if r["class"] == "DeGrooteFregly2016Muscle":
                    r["equilibrium_normalized_tendon_force"] = m.getStateVariableValue(state, "normalized_tendon_force")
                else:
                    r["equilibrium_fiber_length_state"] = m.getStateVariableValue(state, "fiber_length")
            except Exception as e:  # noqa: BLE001 - OpenSim's MuscleCannotEquilibrate
                r["equilibrium_error"] = str(e).splitlines()[0]
        records.append(rec)
    return {"model": "equilibrium_arm26.osim", "states": records}


def residuals(model: osim.Model, seed: int) -> list:
    """DeGroote's calcEquilibriumResidual at random arguments (lengths within 0.8-1.2 of optimal fiber + slack)."""
    rng = np.random.default_rng(seed)
    model.initSystem()
    out = []
    for name in DEGROOTE:
        m = osim.DeGrooteFregly2016Muscle.safeDownCast(model.getForceSet().get(name))
        for _ in range(6):
            length = float((m.get_optimal_fiber_length() + m.get_tendon_slack_length()) * rng.uniform(0.9, 1.1))
            args = [length, float(rng.uniform(-1, 1)), float(rng.uniform(0.01, 1)), float(rng.uniform(0.05, 1.5)),
                    float(rng.uniform(-5, 5))]
            out.append({"muscle": name, "arguments": args, "residual": m.calcEquilibriumResidual(*args)})
    return out


def implicit_states(model: osim.Model, seed: int) -> list:
    rng = np.random.default_rng(seed)
    state = model.initSystem()
    coords = model.getCoordinateSet()
    m = osim.DeGrooteFregly2016Muscle.safeDownCast(model.getForceSet().get("TRIlat"))
    index = [model.getActuators().get(i).getName() for i in range(model.getActuators().getSize())].index("TRIlat")
    out = []
    for _ in range(NUM_STATES):
        for i in range(coords.getSize()):
            c = coords.get(i)
            c.setValue(state, float(rng.uniform(c.getRangeMin(), c.getRangeMax())), False)
            c.setSpeedValue(state, float(rng.uniform(-2.0, 2.0)))
        r = {"coordinates": {coords.get(i).getName(): [coords.get(i).getValue(state), coords.get(i).getSpeedValue(state)]
                             for i in range(coords.getSize())},
             "activation_state": float(rng.uniform(0.05, 1.0)), "normalized_tendon_force": float(rng.uniform(0.1, 1.2)),
             "normalized_tendon_force_dot": float(rng.uniform(-3.0, 3.0)), "excitation": float(rng.uniform(0.0, 1.0))}
        m.setActivation(state, r["activation_state"])
        m.setNormalizedTendonForce(state, r["normalized_tendon_force"])
        m.setDiscreteVariableValue(state, "implicitderiv_normalized_tendon_force", r["normalized_tendon_force_dot"])
        model.realizeVelocity(state)
        controls = model.updControls(state)
        controls.set(index, r["excitation"])
        model.setControls(state, controls)
        model.realizeAcceleration(state)
        r.update({"length": m.getLength(state), "lengthening_speed": m.getLengtheningSpeed(state),
                  "fiber_length": m.getFiberLength(state), "fiber_velocity": m.getFiberVelocity(state),
                  "tendon_force": m.getTendonForce(state), "active_fiber_force": m.getActiveFiberForce(state),
                  "passive_fiber_force": m.getPassiveFiberForce(state),
                  "activation_dot": m.getStateVariableDerivativeValue(state, "activation"),
                  "state_normalized_tendon_force_dot": m.getStateVariableDerivativeValue(state, "normalized_tendon_force"),
                  "residual": m.getImplicitResidualNormalizedTendonForce(state)})
        out.append(r)
    return out


if __name__ == "__main__":
    model = build_model()
    model.printToXML(str(HERE / "golden" / "equilibrium_arm26.osim"))
    model = osim.Model(str(HERE / "golden" / "equilibrium_arm26.osim"))
    data = equilibrium_states(model, 5)
    data["residuals"] = residuals(model, 6)
    data["implicit"] = implicit_states(model, 7)
    (HERE / "golden" / "equilibrium_muscles.json").write_text(json.dumps(data, indent=1))
    failed = sum("equilibrium_error" in r for s in data["states"] for r in s["muscles"].values())
    print(len(data["states"]), "states,", failed, "equilibria OpenSim could not find")
