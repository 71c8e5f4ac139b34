"""OpenSim 4.6's numbers for every force path of the .osim test models (tests/paths/test_osim_paths.py reads them).

    python tests/paths/generate_path_golden.py          # needs opensim 4.6 (pip install -e ".[golden]")

For each model in tests/models/osim (arm26, gait9dof18musc, gait14dof22musc, MoBL_ARMS), at N_STATES random
states (every unlocked coordinate uniform in its range, locked ones at their default values, speeds
normal(0, 1); not assembled: a path's numbers need no constraint to hold), it records each coordinate's
value and speed, and for every force with a GeometryPath (muscles, path actuators, ligaments, path springs)
its ``getLength``, ``getLengtheningSpeed`` and ``computeMomentArm`` about every coordinate (OpenSim's
MomentArmSolver: the generalized force of a unit tension, projected on the coupling vector of the
constraints), and whether the path has wrap objects. Writes tests/paths/golden/osim_paths.json.

Also a FunctionBasedPath (OpenSim 4.6's, as Moco fits them): arm26 with a PathActuator whose path length is a
MultivariatePolynomialFunction (dimension 2, order 3, random coefficients) of r_shoulder_elev and
r_elbow_flex; its length, speed and moment arms at N_STATES random states go under "function_based".
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import opensim as osim

HERE = pathlib.Path(__file__).parent
MODELS = HERE.parent / "models" / "osim"
NAMES = ("arm26", "gait9dof18musc", "gait14dof22musc", "MoBL_ARMS")
N_STATES = 3


def geometry_path(force):
    for cls in (osim.PathActuator, osim.Ligament, osim.PathSpring):
        f = cls.safeDownCast(force)
        if f is not None:
            return osim.GeometryPath.safeDownCast(f.updPath()) if hasattr(f, "updPath") else f.getGeometryPath()
    return None


def model_numbers(name: str, rng) -> dict:
    model = osim.Model(str(MODELS / f"{name}.osim"))
    state = model.initSystem()
    coords = [model.getCoordinateSet().get(i) for i in range(model.getCoordinateSet().getSize())]
    paths = {}
    for i in range(model.getForceSet().getSize()):
        force = model.getForceSet().get(i)
        path = geometry_path(force)
        if path is not None:
            paths[force.getName()] = path
    states = []
    for _ in range(N_STATES):
        for c in coords:
            if not c.getLocked(state):
                c.setValue(state, float(rng.uniform(c.getRangeMin(), c.getRangeMax())), False)
            c.setSpeedValue(state, float(rng.normal()))
        model.realizeVelocity(state)
        record = {"q": [c.getValue(state) for c in coords], "u": [c.getSpeedValue(state) for c in coords],
                  "paths": {}}
        for force_name, path in paths.items():
            record["paths"][force_name] = {
                "length": path.getLength(state),
                "speed": path.getLengtheningSpeed(state),
                "moment_arms": [path.computeMomentArm(state, c) for c in coords],
            }
        states.append(record)
    wrapped = {n: p.getWrapSet().getSize() > 0 for n, p in paths.items()}
    return {"coordinates": [c.getName() for c in coords], "wrapped": wrapped, "states": states}


def function_based_numbers(rng) -> dict:
    model = osim.Model(str(MODELS / "arm26.osim"))
    coefficients = rng.normal(size=10) * 0.01
    coefficients[0] = 0.3
    vector = osim.Vector(len(coefficients), 0.0)
    for i, c in enumerate(coefficients):
        vector.set(i, float(c))
    path = osim.FunctionBasedPath()
    path.setLengthFunction(osim.MultivariatePolynomialFunction(vector, 2, 3))
    names = osim.StdVectorString()
    for c in ("/jointset/r_shoulder/r_shoulder_elev", "/jointset/r_elbow/r_elbow_flex"):
        names.append(c)
    path.setCoordinatePaths(names)
    actuator = osim.PathActuator()
    actuator.setName("polynomial_path")
    actuator.set_path(path)
    model.addForce(actuator)
    state = model.initSystem()
    coords = [model.getCoordinateSet().get(i) for i in range(model.getCoordinateSet().getSize())]
    path = actuator.getPath()
    states = []
    for _ in range(N_STATES):
        for c in coords:
            c.setValue(state, float(rng.uniform(c.getRangeMin(), c.getRangeMax())), False)
            c.setSpeedValue(state, float(rng.normal()))
        model.realizeVelocity(state)
        states.append({"q": [c.getValue(state) for c in coords], "u": [c.getSpeedValue(state) for c in coords],
                       "length": path.getLength(state), "speed": path.getLengtheningSpeed(state),
                       "moment_arms": [path.computeMomentArm(state, c) for c in coords]})
    return {"coordinates": [c.getName() for c in coords], "dimension": 2, "order": 3,
            "coefficients": [float(c) for c in coefficients], "states": states}


def main():
    rng = np.random.default_rng(35)
    out = {name: model_numbers(name, rng) for name in NAMES}
    out["function_based"] = function_based_numbers(rng)
    (HERE / "golden").mkdir(exist_ok=True)
    (HERE / "golden" / "osim_paths.json").write_text(json.dumps(out, indent=1))
    for name, data in ((n, out[n]) for n in NAMES):
        print(name, len(data["wrapped"]), "paths,", sum(data["wrapped"].values()), "wrapped")


if __name__ == "__main__":
    main()
