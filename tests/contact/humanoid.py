"""A humanoid-like 11-body tree with contact at the feet (for the contact tests and benchmarks/contact.py).

Ground -Free- pelvis; pelvis -Gimbal- torso -Pin- head, torso -Gimbal- upper arms; pelvis -Gimbal- thighs
-Pin- shanks -Weld- feet (y up, 72 kg). Every joint coordinate holds its posture with a MobilityLinearSpring
(3000 N m/rad) and MobilityLinearDamper (3 N m s/rad), so the figure stands like a stiff doll. Four contact
points per foot (sole corners, 8 in all): ``contact="exponential"`` gives one ExponentialSpringForce with 8
stations on the floor plane y = 0; ``"hunt_crossley"`` one HuntCrossleyForce with 8 spheres (radius 0.02 m)
against the half-space y < 0.
"""

from __future__ import annotations

import numpy as np

import jaxbody as jb

SOLE_Y = -0.06  # sole below the ankle, in the foot frame
CORNERS = np.array([[x, SOLE_Y, z] for x in (-0.05, 0.05) for z in (-0.1, 0.12)])
SPHERE_RADIUS = 0.02
PELVIS_HEIGHT = 0.95  # pelvis origin above the soles when standing straight
PLANE = jb.Transform(jb.Rotation(np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])))  # z_P = +y
FLOOR = jb.Transform(jb.Rotation(np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])))  # x_H = -y


def _body(mass, com, radius):
    return jb.Body.Rigid(jb.MassProperties.from_central_inertia(mass, com, jb.Inertia(0.4 * mass * radius**2)))


def humanoid(contact="exponential"):
    """Returns (model, handles: dict name -> MobilizedBody, contact force handle)."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    T = lambda *p: jb.Transform(np.asarray(p, dtype=float)) if p else jb.Transform()
    b = {}
    b["pelvis"] = jb.MobilizedBody.Free(matter.Ground(), T(0, PELVIS_HEIGHT, 0), _body(12, [0, 0, 0], 0.12), T(), name="pelvis")
    b["torso"] = jb.MobilizedBody.Gimbal(b["pelvis"], T(0, 0.1, 0), _body(22, [0, 0.25, 0], 0.15), T(), name="torso")
    b["head"] = jb.MobilizedBody.Pin(b["torso"], T(0, 0.5, 0), _body(5, [0, 0.1, 0], 0.1), T(), name="head")
    for side, x in (("l", 0.1), ("r", -0.1)):
        b[f"arm_{side}"] = jb.MobilizedBody.Gimbal(b["torso"], T(2 * x, 0.45, 0), _body(3, [0, -0.25, 0], 0.1), T(), name=f"arm_{side}")
        b[f"thigh_{side}"] = jb.MobilizedBody.Gimbal(b["pelvis"], T(x, -0.05, 0), _body(8, [0, -0.2, 0], 0.1), T(), name=f"thigh_{side}")
        b[f"shank_{side}"] = jb.MobilizedBody.Pin(b[f"thigh_{side}"], T(0, -0.42, 0), _body(4, [0, -0.2, 0], 0.1), T(), name=f"shank_{side}")
        b[f"foot_{side}"] = jb.MobilizedBody.Weld(b[f"shank_{side}"], T(0, -0.42, 0), _body(1.5, [0, -0.03, 0.05], 0.1), T(), name=f"foot_{side}")
    for name, mobod in b.items():
        if name == "pelvis":
            continue
        for i in range(mobod.get_num_u()):
            jb.Force.MobilityLinearSpring(forces, mobod, i, 3000.0, 0.0)
            jb.Force.MobilityLinearDamper(forces, mobod, i, 3.0)
    feet = [b["foot_l"], b["foot_r"]]
    if contact == "exponential":
        points = [(foot, corner) for foot in feet for corner in CORNERS]
        handle = jb.ExponentialSpringForce(forces, PLANE, *points[0])
        for foot, corner in points[1:]:
            handle.add_station(foot, corner)
    else:
        handle = jb.HuntCrossleyForce(forces)
        handle.add_half_space(matter.Ground(), FLOOR, 1e7, 0.5, 0.9, 0.7, 0.0)
        for foot in feet:
            for corner in CORNERS:
                handle.add_sphere(foot, SPHERE_RADIUS, corner + [0, SPHERE_RADIUS, 0], 1e7, 0.5, 0.9, 0.7, 0.0)
    return system.realize_topology(), b, handle
