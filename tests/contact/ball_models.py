"""The golden file's ball-on-a-half-space models, built with jaxbody (shared by the contact tests).

A 2 kg ball on a Free mobilizer from Ground (identity frames, so q = (quaternion of R_GB, p_GB) and
u = (w, v) = V_GB at Bo in G), gravity off, one contact element each, with the geometry and parameters of
``generate_contact_golden.py``.
"""

from __future__ import annotations

import json
import os

import jax.numpy as jnp
import numpy as np

import jaxbody as jb

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "contact_golden.json")) as _f:
    GOLDEN = json.load(_f)
HC_FLOOR = {"stiffness": 2.0e6, "dissipation": 0.8, "static_friction": 0.9, "dynamic_friction": 0.6, "viscous_friction": 0.2}
HC_SPHERE = {"stiffness": 1.0e6, "dissipation": 1.5, "static_friction": 0.7, "dynamic_friction": 0.5, "viscous_friction": 0.1}
SMOOTH = {"stiffness": 1.0e6, "dissipation": 1.2, "static_friction": 0.8, "dynamic_friction": 0.6, "viscous_friction": 0.3,
              "transition_velocity": 0.05, "constant_contact_force": 1e-5, "hertz_smoothing": 300.0, "hunt_crossley_smoothing": 50.0}


def _ball_system(gravity=None):
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    if gravity is not None:
        jb.Force.UniformGravity(forces, matter, gravity)
    mp = jb.MassProperties.from_central_inertia(2.0, [0.01, 0.0, -0.02], jb.Inertia.from_matrix(np.diag([0.012, 0.015, 0.011])))
    ball = jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="ball")
    return system, matter, forces, ball


def half_space_frame():
    return jb.Transform(jb.Rotation(np.asarray(GOLDEN["R_GH"])), GOLDEN["half_space_location"])


def hunt_crossley_ball(gravity=None):
    system, matter, forces, ball = _ball_system(gravity)
    hc = jb.HuntCrossleyForce(forces, transition_velocity=0.05)
    hc.add_half_space(matter.Ground(), half_space_frame(), **HC_FLOOR)
    hc.add_sphere(ball, GOLDEN["radius"], GOLDEN["sphere_location"], **HC_SPHERE)
    return system.realize_topology(), ball, hc


def smooth_ball(gravity=None):
    system, matter, forces, ball = _ball_system(gravity)
    force = jb.SmoothSphereHalfSpaceForce(forces, **SMOOTH)
    force.add_contact(ball, GOLDEN["sphere_location"], GOLDEN["radius"], matter.Ground(), half_space_frame())
    return system.realize_topology(), ball, force


def exponential_ball(gravity=None):
    system, _matter, forces, ball = _ball_system(gravity)
    plane = GOLDEN["exponential_plane"]
    X_GP = jb.Transform(jb.Rotation(np.asarray(plane["R_GP"])), plane["p_GP"])
    force = jb.ExponentialSpringForce(forces, X_GP, ball, GOLDEN["sphere_location"])
    return system.realize_topology(), ball, force


def golden_q_u(case):
    """(q, u) of the ball at a golden case."""
    quat = jb.Rotation(np.asarray(case["R_GB"])).to_quaternion()
    q = jnp.concatenate([jnp.asarray(quat), jnp.asarray(case["p_GB"])])
    return q, jnp.asarray(np.asarray(case["V_GB"]).reshape(6))
