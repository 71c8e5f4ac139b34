"""Test systems with constraints (shared by the constraint tests; built once per session).

* ``zoo()``: a 3-D tree of Free, Ball, Pin and Slider bodies carrying one constraint of every type,
  at random (unsatisfied) configurations; G has full row rank there.
* ``parallelogram_fourbar()``: a planar parallelogram four-bar closed by a Ball constraint (3 equations,
  one redundant), with an exactly assembled state.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

import jaxbody as jb
from systems import random_mass_properties, random_transform


def _custom_position(k):
    """A user holonomic equation: body 1's origin stays on the sphere |p - c| = 1 around body 0's station c."""
    c = k.p[0] + k.R[0] @ k.params[:3]
    d = k.p[1] - c
    return jnp.array([0.5 * (d @ d - 1.0)])


def _custom_velocity(k):
    """A user nonholonomic equation: body 1's origin velocity along body 0's x axis equals q0 * 0.1."""
    return jnp.array([k.v[1] @ k.R[0][:, 0] - 0.1 * k.q[0]])


def _custom_acceleration(k):
    """A user acceleration-only equation on one speed."""
    return jnp.array([k.udot[0] + 0.3 * k.u[0] - 0.2])


@functools.lru_cache(maxsize=None)
def zoo():
    """Returns (model, constraints dict name -> handle, bodies list)."""
    rng = np.random.default_rng(7)
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    G = matter.Ground()
    kinds = ["free"] * 12 + ["ball", "pin", "slider", "pin"]
    parents = [0, 0, 0, 1, 2, 3, 0, 4, 5, 0, 6, 7, 8, 9, 10, 11]
    bodies = [G]
    for kind, p in zip(kinds, parents):
        factory = {"free": jb.MobilizedBody.Free, "ball": jb.MobilizedBody.Ball, "pin": jb.MobilizedBody.Pin,
                   "slider": jb.MobilizedBody.Slider}[kind]
        bodies.append(factory(bodies[p], random_transform(rng), jb.Body.Rigid(random_mass_properties(rng)),
                              random_transform(rng)))
    b = bodies
    v = lambda: rng.uniform(-0.3, 0.3, 3)  # noqa: E731
    C = jb.Constraint
    cons = {
        "rod": C.Rod(b[1], v(), b[4], v(), 0.9),
        "ball": C.Ball(b[2], v(), b[5], v()),
        "weld": C.Weld(b[3], random_transform(rng), b[6], random_transform(rng)),
        "point_in_plane": C.PointInPlane(b[7], [0.2, 0.3, 1.0], 0.1, b[8], v()),
        "point_on_line": C.PointOnLine(b[9], [1.0, 0.2, 0.1], v(), b[10], v()),
        "constant_angle": C.ConstantAngle(b[11], [0, 0, 1], b[12], [1, 0, 0], 1.2),
        "constant_orientation": C.ConstantOrientation(b[4], jb.Rotation(random_transform(rng).R), b[7], None),
        "no_slip": C.NoSlip1D(b[5], v(), [0.3, 1.0, 0.0], b[8], b[11]),
        "constant_coordinate": C.ConstantCoordinate(b[14], 0.3),
        "constant_speed": C.ConstantSpeed(b[15], 0.5),
        "constant_acceleration": C.ConstantAcceleration(b[13], 1, 0.7),
        "coordinate_coupler": C.CoordinateCoupler(matter, lambda x, p: p[0] * jnp.sin(x[0]) + x[1] ** 2 - p[1],
                                                  [b[16], b[14]], [0, 0], params=[0.5, 0.2]),
        "speed_coupler": C.SpeedCoupler(matter, lambda u, q, p: u[0] + p[0] * u[1] * jnp.cos(q[0]),
                                        [b[16], b[13]], [0, 2], [b[15]], [0], params=[0.4]),
        "prescribed_motion": C.PrescribedMotion(matter, lambda t, p: p[0] * jnp.sin(2.0 * t), b[12], 4, params=[0.3]),
        "sphere_on_plane": C.SphereOnPlaneContact(b[1], random_transform(rng), b[9], v(), 0.2, True),
        "sphere_on_sphere": C.SphereOnSphereContact(b[2], v(), 0.3, b[10], v(), 0.2, True),
        "line_on_line": C.LineOnLineContact(b[3], random_transform(rng), 0.5, b[11], random_transform(rng), 0.4, True),
        "point_on_plane": C.PointOnPlaneContact(b[6], random_transform(rng), b[12], v()),
        "custom": C.Custom(matter, bodies=[b[4], b[9]], coordinates=[(b[14], 0)], speeds=[(b[13], 0)],
                           position_error=_custom_position, velocity_error=_custom_velocity,
                           acceleration_error=_custom_acceleration, params=[0.1, 0.2, 0.3]),
    }
    return system.realize_topology(), cons, bodies


@functools.lru_cache(maxsize=None)
def parallelogram_fourbar():
    """Crank (Pin at Ground origin), coupler (Pin on the crank tip), rocker (Pin at (L, 0, 0)); the coupler's
    far end is Ball-constrained to the rocker tip. Crank and rocker have length a, coupler and ground L, so
    q = (theta, -theta, theta) with u = (w, -w, w) is assembled exactly. Gravity -y.

    Returns (model, ball handle, a, L).
    """
    a, L = 0.6, 1.0
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    G = matter.Ground()
    rod = lambda m, length: jb.Body.Rigid(jb.MassProperties.from_central_inertia(  # noqa: E731
        m, [length / 2, 0, 0], jb.Inertia(0.01, m * length**2 / 12, m * length**2 / 12)))
    crank = jb.MobilizedBody.Pin(G, jb.Transform(), rod(1.0, a), jb.Transform())
    coupler = jb.MobilizedBody.Pin(crank, jb.Transform([a, 0, 0]), rod(2.0, L), jb.Transform())
    rocker = jb.MobilizedBody.Pin(G, jb.Transform([L, 0, 0]), rod(1.5, a), jb.Transform())
    ball = jb.Constraint.Ball(coupler, [L, 0, 0], rocker, [a, 0, 0])
    return system.realize_topology(), ball, a, L


def fourbar_state(model, theta, omega):
    return model.default_state().set_q(jnp.array([theta, -theta, theta])).set_u(jnp.array([omega, -omega, omega]))


#: The tethered chain's links: count, length (m), mass (kg), and the Rod's length (m).
TETHERED_CHAIN_LINKS, _LINK, _MASS, _TETHER = 20, 0.1, 0.1, 0.3


def tethered_chain():
    """TETHERED_CHAIN_LINKS links of length _LINK (Pins about z, gravity -y), the first pinned at the origin; the
    last link's tip is held at distance _TETHER from a Ground anchor by a Rod. Returns (model, q_ref): q_ref is assembled exactly
    (the anchor sits _TETHER along +x from the tip there)."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    link = jb.Body.Rigid(jb.MassProperties.from_central_inertia(
        _MASS, [_LINK / 2, 0, 0], jb.Inertia(1e-4, _MASS * _LINK**2 / 12, _MASS * _LINK**2 / 12)))
    body = matter.Ground()
    for i in range(TETHERED_CHAIN_LINKS):
        body = jb.MobilizedBody.Pin(body, jb.Transform([_LINK, 0, 0] if i else [0, 0, 0]), link, jb.Transform(),
                                    name=f"link{i}")
    q_ref = np.full(TETHERED_CHAIN_LINKS, 0.3 * np.pi / (TETHERED_CHAIN_LINKS - 1))
    q_ref[0] = -np.pi / 2 + 0.3
    angles = np.cumsum(q_ref)
    tip = _LINK * np.array([np.cos(angles).sum(), np.sin(angles).sum(), 0.0])
    jb.Constraint.Rod(body, [_LINK, 0, 0], matter.Ground(), tip + [_TETHER, 0, 0], _TETHER)
    return system.realize_topology(), jnp.asarray(q_ref)
