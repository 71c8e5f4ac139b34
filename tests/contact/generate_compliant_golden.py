"""Writes compliant_golden.json: OpenSim 4.6 (Simbody 3.9) HuntCrossleyForce numbers for test_compliant_golden.py.

Run from the repository root: ``python3 tests/contact/generate_compliant_golden.py`` (needs opensim; the tests
never import it).

What this compares against. OpenSim's python module does not expose Simbody's ContactTrackerSubsystem or
CompliantContactSubsystem (``dir(opensim)`` has no such names); the OpenSim force that runs Simbody's Hertz
point-contact law is HuntCrossleyForce, which wraps Simbody's HuntCrossleyForce (GeneralContactSubsystem with
its collision algorithms HalfSpaceSphere, SphereSphere, HalfSpaceEllipsoid). Its normal law (stiffness^(2/3)
shares, Hertz ``4/3 k x sqrt(R k x)``, Hunt-Crossley ``1 + 3/2 c xdot``, the contact point moved by
``x (1/2 - s1)``, PE ``2/5 fH x``) and its friction combination are CompliantContactSubsystem's HertzCircular.
Their friction curves differ below the transition velocity (HuntCrossleyForce: ``min(v, 1)(ud + 2(us - ud) /
(1 + v^2))``; CompliantContactSubsystem: step5 blends), and agree exactly when ``us == ud`` and the slip speed is
at least the transition velocity. So the cases use materials with ``us == ud`` at sliding slip, and
frictionless materials at slow slip. HalfSpaceEllipsoid in GeneralContactSubsystem uses an approximate
effective radius (``sqrt(r1 r2)`` with ``r_i = 1/sqrt(eig_i)`` of the ellipsoid's ``diag(1/a^2)`` projected on
the plane), not the curvature CompliantContactSubsystem's tracker uses; the file records the pose, so the test
rescales the force by the two radii (see the test's docstring).

Models (gravity off, so the rigid-body forces are the contact's alone), one HuntCrossleyForce each:
``sphere_half_space`` (a ball on a FreeJoint, ContactSphere off its origin, a tilted ContactHalfSpace on Ground),
``sphere_sphere`` (two balls on FreeJoints), ``ellipsoid_half_space`` (an ellipsoid body on a FreeJoint).
Each case records every body's X_GB, V_GB (angular, linear; at Bo, in G) as realized, the forces on each body
(torque about Bo, force; in G) from HuntCrossleyForce::getRecordValues, and the potential energy.
"""

from __future__ import annotations

import json
import os

import numpy as np
import opensim as osim
from scipy.spatial.transform import Rotation

HERE = os.path.dirname(os.path.abspath(__file__))
TRANSITION_VELOCITY = 0.05
HALF_SPACE = {"location": [0.1, 0.02, -0.3], "orientation": [0.05, -0.03, -np.pi / 2]}  # x ~ -y: material below
SPHERE = {"location": [0.02, -0.01, 0.03], "radius": 0.1}
SPHERE2 = {"location": [-0.01, 0.02, 0.0], "radius": 0.07}
ELLIPSOID = {"location": [0.01, 0.0, -0.02], "orientation": [0.2, -0.1, 0.3], "radii": [0.12, 0.08, 0.05]}
# (stiffness, dissipation, static, dynamic, viscous) per surface role
MATERIALS = {
    "sliding": {"a": (2.0e6, 0.8, 0.6, 0.6, 0.2), "b": (1.0e6, 1.5, 0.5, 0.5, 0.1)},
    "frictionless": {"a": (2.0e6, 0.8, 0.0, 0.0, 0.0), "b": (1.0e6, 1.5, 0.0, 0.0, 0.0)},
}
MASS = {"center": [0.01, 0.0, -0.02], "inertia": [0.012, 0.015, 0.011, 0.001, -0.002, 0.0005]}
# (name, material set, target depth (m; negative: apart), body Euler XYZ, angular velocity, linear velocity)
STATES = [
    ("penetrating_sliding", "sliding", 0.006, [0.3, -0.2, 0.5], [0.4, -1.1, 0.7], [0.6, -0.3, -0.25]),
    ("touching_sliding", "sliding", 1e-5, [0.3, -0.2, 0.5], [0.4, -1.1, 0.7], [0.4, -0.02, 0.3]),
    ("separated", "sliding", -0.01, [0.3, -0.2, 0.5], [0.4, -1.1, 0.7], [0.6, -0.3, -0.25]),
    ("penetrating_slow", "frictionless", 0.004, [0.1, 0.25, -0.4], [0.02, -0.01, 0.015], [0.003, 0.05, -0.002]),
    ("touching_slow", "frictionless", 2e-5, [-0.2, 0.1, 0.3], [0.01, 0.02, -0.01], [0.002, -0.01, 0.001]),
    ("penetrating_approaching", "frictionless", 0.003, [0.2, 0.1, -0.1], [0.0, 0.3, 0.0], [0.1, -0.2, 0.05]),
]


