"""Write MuJoCo 4.0's reference numbers for tests/io/test_io_mjcf_spatial_wrap.py (run: python3
tests/io/generate_spatial_wrap_golden.py; needs mujoco 4.x; writes tests/io/golden/mujoco_spatial_wrap.npz).

Model: tests/models/spatial_wrap.xml (hinges and slides only, so qpos = jaxbody's q and qvel = u): spatial tendons
wrapping a sphere and a cylinder with and without side sites (one inside its cylinder), a pulley, actuators on
them and site transmissions with and without a refsite (one sharing ancestors with its site's body). Per state (random qpos spread over the joints' useful
range, random qvel and ctrl, seeded): qpos, qvel, ctrl, ten_length, ten_velocity, ten_J (dense), ten_wrapnum
(how many wrap points each tendon used: which segments wrapped), actuator_length, actuator_velocity,
actuator_moment (dense), actuator_force, qfrc_actuator, qfrc_passive, and, with MuJoCo's constraints disabled
(no tendon limit), qacc and the mass matrix M.
"""

from __future__ import annotations

import os

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "models", "spatial_wrap.xml")
N_STATES = 200
SPREAD = np.array([1.6, 0.6, 2.2, 0.06, 1.5])   # shoulder, shoulder_roll, elbow, wrist_slide, wrist


def dense(m, values, rowadr, rownnz, colind, rows):
    """A MuJoCo sparse matrix (ten_J, actuator_moment) as (rows, nv)."""
    out = np.zeros((rows, m.nv))
    for r in range(rows):
        cols = slice(rowadr[r], rowadr[r] + rownnz[r])
        out[r, colind[cols]] = values[cols]
    return out


def main():
    m = mujoco.MjModel.from_xml_path(MODEL)
    assert m.nq == m.nv
    d = mujoco.MjData(m)
    free = mujoco.MjModel.from_xml_path(MODEL)
    free.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    df = mujoco.MjData(free)
    rng, rng_ctrl = np.random.default_rng(35), np.random.default_rng(36)
    keys = ("qpos", "qvel", "ctrl", "ten_length", "ten_velocity", "ten_J", "ten_wrapnum", "actuator_length",
            "actuator_velocity", "actuator_moment", "actuator_force", "qfrc_actuator", "qfrc_passive", "qacc", "M")
    out = {k: [] for k in keys}
    for _ in range(N_STATES):
        d.qpos[:] = rng.uniform(-1, 1, m.nq) * SPREAD
        d.qvel[:] = rng.normal(size=m.nv)
        d.ctrl[:] = rng_ctrl.uniform(-1.2, 1.2, m.nu)
        mujoco.mj_forward(m, d)
        df.qpos[:], df.qvel[:], df.ctrl[:] = d.qpos, d.qvel, d.ctrl
        mujoco.mj_forward(free, df)
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(free, df, M)
        values = {"ten_J": dense(m, d.ten_J, m.ten_J_rowadr, m.ten_J_rownnz, m.ten_J_colind, m.ntendon),
                  "actuator_moment": dense(m, d.actuator_moment, d.moment_rowadr, d.moment_rownnz, d.moment_colind,
                                           m.nu), "qacc": df.qacc, "M": M}
        for k in keys:
            out[k].append(np.array(values[k] if k in values else getattr(d, k)))
    names = lambda kind, n: np.array([mujoco.mj_id2name(m, kind, i) for i in range(n)])  # noqa: E731
    np.savez_compressed(os.path.join(HERE, "golden", "mujoco_spatial_wrap.npz"),
                        tendon_names=names(mujoco.mjtObj.mjOBJ_TENDON, m.ntendon),
                        actuator_names=names(mujoco.mjtObj.mjOBJ_ACTUATOR, m.nu),
                        mujoco_version=np.array(mujoco.__version__), **{k: np.array(v) for k, v in out.items()})


if __name__ == "__main__":
    main()
