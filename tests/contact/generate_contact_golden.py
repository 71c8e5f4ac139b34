"""Writes contact_golden.json: OpenSim 4.6 (Simbody 3.9) contact forces on a ball, for test_contact_golden.py.

Run from the repository root: ``python3 tests/contact/generate_contact_golden.py`` (needs opensim; the tests
never import it). One model per element -- a ball (2 kg) on a FreeJoint from Ground, with gravity off so that
the system's rigid-body forces are the contact element's alone:

* ``hunt_crossley``: HuntCrossleyForce between a ContactSphere on the ball and a tilted ContactHalfSpace on
  Ground (different stiffness/dissipation/friction per surface);
* ``smooth``: SmoothSphereHalfSpaceForce with the same geometry;
* ``exponential``: ExponentialContactForce (Simbody's ExponentialSpringForce) of a ball station against a
  tilted contact plane, at given anchor point p0 (relative to the station's projection) and sliding state K.

Each case records the ball's X_GB and V_GB (angular, linear; at Bo, in G) as OpenSim set them (so the
coordinate convention of OpenSim's FreeJoint never enters the comparison), the rigid-body forces on
Ground and ball (torque about each body origin, force; in G) from ``getRigidBodyForces`` at Dynamics, and the
element's potential energy. States: penetrating, barely touching, separated; sliding and sticking slip.
"""

from __future__ import annotations

import json
import os

import numpy as np
import opensim as osim

HERE = os.path.dirname(os.path.abspath(__file__))
SPHERE_LOCATION = [0.02, -0.01, 0.03]
RADIUS = 0.1
HALF_SPACE_LOCATION = [0.1, 0.02, -0.3]
HALF_SPACE_ORIENTATION = [0.05, -0.03, -np.pi / 2]  # body-fixed XYZ: x axis ~ -y (material below y ~ 0.02)
HC_FLOOR = (2.0e6, 0.8, 0.9, 0.6, 0.2)  # stiffness, dissipation, static, dynamic, viscous friction
HC_SPHERE = (1.0e6, 1.5, 0.7, 0.5, 0.1)
HC_TRANSITION_VELOCITY = 0.05
PLANE_ORIENTATION = [-np.pi / 2 + 0.04, 0.02, 0.1]  # exponential contact plane: z ~ +y


def vec(v):
    return osim.Vec3(*[float(x) for x in v])


def ball_model():
    model = osim.Model()
    model.setGravity(vec([0, 0, 0]))
    ball = osim.Body("ball", 2.0, vec([0.01, 0.0, -0.02]), osim.Inertia(0.012, 0.015, 0.011, 0.001, -0.002, 0.0005))
    model.addBody(ball)
    model.addJoint(osim.FreeJoint("free", model.getGround(), ball))
    return model, ball


def add_geometry(model, ball):
    sphere = osim.ContactSphere(RADIUS, vec(SPHERE_LOCATION), ball, "sphere")
    half_space = osim.ContactHalfSpace(vec(HALF_SPACE_LOCATION), vec(HALF_SPACE_ORIENTATION), model.getGround(), "floor")
    model.addContactGeometry(sphere)
    model.addContactGeometry(half_space)
    return sphere, half_space


def _contact_parameters(geometry, stiffness, dissipation, static, dynamic, viscous):
    return (f"<HuntCrossleyForce::ContactParameters><geometry>{geometry}</geometry><stiffness>{stiffness}</stiffness>"
            f"<dissipation>{dissipation}</dissipation><static_friction>{static}</static_friction>"
            f"<dynamic_friction>{dynamic}</dynamic_friction><viscous_friction>{viscous}</viscous_friction>"
            "</HuntCrossleyForce::ContactParameters>")


def hunt_crossley_model():
    """Per-surface parameters differ; the Python bindings lack ContactParameters, so they are set in the XML."""
    model, ball = ball_model()
    add_geometry(model, ball)
    force = osim.HuntCrossleyForce()
    force.setName("contact")
    force.setTransitionVelocity(HC_TRANSITION_VELOCITY)
    force.addGeometry("floor")
    model.addForce(force)
    model.finalizeConnections()
    path = os.path.join(HERE, "_hunt_crossley_tmp.osim")
    model.printToXML(path)
    with open(path) as f:
        xml = f.read()
    start = xml.index("<HuntCrossleyForce::ContactParameters>")
    end = xml.index("</HuntCrossleyForce::ContactParameters>") + len("</HuntCrossleyForce::ContactParameters>")
    blocks = _contact_parameters("floor", *HC_FLOOR) + _contact_parameters("sphere", *HC_SPHERE)
    with open(path, "w") as f:
        f.write(xml[:start] + blocks + xml[end:])
    model = osim.Model(path)
    os.remove(path)
    return model, model.getBodySet().get("ball"), model.getForceSet().get("contact")