def vec(v):
    return osim.Vec3(*[float(x) for x in v])


def euler(angles):
    return Rotation.from_euler("XYZ", angles).as_matrix()  # OpenSim's body-fixed X-Y-Z sequence


def _parameters(geometry, values):
    tags = ("stiffness", "dissipation", "static_friction", "dynamic_friction", "viscous_friction")
    body = "".join(f"<{t}>{v}</{t}>" for t, v in zip(tags, values))
    return f"<HuntCrossleyForce::ContactParameters><geometry>{geometry}</geometry>{body}</HuntCrossleyForce::ContactParameters>"


def build(pair, material):
    """(model, bodies, geometry names in record order): per-surface parameters written into the XML (the python
    bindings lack ContactParameters' constructor with a geometry list)."""
    model = osim.Model()
    model.setGravity(vec([0, 0, 0]))
    nbodies = 2 if pair == "sphere_sphere" else 1
    bodies = []
    for i in range(nbodies):
        b = osim.Body(f"b{i + 1}", 2.0 - 0.5 * i, vec(MASS["center"]), osim.Inertia(*MASS["inertia"]))
        model.addBody(b)
        model.addJoint(osim.FreeJoint(f"free{i + 1}", model.getGround(), b))
        bodies.append(b)
    if pair == "sphere_sphere":
        g1 = osim.ContactSphere(SPHERE["radius"], vec(SPHERE["location"]), bodies[0], "s1")
        g2 = osim.ContactSphere(SPHERE2["radius"], vec(SPHERE2["location"]), bodies[1], "s2")
    else:
        g1 = osim.ContactHalfSpace(vec(HALF_SPACE["location"]), vec(HALF_SPACE["orientation"]), model.getGround(), "floor")
        if pair == "sphere_half_space":
            g2 = osim.ContactSphere(SPHERE["radius"], vec(SPHERE["location"]), bodies[0], "s2")
        else:
            g2 = osim.ContactEllipsoid(vec(ELLIPSOID["radii"]), vec(ELLIPSOID["location"]),
                                       vec(ELLIPSOID["orientation"]), bodies[0], "s2")
    for g in (g1, g2):
        model.addContactGeometry(g)
    force = osim.HuntCrossleyForce()
    force.setName("contact")
    force.setTransitionVelocity(TRANSITION_VELOCITY)
    force.addGeometry(g1.getName())
    model.addForce(force)
    model.finalizeConnections()
    path = os.path.join(HERE, "_compliant_tmp.osim")
    model.printToXML(path)
    with open(path) as f:
        xml = f.read()
    start = xml.index("<HuntCrossleyForce::ContactParameters>")
    end = xml.index("</HuntCrossleyForce::ContactParameters>") + len("</HuntCrossleyForce::ContactParameters>")
    m = MATERIALS[material]
    with open(path, "w") as f:
        f.write(xml[:start] + _parameters(g1.getName(), m["a"]) + _parameters(g2.getName(), m["b"]) + xml[end:])
    model = osim.Model(path)
    os.remove(path)
    return model, [model.getBodySet().get(f"b{i + 1}") for i in range(nbodies)], model.getForceSet().get("contact")


