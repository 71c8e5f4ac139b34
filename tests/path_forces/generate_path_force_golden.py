"""Golden numbers for tests/path_forces from OpenSim 4.6 (not run by CI; needs the ``opensim`` package).

Writes tests/models/osim/path_forces.osim (two bodies on pin joints and a slider, paths over three bodies) with
RigidTendonMuscles (default curves; pennated with its own SimmSpline curves), Ligaments (default curve; its
own curve), a PathSpring and a PathActuator, and golden/path_forces.json: at random states (coordinates uniform in [-1.2, 1.2] rad or
[-0.1, 0.1] m, speeds normal, excitations and controls uniform in [-0.2, 1.2]) each force's generalized forces alone
(f + J^T F with it on minus with all off) and its path length, speed and tension.

Run: ``python3 tests/path_forces/generate_path_force_golden.py`` from the repository root.
"""

import json
import pathlib
import re
import sys

import numpy as np
import opensim as osim

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "actuators"))
from generate_osim_actuator_golden import generalized_forces, u_slots  # noqa: E402

MODELS = HERE.parent / "models" / "osim"
N_STATES = 6


def _spline(name, x, y):
    s = osim.SimmSpline()
    s.setName(name)
    for a, b in zip(x, y):
        s.addPoint(float(a), float(b))
    return s


def add_path(force, points):
    path = force.updGeometryPath() if hasattr(force, "updGeometryPath") else force.upd_path()
    for k, (frame, p) in enumerate(points):
        path.appendNewPathPoint(f"{force.getName()}_p{k}", frame, osim.Vec3(*p))


def write_model(path):
    m = osim.Model()
    m.setName("path_forces")
    g = m.getGround()
    b1 = osim.Body("b1", 2.0, osim.Vec3(0, -0.2, 0), osim.Inertia(0.1, 0.12, 0.14))
    b2 = osim.Body("b2", 1.5, osim.Vec3(0, -0.15, 0.02), osim.Inertia(0.08, 0.09, 0.1))
    b3 = osim.Body("b3", 0.5, osim.Vec3(0.01, 0, 0), osim.Inertia(0.01, 0.01, 0.01))
    for b in (b1, b2, b3):
        m.addBody(b)
    m.addJoint(osim.PinJoint("shoulder", g, osim.Vec3(0), osim.Vec3(0), b1, osim.Vec3(0, 0.2, 0), osim.Vec3(0)))
    m.addJoint(osim.PinJoint("elbow", b1, osim.Vec3(0, -0.2, 0), osim.Vec3(0.1, 0, 0), b2, osim.Vec3(0, 0.2, 0),
                             osim.Vec3(0)))
    m.addJoint(osim.SliderJoint("slide", b2, osim.Vec3(0, -0.2, 0), osim.Vec3(0, 0, 1.2), b3, osim.Vec3(0),
                                osim.Vec3(0)))
    rtm = osim.RigidTendonMuscle("rtm_default", 300.0, 0.12, 0.47, 0.0)
    add_path(rtm, [(g, (0.05, 0.1, 0.0)), (b1, (0.03, -0.1, 0.01)), (b2, (0.02, 0.1, 0.0))])
    m.addForce(rtm)
    rtp = osim.RigidTendonMuscle("rtm_pennated", 500.0, 0.1, 0.58, 0.35)
    rtp.set_max_contraction_velocity(8.0)
    rtp.set_active_force_length_curve(_spline("afl", [0.3, 0.6, 0.9, 1.0, 1.2, 1.5, 1.8],
                                              [0.0, 0.4, 0.9, 1.0, 0.85, 0.3, 0.0]))
    rtp.set_passive_force_length_curve(_spline("pfl", [0.8, 1.0, 1.2, 1.4, 1.7], [0.0, 0.0, 0.1, 0.5, 1.6]))
    rtp.set_force_velocity_curve(_spline("fv", [-1.0, -0.5, 0.0, 0.5, 1.0], [0.0, 0.3, 1.0, 1.5, 1.7]))
    add_path(rtp, [(b1, (-0.04, 0.15, 0.0)), (b1, (-0.05, -0.15, 0.0)), (b2, (-0.02, 0.12, 0.01)),
                   (b3, (0.0, 0.02, -0.01))])
    m.addForce(rtp)
    lig = osim.Ligament()
    lig.setName("lig_default")
    lig.set_resting_length(0.36)
    lig.set_pcsa_force(800.0)
    add_path(lig, [(b1, (0.02, 0.05, 0.03)), (b2, (0.03, 0.05, -0.02))])
    m.addForce(lig)
    lig2 = osim.Ligament()
    lig2.setName("lig_custom")
    lig2.set_resting_length(0.6)
    lig2.set_pcsa_force(250.0)
    lig2.set_force_length_curve(_spline("lfl", [0.9, 1.0, 1.1, 1.3, 1.6, 2.0], [0.0, 0.0, 0.2, 1.0, 2.5, 3.0]))
    add_path(lig2, [(g, (-0.05, 0.05, 0.0)), (b1, (-0.03, 0.0, 0.02)), (b3, (0.0, -0.01, 0.02))])
    m.addForce(lig2)
    spring = osim.PathSpring("spring", 0.7, 4000.0, 0.5)
    add_path(spring, [(g, (0.06, -0.02, 0.01)), (b2, (0.04, -0.05, 0.0)), (b3, (0.02, 0.0, 0.0))])
    m.addForce(spring)
    actuator = osim.PathActuator()
    actuator.setName("path_actuator")
    actuator.setOptimalForce(150.0)
    add_path(actuator, [(b1, (0.05, 0.1, -0.02)), (b1, (0.06, -0.1, -0.02)), (b2, (0.03, 0.0, 0.01))])
    m.addForce(actuator)
    m.finalizeConnections()
    m.printToXML(str(path))
    path.write_text(re.sub(r"[ \t]*<!--.*?-->[ \t]*\n?", "", path.read_text(), flags=re.S))


