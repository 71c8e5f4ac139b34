"""One small model holding every non-contact force element (shared by the tests in tests/forces/).

Bodies: ``arm`` (Pin on Ground), ``slide`` (Slider on arm), ``ball`` (Ball on Ground, quaternions) and
``free`` (Free on Ground, quaternions). ``all_forces_model(kind)`` builds the elements of one kind:
"conservative" (each has a potential energy; the sum conserves KE + PE), "dissipative" (dampers: energy
only decreases, at their power), "loads" (constant, discrete and custom loads), or "all".
"""

from __future__ import annotations

import functools

import numpy as np

import jaxbody as jb

CONSERVATIVE = ("Gravity", "UniformGravity", "MobilityLinearSpring", "MobilityLinearStop", "TwoPointLinearSpring",
                "LinearBushing", "Custom")
DISSIPATIVE = ("MobilityLinearDamper", "TwoPointLinearDamper", "GlobalDamper", "LinearBushingDamped",
               "MobilityLinearStopDissipative", "MobilitySmoothCoulombFriction", "MobilitySmoothCoulombFrictionBall")
LOADS = ("MobilityConstantForce", "MobilityDiscreteForce", "TwoPointConstantForce", "ConstantForce",
         "ConstantTorque", "DiscreteForces")


def _mass(m, com, moments):
    return jb.MassProperties.from_central_inertia(m, com, jb.Inertia(*moments))


def custom_spring_force(model, state, parameters):
    """A Custom element: a linear spring pulling body ``free``'s origin to the point ``anchor`` in G."""
    import jax.numpy as jnp

    p = state.position.p_GB[4]
    f = -parameters["k"] * (p - parameters["anchor"])
    F = jnp.zeros((model.topology.nbodies, 2, 3), p.dtype).at[4, 1].set(f)
    return F, jnp.zeros(model.topology.nu, p.dtype)


def custom_spring_energy(model, state, parameters):
    import jax.numpy as jnp

    d = state.position.p_GB[4] - parameters["anchor"]
    return 0.5 * parameters["k"] * jnp.dot(d, d)


