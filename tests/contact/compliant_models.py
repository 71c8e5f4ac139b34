"""Models of the compliant-contact golden file (``generate_compliant_golden.py``) built with jaxbody's API, shared
by the compliant contact tests: free bodies from Ground (identity frames, so q = (quaternion of R_GB, p_GB),
u = V_GB), gravity off unless asked, one CompliantContactSubsystem."""

from __future__ import annotations

import json
import os

import equinox as eqx
import jax.numpy as jnp
import numpy as np

import jaxbody as jb

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "compliant_golden.json")) as _f:
    GOLDEN = json.load(_f)


def euler_xyz(angles):
    """Body-fixed X-Y-Z rotation matrix (OpenSim's orientation convention)."""
    out = np.eye(3)
    for axis, a in enumerate(angles):
        c, s = np.cos(a), np.sin(a)
        i, j = (axis + 1) % 3, (axis + 2) % 3
        R = np.eye(3)
        R[i, i], R[i, j], R[j, i], R[j, j] = c, -s, s, c
        out = out @ R
    return out


def transform(R, p):
    return jb.Transform(jb.Rotation(np.asarray(R)), np.asarray(p, dtype=float))


def material(values):
    return jb.ContactMaterial(*values)


def free_body(matter, name, mass=2.0):
    mp = jb.MassProperties.from_central_inertia(mass, [0.01, 0.0, -0.02], jb.Inertia.from_matrix(np.diag([0.012, 0.015, 0.011])))
    return jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name=name)


def golden_model(pair, materials="sliding"):
    """(model, contact subsystem) of one golden pair with the golden's materials set ``materials``."""
    g = GOLDEN
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    tracker = jb.ContactTrackerSubsystem(system)
    contact = jb.CompliantContactSubsystem(system, tracker)
    contact.set_transition_velocity(g["transition_velocity"])
    m = g["materials"][materials]
    b1 = free_body(matter, "b1")
    if pair == "sphere_sphere":
        b2 = free_body(matter, "b2", 1.5)
        b1.update_body().add_contact_surface(jb.Transform(jb.Rotation(), g["sphere"]["location"]),
                                             jb.ContactSurface(jb.ContactGeometry.Sphere(g["sphere"]["radius"]), material(m["a"])))
        b2.update_body().add_contact_surface(jb.Transform(jb.Rotation(), g["sphere2"]["location"]),
                                             jb.ContactSurface(jb.ContactGeometry.Sphere(g["sphere2"]["radius"]), material(m["b"])))
    else:
        hs = g["half_space"]
        matter.Ground().update_body().add_contact_surface(
            transform(euler_xyz(hs["orientation"]), hs["location"]),
            jb.ContactSurface(jb.ContactGeometry.HalfSpace(), material(m["a"])))
        if pair == "sphere_half_space":
            X, geometry = jb.Transform(jb.Rotation(), g["sphere"]["location"]), jb.ContactGeometry.Sphere(g["sphere"]["radius"])
        else:
            e = g["ellipsoid"]
            X, geometry = transform(euler_xyz(e["orientation"]), e["location"]), jb.ContactGeometry.Ellipsoid(e["radii"])
        b1.update_body().add_contact_surface(X, jb.ContactSurface(geometry, material(m["b"])))
    return system.realize_topology(), contact


def with_materials(model, contact, materials):
    """The model with the golden's other material set, as new Model leaves (no rebuild, no recompile)."""
    m = GOLDEN["materials"][materials]
    element = contact.force._element(model)
    rows = [m["a"], m["b"]] if element.material.shape[0] == 2 else None
    return eqx.tree_at(lambda mm: mm.forces[contact.force.index].material, model, jnp.asarray(rows, element.material.dtype))


def golden_q_u(case):
    q, u = [], []
    for R, p, V in zip(case["R_GB"], case["p_GB"], case["V_GB"]):
        q += [jnp.asarray(jb.Rotation(np.asarray(R)).to_quaternion()), jnp.asarray(p)]
        u.append(jnp.asarray(np.asarray(V).reshape(6)))
    return jnp.concatenate(q), jnp.concatenate(u)
