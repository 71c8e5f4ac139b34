"""``load_mjcf``: a MuJoCo MJCF model as jaxbody builders, read through MuJoCo's own compiler.

Parsing is MuJoCo's (``mujoco.MjModel.from_xml_*``, optional extra ``jaxbody[io]``): it resolves defaults
classes, includes, angle units, eulerseq, every orientation specifier and geom-inferred inertias exactly as
MuJoCo simulates them, so the importer reads the compiled arrays (body_pos/quat, jnt_pos/axis, body_ipos/
iquat/inertia, eq_data) and cannot disagree with MuJoCo about the file.

Mapping (checked against MuJoCo in tests/io/test_mjcf.py):

* A body's joints are applied in file order about their anchors, as MuJoCo's kinematics does: each joint is
  a MobilizedBody; all but the last of a body's joints carry massless intermediate bodies named
  ``"<body>/<joint>"``. hinge -> Pin, slide -> Slider (axis by a rotation R: ``X_PF = X R``,
  ``X_BM = Trans(pos) R``), ball -> Ball (must be the body's last joint), free -> Free from Ground;
  a body without joints -> Weld. q is MuJoCo's qpos for hinge, slide and ball (w, x, y, z); a hinge or
  slide ``ref`` (MuJoCo's qpos0; the joint turns or slides by qpos - ref) is folded into X_PF, so springs
  (from springref), limits and equalities stay in qpos as MuJoCo writes them; the inertial frame follows the
  compiler's ``body_sameframe``;
  free: jaxbody q = (quaternion, position) vs qpos = (position, quaternion).
  Velocities, with R_FM the joint's rotation: ball u = w in the parent frame vs qvel = R_FM^T u;
  free u = (w in G, v in G) vs qvel = (v, R_GB^T w). Accelerations map as the velocities (exactly).
* Equalities become exact jaxbody constraints (MuJoCo's are soft; jaxbody.io.mjcf_equalities): connect
  (bodies or sites) -> Constraint.Ball; weld (bodies or sites) -> Constraint.Weld (torquescale ignored, 0:
  Ball); joint and fixed-tendon -> Constraint.CoordinateCoupler of MuJoCo's polynomial. Equalities inactive
  at start are disabled by default.
* ``<option>``: gravity, the ``<flag>`` s spring, damper, limit, frictionloss, gravity, equality and
  constraint honoured as MuJoCo honours them, timestep and integrator recorded (jaxbody.io.mjcf_options).
* Gravity is ``<option gravity>`` (zero when the gravity flag is disabled). Joint springs and dampers, joint
  frictionloss (smooth Coulomb friction, ``friction="smooth"``), tendon spring-dampers and joint-limit
  stops become force elements (jaxbody.io.mjcf_passive), tendon-limit stops too (fixed tendons and spatial
  tendons through sites, sphere/cylinder wrap geoms and pulleys; jaxbody.io.mjcf_tendons); tendon frictionloss and the other passive attributes
  jaxbody does not model warn, naming the joints. A joint's ``armature`` becomes its mobilizer's armature
  (``MobilizedBody.set_default_armature``: added to M's diagonal, as MuJoCo does; a free joint's (v, w) dofs
  map to jaxbody's (w, v) mobilities); a tendon's ``armature`` becomes a ``jb.TendonArmature`` (J^T a J in M,
  jaxbody.io.mjcf_tendons; equality constraints see it as MuJoCo's do).
* Contact (on by default, as in MuJoCo; jaxbody.io.mjcf_contact): the geoms of MuJoCo's contact pairs become
  compliant ContactSurfaces with MuJoCo's pair rules and a solref/solimp -> Hunt-Crossley material rule; none
  when the file disables the ``contact`` (or ``constraint``) flag or ``contact=False`` is passed.
* ``ImportedModel.default_state`` is MuJoCo's qpos0 (a free joint at its body's pose in the file), ``keyframe(name)``
  a ``<key>``'s time, qpos and qvel; ``from_mujoco``/``to_mujoco`` convert (jaxbody.io.engine_coordinates).
* Actuators (motor, position, velocity, intvelocity, damper, cylinder, muscle, general on hinge/slide joints,
  fixed and spatial tendons, and sites with or without a refsite) become one element computing MuJoCo's actuator_force (jaxbody.io.mjcf_actuators): the
  State's controls are MuJoCo's ctrl, its z (after any earlier elements') MuJoCo's act.
"""

from __future__ import annotations

import os

import numpy as np

