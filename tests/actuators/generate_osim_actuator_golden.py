"""OpenSim 4.6's generalized forces of its actuators and passive forces, for tests/actuators/test_osim_actuators.py.

    python tests/actuators/generate_osim_actuator_golden.py          # needs opensim 4.6 (pip install -e ".[golden]")

1. Writes tests/models/osim/actuators.osim with OpenSim's API (printToXML): a Pin, a Slider, a Ball and a Free
   joint, and one of each force jaxbody imports (jaxbody.io.osim_actuators): CoordinateActuator,
   ActivationCoordinateActuator, PointActuator (body-fixed and global point/direction), TorqueActuator,
   SpringGeneralizedForce, CoordinateLimitForce (rotational with its dissipated energy, and translational),
   PointToPointSpring, BushingForce and ExpressionBasedBushingForce between offset frames, and
   ExpressionBasedCoordinateForce, with numbers chosen to be distinguishable (no OpenSim default left).
2. For that model, MoBL_ARMS (its CoordinateLimitForces, CoordinateActuator, PointActuator, TorqueActuator) and
   gait9dof18musc (CoordinateLimitForces on CustomJoint coordinates): at random states (coordinates uniform in
   [-1.2, 1.2] rad or [-0.3, 0.3] m, speeds normal(0, 1), controls uniform(-1, 1), activations uniform(0, 1)),
   each force alone (``Model::calcForceContributionsSum`` over its Simbody force index... computed here as the
   difference of the system's Dynamics-stage forces with only that force applying and with none) as
   generalized forces ``f + J^T F`` per coordinate (Simbody's ``multiplyBySystemJacobianTranspose``), and the
   derivatives of the ActivationCoordinateActuator's activation and of the limit force's dissipated energy.
   Writes tests/actuators/golden/osim_actuators.json.
"""

from __future__ import annotations

import json
import pathlib
import re

import numpy as np
import opensim as osim

HERE = pathlib.Path(__file__).parent
MODELS = HERE.parent / "models" / "osim"
N_STATES = 4


def body(name, mass, rng):
    return osim.Body(name, mass, osim.Vec3(*rng.uniform(-0.1, 0.1, 3)), osim.Inertia(0.1, 0.12, 0.14, 0.01, 0.0, 0.02))


def transform(p, r):
    """The offset frame OpenSim's upgrade writes for a location p and body-fixed X-Y-Z angles r."""
    R = osim.Rotation(osim.BodyRotationSequence, r[0], osim.CoordinateAxis(0), r[1], osim.CoordinateAxis(1),
                      r[2], osim.CoordinateAxis(2))
    return osim.Transform(R, osim.Vec3(*p))


