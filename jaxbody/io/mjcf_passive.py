"""MJCF passive joint and tendon forces as jaxbody force elements (read from the compiled MjModel).

MuJoCo's passive forces (``mj_passive``) and what ``load_mjcf`` makes of them (generalized forces in N or N m;
checked against MuJoCo's qacc in tests/io/test_io_passive.py):

* hinge or slide ``stiffness`` k and ``springref`` q_s (``qpos_spring``): ``Force.MobilityLinearSpring(k, q_s)``,
  ``-k (q - q_s)`` on the joint's u (q = qpos: the importer rejects a nonzero ``ref``).
* ball ``stiffness``: MuJoCo's ``-k dif`` on qvel with dif the rotation vector of ``q_s^-1 q`` (angle in
  [-pi, pi], in the child frame); jaxbody's u is the angular velocity in the parent's frame F (qvel = R_FM^T u),
  so the force on u is ``R_FM (-k dif)`` (a ``Force.Custom``, PE ``k |dif|^2 / 2``). free: the same on the
  rotation with R_GB, plus ``-k (p - p_s)`` on the translation (position in Ground).
* ``damping`` c: ``Force.MobilityLinearDamper(c)`` on each u of the joint (for ball and free joints MuJoCo's
  ``-c qvel`` with one c on every dof is ``-c u`` in jaxbody's coordinates, since qvel = R^T u).
* ``frictionloss`` F (N m or N) with ``friction="smooth"`` (the default):
  ``Force.MobilitySmoothCoulombFriction(F, v_t)``, ``-F tanh(u / v_t)`` on each u of the joint with F of that
  dof (jaxbody.io._passive: v_t, and how it differs from MuJoCo's dry-friction constraint, which MuJoCo's
  ``qfrc_passive`` does not include). Hinge and slide joints and a free joint's translation bound the same
  velocity component as MuJoCo; on ball and free rotations MuJoCo bounds each qvel component (child frame)
  and jaxbody each u component (ball: parent frame F; free: Ground), so there the axes of the per-component
  bound differ. ``friction="ignore"``: warned, naming the joints, and left out.
* tendons (fixed: L = sum_i coef_i q_i; spatial, through sites, wrap geoms and pulleys: jaxbody.io.mjcf_tendons)
  with ``stiffness`` k, ``damping`` c and spring length range [L_lo, L_hi] (``tendon_lengthspring``; one
  ``springlength`` gives L_lo = L_hi): tension ``F = -k (L - L_hi)`` above the range, ``-k (L - L_lo)`` below, 0
  between, minus ``c Ldot``, applied as the generalized force ``F dL/du`` (fixed: ``coef_i F`` on u_i; a
  ``Force.Custom`` per tendon, PE ``k (L - bound)^2 / 2``).
* limited hinge and slide joints: ``Force.MobilityLinearStop`` at ``range`` (``jaxbody.io._passive``: stiffness
  M_ii / tau^2 with MuJoCo's ``dof_M0``, armature included); not added with ``joint_limits=False``.

Tendon limits: jaxbody.io.mjcf_tendons. Warned, naming the joints or tendons, and not modelled: tendon
``frictionloss``, MuJoCo 4's polynomial stiffness and damping coefficients and ``springyield`` (plasticity),
ball-joint cone limits, tendon friction loss, body ``gravcomp``. Fluid
forces: jaxbody.io.mjcf_fluid; tendon armature: jaxbody.io.mjcf_tendons.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.force import Force
from jaxbody._dynamics.actuators.mujoco_transmissions import relative_rotation_vector
from jaxbody.io._frames import quaternion_matrix
from jaxbody.io._passive import add_limit_stop, warn_unmodelled
from jaxbody.io.mjcf_tendons import length_and_rate, tendon_names, tendon_path, tension_forces

_FREE, _BALL = 0, 1


def _rotation_spring(forces, mobod, free: bool, stiffness: float, qpos_spring, name: str):
    """MuJoCo's ball (free: ball + translation) spring on ``mobod`` as a Force.Custom (see the module doc)."""
    quat_s = qpos_spring[3:7] if free else qpos_spring
    params = {"stiffness": jnp.asarray(stiffness), "R_s": jnp.asarray(quaternion_matrix(quat_s)),
              "p_s": jnp.asarray(qpos_spring[0:3] if free else np.zeros(3))}

    def deflections(state, p):
        R, pos = state.position.R_FM[mobod.index], state.position.p_FM[mobod.index]
        return R, relative_rotation_vector(p["R_s"].T @ R), pos - p["p_s"]

    def calc_force(model, state, p):
        R, dif, dp = deflections(state, p)
        f = jnp.zeros(model.topology.nu, dif.dtype).at[mobod.u_start:mobod.u_start + 3].set(R @ (-p["stiffness"] * dif))
        if free:
            f = f.at[mobod.u_start + 3:mobod.u_start + 6].set(-p["stiffness"] * dp)
        return 0.0, f

    def calc_potential_energy(model, state, p):
        _, dif, dp = deflections(state, p)
        return 0.5 * p["stiffness"] * (jnp.sum(dif * dif) + (jnp.sum(dp * dp) if free else 0.0))

    return Force.Custom(forces, calc_force, calc_potential_energy, params, name=f"MJCF spring {name}")


