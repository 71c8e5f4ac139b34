"""An MJCF model's ``<actuator>`` section (motor, position, velocity, intvelocity, damper, cylinder, muscle,
general) as one jaxbody force element computing MuJoCo's actuator_force and qfrc_actuator exactly
(jaxbody._dynamics.actuators.mujoco), read from the compiled MjModel (gear, gain/bias/dyn types and
parameters, ctrl/force/act ranges and their flags, actearly, lengthrange, acc0, the timestep).

The element's controls are MuJoCo's ``ctrl`` (one per actuator, in MuJoCo's order, named after the actuators:
``model.get_control_index(name)``) and its ``State.z`` is MuJoCo's ``act``. Supported transmissions: a hinge or
slide joint (``joint``, ``jointinparent``), a fixed tendon, a spatial tendon (sites, wrap geoms, pulleys:
jaxbody.io.mjcf_tendons) and a site with or without a refsite. Any other actuator (body (adhesion: MuJoCo's
moment is built from its contacts), slider-crank or ball/free-joint transmission; PID, DC-motor, SO3 or user types; a delay; a plugin) keeps its
control and activation slots but gives no force, and one warning names each with the reason. Actuators in a
group MuJoCo disables (``opt.disableactuator``) give no force either (their activations still evolve, as
MuJoCo's do). With ``<flag actuation="disable"/>`` every actuator gives no force and every act_dot is zero (MuJoCo
skips actuation): the controls and activation slots stay, so a State or a policy built for the file still fits.
MuJoCo 4.0's actuator armature and damping, actuator gravity compensation and tendon actuator force limits are not modelled (warned by name).
"""

from __future__ import annotations

import warnings

import jax.numpy as jnp
import numpy as np

from jaxbody._api.mujoco_actuators import MujocoActuatorsHandle
from jaxbody._dynamics.actuators.mujoco import MujocoActuators
from jaxbody._dynamics.actuators.mujoco_transmissions import PathTransmission, SiteTransmission
from jaxbody.io.mjcf_parts import names
from jaxbody.io.mjcf_tendons import local_pose, spatial_path

_GAIN = {0: "fixed", 1: "affine", 2: "muscle"}
_BIAS = {0: "none", 1: "affine", 2: "muscle"}
_DYN = {0: "none", 1: "integrator", 2: "filter", 3: "filterexact", 4: "muscle"}
_HINGE_OR_SLIDE = (2, 3)
_TRN_JOINT, _TRN_JOINTINPARENT, _TRN_TENDON, _TRN_SITE, _WRAP_JOINT = 0, 1, 3, 4, 1


def _ancestors(mobod) -> list:
    """``mobod`` and its ancestors up to Ground."""
    chain = []
    while mobod is not None:
        chain.append(mobod)
        mobod = mobod.parent
    return chain


def _site_transmission(m, i, mobods):
    """Actuator i's site transmission (jaxbody._dynamics.actuators.mujoco_transmissions.SiteTransmission)."""
    site, ref = int(m.actuator_trnid[i, 0]), int(m.actuator_trnid[i, 1])
    pose = lambda s: local_pose(m, m.site_pos[s], m.site_quat[s], int(m.site_sameframe[s]), int(m.site_bodyid[s]))  # noqa: E731
    body = mobods[m.site_bodyid[site]]
    (p, R), (p_ref, R_ref) = pose(site), pose(ref) if ref >= 0 else (np.zeros(3), np.eye(3))
    common = ([] if ref < 0 else
              [b for b in _ancestors(body) if any(b is c for c in _ancestors(mobods[m.site_bodyid[ref]]))])
    f = lambda x: jnp.asarray(np.asarray(x, dtype=float))  # noqa: E731
    return SiteTransmission(
        row=i, body=body.index, ref_body=mobods[m.site_bodyid[ref]].index if ref >= 0 else -1,
        common_u=tuple(b.u_start + k for b in common if b.parent is not None for k in range(b.get_num_u())),
        gear=f(m.actuator_gear[m.actuator_outadr[i]]), station=f(p), rotation=f(R), ref_station=f(p_ref),
        ref_rotation=f(R_ref))