def smooth_model():
    model, ball = ball_model()
    sphere, half_space = add_geometry(model, ball)
    force = osim.SmoothSphereHalfSpaceForce("contact", sphere, half_space)
    force.set_stiffness(1.0e6)
    force.set_dissipation(1.2)
    force.set_static_friction(0.8)
    force.set_dynamic_friction(0.6)
    force.set_viscous_friction(0.3)
    force.set_transition_velocity(0.05)
    force.set_constant_contact_force(1e-5)
    force.set_hertz_smoothing(300.0)
    force.set_hunt_crossley_smoothing(50.0)
    model.addForce(force)
    return model, ball, force


def exponential_model():
    model, ball = ball_model()
    X_GP = osim.Transform(osim.Rotation(osim.BodyRotationSequence, PLANE_ORIENTATION[0], osim.CoordinateAxis(0),
                                        PLANE_ORIENTATION[1], osim.CoordinateAxis(1), PLANE_ORIENTATION[2],
                                        osim.CoordinateAxis(2)), vec([0.05, 0.01, -0.2]))
    force = osim.ExponentialContactForce(X_GP, ball, vec(SPHERE_LOCATION))
    force.setName("contact")
    model.addForce(force)
    return model, ball, force, X_GP


def matrix(R):
    return [[R.get(i, j) for j in range(3)] for i in range(3)]


def set_ball_state(model, state, angles, position, w, v):
    coords = model.getCoordinateSet()
    for i, x in enumerate(list(angles) + list(position)):
        coords.get(i).setValue(state, float(x), False)
    model.realizePosition(state)
    # FreeJoint speeds are Simbody's Free-mobilizer u = (w_FM in F, v_FM in F); V_GB is recorded as realized.
    for i, x in enumerate(list(w) + list(v)):
        coords.get(i).setSpeedValue(state, float(x))


# Body order of each element's getRecordValues (force, torque per body; in G, torque about the body origin).
RECORD_BODIES = {"hunt_crossley": (0, 1), "smooth": (1, 0), "exponential": (1, 0)}


def record(model, state, ball, force, kind):
    model.realizeDynamics(state)
    X = ball.getTransformInGround(state)
    V = ball.getVelocityInGround(state)
    values = force.getRecordValues(state)
    values = np.array([values.get(i) for i in range(values.getSize())]).reshape(2, 2, 3)  # body, (force, torque)
    forces = np.zeros((2, 2, 3))
    for slot, b in enumerate(RECORD_BODIES[kind]):
        forces[b] = values[slot, ::-1]
    return {"R_GB": matrix(X.R()), "p_GB": [X.p().get(i) for i in range(3)],
                "V_GB": [[V.get(0).get(i) for i in range(3)], [V.get(1).get(i) for i in range(3)]],
                "body_forces": forces.tolist(), "potential_energy": model.calcPotentialEnergy(state)}  # gravity is off: the element's PE


# (name, Euler angles, ball origin height offset giving the depth, angular velocity, linear velocity)
STATES = [
    ("penetrating_sliding", [0.3, -0.2, 0.5], -0.006, [0.4, -1.1, 0.7], [0.6, -0.3, -0.25]),
    ("penetrating_sticking", [0.1, 0.25, -0.4], -0.004, [0.02, -0.01, 0.015], [0.003, 0.05, -0.002]),
    ("touching_sliding", [0.3, -0.2, 0.5], -1e-5, [0.4, -1.1, 0.7], [0.4, -0.02, 0.3]),
    ("touching_sticking", [-0.2, 0.1, 0.3], -2e-5, [0.01, 0.02, -0.01], [0.002, -0.01, 0.001]),
    ("separated", [0.3, -0.2, 0.5], 0.01, [0.4, -1.1, 0.7], [0.6, -0.3, -0.25]),
]


