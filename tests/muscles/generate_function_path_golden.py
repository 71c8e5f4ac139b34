"""Golden numbers of OpenSim 4.6's FunctionBasedPath forces read from a .osim (not run by CI; needs ``opensim``).

Writes ``golden/function_paths.osim``: arm26's skeleton with its forces replaced by three forces on
FunctionBasedPaths whose length functions are MultivariatePolynomialFunctions of r_shoulder_elev and
r_elbow_flex (coefficients set by hand: a 0.3 m path with random small terms): a DeGrooteFregly2016Muscle
"poly_degroote" (order 3), a Thelen2003Muscle "poly_thelen" (order 2), a PathActuator "poly_actuator"
(order 4, optimal force 50 N) and a PathActuator "poly_explicit" (order 2, optimal force 30 N) whose path also
has moment_arm_functions (two order-2 polynomials, not the length's derivatives) and a
lengthening_speed_function (an order-2 polynomial of the coordinates and their speeds), which OpenSim uses in
place of the length's derivatives. And ``golden/function_paths.json``: at random states (coordinates uniform in
their ranges, speeds uniform in [-2, 2] rad/s, activations uniform in [0.05, 1], the Thelen fiber length
uniform in [0.8, 1.2] optimal, DeGroote's normalized tendon force uniform in [0.1, 1], controls uniform in
[0, 1]) each force's path length, lengthening speed and moment arms, the muscles' fiber length and velocity,
tendon force and state derivatives, the actuator's tension, and the model's generalized accelerations.

Run: ``python3 tests/muscles/generate_function_path_golden.py`` from the repository root.
"""

import json
import math
import pathlib

import numpy as np
import opensim as osim

HERE = pathlib.Path(__file__).parent
MODELS = HERE.parent / "models" / "osim"
COORDINATES = ("/jointset/r_shoulder/r_shoulder_elev", "/jointset/r_elbow/r_elbow_flex")
NUM_STATES = 6


def _polynomial(rng, dimension: int, order: int, constant: float) -> osim.MultivariatePolynomialFunction:
    count = math.comb(dimension + order, order)
    coefficients = rng.normal(size=count) * 0.01
    coefficients[0] = constant
    vector = osim.Vector(count, 0.0)
    for i, c in enumerate(coefficients):
        vector.set(i, float(c))
    return osim.MultivariatePolynomialFunction(vector, dimension, order)


def _path(rng, order: int, explicit: bool = False) -> osim.FunctionBasedPath:
    path = osim.FunctionBasedPath()
    path.setName("path")
    path.setLengthFunction(_polynomial(rng, 2, order, 0.3))
    if explicit:  # moment arms and speed from their own functions, as OpenSim then uses them
        for _ in range(2):
            path.appendMomentArmFunction(_polynomial(rng, 2, 2, 0.02))
        path.setLengtheningSpeedFunction(_polynomial(rng, 4, 2, 0.01))
    names = osim.StdVectorString()
    for c in COORDINATES:
        names.append(c)
    path.setCoordinatePaths(names)
    return path


def build_model(rng) -> osim.Model:
    model = osim.Model(str(MODELS / "arm26.osim"))
    model.updForceSet().clearAndDestroy()
    degroote = osim.DeGrooteFregly2016Muscle()
    degroote.setName("poly_degroote")
    degroote.set_max_isometric_force(800.0)
    degroote.set_optimal_fiber_length(0.12)
    degroote.set_tendon_slack_length(0.17)
    degroote.set_pennation_angle_at_optimal(0.1)
    degroote.set_fiber_damping(0.01)
    degroote.set_path(_path(rng, 3))
    model.addForce(degroote)
    thelen = osim.Thelen2003Muscle("poly_thelen", 600.0, 0.1, 0.19, 0.15)
    thelen.set_path(_path(rng, 2))
    model.addForce(thelen)
    actuator = osim.PathActuator()
    actuator.setName("poly_actuator")
    actuator.set_optimal_force(50.0)
    actuator.set_path(_path(rng, 4))
    model.addForce(actuator)
    explicit = osim.PathActuator()
    explicit.setName("poly_explicit")
    explicit.set_optimal_force(30.0)
    explicit.set_path(_path(rng, 2, explicit=True))
    model.addForce(explicit)
    model.setName("function_paths")
    model.finalizeConnections()
    return model


