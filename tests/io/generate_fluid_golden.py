"""Write MuJoCo's fluid-force reference numbers for tests/io/test_io_mjcf_fluid.py
(run: python3 tests/io/generate_fluid_golden.py; needs mujoco 4.x, the test reads tests/io/golden/mujoco_fluid_*.npz).

Models: dm_control's fish (free joint, density 5000) and 6-link swimmer (tests/models/dm_control/swimmer6.xml,
written here by ``write_swimmer6`` from
``dm_control.suite.swimmer.get_model_and_assets(6)``, density 3000), and
tests/models/fluid.xml (density, viscosity and wind; rotated, offset inertial frames; a massless body), and
tests/models/fluid_ellipsoid.xml (the ellipsoid model on a free body and a ball-hinge-slide-hinge chain). Per
state (qpos0, then random: hinges and slides uniform in [-1.5, 1.5], ball and free orientations uniform, free
positions normal; velocities normal, times 3 so the quadratic drag dominates): qpos, qvel, qfrc_fluid of
mj_forward, and qacc with every constraint and actuation disabled (passive forces, fluid included, on).
"""

from __future__ import annotations

import os

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
N_RANDOM = 12
FILES = {"fish": "dm_control/fish.xml", "swimmer6": "dm_control/swimmer6.xml", "fluid": "fluid.xml",
         "ellipsoid": "fluid_ellipsoid.xml"}


def random_quaternion(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def fluid_golden(file):
    m = mujoco.MjModel.from_xml_path(os.path.join(MODELS, file))
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_ACTUATION
    d = mujoco.MjData(m)
    rng = np.random.default_rng(11 + len(file))
    states = [m.qpos0.copy()]
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
    out = {k: [] for k in ("qpos", "qvel", "qacc", "qfrc_fluid", "qfrc_passive")}
    for qpos in states:
        d.qpos[:], d.qvel[:] = qpos, 3 * rng.normal(size=m.nv)
        mujoco.mj_forward(m, d)
        for k, x in (("qpos", qpos), ("qvel", d.qvel), ("qacc", d.qacc), ("qfrc_fluid", d.qfrc_fluid),
                     ("qfrc_passive", d.qfrc_passive)):
            out[k].append(np.array(x))
    return {k: np.array(v) for k, v in out.items()}


def write_swimmer6():
    """tests/models/dm_control/swimmer6.xml: dm_control's 6-link swimmer exactly as its suite builds it."""
    from dm_control.suite import swimmer

    xml, _ = swimmer.get_model_and_assets(6)
    with open(os.path.join(MODELS, FILES["swimmer6"]), "wb") as f:
        f.write(xml if isinstance(xml, bytes) else xml.encode())


if __name__ == "__main__":
    import sys

    stems = sys.argv[1:] or list(FILES)   # e.g. ``ellipsoid`` to write that file only
    if "swimmer6" in stems:
        write_swimmer6()
    for stem in stems:
        file = FILES[stem]
        g = fluid_golden(file)
        print(stem, "max |qfrc_fluid|", np.abs(g["qfrc_fluid"]).max())
        np.savez(os.path.join(HERE, "golden", f"mujoco_fluid_{stem}.npz"), **g)