def set_muscle_controls(model, s, values):
    model.realizeVelocity(s)
    controls = model.getControls(s)
    for name, x in values.items():
        osim.ScalarActuator.safeDownCast(model.getForceSet().get(name)).addInControls(osim.Vector(1, x), controls)
    model.setControls(s, controls)


def golden(path, rng):
    model = osim.Model(str(path))
    state = model.initSystem()
    forces = [model.getForceSet().get(i) for i in range(model.getForceSet().getSize())]
    coords = list(model.getCoordinateSet())
    matter, slots, out = model.getMatterSubsystem(), u_slots(state, coords), []
    for _ in range(N_STATES):
        s = osim.State(state)
        for c in coords:
            rotational = c.getMotionType() == 1
            c.setValue(s, rng.uniform(-1.2, 1.2) if rotational else rng.uniform(-0.1, 0.1), False)
            c.setSpeedValue(s, rng.normal())
        model.realizeVelocity(s)
        values = {f.getName(): rng.uniform(-0.2, 1.2) for f in forces
                  if f.getConcreteClassName() in ("RigidTendonMuscle", "PathActuator")}
        record = {"q": {c.getName(): c.getValue(s) for c in coords}, "u": {c.getName(): c.getSpeedValue(s) for c in coords},
                  "controls": values, "forces": {}, "paths": {}}
        for f in forces:
            record["forces"][f.getName()] = generalized_forces(model, matter, s, f, slots, values)
        set_muscle_controls(model, s, values)
        model.realizeDynamics(s)
        for f in forces:
            if f.getConcreteClassName() == "RigidTendonMuscle":
                mus = osim.RigidTendonMuscle.safeDownCast(f)
                p = mus.getGeometryPath()
                info = {"tension": mus.getTendonForce(s), "fiber_length": mus.getFiberLength(s),
                        "pennation_angle": mus.getPennationAngle(s), "active_fiber_force": mus.getActiveFiberForce(s),
                        "passive_fiber_force": mus.getPassiveFiberForce(s), "fiber_velocity": mus.getFiberVelocity(s)}
            elif f.getConcreteClassName() == "PathSpring":
                spring = osim.PathSpring.safeDownCast(f)
                p = spring.getGeometryPath()
                info = {"tension": spring.getTension(s)}
            elif f.getConcreteClassName() == "PathActuator":
                actuator = osim.PathActuator.safeDownCast(f)
                p = actuator.getGeometryPath()
                info = {"tension": actuator.computeActuation(s)}
            else:
                lig = osim.Ligament.safeDownCast(f)
                p = osim.GeometryPath.safeDownCast(lig.get_path())
                info = {"tension": lig.getTension(s)}
            record["paths"][f.getName()] = {"length": p.getLength(s), "speed": p.getLengtheningSpeed(s), **info}
        out.append(record)
    return {"file": path.name, "forces": [f.getName() for f in forces], "states": out}


def main():
    rng = np.random.default_rng(36)
    path = MODELS / "path_forces.osim"
    write_model(path)
    (HERE / "golden").mkdir(exist_ok=True)
    (HERE / "golden" / "path_forces.json").write_text(json.dumps(golden(path, rng), indent=1))


if __name__ == "__main__":
    main()