@functools.lru_cache(maxsize=None)
def all_forces_model(kind="all"):
    """(model, handles: dict name -> handle, bodies: dict name -> MobilizedBody) for the elements of ``kind``."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    G = matter.Ground()
    X = lambda p, axis_angle=0.0: jb.Transform(jb.Rotation.about_axis(axis_angle, [1.0, 0.2, 0.1]), p)  # noqa: E731
    arm = jb.MobilizedBody.Pin(G, X([0.1, 0.3, 0.0], 0.3), jb.Body.Rigid(_mass(1.3, [0.4, 0.05, 0.0], [0.02, 0.05, 0.06])),
                               X([-0.2, 0.0, 0.05]), name="arm")
    slide = jb.MobilizedBody.Slider(arm, X([0.5, 0.0, 0.0], -0.4),
                                    jb.Body.Rigid(_mass(0.7, [0.0, 0.1, 0.02], [0.01, 0.02, 0.015])),
                                    X([0.0, 0.0, 0.0]), name="slide")
    ball = jb.MobilizedBody.Ball(G, X([-0.6, 0.2, 0.1], 0.2), jb.Body.Rigid(_mass(0.9, [0.1, -0.3, 0.05], [0.03, 0.02, 0.04])),
                                 X([0.0, 0.1, 0.0]), name="ball")
    free = jb.MobilizedBody.Free(G, X([0.0, -0.5, 0.3]), jb.Body.Rigid(_mass(1.1, [0.05, 0.02, -0.04], [0.04, 0.03, 0.05])),
                                 X([0.0, 0.0, 0.0]), name="free")
    bodies = {"arm": arm, "slide": slide, "ball": ball, "free": free}
    F = jb.Force
    builders = {
        "Gravity": lambda: F.Gravity(forces, matter, [0.1, -1.0, 0.2], 4.0, 0.3),
        "UniformGravity": lambda: F.UniformGravity(forces, matter, [0.5, -3.0, 0.0], 0.2),
        "MobilityLinearSpring": lambda: F.MobilityLinearSpring(forces, arm, 0, 3.0, 0.2),
        "MobilityLinearStop": lambda: F.MobilityLinearStop(forces, slide, 0, 200.0, 0.0, -0.05, 0.05),
        "TwoPointLinearSpring": lambda: F.TwoPointLinearSpring(forces, slide, [0.1, 0.0, 0.0], ball, [0.0, 0.2, 0.0], 15.0, 0.3),
        "LinearBushing": lambda: F.LinearBushing(forces, arm, X([0.2, 0.1, 0.0], 0.4), free, X([0.0, 0.1, -0.1], -0.2),
                                                [2.0, 3.0, 4.0, 20.0, 30.0, 25.0], [0.0] * 6),
        "Custom": lambda: F.Custom(forces, custom_spring_force, custom_spring_energy,
                                   parameters={"k": 5.0, "anchor": np.array([0.1, -0.4, 0.2])}),
        "MobilityLinearDamper": lambda: F.MobilityLinearDamper(forces, slide, 0, 0.8),
        "TwoPointLinearDamper": lambda: F.TwoPointLinearDamper(forces, arm, [0.3, 0.0, 0.1], free, [0.1, 0.0, 0.0], 2.5),
        "GlobalDamper": lambda: F.GlobalDamper(forces, matter, 0.05),
        "LinearBushingDamped": lambda: F.LinearBushing(forces, ball, X([0.0, 0.2, 0.0]), free, None,
                                                       [1.0, 1.5, 2.0, 10.0, 12.0, 8.0], [0.1, 0.2, 0.15, 1.0, 0.8, 1.2]),
        "MobilityLinearStopDissipative": lambda: F.MobilityLinearStop(forces, arm, 0, 300.0, 0.7, -0.1, 0.1),
        "MobilitySmoothCoulombFriction": lambda: F.MobilitySmoothCoulombFriction(forces, arm, 0, 1.2, 0.5),
        "MobilitySmoothCoulombFrictionBall": lambda: F.MobilitySmoothCoulombFriction(forces, ball, 1, 0.7, 0.3),
        "MobilityConstantForce": lambda: F.MobilityConstantForce(forces, arm, 0, 0.4),
        "MobilityDiscreteForce": lambda: F.MobilityDiscreteForce(forces, slide, 0, -0.3),
        "TwoPointConstantForce": lambda: F.TwoPointConstantForce(forces, ball, [0.1, 0.0, 0.0], free, [0.0, 0.1, 0.0], 1.7),
        "ConstantForce": lambda: F.ConstantForce(forces, ball, [0.0, 0.3, 0.1], [0.5, -0.2, 0.8]),
        "ConstantTorque": lambda: F.ConstantTorque(forces, free, [0.1, 0.3, -0.2]),
        "DiscreteForces": lambda: F.DiscreteForces(forces, matter),
    }
    names = {"conservative": CONSERVATIVE, "dissipative": DISSIPATIVE, "loads": LOADS,
             "all": CONSERVATIVE + DISSIPATIVE + LOADS}[kind]
    handles = {name: builders[name]() for name in names}
    return system.realize_topology(), handles, bodies


@functools.lru_cache(maxsize=None)
def thermostat_chain():
    """(model, thermostat handle): a 4-Pin chain under gravity with a 3-chain Thermostat (k_B = 2, T_b = 1.5,
    relaxation time 0.4)."""
    from systems import add_body, random_mass_properties

    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    rng = np.random.default_rng(5)
    parent = matter.Ground()
    for _ in range(4):
        parent = add_body("pin", parent, jb.Transform(jb.Rotation(), [0.0, -0.5, 0.0]),
                          jb.Body.Rigid(random_mass_properties(rng)), jb.Transform(), rng)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.8, 0.0])
    thermostat = jb.Force.Thermostat(forces, matter, 2.0, 1.5, 0.4)
    return system.realize_topology(), thermostat