from jaxbody._api.body import Body
from jaxbody._api.force import Force
from jaxbody._api.mobilized_body import MobilizedBody
from jaxbody._api.system import (
    GeneralForceSubsystem,
    MultibodySystem,
    SimbodyMatterSubsystem,
)
from jaxbody._math.spatial import Transform
from jaxbody.errors import InvalidArgument
from jaxbody.io._frames import (
    MassAccumulator,
    quaternion_matrix,
    rotation_taking,
    up_direction_against,
)
from jaxbody.io._passive import (
    FRICTION_TRANSITION_VELOCITY,
    LIMIT_DISSIPATION,
    LIMIT_TIME_CONSTANT,
    check_friction_options,
    warn_unmodelled,
)
from jaxbody.io.imported import Coordinate, Frame, ImportedModel
from jaxbody.io.mjcf_actuators import add_mjcf_actuators
from jaxbody.io.mjcf_contact import TRANSITION_VELOCITY as CONTACT_TRANSITION_VELOCITY
from jaxbody.io.mjcf_contact import add_mjcf_contact
from jaxbody.io.mjcf_equalities import add_equalities
from jaxbody.io.mjcf_fluid import add_mjcf_fluid
from jaxbody.io.engine_coordinates import to_jaxbody
from jaxbody.io.mjcf_options import disabled_flags, integrator_name
from jaxbody.io.mjcf_parts import keyframes, mjcf_visuals, mujoco_joints, names, unique_key
from jaxbody.io.mjcf_passive import add_mjcf_passive
from jaxbody.io.mjcf_tendons import add_tendon_armature, add_tendon_limits

_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3
_Z, _X = np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])


def _compile(path_or_string):
    try:
        import mujoco
    except ImportError:
        raise ImportError("jaxbody.io.load_mjcf needs the optional 'mujoco' package: pip install 'jaxbody[io]'") from None
    try:
        if isinstance(path_or_string, str) and path_or_string.lstrip().startswith("<"):
            return mujoco, mujoco.MjModel.from_xml_string(path_or_string)
        return mujoco, mujoco.MjModel.from_xml_path(os.fspath(path_or_string))
    except ValueError as e:  # MuJoCo's compiler message names the element and its line
        raise InvalidArgument(f"MJCF: {e}") from None


