"""Small systems with unilateral contacts for tests/unilateral (built once per session, cached).

Each returns (stepper, {name: MobilizedBody}); the stepper holds the realized model (``stepper.model``).
Gravity is -9.81 m/s^2 along y unless stated; masses in kg, lengths in m.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

import jaxbody as jb

G = 9.81


def _system(gravity=True):
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    if gravity:
        jb.Force.UniformGravity(forces, matter, [0.0, -G, 0.0])
    return system, matter


def _point_mass(matter, mass=1.0, name="ball"):
    mp = jb.MassProperties.from_central_inertia(mass, [0.0, 0.0, 0.0], jb.Inertia(0.01))
    return jb.MobilizedBody.Translation(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name=name)


@functools.cache
def ball_on_plane(restitution: str, cor: float = 0.5):
    """A 1 kg point mass (Translation) above the Ground plane y = 0, one PointPlaneContact with COR ``cor``."""
    system, matter = _system()
    ball = _point_mass(matter)
    matter.adopt_unilateral_contact(jb.PointPlaneContact(matter.Ground(), [0, 1, 0], 0.0, ball, [0, 0, 0], cor, 0, 0, 0))
    stepper = jb.SemiExplicitEulerTimeStepper(system)
    stepper.set_restitution_model(restitution)
    return stepper, {"ball": ball}


@functools.cache
def block_on_incline(theta: float, mu: float):
    """A 1 kg point mass (Translation) on a Ground plane through the origin tilted by ``theta`` about z:
    normal (-sin, cos, 0), up-slope direction (cos, sin, 0); Coulomb friction mu_s = mu_d = mu, COR 0."""
    system, matter = _system()
    block = _point_mass(matter, name="block")
    normal = [-np.sin(theta), np.cos(theta), 0.0]
    matter.adopt_unilateral_contact(jb.PointPlaneContact(matter.Ground(), normal, 0.0, block, [0, 0, 0], 0.0, mu, mu, 0))
    return jb.SemiExplicitEulerTimeStepper(system), {"block": block}


@functools.cache
def pendulum_with_stops(upper: float, lower: float, cor: float, restitution: str):
    """Pin pendulum (1 kg at 1 m below the pin, q = 0 hanging) with HardStopUpper(upper), HardStopLower(lower)."""
    system, matter = _system()
    mp = jb.MassProperties.from_central_inertia(1.0, [0.0, -1.0, 0.0], jb.Inertia(0.01))
    link = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="link")
    matter.adopt_unilateral_contact(jb.HardStopUpper(link, 0, upper, cor))
    matter.adopt_unilateral_contact(jb.HardStopLower(link, 0, lower, cor))
    stepper = jb.SemiExplicitEulerTimeStepper(system)
    stepper.set_restitution_model(restitution)
    return stepper, {"link": link}


@functools.cache
def rope_pendulum(length: float):
    """A 1 kg point mass (Translation) tied to the Ground origin by a Rope of ``length``, COR 0."""
    system, matter = _system()
    bob = _point_mass(matter, name="bob")
    matter.adopt_unilateral_contact(jb.Rope(matter.Ground(), [0, 0, 0], bob, [0, 0, 0], length, 0.0))
    return jb.SemiExplicitEulerTimeStepper(system), {"bob": bob}


BOX_HALF = np.array([0.3, 0.1, 0.2])
BOX_MASS = 2.0


@functools.cache
def box_on_four_points(mu: float = 0.5):
    """A 2 kg box (Free, half sizes BOX_HALF) whose four bottom corners are PointPlaneContacts with Ground y = 0;
    PGS tolerance 1e-12 m/s (so that resting drift measures the method, not the default 1e-6 tolerance)."""
    system, matter = _system()
    mp = jb.MassProperties.from_central_inertia(BOX_MASS, [0, 0, 0], jb.Inertia.from_matrix(
        np.diag(BOX_MASS / 3 * np.array([BOX_HALF[1] ** 2 + BOX_HALF[2] ** 2, BOX_HALF[0] ** 2 + BOX_HALF[2] ** 2,
                                         BOX_HALF[0] ** 2 + BOX_HALF[1] ** 2]))))
    box = jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="box")
    for sx in (-1, 1):
        for sz in (-1, 1):
            corner = [sx * BOX_HALF[0], -BOX_HALF[1], sz * BOX_HALF[2]]
            matter.adopt_unilateral_contact(jb.PointPlaneContact(matter.Ground(), [0, 1, 0], 0.0, box, corner, 0.0,
                                                                 mu, mu, 0.0))
    stepper = jb.SemiExplicitEulerTimeStepper(system)
    stepper.set_pgs_convergence(1e-12, 100)
    return stepper, {"box": box}


@functools.cache
def two_spheres(cor: float, restitution: str):
    """No gravity: two 1 kg spheres (radius 0.1) on Translation mobilizers, one SphereSphereContact, and a
    SpherePlaneContact of sphere 1 with the Ground plane y = -1 (inactive unless sphere 1 goes down)."""
    system, matter = _system(gravity=False)
    s1, s2 = _point_mass(matter, name="s1"), _point_mass(matter, name="s2")
    matter.adopt_unilateral_contact(jb.SphereSphereContact(s1, [0, 0, 0], 0.1, s2, [0, 0, 0], 0.1, cor, 0, 0, 0))
    matter.adopt_unilateral_contact(jb.SpherePlaneContact(matter.Ground(), [0, 1, 0], -1.0, s1, [0, 0, 0], 0.1,
                                                          cor, 0.5, 0.5, 0))
    stepper = jb.SemiExplicitEulerTimeStepper(system)
    stepper.set_restitution_model(restitution)
    return stepper, {"s1": s1, "s2": s2}


@functools.cache
def pendulum_with_speed_rows(kind: str):
    """The Pin pendulum of pendulum_with_stops (inertia about the pin 1.01 kg m^2) with one speed row on u0:
    "friction": StateLimitedFriction(N = 10 N, mu = 0.5: at most 5 N m); "motor": no gravity,
    BoundedSpeedConstraint(speed 2 rad/s, torque in [-20, 20] N m); "ratchet": UnilateralSpeedConstraint (u >= 0)."""
    system, matter = _system(gravity=kind != "motor")
    mp = jb.MassProperties.from_central_inertia(1.0, [0.0, -1.0, 0.0], jb.Inertia(0.01))
    link = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="link")
    if kind == "friction":
        matter.adopt_state_limited_friction(jb.StateLimitedFriction(link, 0, 10.0, 0.5, 0.5, 0.0))
    elif kind == "motor":
        jb.BoundedSpeedConstraint(link, 0, -20.0, 20.0, speed=2.0)
    else:
        jb.UnilateralSpeedConstraint(link, 0)
    return jb.SemiExplicitEulerTimeStepper(system), {"link": link}


@functools.cache
def crossed_edges(cor: float = 0.5):
    """A 1 kg Translation body carrying an edge along z (outward -y) above a Ground edge along x (outward +y):
    one EdgeEdgeContact (Newton restitution, COR ``cor``); the separation is the body's height y."""
    system, matter = _system()
    body = _point_mass(matter, name="bar")
    ground_edge = jb.Transform(jb.Rotation(np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]])), [0.0, 0.0, 0.0])
    body_edge = jb.Transform(jb.Rotation(np.array([[0.0, -1, 0], [0, 0, -1], [1, 0, 0]])), [0.0, 0.0, 0.0])
    matter.adopt_unilateral_contact(jb.EdgeEdgeContact(matter.Ground(), ground_edge, 1.0, body, body_edge, 1.0,
                                                       cor, 0.5, 0.5, 0.0))
    stepper = jb.SemiExplicitEulerTimeStepper(system)
    stepper.set_restitution_model("newton")
    return stepper, {"bar": body}


