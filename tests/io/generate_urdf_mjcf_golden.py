"""Write Pinocchio and MuJoCo reference numbers for tests/io (run: python3 tests/io/generate_urdf_mjcf_golden.py).

Needs pinocchio 4.x and mujoco (the generator only; the tests read tests/io/golden/*.npz). Each model gets 10
random states (seeded). Stored in each library's own coordinates; the tests apply the documented maps.

URDF (Pinocchio): q, v, tau, a; M = crba, ddq = aba(q, v, tau), rnea(q, v, a), oMi of every joint and oMf of every link
(BODY frames, fused links included) (4x4);
fixed base and floating base (JointModelFreeFlyer). Gravity: Pinocchio's default (0, 0, -9.81).
MJCF (MuJoCo): qpos, qvel, qfrc_applied; M = mj_fullM, qacc of mj_forward with constraints, contacts,
springs, dampers and actuation disabled, body poses xpos/xmat; with only equalities enabled (contacts, limits
and friction loss off) their residual rows efc_pos (eq_pos; eq_id: the equality of each row). Armature as in the
files (jaxbody adds it to M's diagonal as MuJoCo does); damping and stiffness need nothing (disabled).
Armature against Pinocchio (``model.armature``, which its crba, aba and rnea include): the Panda (fixed base) and
Solo12 (floating base) again with seeded armature on every dof ("armature" in Pinocchio's v order). The free
flyer gets one value on its three angular dofs and none on its linear ones: armature is attached to the
velocity coordinates, and Pinocchio's linear velocity is in the body frame while jaxbody's (and MuJoCo's) is in
Ground, so armature on those dofs is a different force law (it resists d/dt of a different vector); an
isotropic value on the angular dofs is the same in both (d/dt (R^T w) = R^T dw/dt).
"""

from __future__ import annotations

import os

import mujoco
import numpy as np
import pinocchio as pin

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
GOLDEN = os.path.join(HERE, "golden")
N_STATES = 10