def _transmission(m, i, joint_names, mobods):
    """``(coefficients, transmission, why)``: actuator i's transmission as {joint name: coefficient} (a joint or a
    fixed tendon) or a jaxbody transmission (a spatial tendon or a site), or why it is unsupported."""
    trn, target = int(m.actuator_trntype[i]), int(m.actuator_trnid[i, 0])
    if trn in (_TRN_JOINT, _TRN_JOINTINPARENT):
        if int(m.jnt_type[target]) not in _HINGE_OR_SLIDE:
            return None, None, f"a transmission on ball/free joint {joint_names[target]!r}"
        return {joint_names[target]: 1.0}, None, None
    if trn == _TRN_TENDON:
        adr, num = int(m.tendon_adr[target]), int(m.tendon_num[target])
        if any(int(m.wrap_type[k]) != _WRAP_JOINT for k in range(adr, adr + num)):
            return None, PathTransmission(row=i, path=spatial_path(m, target, mobods)), None
        coefs: dict = {}
        for k in range(adr, adr + num):
            name = joint_names[int(m.wrap_objid[k])]
            coefs[name] = coefs.get(name, 0.0) + float(m.wrap_prm[k])
        return coefs, None, None
    if trn == _TRN_SITE:
        return None, _site_transmission(m, i, mobods), None
    kinds = {2: "slider-crank", 5: "body (adhesion: its moment comes from MuJoCo's contacts)", 6: "SO3"}
    return None, None, f"a {kinds.get(trn, str(trn))} transmission"


def _unsupported_type(m, i):
    """Why MuJoCo computes actuator i in a way this element does not, or None."""
    gain, bias, dyn = int(m.actuator_gaintype[i]), int(m.actuator_biastype[i]), int(m.actuator_dyntype[i])
    if gain not in _GAIN or bias not in _BIAS or dyn not in _DYN:
        return f"gaintype {gain}, biastype {bias}, dyntype {dyn} (PID, DC-motor, SO3 or user)"
    if int(m.actuator_plugin[i]) >= 0:
        return "an actuator plugin"
    if int(m.actuator_ctrlnum[i]) != 1 or int(m.actuator_outnum[i]) != 1:
        return f"{int(m.actuator_ctrlnum[i])} inputs and {int(m.actuator_outnum[i])} outputs"
    if float(m.actuator_delay[i]) != 0:
        return f"a control delay of {float(m.actuator_delay[i])} s"
    if int(m.actuator_actnum[i]) != (0 if dyn == 0 else 1):
        return f"{int(m.actuator_actnum[i])} activation states"
    return None


