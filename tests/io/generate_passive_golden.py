"""Write MuJoCo's passive-force reference numbers for tests/io/test_io_passive.py
(run: python3 tests/io/generate_passive_golden.py; needs mujoco 4.x, the tests read tests/io/golden/*.npz).

Models: tests/models/passive.xml (every passive joint attribute load_mjcf reads) and the unmodified MJX
humanoid (damping, stiffness and armature on every body joint). MuJoCo's settings: every constraint disabled
(mjDSBL_CONSTRAINT: contacts, joint limits, friction loss, equalities; jaxbody's limits are force elements and
are compared separately), actuation disabled, passive forces (springs and dampers) ON, armature as in the
files (jaxbody models it: MobilizedBody.set_default_armature). Per state: qpos, qvel, qfrc_applied,
qacc of mj_forward, and qfrc_spring + qfrc_damper (MuJoCo's joint and tendon passive forces). States: qpos0
and one near it (tendon inside its spring length range), then 10 random ones (seeded): hinges and slides
uniform in [-1.5, 1.5], ball and free orientations uniform, free positions normal.
"""

from __future__ import annotations

import os

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
GOLDEN = os.path.join(HERE, "golden")
N_RANDOM = 10


def random_quaternion(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def passive_golden(file):
    m = mujoco.MjModel.from_xml_path(os.path.join(MODELS, file))
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_ACTUATION
    d = mujoco.MjData(m)
    rng = np.random.default_rng(41 + len(file))
    states = [m.qpos0.copy(), m.qpos0 + 0.02 * np.isin(np.arange(m.nq), m.jnt_qposadr[m.jnt_type >= 2])]
    for _ in range(N_RANDOM):
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
        states.append(qpos)
    out = {k: [] for k in ("qpos", "qvel", "tau", "qacc", "qfrc_passive")}
    for qpos in states:
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, rng.normal(size=m.nv), rng.normal(size=m.nv)
        mujoco.mj_forward(m, d)
        for k, x in (("qpos", qpos), ("qvel", d.qvel), ("tau", d.qfrc_applied), ("qacc", d.qacc),
                     ("qfrc_passive", d.qfrc_spring + d.qfrc_damper)):
            out[k].append(np.array(x))
    return {**{k: np.array(v) for k, v in out.items()}, "jnt_type": m.jnt_type.copy(),
            "jnt_qposadr": m.jnt_qposadr.copy(), "jnt_dofadr": m.jnt_dofadr.copy(),
            "joint_names": np.array([mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]),
            "nv": np.array(m.nv)}


def main():
    os.makedirs(GOLDEN, exist_ok=True)
    for file in ("passive.xml", "mjx_humanoid.xml"):
        np.savez_compressed(os.path.join(GOLDEN, f"mujoco_passive_{file.split('.')[0]}.npz"), **passive_golden(file))


if __name__ == "__main__":
    main()
