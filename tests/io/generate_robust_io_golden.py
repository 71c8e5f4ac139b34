"""Write MuJoCo reference numbers for tests/io/test_io_mjcf_names_options.py (run:
python3 tests/io/generate_robust_io_golden.py; needs mujoco, the tests read tests/io/golden/mujoco_pendula.npz).

Model: tests/models/pendula.xml (mujoco-mjx's test model: unnamed free and ball joints beside a joint named
``joint7``; free, ball, slide, hinge and stacked joints; joint and fixed-tendon springs and dampers).
8 seeded random states: qpos, qvel, qfrc_applied (tau); M = mj_fullM; qacc_free = M^-1 (tau - qfrc_bias) (no
passive, constraint, gravcomp or actuator force); xpos/xmat; and for each ``<option><flag>`` variant
("" as written, "spring", "damper", "spring damper" disabled) MuJoCo's qfrc_spring + qfrc_damper (mj_forward).

Joint ``ref`` (mujoco_ref_<model>.npz): dm_control's finger and manipulator (tests/models/dm_control; hinge and
slide joints with ref != 0, springs, dampers, a fixed-tendon equality): qpos0, and at 8 random states (each
hinge/slide at qpos0 + uniform(-1.5, 1.5)) the same M, qacc_free, poses and qfrc_spring + qfrc_damper.
``body_sameframe`` (mujoco_sameframe.npz): SAMEFRAME_XML, a free body whose inertial frame is 2.4e-9 m off its
body frame (MuJoCo's compiler takes them as one): M at 8 random states.
"""

from __future__ import annotations

import os

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
GOLDEN = os.path.join(HERE, "golden")
N_STATES = 8
FLAG_VARIANTS = ("", "spring", "damper", "spring damper")
FLAG_LINE = '<flag contact="disable" />'


def variant(text: str, flags: str) -> str:
    """pendula.xml with the named flags disabled too (the test builds the same text)."""
    extra = "".join(f' {f}="disable"' for f in flags.split())
    return text.replace(FLAG_LINE, f'<flag contact="disable"{extra} />')


def random_qpos(m, rng):
    qpos = m.qpos0.copy()
    for j in range(m.njnt):
        a = m.jnt_qposadr[j]
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            q = rng.normal(size=4)
            qpos[a:a + 3], qpos[a + 3:a + 7] = rng.normal(size=3), q / np.linalg.norm(q)
        elif m.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
            q = rng.normal(size=4)
            qpos[a:a + 4] = q / np.linalg.norm(q)
        else:
            qpos[a] = rng.uniform(-1.5, 1.5)
    return qpos


def pendula_golden():
    text = open(os.path.join(MODELS, "pendula.xml")).read()
    assert FLAG_LINE in text
    models = {flags: mujoco.MjModel.from_xml_string(variant(text, flags)) for flags in FLAG_VARIANTS}
    m = models[""]
    rng = np.random.default_rng(41)
    out = {k: [] for k in ("qpos", "qvel", "tau", "M", "qacc_free", "xpos", "xmat")}
    passive = {flags: [] for flags in FLAG_VARIANTS}
    for _ in range(N_STATES):
        qpos, qvel, tau = random_qpos(m, rng), rng.normal(size=m.nv), rng.normal(size=m.nv)
        for flags, mf in models.items():
            d = mujoco.MjData(mf)
            d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, qvel, tau
            mujoco.mj_forward(mf, d)
            passive[flags].append(np.array(d.qfrc_spring + d.qfrc_damper))
            if flags == "":
                M = np.zeros((m.nv, m.nv))
                mujoco.mj_fullM(m, d, M)
                for k, x in (("qpos", qpos), ("qvel", qvel), ("tau", tau), ("M", M),
                             ("qacc_free", np.linalg.solve(M, tau - d.qfrc_bias)), ("xpos", d.xpos),
                             ("xmat", d.xmat.reshape(-1, 3, 3))):
                    out[k].append(np.array(x))
    return {**{k: np.array(v) for k, v in out.items()},
            **{f"passive_{flags.replace(' ', '_') or 'as_written'}": np.array(v) for flags, v in passive.items()},
            "jnt_type": m.jnt_type.copy(), "jnt_qposadr": m.jnt_qposadr.copy(), "jnt_dofadr": m.jnt_dofadr.copy(),
            "timestep": m.opt.timestep, "integrator": int(m.opt.integrator)}


SAMEFRAME_XML = """<mujoco><worldbody><body name="a" pos="0 0 1"><freejoint/>
  <inertial pos="2.4e-9 0 0" mass="1000" diaginertia="1 2 3"/></body></worldbody></mujoco>"""


def states_golden(m, rng, passive=True):
    """M, qacc_free, poses and (passive) qfrc_spring + qfrc_damper at N_STATES random states around qpos0."""
    out = {k: [] for k in ("qpos", "qvel", "tau", "M", "qacc_free", "xpos", "xmat", "passive")}
    for _ in range(N_STATES):
        qpos = random_qpos(m, rng)
        hinge_slide = np.isin(m.jnt_type, [mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE])
        adr = m.jnt_qposadr[hinge_slide]
        qpos[adr] = m.qpos0[adr] + rng.uniform(-1.5, 1.5, size=len(adr))
        qvel, tau = rng.normal(size=m.nv), rng.normal(size=m.nv)
        d = mujoco.MjData(m)
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, qvel, tau
        mujoco.mj_forward(m, d)
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        for k, x in (("qpos", qpos), ("qvel", qvel), ("tau", tau), ("M", M),
                     ("qacc_free", np.linalg.solve(M, tau - d.qfrc_bias)), ("xpos", d.xpos),
                     ("xmat", d.xmat.reshape(-1, 3, 3)), ("passive", d.qfrc_spring + d.qfrc_damper)):
            out[k].append(np.array(x))
    return {**{k: np.array(v) for k, v in out.items()}, "qpos0": m.qpos0.copy(), "jnt_type": m.jnt_type.copy(),
            "jnt_qposadr": m.jnt_qposadr.copy(), "jnt_dofadr": m.jnt_dofadr.copy()}


def main():
    os.makedirs(GOLDEN, exist_ok=True)
    np.savez_compressed(os.path.join(GOLDEN, "mujoco_pendula.npz"), **pendula_golden())
    for stem in ("finger", "manipulator"):
        m = mujoco.MjModel.from_xml_path(os.path.join(MODELS, "dm_control", f"{stem}.xml"))
        np.savez_compressed(os.path.join(GOLDEN, f"mujoco_ref_{stem}.npz"), **states_golden(m, np.random.default_rng(5)))
    m = mujoco.MjModel.from_xml_string(SAMEFRAME_XML)
    assert m.body_sameframe[1] == 1
    np.savez_compressed(os.path.join(GOLDEN, "mujoco_sameframe.npz"), **states_golden(m, np.random.default_rng(6)))


if __name__ == "__main__":
    main()