def random_quaternion(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def urdf_golden(file, floating, armature=False):
    path = os.path.join(MODELS, file)
    model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    if armature:
        values = np.random.default_rng(5 + len(file)).uniform(0.01, 0.5, model.nv)
        if floating:
            values[:6] = (0.0, 0.0, 0.0, 0.2, 0.2, 0.2)   # free flyer: v = (linear in the body frame, angular)
        model.armature = values
    data = model.createData()
    rng = np.random.default_rng(17 + len(file) + floating)
    out = {k: [] for k in ("q", "v", "tau", "a", "M", "ddq", "rnea", "oMi", "oMf")}
    links = [f for f in range(model.nframes) if model.frames[f].type == pin.FrameType.BODY]
    for _ in range(N_STATES):
        q = pin.neutral(model)
        for j in range(1, model.njoints):
            jm = model.joints[j]
            if jm.nq == 1:
                q[jm.idx_q] = rng.uniform(-2.0, 2.0)
            elif jm.nq == 7:
                q[jm.idx_q:jm.idx_q + 3] = rng.normal(size=3)
                w, x, y, z = random_quaternion(rng)
                q[jm.idx_q + 3:jm.idx_q + 7] = (x, y, z, w)
            else:
                raise ValueError(f"joint {model.names[j]}: nq = {jm.nq} not generated")
        v, tau, a = (rng.normal(size=model.nv) for _ in range(3))
        out["q"].append(q)
        out["v"].append(v)
        out["tau"].append(tau)
        out["a"].append(a)
        M = pin.crba(model, data, q)
        out["M"].append(np.triu(M) + np.triu(M, 1).T)
        out["ddq"].append(pin.aba(model, data, q, v, tau).copy())
        out["rnea"].append(pin.rnea(model, data, q, v, a).copy())
        pin.framesForwardKinematics(model, data, q)
        out["oMi"].append(np.array([data.oMi[j].homogeneous for j in range(1, model.njoints)]))
        out["oMf"].append(np.array([data.oMf[f].homogeneous for f in links]))
    names = list(model.names)[1:]
    return {**{k: np.array(v) for k, v in out.items()}, "joint_names": np.array(names),
            "idx_q": np.array([model.joints[j].idx_q for j in range(1, model.njoints)]),
            "idx_v": np.array([model.joints[j].idx_v for j in range(1, model.njoints)]),
            "gravity": np.array(model.gravity.linear), "link_names": np.array([model.frames[f].name for f in links]),
            "armature": np.array(model.armature)}


def mjcf_golden(file):
    m = mujoco.MjModel.from_xml_path(os.path.join(MODELS, file))
    m.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_CONTACT
                           | mujoco.mjtDisableBit.mjDSBL_DAMPER | mujoco.mjtDisableBit.mjDSBL_SPRING | mujoco.mjtDisableBit.mjDSBL_ACTUATION)
    d = mujoco.MjData(m)
    m_eq = mujoco.MjModel.from_xml_path(os.path.join(MODELS, file))   # equality rows only: MuJoCo's residuals
    m_eq.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT
                              | mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS)
    d_eq = mujoco.MjData(m_eq)
    eq_pos = []
    rng = np.random.default_rng(29 + len(file))
    out = {k: [] for k in ("qpos", "qvel", "tau", "M", "qacc", "xpos", "xmat")}
    for _ in range(N_STATES):
        qpos = m.qpos0.copy()
        for j in range(m.njnt):
            a = m.jnt_qposadr[j]
            if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
                qpos[a:a + 3] = rng.normal(size=3)
                qpos[a + 3:a + 7] = random_quaternion(rng)
            elif m.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
                qpos[a:a + 4] = random_quaternion(rng)
            else:
                qpos[a] = rng.uniform(-1.5, 1.5)
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, rng.normal(size=m.nv), rng.normal(size=m.nv)
        mujoco.mj_forward(m, d)
        d_eq.qpos[:] = qpos
        mujoco.mj_forward(m_eq, d_eq)
        eq_pos.append(np.array(d_eq.efc_pos[:d_eq.nefc]))
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        for k, x in (("qpos", qpos), ("qvel", d.qvel), ("tau", d.qfrc_applied), ("M", M), ("qacc", d.qacc),
                     ("xpos", d.xpos), ("xmat", d.xmat.reshape(-1, 3, 3))):
            out[k].append(np.array(x))
    return {**{k: np.array(v) for k, v in out.items()}, "qpos0": m.qpos0.copy(), "eq_pos": np.array(eq_pos),
            "eq_id": np.array(d_eq.efc_id[:d_eq.nefc]), "jnt_type": m.jnt_type.copy(),
            "jnt_qposadr": m.jnt_qposadr.copy(), "jnt_dofadr": m.jnt_dofadr.copy(),
            "joint_names": np.array([mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]),
            "body_names": np.array([mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or "world" for b in range(m.nbody)]),
            "eq_names": np.array([mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_EQUALITY, e) for e in range(m.neq)])}


def main():
    os.makedirs(GOLDEN, exist_ok=True)
    for file in ("panda.urdf", "ur5_robot.urdf", "solo12.urdf", "human.urdf"):
        stem = file.split(".")[0]
        for floating in (False, True):
            np.savez_compressed(os.path.join(GOLDEN, f"pinocchio_{stem}_{'floating' if floating else 'fixed'}.npz"),
                                **urdf_golden(file, floating))
    for file, floating in (("panda.urdf", False), ("solo12.urdf", True)):
        np.savez_compressed(os.path.join(GOLDEN, f"pinocchio_{file.split('.')[0]}_armature_"
                                                 f"{'floating' if floating else 'fixed'}.npz"),
                            **urdf_golden(file, floating, armature=True))
    for file in ("mjx_humanoid.xml", "equalities.xml"):
        np.savez_compressed(os.path.join(GOLDEN, f"mujoco_{file.split('.')[0]}.npz"), **mjcf_golden(file))


if __name__ == "__main__":
    main()
