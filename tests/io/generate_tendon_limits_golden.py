"""Write MuJoCo's tendon-limit reference numbers for tests/io/test_io_mjcf_tendon_limits.py
(run: python3 tests/io/generate_tendon_limits_golden.py; needs mujoco 4.x, the test reads
tests/io/golden/mujoco_tendon_limits_<stem>.npz).

Models: dm_control's ball_in_cup (a limited spatial tendon through two sites) and tests/models/tendon_limits.xml
(a limited fixed tendon and a limited spatial tendon through three sites). Per state (qpos0, then random
hinge/slide positions around qpos0 and random velocities, seeded): qpos, qvel, MuJoCo's ten_length,
ten_velocity and ten_J (the moment arms dL/dqvel), and ``limit_active``: whether mj_forward made a tendon-limit
constraint row for that tendon (MuJoCo's own decision that the stop engages). Per model: m_eff = J M J^T at
qpos0 (armature included; jaxbody's stiffness rule) and the tendon ranges.
"""

from __future__ import annotations

import os

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
N_STATES = 40
FILES = {"ball_in_cup": "dm_control/ball_in_cup.xml", "tendon_limits": "tendon_limits.xml"}


def dense_tendon_jacobian(m, d) -> np.ndarray:
    """MuJoCo's tendon Jacobian ``ten_J`` (stored sparse, rows ``m.ten_J_rowadr/rownnz/colind``) as (ntendon, nv)."""
    J = np.zeros((m.ntendon, m.nv))
    for t in range(m.ntendon):
        cols = slice(m.ten_J_rowadr[t], m.ten_J_rowadr[t] + m.ten_J_rownnz[t])
        J[t, m.ten_J_colind[cols]] = d.ten_J[cols]
    return J


def golden(file, spread):
    m = mujoco.MjModel.from_xml_path(os.path.join(MODELS, file))
    assert m.nq == m.nv and np.all(m.tendon_margin == 0)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    M0 = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M0)
    J0 = dense_tendon_jacobian(m, d)
    rng = np.random.default_rng(7 + len(file))
    out = {k: [] for k in ("qpos", "qvel", "ten_length", "ten_velocity", "ten_J", "limit_active")}
    for i in range(N_STATES):
        d.qpos[:] = m.qpos0 + (0 if i == 0 else rng.uniform(-spread, spread, m.nq))
        d.qvel[:] = rng.normal(size=m.nv)
        mujoco.mj_forward(m, d)
        rows = d.efc_type[:d.nefc] == mujoco.mjtConstraint.mjCNSTR_LIMIT_TENDON
        active = np.zeros(m.ntendon, bool)
        active[d.efc_id[:d.nefc][rows]] = True
        for k, x in (("qpos", d.qpos), ("qvel", d.qvel), ("ten_length", d.ten_length),
                     ("ten_velocity", d.ten_velocity), ("ten_J", dense_tendon_jacobian(m, d)),
                     ("limit_active", active)):
            out[k].append(np.array(x))
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_TENDON, t) for t in range(m.ntendon)]
    return {**{k: np.array(v) for k, v in out.items()}, "m_eff": np.einsum("ti,ij,tj->t", J0, M0, J0),
            "tendon_range": m.tendon_range.copy(), "tendon_names": np.array(names)}


if __name__ == "__main__":
    for stem, file in FILES.items():
        g = golden(file, 0.25 if stem == "ball_in_cup" else 1.2)
        print(stem, "states with an engaged limit per tendon:", g["limit_active"].sum(axis=0))
        np.savez(os.path.join(HERE, "golden", f"mujoco_tendon_limits_{stem}.npz"), **g)