def numbers(model: osim.Model, rng) -> dict:
    state = model.initSystem()
    coords = [model.getCoordinateSet().get(i) for i in range(model.getCoordinateSet().getSize())]
    degroote = osim.DeGrooteFregly2016Muscle.safeDownCast(model.getForceSet().get("poly_degroote"))
    thelen = osim.Thelen2003Muscle.safeDownCast(model.getForceSet().get("poly_thelen"))
    actuator = osim.PathActuator.safeDownCast(model.getForceSet().get("poly_actuator"))
    explicit = osim.PathActuator.safeDownCast(model.getForceSet().get("poly_explicit"))
    records = []
    for _ in range(NUM_STATES):
        for c in coords:
            c.setValue(state, float(rng.uniform(c.getRangeMin(), c.getRangeMax())), False)
            c.setSpeedValue(state, float(rng.uniform(-2.0, 2.0)))
        z = {"poly_degroote": [float(rng.uniform(0.05, 1.0)), float(rng.uniform(0.1, 1.0))],
             "poly_thelen": [float(rng.uniform(0.05, 1.0)), float(rng.uniform(0.8, 1.2) * thelen.getOptimalFiberLength())]}
        degroote.setActivation(state, z["poly_degroote"][0])
        degroote.setNormalizedTendonForce(state, z["poly_degroote"][1])
        thelen.setActivation(state, z["poly_thelen"][0])
        thelen.setFiberLength(state, z["poly_thelen"][1])
        controls_values = [float(v) for v in rng.uniform(0.0, 1.0, 4)]
        model.realizeVelocity(state)
        controls = model.updControls(state)
        for i, v in enumerate(controls_values):
            controls.set(i, v)
        model.setControls(state, controls)
        model.realizeAcceleration(state)
        rec = {"q": {c.getName(): c.getValue(state) for c in coords},
               "u": {c.getName(): c.getSpeedValue(state) for c in coords},
               "z": z, "controls": controls_values,
               "udot": {c.getName(): c.getAccelerationValue(state) for c in coords}, "forces": {}}
        for force in (degroote, thelen, actuator, explicit):
            rec["forces"][force.getName()] = {
                "length": force.getLength(state), "lengthening_speed": force.getLengtheningSpeed(state),
                "moment_arms": {c.getName(): force.computeMomentArm(state, c) for c in coords}}
        for m, second in ((degroote, "normalized_tendon_force"), (thelen, "fiber_length")):
            rec["forces"][m.getName()].update({
                "fiber_length": m.getFiberLength(state), "fiber_velocity": m.getFiberVelocity(state),
                "tendon_force": m.getTendonForce(state),
                "activation_dot": m.getStateVariableDerivativeValue(state, "activation"),
                "second_state_dot": m.getStateVariableDerivativeValue(state, second)})
        rec["forces"]["poly_actuator"]["tension"] = actuator.getActuation(state)
        rec["forces"]["poly_explicit"]["tension"] = explicit.getActuation(state)
        records.append(rec)
    return {"coordinates": [c.getName() for c in coords], "states": records}


if __name__ == "__main__":
    rng = np.random.default_rng(7)
    model = build_model(rng)
    model.printToXML(str(HERE / "golden" / "function_paths.osim"))
    model = osim.Model(str(HERE / "golden" / "function_paths.osim"))
    (HERE / "golden" / "function_paths.json").write_text(json.dumps(numbers(model, rng), indent=1))
    print("wrote function_paths.osim and function_paths.json")