def pose(pair, depth, angles):
    """Body origins (nbodies, 3) putting the pair at ``depth`` for the body orientations from ``angles``."""
    R = euler(angles)
    R_H = euler(HALF_SPACE["orientation"])
    up = -R_H[:, 0]  # the half-space's outward normal
    if pair == "sphere_sphere":
        R2 = euler(np.asarray(angles)[::-1])
        c1 = R @ np.asarray(SPHERE["location"])
        direction = np.array([0.6, 0.64, 0.48])
        c2 = c1 + direction * (SPHERE["radius"] + SPHERE2["radius"] - depth)
        return [np.zeros(3), c2 - R2 @ np.asarray(SPHERE2["location"])], [angles, list(np.asarray(angles)[::-1])]
    if pair == "sphere_half_space":
        lowest = R @ np.asarray(SPHERE["location"]) - SPHERE["radius"] * up
    else:
        R_E = R @ euler(ELLIPSOID["orientation"])
        a2 = np.asarray(ELLIPSOID["radii"]) ** 2
        n_E = R_E.T @ (-up)
        lowest = R @ np.asarray(ELLIPSOID["location"]) + R_E @ (a2 * n_E / np.sqrt(n_E @ (a2 * n_E)))
    height = (lowest - np.asarray(HALF_SPACE["location"])) @ up
    return [(-depth - height) * up], [angles]


def matrix(R):
    return [[R.get(i, j) for j in range(3)] for i in range(3)]


def main():
    out = {"transition_velocity": TRANSITION_VELOCITY, "half_space": HALF_SPACE, "sphere": SPHERE, "sphere2": SPHERE2,
           "ellipsoid": ELLIPSOID, "materials": MATERIALS, "mass": MASS}
    for pair in ("sphere_half_space", "sphere_sphere", "ellipsoid_half_space"):
        cases = []
        for name, material, depth, angles, w, v in STATES:
            model, bodies, force = build(pair, material)
            state = model.initSystem()
            origins, body_angles = pose(pair, depth, angles)
            coords = model.getCoordinateSet()
            for k, (p, a) in enumerate(zip(origins, body_angles)):
                for i, x in enumerate(list(a) + list(p)):
                    coords.get(6 * k + i).setValue(state, float(x), False)
            model.realizePosition(state)
            for k in range(len(bodies)):
                scale = 1.0 if k == 0 else -0.5
                for i, x in enumerate(list(w) + list(v)):
                    coords.get(6 * k + i).setSpeedValue(state, scale * float(x))
            model.realizeDynamics(state)
            values = force.getRecordValues(state)
            values = np.array([values.get(i) for i in range(values.getSize())]).reshape(2, 2, 3)  # geometry, (f, t)
            forces = np.zeros((len(bodies) + 1, 2, 3))
            owners = [1, 2] if pair == "sphere_sphere" else [0, 1]
            for slot, b in enumerate(owners):
                forces[b] += values[slot, ::-1]
            X = [b.getTransformInGround(state) for b in bodies]
            V = [b.getVelocityInGround(state) for b in bodies]
            cases.append({"name": name, "material": material,
                          "R_GB": [matrix(x.R()) for x in X], "p_GB": [[x.p().get(i) for i in range(3)] for x in X],
                          "V_GB": [[[u.get(0).get(i) for i in range(3)], [u.get(1).get(i) for i in range(3)]] for u in V],
                          "body_forces": forces.tolist(), "potential_energy": model.calcPotentialEnergy(state)})
        out[pair] = cases
    with open(os.path.join(HERE, "compliant_golden.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
