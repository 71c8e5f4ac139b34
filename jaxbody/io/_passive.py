"""Passive joint forces shared by the URDF and MJCF importers: joint-limit stops and "not modelled" warnings.

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
"""

from __future__ import annotations

import warnings

from jaxbody._api.force import Force

#: s: limit stops are as stiff as a spring of this period/(2 pi) on the joint's own inertia (MuJoCo's default).
LIMIT_TIME_CONSTANT = 0.02
#: s/rad or s/m: the stops' Hunt-Crossley dissipation coefficient.
LIMIT_DISSIPATION = 1.0


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