def load_mjcf(path_or_string: str | os.PathLike, joint_limits: bool = True,
              limit_time_constant: float = LIMIT_TIME_CONSTANT, limit_dissipation: float = LIMIT_DISSIPATION,
              friction: str = "smooth", friction_transition_velocity: float = FRICTION_TRANSITION_VELOCITY,
              contact: bool = True, contact_transition_velocity: float = CONTACT_TRANSITION_VELOCITY,
              contact_broad_phase: int | str = "auto") -> ImportedModel:
    """Read an MJCF file (or MJCF text) into a new MultibodySystem; returns an ImportedModel (not realized).

    joint_limits: limited hinge and slide joints get a ``Force.MobilityLinearStop`` at their range, stiffness
    M_ii / limit_time_constant^2 (s) and dissipation limit_dissipation (s/rad or s/m); see jaxbody.io._passive;
    limited tendons get the same stop on their length (``ImportedModel.limit_stops["tendon <name>"]``, stiffness
    J M0 J^T / limit_time_constant^2; jaxbody.io.mjcf_tendons).
    friction: "smooth" (default): joint ``frictionloss`` F becomes ``Force.MobilitySmoothCoulombFriction``,
    ``-F tanh(u / friction_transition_velocity)`` (rad/s or m/s) on each u of the joint; "ignore": it is left
    out with a warning naming the joints (MuJoCo's frictionloss is a constraint; see jaxbody.io._passive).

    contact: True (the default: MuJoCo applies contact unless the file switches it off): the geoms of MuJoCo's
    contact pairs become compliant contact surfaces (``ImportedModel.contact``, jaxbody.io.mjcf_contact; friction
    transition velocity ``contact_transition_velocity``, m/s). None (``ImportedModel.contact`` is None) when the
    file's ``<option><flag contact="disable"/>`` (or ``constraint="disable"``) is set, when the model has no
    contact pairs, or with contact=False (a contact-free model of the same file, e.g. to compare the tree
    dynamics against MuJoCo run with contact disabled).
    contact_broad_phase: the contact subsystem's ``set_broad_phase`` (the same forces from fewer narrow-phase
    pairs): "auto" (default: capacity 64 per pair kind above 256 tracked pairs, e.g. dm_control's dog), an int
    capacity, or 0 (off).
    ``<flag actuation="disable"/>``: the actuators are made (their controls and activation slots exist) but give no
    force and their activations do not change, as in MuJoCo (jaxbody.io.mjcf_actuators);
    ``<flag gravity="disable"/>``: zero gravity (jaxbody.io.mjcf_options).

    Raises InvalidArgument for what MuJoCo's compiler rejects (its message names element and line), and,
    naming the joint or equality, for a ball joint followed by other joints
    in its body, and flex or spatial-tendon equalities; and for a ``friction`` mode not in ("smooth", "ignore")
    or a non-positive transition velocity.
    """
    check_friction_options("load_mjcf", friction, friction_transition_velocity)
    mujoco, m = _compile(path_or_string)
    body_names = names(mujoco, m, mujoco.mjtObj.mjOBJ_BODY, m.nbody, "body")
    joint_names = names(mujoco, m, mujoco.mjtObj.mjOBJ_JOINT, m.njnt, "joint")
    system = MultibodySystem()
    matter = SimbodyMatterSubsystem(system)
    forces = GeneralForceSubsystem(system)
    mobods = [matter.Ground()]
    coordinates = {}
    for b in range(1, m.nbody):
        mass = MassAccumulator()
        ipos, R_i = _inertial_frame(m, b)
        mass.add(float(m.body_mass[b]), ipos, R_i @ np.diag(m.body_inertia[b]) @ R_i.T)
        body = Body.Rigid(mass.mass_properties())
        parent = mobods[m.body_parentid[b]]
        X = Transform(quaternion_matrix(m.body_quat[b]), np.asarray(m.body_pos[b], dtype=float))
        joints = [j for j in range(m.njnt) if m.jnt_bodyid[j] == b]
        if not joints:
            mobods.append(MobilizedBody.Weld(parent, X, body, Transform(), name=body_names[b]))
            continue
        for k, j in enumerate(joints):
            last = k == len(joints) - 1
            name, jtype = joint_names[j], int(m.jnt_type[j])
            carried = body if last else Body.Massless()
            mob_name = body_names[b] if last else f"{body_names[b]}/{name}"
            anchor = np.asarray(m.jnt_pos[j], dtype=float)
            if jtype == _FREE:
                parent = MobilizedBody.Free(parent, Transform(), carried, Transform(), name=mob_name)
                coordinates[name] = Coordinate(parent, 0, 7, 6)
                continue
            if jtype == _BALL:
                if not last:
                    raise InvalidArgument(f"MJCF joint {name!r}: a ball joint must be the last joint of body "
                                          f"{body_names[b]!r}")
                R_a, factory, nq, nu = np.eye(3), MobilizedBody.Ball, 4, 3
            else:
                hinge = jtype == _HINGE
                R_a = rotation_taking(_Z if hinge else _X, m.jnt_axis[j])
                factory, nq, nu = (MobilizedBody.Pin if hinge else MobilizedBody.Slider), 1, 1
            X_PF = X * Transform(R_a, anchor) * _ref_shift(jtype, float(m.qpos0[m.jnt_qposadr[j]]))
            parent = factory(parent, X_PF, carried, Transform(R_a, anchor), name=mob_name)
            coordinates[name] = Coordinate(parent, 0, nq, nu)
            X = Transform()
        mobods.append(parent)
    bodies = {body_names[b]: mobods[b] for b in range(m.nbody)}
    for c in coordinates.values():  # the intermediates "<body>/<joint>" of multi-joint bodies
        if c.mobilized_body is not bodies.get(c.mobilized_body.name):
            bodies[unique_key(bodies, c.mobilized_body.name, "bodies")] = c.mobilized_body
    disabled = disabled_flags(mujoco, m)
    constraints = add_equalities(mujoco, m, matter, mobods, coordinates, joint_names)
    if "equality" in disabled:  # MuJoCo ignores them; kept, disabled by default, for the user to enable
        for c in constraints.values():
            c.set_disabled_by_default(True)
    add_tendon_armature(mujoco, m, matter, coordinates, joint_names, mobods)
    gravity = np.zeros(3) if "gravity" in disabled else np.array(m.opt.gravity)
    Force.UniformGravity(forces, matter, gravity)
    if up_direction_against(gravity) is not None:  # pictures show the model upright
        system.set_up_direction(up_direction_against(gravity))
    passive, stops = add_mjcf_passive(mujoco, m, forces, coordinates, joint_names, mobods,
                                      joint_limits and "limit" not in disabled,
                                      limit_time_constant, limit_dissipation, friction, friction_transition_velocity,
                                      disabled)
    if joint_limits and "limit" not in disabled:
        tendon_stops, unmodelled = add_tendon_limits(mujoco, m, forces, coordinates, joint_names, mobods,
                                                     limit_time_constant, limit_dissipation)
        stops.update({f"tendon {n}": h for n, h in tendon_stops.items()})
        warn_unmodelled("MJCF", "limit (range) of tendons that do not move at qpos0",
                        unmodelled, stacklevel=2)
    for body, handles in add_mjcf_fluid(mujoco, m, forces, mobods, body_names,
                                        [_inertial_frame(m, b) for b in range(m.nbody)], disabled).items():
        passive[f"fluid {body}"] = handles
    actuators = add_mjcf_actuators(mujoco, m, forces, coordinates, joint_names, mobods)
    contact_model = add_mjcf_contact(  # jaxbody.io.mjcf_contact
        mujoco, m, system, bodies, names(mujoco, m, mujoco.mjtObj.mjOBJ_GEOM, m.ngeom, "geom"), body_names, gravity,
        contact_transition_velocity) if contact and "contact" not in disabled else None
    if contact_model is not None:
        contact_model.subsystem.set_broad_phase(contact_broad_phase)
    dof = {joint_names[j]: int(m.jnt_dofadr[j]) for j in range(m.njnt)}
    armature = {n: float(m.dof_armature[d]) for n, d in dof.items() if m.dof_armature[d] != 0}
    for j, name in enumerate(joint_names):
        if name in armature:
            coordinates[name].mobilized_body.set_default_armature(_joint_armature(m, j))
    engine_joints = mujoco_joints(m, joint_names)
    default_q = np.asarray(to_jaxbody(coordinates, engine_joints, matter.get_total_q_alloc(),
                                      matter.get_num_mobilities(), "mujoco", np.array(m.qpos0))[0])
    return ImportedModel(
        system=system, matter=matter, forces=forces, bodies=bodies,
        frames={body_names[b]: Frame(mobods[b], Transform()) for b in range(m.nbody)}, coordinates=coordinates,
        constraints=constraints,
        joint_limits={joint_names[j]: tuple(float(x) for x in m.jnt_range[j]) for j in range(m.njnt) if m.jnt_limited[j]},
        damping={n: float(m.dof_damping[d]) for n, d in dof.items() if m.dof_damping[d] != 0},
        friction={n: float(m.dof_frictionloss[d]) for n, d in dof.items() if m.dof_frictionloss[d] != 0},
        armature=armature, gravity=gravity, visuals=mjcf_visuals(mujoco, m, body_names),
        passive_forces=passive, limit_stops=stops, contact=contact_model,
        engine="mujoco", engine_joints=engine_joints,
        default_q=default_q, keyframes=keyframes(mujoco, m), actuators=actuators,
        timestep=float(m.opt.timestep), integrator=integrator_name(m), mjcf_disabled=disabled,
    )