def write_model(path, rng):
    m = osim.Model()
    m.setName("actuators")
    g = m.getGround()
    b1, b2, b3, b4 = (body(n, 1.0 + i, rng) for i, n in enumerate(("b1", "b2", "b3", "b4")))
    for b in (b1, b2, b3, b4):
        m.addBody(b)
    m.addJoint(osim.PinJoint("pin", g, osim.Vec3(0, 0.1, 0), osim.Vec3(0.1, 0, 0), b1, osim.Vec3(0, 0.3, 0), osim.Vec3(0)))
    m.addJoint(osim.SliderJoint("slide", b1, osim.Vec3(0.1, -0.2, 0), osim.Vec3(0, 0, 0.2), b2, osim.Vec3(0), osim.Vec3(0)))
    m.addJoint(osim.BallJoint("ball", b2, osim.Vec3(0, -0.3, 0), osim.Vec3(0), b3, osim.Vec3(0, 0.2, 0.1), osim.Vec3(0)))
    m.addJoint(osim.FreeJoint("free", g, osim.Vec3(0.5, 0, 0), osim.Vec3(0), b4, osim.Vec3(0), osim.Vec3(0)))
    ca = osim.CoordinateActuator("pin_coord_0"); ca.setName("ca_pin"); ca.setOptimalForce(7.0); m.addForce(ca)
    aca = osim.ActivationCoordinateActuator("slide_coord_0"); aca.setName("aca_slide"); aca.setOptimalForce(5.0)
    aca.set_activation_time_constant(0.03); aca.set_default_activation(0.2); m.addForce(aca)
    pa = osim.PointActuator("b4"); pa.setName("pa"); pa.set_point(osim.Vec3(0.1, 0.2, 0.3))
    pa.set_direction(osim.Vec3(1, 2, 2)); pa.setOptimalForce(3.0); m.addForce(pa)
    pg = osim.PointActuator("b3"); pg.setName("pa_global"); pg.set_point(osim.Vec3(0.2, -0.1, 0.05))
    pg.set_point_is_global(True); pg.set_direction(osim.Vec3(0, 1, -1)); pg.set_force_is_global(True)
    pg.setOptimalForce(4.0); m.addForce(pg)
    ta = osim.TorqueActuator(b4, b1, osim.Vec3(0, 1, 1), False); ta.setName("ta"); ta.setOptimalForce(2.0); m.addForce(ta)
    sgf = osim.SpringGeneralizedForce("ball_coord_1"); sgf.setName("sgf"); sgf.setStiffness(3.0)
    sgf.setRestLength(0.2); sgf.setViscosity(0.5); m.addForce(sgf)
    clf = osim.CoordinateLimitForce("pin_coord_0", 20.0, 2.0, -30.0, 3.0, 0.1, 15.0, True); clf.setName("clf_pin")
    m.addForce(clf)
    cls = osim.CoordinateLimitForce("slide_coord_0", 0.1, 50.0, -0.1, 40.0, 2.0, 0.05); cls.setName("clf_slide")
    m.addForce(cls)
    p2p = osim.PointToPointSpring(b2, osim.Vec3(0.1, 0, 0), b4, osim.Vec3(0, 0.1, -0.1), 20.0, 0.3); p2p.setName("p2p")
    m.addForce(p2p)
    bushing = osim.BushingForce("bushing", b1, transform((0.1, 0.0, 0.2), (0.1, 0.2, 0.3)),
                                b3, transform((0.0, -0.1, 0.0), (-0.2, 0.1, 0.0)),
                                osim.Vec3(10, 20, 30), osim.Vec3(100, 200, 300), osim.Vec3(1, 2, 3), osim.Vec3(4, 5, 6))
    m.addForce(bushing)
    ebcf = osim.ExpressionBasedCoordinateForce("ball_coord_2", "-10*q^3 + 2*sin(qdot) - max(q, 0.1)*step(q) + abs(qdot)/3")
    ebcf.setName("ebcf"); m.addForce(ebcf)
    ebbf = osim.ExpressionBasedBushingForce("ebbf", b2, osim.Vec3(0, 0.1, 0), osim.Vec3(0.2, 0, 0.1),
                                            b4, osim.Vec3(0.05, 0, 0), osim.Vec3(0, 0.3, 0))
    ebbf.setMxExpression("10*theta_x + theta_y^2"); ebbf.setMyExpression("-2*theta_y*cos(delta_x)")
    ebbf.setMzExpression("5*tanh(theta_z)"); ebbf.setFxExpression("100*delta_x - 3*delta_y*delta_z")
    ebbf.setFyExpression("exp(delta_y) - 1"); ebbf.setFzExpression("sqrt(1 + delta_z^2) * 50 * delta_z")
    ebbf.set_rotational_damping(osim.Vec3(0.1, 0.2, 0.3)); ebbf.set_translational_damping(osim.Vec3(1, 2, 3))
    m.addForce(ebbf)
    m.finalizeConnections()
    m.printToXML(str(path))
    path.write_text(re.sub(r"[ \t]*<!--.*?-->[ \t]*\n?", "", path.read_text(), flags=re.S))


def vector(v):
    return np.array([v.get(i) for i in range(v.size())])