def _tendon_spring_damper(forces, static, params, stiffness, damping, lengthspring, name):
    """A tendon's spring-damper (see the module doc) as a Force.Custom; ``static``, ``params``: its length
    function (jaxbody.io.mjcf_tendons.tendon_path)."""
    params = {**params, "stiffness": jnp.asarray(stiffness), "damping": jnp.asarray(damping),
              "lower": jnp.asarray(lengthspring[0]), "upper": jnp.asarray(lengthspring[1])}

    def stretch(state, p):
        L, Ldot = length_and_rate(static, p, state)
        return jnp.where(L > p["upper"], L - p["upper"], jnp.where(L < p["lower"], L - p["lower"], 0.0)), Ldot

    def calc_force(model, state, p):
        x, Ldot = stretch(state, p)
        return tension_forces(model, state, static, p, -p["stiffness"] * x - p["damping"] * Ldot)

    def calc_potential_energy(model, state, p):
        x = stretch(state, p)[0]
        return 0.5 * p["stiffness"] * x * x

    return Force.Custom(forces, calc_force, calc_potential_energy, params, name=f"MJCF tendon {name}")


def add_mjcf_passive(mujoco, m, forces, coordinates, joint_names, mobods, joint_limits: bool, time_constant: float,
                     dissipation: float, friction: str, transition_velocity: float, disabled=frozenset()):
    """Springs, dampers, joint friction (``friction="smooth"``), tendon spring-dampers and limit stops of the
    compiled model ``m``, added to ``forces``; what ``disabled`` (``<option><flag>`` names, jaxbody.io.mjcf_options)
    switches off ("spring", "damper", "frictionloss") is left out, as MuJoCo leaves it out.

    Returns ``(passive, stops)``: joint name (or ``"tendon <name>"``) -> list of its spring, damper and
    friction handles, and joint name -> its MobilityLinearStop handle. Warns once per attribute that is not
    modelled.
    """
    passive: dict[str, list] = {}
    spring, damper = "spring" not in disabled, "damper" not in disabled
    friction = "off" if "frictionloss" in disabled else friction
    for j, name in enumerate(joint_names):
        c, jtype = coordinates[name], int(m.jnt_type[j])
        dof, padr, k = int(m.jnt_dofadr[j]), int(m.jnt_qposadr[j]), float(m.jnt_stiffness[j]) * spring
        handles = passive.setdefault(name, [])
        if k != 0:
            if jtype in (_FREE, _BALL):
                handles.append(_rotation_spring(forces, c.mobilized_body, jtype == _FREE, k,
                                                np.array(m.qpos_spring[padr:padr + c.nq]), name))
            else:
                handles.append(Force.MobilityLinearSpring(forces, c.mobilized_body, 0, k, float(m.qpos_spring[padr])))
        for i in range(c.nu):
            if damper and m.dof_damping[dof + i] != 0:
                handles.append(Force.MobilityLinearDamper(forces, c.mobilized_body, i, float(m.dof_damping[dof + i])))
            if friction == "smooth" and m.dof_frictionloss[dof + i] != 0:
                handles.append(Force.MobilitySmoothCoulombFriction(
                    forces, c.mobilized_body, i, float(m.dof_frictionloss[dof + i]), transition_velocity))
        if not handles:
            del passive[name]
    for t, name in enumerate(tendon_names(mujoco, m)):
        stiffness, damping = float(m.tendon_stiffness[t]) * spring, float(m.tendon_damping[t]) * damper
        if stiffness == 0 and damping == 0:
            continue
        passive[f"tendon {name}"] = [_tendon_spring_damper(
            forces, *tendon_path(m, t, coordinates, joint_names, mobods), stiffness, damping,
            np.array(m.tendon_lengthspring[t], dtype=float), name)]
    stops = {}
    if joint_limits:
        for j, name in enumerate(joint_names):
            if m.jnt_limited[j] and int(m.jnt_type[j]) not in (_FREE, _BALL):
                dof = int(m.jnt_dofadr[j])
                stops[name] = add_limit_stop(forces, coordinates[name].mobilized_body,
                                             float(m.dof_M0[dof]), *map(float, m.jnt_range[j]),
                                             time_constant, dissipation)
    _warn_unmodelled(mujoco, m, joint_names, joint_limits, friction, disabled)
    return passive, stops