def ball_origin_for_depth(model, state, ball, angles, depth_offset, floor_height_fn):
    """Ball origin (x, y, z) putting the sphere's lowest point ``depth_offset`` above the surface."""
    coords = model.getCoordinateSet()
    for i, x in enumerate(list(angles) + [0.0, 0.0, 0.0]):
        coords.get(i).setValue(state, float(x), False)
    model.realizePosition(state)
    c = ball.findStationLocationInGround(state, vec(SPHERE_LOCATION))
    center = np.array([c.get(i) for i in range(3)])
    gap_now = floor_height_fn(center)  # signed distance of the sphere center above the surface, minus radius
    normal = floor_height_fn.normal
    return (depth_offset - gap_now) * normal


class SignedGap:
    """Signed distance of a point above a plane (origin o, unit normal n), minus the sphere radius."""

    def __init__(self, origin, normal, radius):
        self.origin, self.normal, self.radius = np.asarray(origin), np.asarray(normal), radius

    def __call__(self, x):
        return float(np.dot(x - self.origin, self.normal) - self.radius)


def half_space_gap():
    R = osim.Rotation(osim.BodyRotationSequence, HALF_SPACE_ORIENTATION[0], osim.CoordinateAxis(0),
                      HALF_SPACE_ORIENTATION[1], osim.CoordinateAxis(1), HALF_SPACE_ORIENTATION[2], osim.CoordinateAxis(2))
    x_axis = np.array(matrix(R))[:, 0]
    return SignedGap(HALF_SPACE_LOCATION, -x_axis, RADIUS), np.array(matrix(R))


def main():
    out = {"sphere_location": SPHERE_LOCATION, "radius": RADIUS, "half_space_location": HALF_SPACE_LOCATION}
    gap, R_GH = half_space_gap()
    out["R_GH"] = R_GH.tolist()
    for name, build in (("hunt_crossley", hunt_crossley_model), ("smooth", smooth_model)):
        model, ball, force = build()
        state = model.initSystem()
        cases = []
        for label, angles, offset, w, v in STATES:
            origin = ball_origin_for_depth(model, state, ball, angles, offset, gap)
            set_ball_state(model, state, angles, origin, w, v)
            cases.append(dict(name=label, **record(model, state, ball, force, name)))
        out[name] = cases
    model, ball, force, X_GP = exponential_model()
    state = model.initSystem()
    R_GP = np.array(matrix(X_GP.R()))
    p_GP = np.array([X_GP.p().get(i) for i in range(3)])
    out["exponential_plane"] = {"R_GP": R_GP.tolist(), "p_GP": p_GP.tolist()}
    plane_gap = SignedGap(p_GP, R_GP[:, 2], 0.0)
    cases = []
    # (state, anchor offset from the station's projection (plane x, y), sliding K)
    anchors = [([0.0, 0.0], 1.0), ([0.004, -0.003], 0.0), ([0.0005, 0.0002], 0.3), ([0.02, 0.01], 0.0), ([0.001, 0.0], 0.6)]
    for (label, angles, offset, w, v), (shift, K) in zip(STATES * 2, anchors + anchors[2:] + anchors[:2]):
        exp_offset = offset * 0.5 + (0.005 if "touching" in label else 0.0)
        coords = model.getCoordinateSet()
        for i, x in enumerate(list(angles) + [0.0, 0.0, 0.0]):
            coords.get(i).setValue(state, float(x), False)
        model.realizePosition(state)
        s = ball.findStationLocationInGround(state, vec(SPHERE_LOCATION))
        origin = (exp_offset - plane_gap(np.array([s.get(i) for i in range(3)]))) * R_GP[:, 2]
        # The Python bindings cannot write the Vec3 anchor; resetAnchorPoint at a shifted ball puts it at
        # that station's projection, then the ball moves back by the shift (the anchor stays).
        set_ball_state(model, state, angles, origin + R_GP @ np.array([shift[0], shift[1], 0.0]), w, v)
        force.resetAnchorPoint(state)
        model.realizePosition(state)
        a = ball.findStationLocationInGround(state, vec(SPHERE_LOCATION))
        anchor = R_GP.T @ (np.array([a.get(i) for i in range(3)]) - p_GP)
        set_ball_state(model, state, angles, origin, w, v)
        force.setDiscreteVariableValue(state, force.getSlidingDiscreteStateName(), K)
        cases.append(dict(name=f"{label}_K{K}", anchor=[anchor[0], anchor[1]], sliding=K,
                          **record(model, state, ball, force, "exponential")))
    out["exponential"] = cases
    with open(os.path.join(HERE, "contact_golden.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
