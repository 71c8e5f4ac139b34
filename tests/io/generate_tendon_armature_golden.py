"""Write MuJoCo's tendon-armature reference numbers for tests/io/test_io_mjcf_tendon_armature.py
(run: python3 tests/io/generate_tendon_armature_golden.py; needs mujoco 4.x, the test reads
tests/io/golden/mujoco_tendon_armature_<stem>.npz).

Models: tests/models/mjx_tendon_armature.xml (MuJoCo's MJX test file ``tendon/armature.xml``: two spatial tendons
with armature between a world site and a slide-hinge body) and tests/models/tendon_armature.xml (a fixed tendon,
spatial tendons through sites on a free body, a ball-joint chain and the world, armature from an actuator). Per
state (qpos0, then random: free positions normal, free and ball orientations uniform, hinges and slides uniform
in [-1.2, 1.2] around qpos0; velocities normal): qpos, qvel, MuJoCo's mass matrix (mj_fullM: qM with
``mj_tendonArmature``), qfrc_bias (with ``mj_tendonBias``) and qacc of mj_forward (constraints disabled; no
passive forces or controls in these files), and the same without tendon armature (``M_plain``, ``qacc_plain``:
tendon_armature and actuator_armature set to 0) to show the armature matters.

Beside an equality constraint: tests/models/tendon_armature_equality.xml (spatial and fixed tendons with armature,
a linear joint equality). MuJoCo's equality rows are soft (solref/solimp) and ask ``efc_J qacc = aref`` (no
Jdot qvel term, which is zero for a linear joint coupling), so the reference is their stiff limit, the ideal
constraint's qacc from MuJoCo's own numbers: at 6 states assembled by MuJoCo's rows (qvel projected onto their
null space; tests/io/generate_mjcf_equality_golden.py's assembly), with M = mj_fullM (tendon armature in),
qacc_smooth (MuJoCo's unconstrained qacc, the armature's bias in) and efc_J,
``qacc = qacc_smooth - M^-1 J^T (J M^-1 J^T)^-1 J qacc_smooth``; the same without tendon armature (qacc_plain),
and MuJoCo's own qacc with the default solimp (qacc_soft) and with solimp 0.9999 (checked here to approach qacc).
"""

from __future__ import annotations

import os

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
N_RANDOM = 12
FILES = {"mjx_armature": "mjx_tendon_armature.xml", "tendon_armature": "tendon_armature.xml"}


def random_states(m, rng):
    states = [m.qpos0.copy()]
    for _ in range(N_RANDOM):
        qpos = m.qpos0.copy()
        for j in range(m.njnt):
            a = m.jnt_qposadr[j]
            if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
                qpos[a:a + 3] = rng.normal(size=3)
                q = rng.normal(size=4)
                qpos[a + 3:a + 7] = q / np.linalg.norm(q)
            elif m.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
                q = rng.normal(size=4)
                qpos[a:a + 4] = q / np.linalg.norm(q)
            else:
                qpos[a] += rng.uniform(-1.2, 1.2)
        states.append(qpos)
    return states


def evaluate(m, qpos, qvel):
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    return M, d.qfrc_bias.copy(), d.qacc.copy()


def golden(file):
    m = mujoco.MjModel.from_xml_path(os.path.join(MODELS, file))
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    plain = mujoco.MjModel.from_xml_path(os.path.join(MODELS, file))
    plain.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    plain.tendon_armature[:] = 0
    plain.actuator_armature[:] = 0
    rng = np.random.default_rng(5 + len(file))
    out = {k: [] for k in ("qpos", "qvel", "M", "qfrc_bias", "qacc", "M_plain", "qacc_plain")}
    for qpos in random_states(m, rng):
        qvel = rng.normal(size=m.nv)
        M, bias, qacc = evaluate(m, qpos, qvel)
        M_plain, _, qacc_plain = evaluate(plain, qpos, qvel)
        for k, x in (("qpos", qpos), ("qvel", qvel), ("M", M), ("qfrc_bias", bias), ("qacc", qacc),
                     ("M_plain", M_plain), ("qacc_plain", qacc_plain)):
            out[k].append(np.array(x))
    return {k: np.array(v) for k, v in out.items()}


def equality_golden(file="tendon_armature_equality.xml", n_states=6):
    import generate_mjcf_equality_golden as eq

    def load(armature, stiff=False):
        m = mujoco.MjModel.from_xml_path(os.path.join(MODELS, file))
        m.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
        if not armature:
            m.tendon_armature[:] = 0
        if stiff:
            m.eq_solimp[:, :2] = 0.9999
        return m, mujoco.MjData(m)

    (m, d), (plain, d_plain), (stiff, d_stiff) = load(True), load(False), load(True, stiff=True)
    assert m.neq == 1 and m.eq_type[0] == mujoco.mjtEq.mjEQ_JOINT and not np.any(m.eq_data[0][2:5])  # linear
    rng = np.random.default_rng(43)
    out = {k: [] for k in ("qpos", "qvel", "qacc", "qacc_plain", "qacc_soft", "qacc_stiff")}

    def ideal(m, d, qpos, qvel):
        _, J, _ = eq.rows(m, d, qpos, qvel)     # mj_forward at (qpos, qvel)
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        a0 = d.qacc_smooth.copy()
        MinvJt = np.linalg.solve(M, J.T)
        return a0 - MinvJt @ np.linalg.solve(J @ MinvJt, J @ a0), d.qacc.copy()

    for _ in range(n_states):
        qpos = eq.assemble(m, d, eq.random_qpos(m, rng, 1.0))
        _, J, _ = eq.rows(m, d, qpos)
        qvel = rng.normal(size=m.nv)
        qvel -= np.linalg.pinv(J) @ (J @ qvel)
        qacc, qacc_soft = ideal(m, d, qpos, qvel)
        qacc_plain, _ = ideal(plain, d_plain, qpos, qvel)
        _, qacc_stiff = ideal(stiff, d_stiff, qpos, qvel)
        assert np.max(np.abs(qacc_stiff - qacc)) < 1e-3 * np.max(np.abs(qacc)), "MuJoCo's stiff limit is qacc"
        for k, v in (("qpos", qpos), ("qvel", qvel), ("qacc", qacc), ("qacc_plain", qacc_plain),
                     ("qacc_soft", qacc_soft), ("qacc_stiff", qacc_stiff)):
            out[k].append(np.array(v))
    return {k: np.array(v) for k, v in out.items()}


if __name__ == "__main__":
    g = equality_golden()
    print("equality: max |qacc - qacc_plain|", np.abs(g["qacc"] - g["qacc_plain"]).max(),
          "max |qacc - MuJoCo's soft qacc|", np.abs(g["qacc"] - g["qacc_soft"]).max(),
          "(solimp 0.9999:", np.abs(g["qacc"] - g["qacc_stiff"]).max(), ")")
    np.savez(os.path.join(HERE, "golden", "mujoco_tendon_armature_equality.npz"), **g)
    for stem, file in FILES.items():
        g = golden(file)
        print(stem, "max |M - M_plain|", np.abs(g["M"] - g["M_plain"]).max(),
              "max |qacc - qacc_plain|", np.abs(g["qacc"] - g["qacc_plain"]).max())
        np.savez(os.path.join(HERE, "golden", f"mujoco_tendon_armature_{stem}.npz"), **g)
