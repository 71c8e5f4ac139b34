"""URDF joint dynamics and limits as jaxbody force elements (checked in tests/io/test_io_passive.py).

* ``<dynamics damping="c">``: ``Force.MobilityLinearDamper(c)`` on every u of the joint (N m s/rad or N s/m;
  for planar and floating joints one c on every u, which is frame-independent).
* ``<limit lower upper>`` of revolute and prismatic joints: ``Force.MobilityLinearStop`` (jaxbody.io._passive:
  stiffness M_ii / tau^2 with M_ii the joint's mass-matrix diagonal at q = 0, from the links' inertias by
  jaxbody.io.urdf_parse.axis_inertias_at_zero) unless ``joint_limits=False``; ``lower > upper`` is an error naming the joint and the file.
  ``effort`` and ``velocity`` limits and ``<safety_controller>`` are controller data, not passive physics,
  and are not read.
* ``<dynamics friction="F">`` (Coulomb friction, N m or N) with ``friction="smooth"`` (the default):
  ``Force.MobilitySmoothCoulombFriction(F, v_t)``, ``-F tanh(u / v_t)`` on every u of the joint (jaxbody.io._passive:
  v_t and how it differs from dry friction); with ``friction="ignore"`` it warns, naming the joints.
* Any other nonzero ``<dynamics>`` attribute (vendor extensions such as the Panda's ``K``, ``D``,
  ``mu_viscous``) warns, naming the joints, and is not modelled.
"""

from __future__ import annotations

from jaxbody._api.force import Force
from jaxbody.errors import InvalidArgument
from jaxbody.io._passive import add_limit_stop, warn_unmodelled


def check_limits(joints, source: str):
    """Raise InvalidArgument for a ``<limit>`` with lower > upper, naming the joint, its line and ``source``."""
    for j in joints:
        if j.limits is not None and not j.limits[0] <= j.limits[1]:
            raise InvalidArgument(f"URDF {source}{j.node.where()}: joint {j.name!r} has <limit> lower = "
                                  f"{j.limits[0]} > upper = {j.limits[1]}")


def add_urdf_passive(forces, joints, axis_inertias, coordinates, joint_limits: bool, time_constant: float,
                     dissipation: float, friction: str, transition_velocity: float):
    """Dampers, friction (``friction="smooth"``) and limit stops of the parsed joints, added to ``forces``;
    warns for what is not modelled.

    ``axis_inertias``: joint name -> its mass-matrix diagonal at q = 0 (``urdf_parse.axis_inertias_at_zero``).
    Returns ``(passive, stops)``: joint name -> [its MobilityLinearDamper and MobilitySmoothCoulombFriction
    handles], joint name -> its stop.
    """
    passive = {}
    for j in joints:
        if j.name not in coordinates:
            continue
        c, handles = coordinates[j.name], []
        if j.damping != 0:
            handles += [Force.MobilityLinearDamper(forces, c.mobilized_body, i, j.damping) for i in range(c.nu)]
        if friction == "smooth" and j.friction != 0:
            handles += [Force.MobilitySmoothCoulombFriction(forces, c.mobilized_body, i, j.friction, transition_velocity)
                        for i in range(c.nu)]
        if handles:
            passive[j.name] = handles
    stops = {}
    if joint_limits:
        for j in joints:
            if j.limits is not None and j.name in axis_inertias:
                stops[j.name] = add_limit_stop(forces, coordinates[j.name].mobilized_body, axis_inertias[j.name],
                                               *j.limits, time_constant, dissipation)
    dynamics = {j.name: j.node.find("dynamics").attrib for j in joints if j.node.find("dynamics") is not None}
    nonzero = lambda key: {n for n, a in dynamics.items() if key in a and _nonzero(a[key])}  # noqa: E731
    if friction == "ignore":
        warn_unmodelled("URDF", "<dynamics friction> (Coulomb friction)", nonzero("friction"), stacklevel=3)
    for key in sorted({k for a in dynamics.values() for k in a} - {"damping", "friction"}):
        warn_unmodelled("URDF", f"the non-URDF <dynamics {key}=...> attribute", nonzero(key), stacklevel=3)
    return passive, stops


def _nonzero(text: str) -> bool:
    try:
        return float(text) != 0
    except ValueError:
        return True
