"""Passive joint forces shared by the URDF and MJCF importers: joint-limit stops, joint friction and "not
modelled" warnings.

Joint limits become Simbody's ``Force.MobilityLinearStop`` (one-sided springs beyond the bounds with
Hunt-Crossley dissipation: ``f = -k x (1 + d qdot)`` past the upper bound, ``f = -k x (1 - d qdot)`` past the
lower one, never pulling; x = the penetration, rad or m). The files give no stiffness, so the importers choose
one that makes every stop equally firm whatever the link sizes: ``k = M_ii / tau^2`` with M_ii the joint's
diagonal mass-matrix entry at the file's reference configuration (kg m^2 for a hinge, kg for a slide;
armature included) and tau = ``LIMIT_TIME_CONSTANT`` = 0.02 s (MuJoCo's default limit
``solref`` time constant), so a joint alone on its stop oscillates at 1/tau = 50 rad/s, and a constant torque
T sinks it T tau^2 / M_ii past its bound (gravity on a link of length l: about 9.81 tau^2 / l rad). The
dissipation d = ``LIMIT_DISSIPATION`` = 1 s/rad (or s/m): a stop struck at speed v keeps about
sqrt(1 - 4 d v / 3) of it (Hunt-Crossley's restitution), so fast hits are absorbed and slow ones bounce.

Joint friction (MJCF ``frictionloss``, URDF ``<dynamics friction>``, F in N m or N) becomes jaxbody's
``Force.MobilitySmoothCoulombFriction``, ``-F tanh(u / v_t)`` on each u of the joint, with the importers'
``friction="smooth"`` (the default); ``friction="ignore"`` leaves it out and warns, naming the joints. The
files give no transition velocity; v_t = ``FRICTION_TRANSITION_VELOCITY`` = 0.1 rad/s (or m/s) by default
(``friction_transition_velocity=``): the force is within 1% of F beyond |u| = 0.26, and near rest the element
is a damper F / v_t = 10 F, whose decay rate 10 F / M_ii an explicit step must resolve (a smaller v_t is
closer to dry friction and stiffer). MuJoCo solves frictionloss as a dry-friction constraint that holds a
joint at rest under a load below F; the smooth element lets it creep at ``v_t artanh(load / F)`` instead.
"""

from __future__ import annotations

import warnings

from jaxbody._api.force import Force
from jaxbody.errors import InvalidArgument

#: s: limit stops are as stiff as a spring of this period/(2 pi) on the joint's own inertia (MuJoCo's default).
LIMIT_TIME_CONSTANT = 0.02
#: s/rad or s/m: the stops' Hunt-Crossley dissipation coefficient.
LIMIT_DISSIPATION = 1.0
#: rad/s or m/s: the default transition velocity of imported joint friction (``-F tanh(u / v_t)``).
FRICTION_TRANSITION_VELOCITY = 0.1
#: the importers' ``friction=`` choices: joint friction as MobilitySmoothCoulombFriction, or warned and left out.
FRICTION_MODES = ("smooth", "ignore")


def check_friction_options(source: str, friction: str, transition_velocity: float):
    """InvalidArgument unless ``friction`` is one of FRICTION_MODES and ``transition_velocity`` is a positive number."""
    if friction not in FRICTION_MODES:
        raise InvalidArgument(f"{source}: friction must be one of {FRICTION_MODES}, got {friction!r}")
    if not (isinstance(transition_velocity, (int, float)) and 0 < transition_velocity < float("inf")):
        raise InvalidArgument(f"{source}: friction_transition_velocity must be a positive number (rad/s or m/s), "
                              f"got {transition_velocity!r}")


def add_limit_stop(forces, mobod, effective_inertia: float, lower: float, upper: float,
                   time_constant: float, dissipation: float):
    """``Force.MobilityLinearStop`` on q[0]/u[0] of ``mobod`` between ``lower`` and ``upper`` (rad or m),
    stiffness ``effective_inertia / time_constant**2`` (N m/rad or N/m), ``dissipation`` (s/rad or s/m)."""
    return Force.MobilityLinearStop(forces, mobod, 0, effective_inertia / time_constant**2, dissipation,
                                    lower, upper)


def warn_unmodelled(source: str, what: str, names, stacklevel: int = 4):
    """One warning for one attribute that the importer does not model, naming every element that has it;
    ``stacklevel``: how many frames above this function the importer's caller is."""
    names = sorted(names)
    if names:
        warnings.warn(f"{source}: {what} is not modelled by jaxbody (ignored): {names}", stacklevel=stacklevel + 1)
