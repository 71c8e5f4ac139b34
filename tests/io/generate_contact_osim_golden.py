"""OpenSim 4.6's contact forces for tests/io/test_io_contact_osim.py (needs ``opensim``; not run by the tests).

    python tests/io/generate_contact_osim_golden.py

1. Writes tests/models/osim/contact_forces.osim with OpenSim's API: a free "ball" (ContactSphere r = 0.1 off
   its origin) and a pinned "link" (ContactSphere r = 0.05 at its tip) over a ContactHalfSpace "floor" (normal
   +y) and a tilted ContactHalfSpace "slope"; HuntCrossleyForce "hc" with two ContactParameters (floor and
   ball: 1e6, 1.5, 0.8/0.6/0.1; link tip: 5e5, 0.5, 0.5/0.4/0) and transition velocity 0.05, and
   SmoothSphereHalfSpaceForce "smooth" (ball on the slope) with non-default parameters.
2. At states chosen by depth (penetrating, touching, separated) and velocity (sliding faster than the
   transition velocity, sticking below it), records every coordinate's value and speed, each contact force's
   ``getRecordLabels``/``getRecordValues`` (force and torque on each geometry's body, in Ground, torque about the
   body origin) with the base body of each label, and ``computePotentialEnergy``.
3. The same for tests/models/osim/gait9dof18musc.osim (HuntCrossleyForce foot_r, foot_l: heel and toe spheres
   on a platform) with the pelvis lowered so that the lowest sphere penetrates by the chosen depth.

Writes tests/io/golden/contact_osim.json.
"""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import opensim as osim

HERE = pathlib.Path(__file__).parent
MODELS = HERE.parent / "models" / "osim"
RNG = np.random.default_rng(34)
#: (depth of the lowest sphere (m), speed scale (m/s or rad/s), extra tangential speed of the free body (m/s))
CASES = [(0.003, 0.1, 0.0), (0.0015, 0.2, 0.5), (1e-7, 0.05, 0.0), (-0.01, 0.3, 0.0), (0.002, 0.002, 0.0),
         (0.004, 0.05, -0.3)]


def build_contact_model(path: pathlib.Path):
    m = osim.Model()
    m.setName("contact_forces")
    ball = osim.Body("ball", 2.0, osim.Vec3(0.0), osim.Inertia(0.02, 0.03, 0.025))
    link = osim.Body("link", 1.0, osim.Vec3(0, -0.25, 0), osim.Inertia(0.02, 0.001, 0.02))
    m.addBody(ball)
    m.addBody(link)
    m.addJoint(osim.FreeJoint("ball_free", m.getGround(), ball))
    m.addJoint(osim.PinJoint("link_pin", m.getGround(), osim.Vec3(1.0, 0.54, 0.1), osim.Vec3(0.0, 0.0, 0.0),
                             link, osim.Vec3(0.0), osim.Vec3(0.0)))
    floor = osim.ContactHalfSpace(osim.Vec3(0.0), osim.Vec3(0, 0, -math.pi / 2), m.getGround(), "floor")
    slope = osim.ContactHalfSpace(osim.Vec3(0, 0.01, 0), osim.Vec3(0.1, 0.05, -math.pi / 2 + 0.2), m.getGround(), "slope")
    sphere = osim.ContactSphere(0.1, osim.Vec3(0.01, 0.02, -0.03), ball, "ball_sphere")
    tip = osim.ContactSphere(0.05, osim.Vec3(0, -0.5, 0), link, "link_tip")
    for g in (floor, slope, sphere, tip):
        m.addContactGeometry(g)
    hc = osim.HuntCrossleyForce()
    hc.setName("hc")
    hc.setTransitionVelocity(0.05)
    hc.addGeometry("floor")
    hc.addGeometry("ball_sphere")
    hc.setStiffness(1e6)
    hc.setDissipation(1.5)
    hc.setStaticFriction(0.8)
    hc.setDynamicFriction(0.6)
    hc.setViscousFriction(0.1)
    m.addForce(hc)
    smooth = osim.SmoothSphereHalfSpaceForce("smooth", sphere, slope)
    smooth.set_stiffness(2e6)
    smooth.set_dissipation(2.0)
    smooth.set_static_friction(0.9)
    smooth.set_dynamic_friction(0.7)
    smooth.set_viscous_friction(0.05)
    smooth.set_transition_velocity(0.1)
    smooth.set_constant_contact_force(1e-4)
    smooth.set_hertz_smoothing(250.0)
    smooth.set_hunt_crossley_smoothing(40.0)
    m.addForce(smooth)
    m.finalizeConnections()
    m.printToXML(str(path))
    # Python has no HuntCrossleyForce::ContactParameters: the second entry is written into the file
    text = path.read_text()
    end = "</HuntCrossleyForce::ContactParameters>"
    second = ("<HuntCrossleyForce::ContactParameters>\n<geometry>link_tip</geometry>\n<stiffness>500000</stiffness>\n"
              "<dissipation>0.5</dissipation>\n<static_friction>0.5</static_friction>\n"
              "<dynamic_friction>0.4</dynamic_friction>\n<viscous_friction>0</viscous_friction>\n" + end)
    path.write_text(text.replace(end, end + "\n" + second, 1))
    osim.Model(str(path)).printToXML(str(path))  # OpenSim's own layout