def add_mjcf_actuators(mujoco, m, forces, coordinates: dict, joint_names, mobods) -> MujocoActuatorsHandle | None:
    """Register the element for every actuator of the compiled model ``m`` (None when it has none)."""
    if m.nu == 0:
        return None
    actuator_names = names(mujoco, m, mujoco.mjtObj.mjOBJ_ACTUATOR, m.nu, "actuator")
    actuation_off = bool(m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_ACTUATION)
    clamp_ctrl = not (m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_CLAMPCTRL)
    rows, left_out, supported, active, transmissions = [], [], [], [], []
    for i in range(m.nu):
        coefs, transmission, why = _transmission(m, i, joint_names, mobods)
        why = why or _unsupported_type(m, i)
        group = int(m.actuator_group[i])
        disabled = actuation_off or (0 <= group <= 30 and bool(m.opt.disableactuator & (1 << group)))
        if why:
            left_out.append(f"{actuator_names[i]} ({why})")
        rows.append(coefs or {})
        if transmission is not None and why is None:
            transmissions.append(transmission)
        supported.append(why is None)
        active.append(why is None and not disabled)
    clamped_joints = [joint_names[j] for j in range(m.njnt) if m.jnt_actfrclimited[j] and m.jnt_type[j] in _HINGE_OR_SLIDE]
    joints = list(dict.fromkeys([j for r in rows for j in r] + clamped_joints))
    coupling = np.array([[r.get(j, 0.0) for j in joints] for r in rows], dtype=float).reshape(m.nu, len(joints))
    jid = {n: k for k, n in enumerate(joint_names)}
    clamped = tuple(k for k, j in enumerate(joints) if m.jnt_actfrclimited[jid[j]])
    actfrcrange = np.array([m.jnt_actfrcrange[jid[j]] for j in joints], dtype=float).reshape(len(joints), 2)
    _warn_unmodelled(m, actuator_names, joints, jid, left_out)
    f = lambda x: jnp.asarray(np.asarray(x, dtype=float))  # noqa: E731
    flags = lambda a: tuple(bool(x) for x in a)  # noqa: E731
    outs = np.array(m.actuator_outadr, dtype=int)

    def build():
        return MujocoActuators(
            gain_type=tuple(_GAIN.get(int(t), "fixed") for t in m.actuator_gaintype),
            bias_type=tuple(_BIAS.get(int(t), "none") for t in m.actuator_biastype),
            dyn_type=tuple(_DYN.get(int(t), "none") if ok and not actuation_off else "none"
                           for t, ok in zip(m.actuator_dyntype, supported)),
            act_index=tuple(int(m.actuator_actadr[i]) if supported[i] and m.actuator_dyntype[i] else -1
                            for i in range(m.nu)),
            actearly=flags(m.actuator_actearly), ctrllimited=flags(np.asarray(m.actuator_ctrllimited) & clamp_ctrl),
            forcelimited=flags(m.actuator_forcelimited), actlimited=flags(m.actuator_actlimited), active=tuple(active),
            dof_q=tuple(coordinates[j].mobilized_body.q_start for j in joints),
            dof_u=tuple(coordinates[j].mobilized_body.u_start for j in joints),
            clamped_dofs=clamped, num_act=int(m.na),
            gear=f(m.actuator_gear[outs, 0]), coupling=f(coupling), gainprm=f(m.actuator_gainprm[:, :10]),
            biasprm=f(m.actuator_biasprm[:, :10]), dynprm=f(m.actuator_dynprm[:, :10]), ctrlrange=f(m.actuator_ctrlrange),
            forcerange=f(m.actuator_forcerange), actrange=f(m.actuator_actrange), lengthrange=f(m.actuator_lengthrange[outs]),
            acc0=f(m.actuator_acc0[outs]), actfrcrange=f(actfrcrange), timestep=f(m.opt.timestep),
            transmissions=tuple(transmissions))

    return MujocoActuatorsHandle(forces, build, tuple(actuator_names), num_z=int(m.na))


def _warn_unmodelled(m, actuator_names, joints, jid, left_out):
    notes = [f"actuators giving no force: {', '.join(left_out)}"] if left_out else []
    # an actuator's armature on a tendon is the tendon's armature (jaxbody.io.mjcf_tendons.actuator_armature)
    extra = [n for i, n in enumerate(actuator_names) if np.any(m.actuator_damping[i])
             or (np.any(m.actuator_armature[i]) and m.actuator_trntype[i] != _TRN_TENDON)]
    if extra:
        notes.append(f"actuator armature/damping not modelled: {', '.join(extra)}")
    gravcomp = [n for n, j in jid.items() if m.jnt_actgravcomp[j]]
    if gravcomp:
        notes.append(f"actuator gravity compensation not modelled on joints {', '.join(gravcomp)}")
    tendons = [i for i in range(m.ntendon) if m.tendon_actfrclimited[i]]
    if tendons:
        notes.append(f"tendon actuator force limits not modelled (tendons {tendons})")
    if notes:
        warnings.warn("load_mjcf: " + "; ".join(notes), stacklevel=3)