def _warn_unmodelled(mujoco, m, joint_names, joint_limits, friction, disabled):
    """One warning per MuJoCo passive attribute that has no jaxbody force here, naming its joints/tendons/bodies
    (none for what the file's ``<option><flag>`` s disable)."""
    dof_joint = lambda values: {joint_names[m.dof_jntid[d]] for d in np.flatnonzero(np.asarray(values))}  # noqa: E731
    tendons = tendon_names(mujoco, m)
    by_tendon = lambda values: {tendons[t] for t in np.flatnonzero(np.asarray(values))}  # noqa: E731
    source = "MJCF"  # warnings point at the caller of load_mjcf: 4 frames above warn_unmodelled
    if friction == "ignore":
        warn_unmodelled(source, "joint frictionloss", dof_joint(m.dof_frictionloss))
    warn_unmodelled(source, "polynomial joint stiffness (stiffness beyond its first value)",
                    {joint_names[j] for j in np.flatnonzero(np.any(m.jnt_stiffnesspoly != 0, axis=1))})
    warn_unmodelled(source, "polynomial joint damping (damping beyond its first value)",
                    dof_joint(np.any(m.dof_dampingpoly != 0, axis=1)))
    warn_unmodelled(source, "joint springyield (plasticity)", {joint_names[j] for j in np.flatnonzero(m.jnt_springyield)})
    if joint_limits:
        warn_unmodelled(source, "ball joint cone limit (range)",
                        {joint_names[j] for j in range(m.njnt) if m.jnt_limited[j] and m.jnt_type[j] == _BALL})
    if "frictionloss" not in disabled:
        warn_unmodelled(source, "tendon frictionloss", by_tendon(m.tendon_frictionloss))
    warn_unmodelled(source, "polynomial tendon stiffness or damping",
                    by_tendon(np.any(m.tendon_stiffnesspoly != 0, axis=1) | np.any(m.tendon_dampingpoly != 0, axis=1)))
    warn_unmodelled(source, "tendon springyield (plasticity)", by_tendon(m.tendon_springyield))
    body_names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}" for b in range(m.nbody)]
    warn_unmodelled(source, "body gravcomp", {body_names[b] for b in np.flatnonzero(m.body_gravcomp)})
