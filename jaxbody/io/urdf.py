"""``load_urdf``: a URDF robot as jaxbody builders (standard-library XML only).

Mapping (checked against Pinocchio in tests/io/test_urdf.py):

* Each moving joint is one MobilizedBody whose body frame B is the child link frame, so ``X_GB`` is
  Pinocchio's ``oMi``. revolute/continuous -> Pin, prismatic -> Slider, planar -> Planar (q = (angle about
  the normal, x, y) in the joint frame turned so that z is the normal), floating -> Free. A joint axis ``a``
  is put on Simbody's Pin z / Slider x by a rotation R (``R z = a`` or ``R x = a``): ``X_PF = X_PJ R``,
  ``X_BM = R``, so q is the URDF joint value, sign included.
* ``fixed`` joints are fused as Pinocchio and URDF tools do: the child's mass is added to the parent's
  body and its frame stays available as ``frames[child] = (parent body, X_PB)``; one warning lists them.
* Inertias: the ``inertial`` frame's inertia about the mass center is turned into the link frame and
  shifted to the link origin (Simbody's about-Bo convention, ``jb.MassProperties``).
* ``mimic`` joints become ``Constraint.CoordinateCoupler``: ``q_joint - (multiplier q_mimicked + offset) = 0``;
  with ``mimic="ignore"`` (Pinocchio's default, ``buildModel(..., mimic=False)``) they are independent joints.
* Tolerance as urdfdom's and Pinocchio's: ``<axis>`` is not read on fixed and floating joints; inertias are
  checked per body after fixed-joint fusing (a fused link whose own inertia was impossible is named in a
  warning); a visual that cannot be read is skipped with a warning (visuals carry no dynamics); an XML
  declaration after a leading comment is accepted. Duplicate link or joint names are errors naming both.
* ``floating_base=True`` mounts the root link on a Free mobilizer from Ground. Coordinate map to Pinocchio's
  freeflyer, with R = R_GB: jaxbody q = (qw, qx, qy, qz, x, y, z) vs Pinocchio (x, y, z, qx, qy, qz, qw);
  jaxbody u = (w_GB in G, v = d/dt p_GB in G) vs Pinocchio v = (R^T v, R^T w) (body frame, linear first).
* ``<dynamics damping>`` -> ``Force.MobilityLinearDamper``; revolute/prismatic ``<limit lower upper>`` ->
  ``Force.MobilityLinearStop`` (also kept as metadata: ``joint_limits``, ``damping``); ``<dynamics friction>``
  -> ``Force.MobilitySmoothCoulombFriction`` (``friction="smooth"``, the default; metadata ``friction``) or a
  warning (``friction="ignore"``) (jaxbody.io.urdf_passive). Meshes are kept as visuals.
* ``<collision>`` -> compliant contact surfaces with ``collision=True`` (jaxbody.io.urdf_collision).
* ``ImportedModel.from_pinocchio``/``to_pinocchio`` convert Pinocchio's (q, v) (jaxbody.io.engine_coordinates;
  joint order: jaxbody.io.urdf_states); ``default_state`` is zero with joints whose limits exclude zero at their
  nearest limit (a warning names them).
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from jaxbody._api.body import Body
from jaxbody._api.constraint import Constraint
from jaxbody._api.force import Force
from jaxbody._api.mobilized_body import MobilizedBody
from jaxbody._api.system import (
    GeneralForceSubsystem,
    MultibodySystem,
    SimbodyMatterSubsystem,
)
from jaxbody._math.spatial import Transform
from jaxbody.errors import InvalidArgument
from jaxbody.io import _xml
from jaxbody.io._frames import MassAccumulator, rotation_taking, up_direction_against
from jaxbody.io._passive import (
    FRICTION_TRANSITION_VELOCITY,
    LIMIT_DISSIPATION,
    LIMIT_TIME_CONSTANT,
    check_friction_options,
)
from jaxbody.io.imported import Coordinate, Frame, ImportedModel
from jaxbody.io.urdf_collision import add_urdf_collision
from jaxbody.io.urdf_parse import (
    axis_inertias_at_zero,
    check_fused_inertias,
    check_rotational_inertia,
    parse_urdf,
)
from jaxbody.io.urdf_passive import add_urdf_passive, check_limits
from jaxbody.io.urdf_states import default_q, pinocchio_joints
from jaxbody.io.urdf_visuals import urdf_visuals

_Z, _X = np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])

#: joint type -> (MobilizedBody factory name, the mobilizer axis the joint axis goes on, nq, nu)
_MOVING = {
    "revolute": ("Pin", _Z, 1, 1),
    "continuous": ("Pin", _Z, 1, 1),
    "prismatic": ("Slider", _X, 1, 1),
    "planar": ("Planar", _Z, 3, 3),
    "floating": ("Free", None, 7, 6),
}


#: ``load_urdf(mimic=...)``: mimic joints coupled by a constraint, or left independent (Pinocchio's default).
MIMIC_MODES = ("couple", "ignore")


def mimic_error(q, params):
    """URDF mimic: ``q[0] - (params[0] q[1] + params[1])`` (joint, mimicked joint; multiplier, offset)."""
    return q[0] - (params[0] * q[1] + params[1])


def load_urdf(path_or_string: str | os.PathLike, floating_base: bool = False,
              gravity=(0.0, 0.0, -9.81), joint_limits: bool = True,
              limit_time_constant: float = LIMIT_TIME_CONSTANT, limit_dissipation: float = LIMIT_DISSIPATION,
              friction: str = "smooth", friction_transition_velocity: float = FRICTION_TRANSITION_VELOCITY,
              mimic: str = "couple", collision: bool = False, contact_material=None, self_collision: bool = False,
              collision_mesh: str = "convex_hull", package_dirs=(), strict_inertia: bool = False,
              contact_broad_phase: int | str = "auto") -> ImportedModel:
    """Read a URDF file (or URDF text) into a new MultibodySystem; returns an ImportedModel (not realized).

    floating_base: mount the root link on a Free mobilizer (else the root link is Ground).
    gravity: (3,) m/s^2 in Ground, added as Force.UniformGravity (URDF itself has none; Pinocchio's default).
    joint_limits: revolute and prismatic ``<limit>`` s become ``Force.MobilityLinearStop`` s, stiffness
    M_ii / limit_time_constant^2 (s) and dissipation limit_dissipation (s/rad or s/m); see jaxbody.io._passive.
    friction: "smooth" (default): ``<dynamics friction="F">`` becomes ``Force.MobilitySmoothCoulombFriction``,
    ``-F tanh(u / friction_transition_velocity)`` (rad/s or m/s) on each u of the joint; "ignore": it is left
    out with a warning naming the joints (see jaxbody.io._passive).
    collision: each link's ``<collision>`` becomes a compliant contact surface (``ImportedModel.contact``,
    jaxbody.io.urdf_collision) of ``contact_material`` (a jb.ContactMaterial); ``self_collision``: the robot's
    surfaces touch each other (not a joint's parent and child), else only surfaces users add; meshes as
    ``collision_mesh`` ("convex_hull" or "mesh") found under ``package_dirs`` for ``package://`` names;
    ``contact_broad_phase``: the contact subsystem's ``set_broad_phase`` ("auto", the default: capacity 64 per
    pair kind when more than 256 pairs are tracked at realize_topology(), counting surfaces users add; an int
    capacity; 0 off), named as ``load_mjcf``'s.
    mimic: "couple" (default): each ``<mimic>`` becomes a CoordinateCoupler; "ignore": mimic tags are left
    out with one warning naming the joints, which then move independently (Pinocchio's default).
    strict_inertia: False (default): a body whose inertia (after fixed-joint fusing) violates only the triangle
    inequality of its principal moments loads as written, as Pinocchio loads it, with a warning naming the link
    and line (``jb.check_parameters`` reports it); True refuses it.
    Raises InvalidArgument naming the element and line for an unknown joint type, an unknown parent or child
    link, a link with two parents, a loop, a moving link whose subtree has no mass, a bad mimic, or a
    ``<limit>`` with lower > upper (naming the file too); and for a ``friction`` mode not in ("smooth",
    "ignore") or a non-positive transition velocity.
    """
    check_friction_options("load_urdf", friction, friction_transition_velocity)
    if mimic not in MIMIC_MODES:
        raise InvalidArgument(f"load_urdf: mimic must be one of {MIMIC_MODES}, got {mimic!r}")
    text = _xml.read_text(path_or_string, "URDF")
    source = "" if text is path_or_string else f"file {os.fspath(path_or_string)!r}, "
    root_node = _xml.parse(text, "URDF")
    root, links, joints = parse_urdf(root_node)
    check_limits(joints, source)
    by_name = {j.name: j for j in joints}

    # Pass 1: which body each link's mass lands on (fixed joints fuse), and the link frame in that body.
    host, X_host = {root: root}, {root: (np.eye(3), np.zeros(3))}
    for j in joints:
        if j.type == "fixed":
            R, p = X_host[j.parent]
            host[j.child], X_host[j.child] = host[j.parent], (R @ j.R_PJ, R @ j.p_PJ + p)
        else:
            host[j.child], X_host[j.child] = j.child, (np.eye(3), np.zeros(3))
    repaired, accepted = check_fused_inertias(links, host, X_host, strict_inertia)
    if repaired:
        warnings.warn(f"URDF: links whose own inertia is physically impossible were fused into bodies whose inertia "
                      f"is valid (loaded, as urdfdom and Pinocchio do): {'; '.join(repaired)}", stacklevel=2)
    if accepted:
        warnings.warn(f"URDF: bodies whose inertia is physically impossible, loaded as written as Pinocchio loads "
                      f"them (strict_inertia=True refuses them; jb.check_parameters reports them): "
                      f"{'; '.join(accepted.values())}", stacklevel=2)
    mass = {name: MassAccumulator() for name in set(host.values())}
    for name, link in links.items():
        R, p = X_host[name]
        mass[host[name]].add(link.mass, R @ link.com + p, R @ link.central @ R.T)
    subtree_mass = {name: acc.mass for name, acc in mass.items()}
    for j in reversed(joints):
        if j.type != "fixed":
            subtree_mass[host[j.parent]] += subtree_mass[j.child]
    for j in joints:
        if j.type != "fixed" and subtree_mass[j.child] == 0:
            raise InvalidArgument(
                f"URDF {j.node.where()}: link {j.child!r} moves but it and everything it carries are massless "
                f"(no <inertial>): the mass matrix would be singular; give it an <inertial> or make the joint fixed")
    axis_inertias = axis_inertias_at_zero(root, links, joints)
    check_rotational_inertia(joints, axis_inertias)

    # Pass 2: the builders.
    system = MultibodySystem()
    matter = SimbodyMatterSubsystem(system)
    forces = GeneralForceSubsystem(system)
    if floating_base:
        if subtree_mass[root] == 0:
            raise InvalidArgument(f"URDF: floating base {root!r}: the whole robot is massless")
        root_body = Body.Rigid(mass[root].mass_properties(root not in accepted))
        bodies = {root: MobilizedBody.Free(matter.Ground(), Transform(), root_body,
                                           Transform(), name=root)}
        coordinates = {"root_joint": Coordinate(bodies[root], 0, 7, 6)}
    else:
        bodies, coordinates = {root: matter.Ground()}, {}
    for j in joints:
        if j.type == "fixed":
            continue
        factory, mob_axis, nq, nu = _MOVING[j.type]
        R_a = np.eye(3) if mob_axis is None else rotation_taking(mob_axis, j.axis)
        R_h, p_h = X_host[j.parent]
        X_PF = Transform(R_h @ j.R_PJ @ R_a, R_h @ j.p_PJ + p_h)
        body = Body.Rigid(mass[j.child].mass_properties(j.child not in accepted))
        bodies[j.child] = getattr(MobilizedBody, factory)(bodies[host[j.parent]], X_PF, body, Transform(R_a),
                                                          name=j.child)
        coordinates[j.name] = Coordinate(bodies[j.child], 0, nq, nu)
    frames = {name: Frame(bodies[host[name]], Transform(*X_host[name])) for name in links}

    fused = [f"{j.child!r} -> {host[j.child]!r}" for j in joints if j.type == "fixed"]
    if fused:
        warnings.warn(f"URDF: links on fixed joints were fused into the body that carries them (mass added, frame "
                      f"kept in ImportedModel.frames), as Pinocchio does: {', '.join(fused)}", stacklevel=2)
    mimics = [j for j in joints if j.mimic]
    if mimic == "ignore" and mimics:
        warnings.warn(f"URDF: <mimic> left out (mimic='ignore'), these joints move independently: "
                      f"{[j.name for j in mimics]}", stacklevel=2)
        mimics = []
    constraints = {f"mimic {j.name}": _add_mimic(matter, j, by_name, coordinates) for j in mimics}
    gravity = np.asarray(gravity, dtype=float)
    Force.UniformGravity(forces, matter, gravity)
    if up_direction_against(gravity) is not None:  # pictures show the model upright
        system.set_up_direction(up_direction_against(gravity))
    passive, stops = add_urdf_passive(forces, joints, axis_inertias, coordinates, joint_limits, limit_time_constant,
                                      limit_dissipation, friction, friction_transition_velocity)
    contact = add_urdf_collision(  # jaxbody.io.urdf_collision
        system, root_node, bodies, host, X_host, joints, contact_material, self_collision, collision_mesh,
        None if text is path_or_string else os.path.dirname(os.path.abspath(os.fspath(path_or_string))),
        tuple(package_dirs)) if collision else None
    if contact is not None:
        contact.subsystem.set_broad_phase(contact_broad_phase)
    return ImportedModel(
        system=system, matter=matter, forces=forces, bodies=bodies, frames=frames, coordinates=coordinates,
        constraints=constraints, joint_limits={j.name: j.limits for j in joints if j.limits is not None},
        damping={j.name: j.damping for j in joints if j.damping != 0},
        friction={j.name: j.friction for j in joints if j.friction != 0},
        armature={}, gravity=gravity, visuals=urdf_visuals(root_node, host, X_host),
        passive_forces=passive, limit_stops=stops, contact=contact,
        engine="pinocchio",
        engine_joints=pinocchio_joints(root, joints, floating_base),
        default_q=default_q(coordinates, joints, matter.get_total_q_alloc()),
    )


def _add_mimic(matter, j, by_name, coordinates):
    target, multiplier, offset = j.mimic
    if target not in by_name:
        raise InvalidArgument(f"URDF {j.node.where()}: <mimic> names an unknown joint {target!r} (load with "
                              f"mimic='ignore' to import the joints uncoupled, as Pinocchio does by default)")
    for name in (j.name, target):
        if name not in coordinates or coordinates[name].nq != 1:
            raise InvalidArgument(f"URDF {j.node.where()}: <mimic> couples joint {name!r}, which is not a "
                                  f"one-coordinate moving joint")
    return Constraint.CoordinateCoupler(matter, mimic_error, [coordinates[j.name].mobilized_body,
                                                       coordinates[target].mobilized_body],
                                        [0, 0], params=[multiplier, offset], name=f"mimic {j.name}")