def _ref_shift(jtype, ref) -> Transform:
    """MuJoCo turns a hinge by (qpos - ref) and slides a slide by (qpos - ref) (``qpos0 = ref``): with
    jaxbody's q = qpos, the fixed frame F is turned back by ref about Pin's z, or moved back by ref along
    Slider's x (identity for ref = 0 and for ball and free joints)."""
    if ref == 0 or jtype not in (_HINGE, _SLIDE):
        return Transform()
    if jtype == _HINGE:
        c, s = np.cos(ref), np.sin(ref)
        return Transform(np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]]))
    return Transform(-ref * _X)


def _inertial_frame(m, b):
    """(ipos, R_i): body b's inertial frame in its body frame as MuJoCo's compiler decided: ``body_sameframe`` 1
    (mjSAMEFRAME_BODY) means the two frames are taken as one (MuJoCo's kinematics copies xpos to xipos, whatever
    tiny ipos was stored), 3 (BODYROT) that they share their axes."""
    same = int(m.body_sameframe[b])
    ipos = np.zeros(3) if same == 1 else np.asarray(m.body_ipos[b], dtype=float)
    R_i = np.eye(3) if same in (1, 3) else quaternion_matrix(m.body_iquat[b])
    return ipos, R_i


def _joint_armature(m, j):
    """MuJoCo's per-dof armature of joint j in jaxbody's mobility order (a free joint's qvel is (v, w), its u
    (w, v)). Ball and free joints have one armature per joint in MJCF, so re-expressing their velocities in
    another frame leaves ``diag(armature)`` unchanged."""
    nv = {_FREE: 6, _BALL: 3}.get(int(m.jnt_type[j]), 1)
    values = np.array(m.dof_armature[m.jnt_dofadr[j]:m.jnt_dofadr[j] + nv], dtype=float)
    return np.concatenate([values[3:], values[:3]]) if nv == 6 else values

