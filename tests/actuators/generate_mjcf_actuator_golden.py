"""MuJoCo 4.0's actuator numbers for tests/actuators/test_mjcf_actuators.py.

    python tests/actuators/generate_mjcf_actuator_golden.py        # needs mujoco (pip install -e ".[io]")

For tests/models/actuators.xml (every actuator shortcut and general type, on hinge and slide joints and fixed
tendons) and dm_control's cheetah (tests/models/dm_control/cheetah.xml): at random states (qpos uniform in
the joint ranges, or [-0.5, 0.5] where unlimited; qvel normal(0, 1); ctrl uniform over 1.5 times each
ctrlrange, or [-1.5, 1.5], so that clamping is exercised; act uniform in actrange, [0, 1] for muscles,
[-1, 1] otherwise), ``mj_forward`` gives actuator_length, actuator_velocity, actuator_moment (dense),
actuator_force, qfrc_actuator and act_dot. Writes tests/actuators/golden/mjcf_actuators.json.
"""

from __future__ import annotations

import json
import pathlib

import mujoco
import numpy as np

HERE = pathlib.Path(__file__).parent
MODELS = {"actuators": HERE.parent / "models" / "actuators.xml",
          "cheetah": HERE.parent / "models" / "dm_control" / "cheetah.xml"}
N_STATES = 6


def random_state(m, d, rng):
    for j in range(m.njnt):
        lo, hi = m.jnt_range[j] if m.jnt_limited[j] else (-0.5, 0.5)
        d.qpos[m.jnt_qposadr[j]] = rng.uniform(lo, hi)
    d.qvel[:] = rng.normal(size=m.nv)
    for i in range(m.nu):
        lo, hi = m.actuator_ctrlrange[i] if m.actuator_ctrllimited[i] else (-1.0, 1.0)
        mid, half = 0.5 * (lo + hi), 0.75 * (hi - lo)
        d.ctrl[i] = rng.uniform(mid - half, mid + half)
        adr = m.actuator_actadr[i]
        if adr >= 0:
            lo, hi = (m.actuator_actrange[i] if m.actuator_actlimited[i]
                      else (0.0, 1.0) if m.actuator_dyntype[i] == mujoco.mjtDyn.mjDYN_MUSCLE else (-1.0, 1.0))
            d.act[adr] = rng.uniform(lo, hi)


def model_golden(path, rng):
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    joints = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]
    states = []
    for _ in range(N_STATES):
        random_state(m, d, rng)
        mujoco.mj_forward(m, d)
        moment = np.zeros((m.nu, m.nv))
        mujoco.mju_sparse2dense(moment, d.actuator_moment, d.moment_rownnz, d.moment_rowadr, d.moment_colind)
        states.append({key: np.asarray(value).tolist() for key, value in (
            ("qpos", d.qpos), ("qvel", d.qvel), ("ctrl", d.ctrl), ("act", d.act), ("actuator_length", d.actuator_length),
            ("actuator_velocity", d.actuator_velocity), ("actuator_moment", moment), ("actuator_force", d.actuator_force),
            ("qfrc_actuator", d.qfrc_actuator), ("act_dot", d.act_dot))})
    return {"file": str(path.relative_to(HERE.parent)), "joints": joints,
            "dof_joint": [joints[int(j)] for j in m.dof_jntid], "states": states}


def main():
    rng = np.random.default_rng(35)
    golden = {name: model_golden(path, rng) for name, path in MODELS.items()}
    (HERE / "golden" / "mjcf_actuators.json").write_text(json.dumps(golden))


if __name__ == "__main__":
    main()
