"""Writes mesh_golden.json: OpenSim 4.6 (Simbody 3.9) ElasticFoundationForce on a meshed ball, for test_mesh_golden.py.

Run from the repository root: ``python3 tests/contact/generate_mesh_golden.py`` (needs opensim; the tests never
import it). It first writes the two meshes, ``tests/models/contact/icosphere_r0.1.obj`` (80 faces) and
``icosphere_r0.12.obj`` (80 faces, rotated), then builds one model per pair kind -- a 2 kg ball on a FreeJoint
carrying a ContactMesh (the first icosphere, at an offset and tilted frame), gravity off -- against a Ground
ContactHalfSpace (tilted), ContactSphere, or ContactMesh (the second icosphere). Each case records the ball's
realized X_GB and V_GB, the rigid-body forces on ball and Ground (torque about each origin, force; in G) from the
force's record values, and the potential energy. States: penetrating sliding/sticking, touching (the deepest
spring just inside), separated; for the mesh pair also the ball's mesh wholly inside the other (no contact).
"""

from __future__ import annotations

import json
import os

import numpy as np
import opensim as osim
from mesh_models import MODELS, icosphere, write_obj

HERE = os.path.dirname(os.path.abspath(__file__))
MESH = os.path.join(MODELS, "icosphere_r0.1.obj")
OTHER_MESH = os.path.join(MODELS, "icosphere_r0.12.obj")
MESH_LOCATION = [0.01, -0.02, 0.015]
MESH_ORIENTATION = [0.2, -0.1, 0.3]  # body-fixed XYZ
PARAMETERS = (2.0e8, 0.7, 0.9, 0.6, 0.2)  # stiffness (N/m^3), dissipation, static, dynamic, viscous friction
TRANSITION_VELOCITY = 0.05
OTHER = {  # Ground geometry: location, orientation (body-fixed XYZ), size (radius; 0 for the half-space)
    "half_space": ([0.1, 0.02, -0.3], [0.05, -0.03, -np.pi / 2], 0.0),
    "sphere": ([0.05, -0.2, 0.02], [0.0, 0.0, 0.0], 0.15),
    "mesh": ([-0.03, 0.1, 0.05], [0.4, 0.1, -0.2], 0.12),
}
# (name, ball Euler angles, offset of the mesh's bounding sphere from the other surface (m; "touch": 2e-4 m past
# the offset where the first spring enters, found by bisection on the potential energy), w, v)
STATES = [
    ("penetrating_sliding", [0.3, -0.2, 0.5], -0.02, [0.4, -1.1, 0.7], [0.6, -0.3, -0.25]),
    ("penetrating_sticking", [0.1, 0.25, -0.4], -0.025, [0.02, -0.01, 0.015], [0.003, 0.05, -0.002]),
    ("deep_sliding", [-0.6, 0.4, 0.2], -0.045, [-0.5, 0.3, 0.9], [0.2, 0.4, -0.1]),
    ("touching_sliding", [0.3, -0.2, 0.5], "touch", [0.4, -1.1, 0.7], [0.4, -0.02, 0.3]),
    ("separated", [0.3, -0.2, 0.5], 0.01, [0.4, -1.1, 0.7], [0.6, -0.3, -0.25]),
]
# Mesh kind only: the ball's mesh wholly inside the other mesh (its center 5 mm from the other's; farthest vertex
# 0.105 m < the other's smallest face distance 0.112 m), no triangles crossing: Simbody reports no contact.
INSIDE = ("inside", [0.3, -0.2, 0.5], -0.215, [0.4, -1.1, 0.7], [0.6, -0.3, -0.25])


def vec(v):
    return osim.Vec3(*[float(x) for x in v])


def rotation(angles):
    return osim.Rotation(osim.BodyRotationSequence, angles[0], osim.CoordinateAxis(0), angles[1],
                         osim.CoordinateAxis(1), angles[2], osim.CoordinateAxis(2))


def matrix(R):
    return np.array([[R.get(i, j) for j in range(3)] for i in range(3)])