def contact_forces(model):
    out = []
    for f in model.getForceSet():
        if f.getConcreteClassName() in ("HuntCrossleyForce", "SmoothSphereHalfSpaceForce"):
            out.append(f)
    return out


def labels(force):
    a = force.getRecordLabels()
    return [a.get(i) for i in range(a.getSize())]


def label_bodies(model, force):
    """The body of each record label: HuntCrossleyForce labels name it (``<force>.<body>.force.X``);
    SmoothSphereHalfSpaceForce's say Sphere or HalfSpace (the base frame of that socket's geometry)."""
    bodies = []
    for label in labels(force):
        piece = label.split(".")[1]
        if force.getConcreteClassName() == "SmoothSphereHalfSpaceForce":
            socket = "sphere" if piece == "Sphere" else "half_space"
            piece = osim.PhysicalFrame.safeDownCast(force.getConnectee(socket).getConnectee("frame")).findBaseFrame().getName()
        bodies.append(piece)
    return bodies


def lowest_gap(model, state):
    """min over spheres of (height of the sphere's bottom above y = 0) at ``state`` (m)."""
    model.realizePosition(state)
    gaps = []
    for g in model.getContactGeometrySet():
        sphere = osim.ContactSphere.safeDownCast(g)
        if sphere is not None:
            p = g.getFrame().findStationLocationInGround(state, g.get_location())
            gaps.append(p.get(1) - sphere.getRadius())
    return min(gaps)


def potential_energy(model, state, forces, force):
    """The potential energy of ``force`` alone (gravity is off in these models: Model.calcPotentialEnergy with the
    other contact forces switched off in the State)."""
    for f in forces:
        f.setAppliesForce(state, f is force)
    model.realizeDynamics(state)
    pe = model.calcPotentialEnergy(state)
    for f in forces:
        f.setAppliesForce(state, True)
    model.realizeDynamics(state)
    return pe


def record(model_path: pathlib.Path, height_coordinate: str):
    model = osim.Model(str(model_path))
    for f in model.getForceSet():  # only contact forces (and gravity, which is not reported) remain
        if f.getConcreteClassName() not in ("HuntCrossleyForce", "SmoothSphereHalfSpaceForce"):
            f.set_appliesForce(False)
    model.setGravity(osim.Vec3(0.0))  # so that the system's potential energy is the contact forces'
    state = model.initSystem()
    coords = list(model.getCoordinateSet())
    forces = contact_forces(model)
    out = {"coordinates": [c.getName() for c in coords], "q": [], "u": [],
           "forces": {f.getName(): {"labels": labels(f), "bodies": label_bodies(model, f),
                                    "values": [], "potential_energy": []} for f in forces}}
    for depth, speed, slide in CASES:
        for c in coords:
            if c.getName() != height_coordinate and not c.getLocked(state):
                lo, hi = c.getRangeMin(), c.getRangeMax()
                lo, hi = max(lo, -0.3), min(hi, 0.3)
                c.setValue(state, float(RNG.uniform(lo, hi)) if c.getMotionType() == 1 else float(RNG.uniform(-0.2, 0.2)), False)
            c.setSpeedValue(state, float(RNG.normal(0, speed)))
        h = model.getCoordinateSet().get(height_coordinate)
        h.setValue(state, h.getValue(state) - lowest_gap(model, state) - depth, False)
        for c in coords:
            if c.getName() in ("ball_free_coord_3", "pelvis_tx"):
                c.setSpeedValue(state, c.getSpeedValue(state) + slide)
        model.realizeDynamics(state)
        out["q"].append([c.getValue(state) for c in coords])
        out["u"].append([c.getSpeedValue(state) for c in coords])
        for f in forces:
            values = f.getRecordValues(state)
            out["forces"][f.getName()]["values"].append([values.get(i) for i in range(values.getSize())])
            out["forces"][f.getName()]["potential_energy"].append(potential_energy(model, state, forces, f))
    return out


def main():
    build_contact_model(MODELS / "contact_forces.osim")
    golden = {"opensim_version": osim.__version__,
              "contact_forces": record(MODELS / "contact_forces.osim", "ball_free_coord_4"),
              "gait9dof18musc": record(MODELS / "gait9dof18musc.osim", "pelvis_ty")}
    (HERE / "golden" / "contact_osim.json").write_text(json.dumps(golden, indent=1))


if __name__ == "__main__":
    main()