def model_golden(path, rng, names=None):
    model = osim.Model(str(path))
    state = model.initSystem()
    forces = model.getForceSet()
    chosen = [forces.get(i) for i in range(forces.getSize())
              if forces.get(i).getConcreteClassName() in KINDS and (names is None or forces.get(i).getName() in names)]
    coords = list(model.getCoordinateSet())
    matter, out = model.getMatterSubsystem(), []
    slots = u_slots(state, coords)
    for _ in range(N_STATES):
        s = osim.State(state)
        q = {}
        for c in coords:
            c.setLocked(s, False)
            rotational = c.getMotionType() == 1
            c.setValue(s, rng.uniform(-1.2, 1.2) if rotational else rng.uniform(-0.3, 0.3), False)
            c.setSpeedValue(s, rng.normal())
        model.realizeVelocity(s)
        q = {c.getName(): c.getValue(s) for c in coords}
        u = {c.getName(): c.getSpeedValue(s) for c in coords}
        values = {f.getName(): rng.uniform(-1, 1) for f in chosen if f.getConcreteClassName() in ACTUATORS}
        activations = {}
        for f in chosen:
            if f.getConcreteClassName() == "ActivationCoordinateActuator":
                a = rng.uniform(0, 1)
                f.setStateVariableValue(s, "activation", a)
                activations[f.getName()] = a
        record = {"q": q, "u": u, "controls": values, "activations": activations, "forces": {}, "derivatives": {}}
        for f in chosen:
            record["forces"][f.getName()] = generalized_forces(model, matter, s, f, slots, values)
        for f in chosen:
            names = f.getStateVariableNames()
            for sv in (names.get(i) for i in range(names.getSize())):
                for other in model.getForceSet():
                    other.setAppliesForce(s, True)
                set_controls(model, s, values)
                model.realizeAcceleration(s)
                record["derivatives"][sv] = f.getStateVariableDerivativeValue(s, sv)
        out.append(record)
    return {"file": path.name, "forces": [f.getName() for f in chosen], "states": out}


def set_controls(model, s, values):
    """Set the actuators' controls (by name) in a State realized to Velocity; anything that invalidates Instance
    or Velocity (setAppliesForce) drops them, so this comes after."""
    model.realizeVelocity(s)
    controls = model.getControls(s)
    for name, x in values.items():
        osim.ScalarActuator.safeDownCast(model.getForceSet().get(name)).addInControls(osim.Vector(1, x), controls)
    model.setControls(s, controls)


def generalized_forces(model, matter, s, force, slots, values):
    """{coordinate: generalized force} of ``force`` alone: (f + J^T F) with it on, minus that with all off."""
    def total(on):
        for f in model.getForceSet():
            f.setAppliesForce(s, on is not None and f.getName() == on)
        set_controls(model, s, values)
        model.realizeDynamics(s)
        g = osim.Vector()
        matter.multiplyBySystemJacobianTranspose(s, model.getRigidBodyForces(s), g)
        return vector(g) + vector(model.getMobilityForces(s))
    tau = total(force.getName()) - total(None)
    for f in model.getForceSet():
        f.setAppliesForce(s, True)
    return {name: float(tau[i]) for name, i in slots.items()}


def u_slots(state, coords):
    """Each coordinate's index in OpenSim's u (set its speed alone and see which entry moves)."""
    slots = {}
    for c in coords:
        s = osim.State(state)
        s.setU(osim.Vector(s.getNU(), 0.0))
        c.setSpeedValue(s, 0.25)
        slots[c.getName()] = int(np.flatnonzero(vector(s.getU()) == 0.25)[0])
    return slots


ACTUATORS = ("CoordinateActuator", "ActivationCoordinateActuator", "PointActuator", "TorqueActuator")
KINDS = ACTUATORS + ("SpringGeneralizedForce", "CoordinateLimitForce", "PointToPointSpring", "BushingForce",
                     "ExpressionBasedCoordinateForce", "ExpressionBasedBushingForce")


def main():
    rng = np.random.default_rng(35)
    write_model(MODELS / "actuators.osim", rng)
    golden = {name: model_golden(MODELS / f"{name}.osim", rng) for name in ("actuators", "MoBL_ARMS", "gait9dof18musc")}
    (HERE / "golden").mkdir(exist_ok=True)
    (HERE / "golden" / "osim_actuators.json").write_text(json.dumps(golden, indent=1))


if __name__ == "__main__":
    main()