def build(kind):
    model = osim.Model()
    model.setGravity(vec([0, 0, 0]))
    ball = osim.Body("ball", 2.0, vec([0.01, 0.0, -0.02]), osim.Inertia(0.012, 0.015, 0.011, 0.001, -0.002, 0.0005))
    model.addBody(ball)
    model.addJoint(osim.FreeJoint("free", model.getGround(), ball))
    model.addContactGeometry(osim.ContactMesh(MESH, vec(MESH_LOCATION), vec(MESH_ORIENTATION), ball, "mesh"))
    location, orientation, size = OTHER[kind]
    ground = model.getGround()
    if kind == "half_space":
        other = osim.ContactHalfSpace(vec(location), vec(orientation), ground, "other")
    elif kind == "sphere":
        other = osim.ContactSphere(size, vec(location), ground, "other")
    else:
        other = osim.ContactMesh(OTHER_MESH, vec(location), vec(orientation), ground, "other")
    model.addContactGeometry(other)
    force = osim.ElasticFoundationForce()
    force.setName("ef")
    force.addGeometry("mesh")
    force.addGeometry("other")
    k, c, us, ud, uv = PARAMETERS
    force.setStiffness(k)
    force.setDissipation(c)
    force.setStaticFriction(us)
    force.setDynamicFriction(ud)
    force.setViscousFriction(uv)
    force.setTransitionVelocity(TRANSITION_VELOCITY)
    model.addForce(force)
    return model, ball, force


def set_ball(model, state, angles, position, w=(0, 0, 0), v=(0, 0, 0)):
    coords = model.getCoordinateSet()
    for i, x in enumerate(list(angles) + list(position)):
        coords.get(i).setValue(state, float(x), False)
    model.realizePosition(state)
    for i, x in enumerate(list(w) + list(v)):
        coords.get(i).setSpeedValue(state, float(x))


def place(model, state, ball, kind, angles, offset):
    """Ball origin putting the mesh's bounding sphere ``offset`` outside the other surface along its outward
    direction (for the sphere and mesh, along a fixed direction from their centers)."""
    location, orientation, size = OTHER[kind]
    set_ball(model, state, angles, [0.0, 0.0, 0.0])
    R_GB = matrix(ball.getTransformInGround(state).R())  # the ball origin is at Go here
    if kind == "half_space":
        n = -matrix(rotation(orientation))[:, 0]
        base = np.asarray(location) + 0.03 * np.cross(n, [1.0, 0.0, 0.0])
    else:
        n = np.array([0.3, 0.8, -0.2]) / np.linalg.norm([0.3, 0.8, -0.2])
        base = np.asarray(location) + size * n
    if offset == "touch":
        lo, hi = -0.03, 0.0  # PE > 0 at lo, 0 at hi
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            set_ball(model, state, angles, place(model, state, ball, kind, angles, mid))
            model.realizeDynamics(state)
            lo, hi = (mid, hi) if model.calcPotentialEnergy(state) > 0 else (lo, mid)
        offset = hi - 2e-4
    center = base + (0.1 + offset) * n
    return center - R_GB @ np.asarray(MESH_LOCATION)


def record(model, state, ball, force):
    model.realizeDynamics(state)
    X = ball.getTransformInGround(state)
    V = ball.getVelocityInGround(state)
    values = force.getRecordValues(state)
    labels = force.getRecordLabels()
    forces = np.zeros((2, 2, 3))
    for i in range(values.getSize()):
        _, body, what, axis = labels.get(i).split(".")
        forces[0 if body == "ground" else 1, 0 if what == "torque" else 1, "XYZ".index(axis)] = values.get(i)
    return {"R_GB": matrix(X.R()).tolist(), "p_GB": [X.p().get(i) for i in range(3)],
            "V_GB": [[V.get(0).get(i) for i in range(3)], [V.get(1).get(i) for i in range(3)]],
            "body_forces": forces.tolist(), "potential_energy": model.calcPotentialEnergy(state)}


def main():
    os.makedirs(MODELS, exist_ok=True)
    v, f = icosphere(0.1, 1)
    write_obj(MESH, v, f)
    v2, f2 = icosphere(0.12, 1)
    write_obj(OTHER_MESH, v2, f2)
    out = {"mesh_location": MESH_LOCATION, "mesh_R_BM": matrix(rotation(MESH_ORIENTATION)).tolist(),
           "parameters": PARAMETERS, "transition_velocity": TRANSITION_VELOCITY}
    for kind, (location, orientation, size) in OTHER.items():
        model, ball, force = build(kind)
        state = model.initSystem()
        cases = []
        for name, angles, offset, w, vel in STATES + ([INSIDE] if kind == "mesh" else []):
            origin = place(model, state, ball, kind, angles, offset)
            set_ball(model, state, angles, origin, w, vel)
            cases.append(dict(name=name, **record(model, state, ball, force)))
        out[kind] = {"location": location, "R_GO": matrix(rotation(orientation)).tolist(), "size": size, "cases": cases}
    with open(os.path.join(HERE, "mesh_golden.json"), "w") as dst:
        json.dump(out, dst, indent=1)


if __name__ == "__main__":
    main()