@functools.cache
def sphere_on_ground(mu: float = 0.4):
    """A solid 1 kg sphere of radius 0.1 (I = 2/5 m r^2 = 0.004) on a Free mobilizer, SpherePlaneContact with the
    Ground plane y = 0, COR 0.5, mu_s = mu_d = ``mu``."""
    system, matter = _system()
    mp = jb.MassProperties.from_central_inertia(1.0, [0, 0, 0], jb.Inertia(0.004))
    ball = jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="sphere")
    matter.adopt_unilateral_contact(jb.SpherePlaneContact(matter.Ground(), [0, 1, 0], 0.0, ball, [0, 0, 0], 0.1,
                                                          0.5, mu, mu, 0.0))
    return jb.SemiExplicitEulerTimeStepper(system), {"sphere": ball}


@functools.cache
def newtons_cradle(induced: str, restitution: str = "newton"):
    """No gravity: three 1 kg spheres of radius 0.1 on Translation mobilizers, two SphereSphereContacts (1-2,
    2-3) with COR 1; ``induced`` impact model."""
    system, matter = _system(gravity=False)
    balls = [_point_mass(matter, name=f"ball{i}") for i in range(3)]
    for a, b in itertools.pairwise(balls):
        matter.adopt_unilateral_contact(jb.SphereSphereContact(a, [0, 0, 0], 0.1, b, [0, 0, 0], 0.1, 1.0, 0, 0, 0))
    stepper = jb.SemiExplicitEulerTimeStepper(system)
    stepper.set_restitution_model(restitution)
    stepper.set_induced_impact_model(induced)
    return stepper, {b.name: b for b in balls}
