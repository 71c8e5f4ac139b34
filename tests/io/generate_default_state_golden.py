"""Golden numbers for the imported models' default States (tests/io/test_default_states.py reads them).

    python tests/io/generate_default_state_golden.py      # needs mujoco and opensim 4.6 (extra "golden")

Writes tests/io/golden/default_states.npz:
* MuJoCo 4.0, tests/models/mjx_humanoid.xml and tests/models/keyframes.xml: qpos0 and every ``<key>`` (time,
  qpos, qvel), each with every body's xpos and xmat and, from ``mj_objectVelocity`` (mjOBJ_XBODY: the body frame, world axes), its angular
  velocity and its origin's linear velocity, after ``mj_forward``.
* OpenSim 4.6, tests/models/osim/{gait9dof18musc,gait14dof22musc,joints_constraints}.osim: the State of
  ``initSystem`` (default values and speeds, assembled), its q and u, each coordinate's value and speed by name,
  and every body's X_GB.
"""

from __future__ import annotations

import pathlib

import numpy as np

HERE = pathlib.Path(__file__).parent
MODELS = HERE.parent / "models"
OUT = {}


def mujoco_case(stem):
    import mujoco
    m = mujoco.MjModel.from_xml_path(str(MODELS / f"{stem}.xml"))
    d = mujoco.MjData(m)
    states = [("qpos0", 0.0, m.qpos0.copy(), np.zeros(m.nv))]
    for k in range(m.nkey):
        states.append((mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_KEY, k) or f"key{k}", float(m.key_time[k]),
                       m.key_qpos[k].copy(), m.key_qvel[k].copy()))
    xpos, xmat, w, v = [], [], [], []
    for _, _, qpos, qvel in states:
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_forward(m, d)
        xpos.append(d.xpos[1:].copy())
        xmat.append(d.xmat[1:].reshape(-1, 3, 3).copy())
        vel = np.zeros((m.nbody - 1, 6))
        for b in range(1, m.nbody):
            mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_XBODY, b, vel[b - 1], 0)
        w.append(vel[:, :3])
        v.append(vel[:, 3:])
    OUT[f"{stem}/state_names"] = np.array([s[0] for s in states])
    OUT[f"{stem}/time"] = np.array([s[1] for s in states])
    OUT[f"{stem}/qpos"] = np.array([s[2] for s in states])
    OUT[f"{stem}/qvel"] = np.array([s[3] for s in states])
    OUT[f"{stem}/body_names"] = np.array([mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(1, m.nbody)])
    OUT[f"{stem}/xpos"], OUT[f"{stem}/xmat"] = np.array(xpos), np.array(xmat)
    OUT[f"{stem}/w_G"], OUT[f"{stem}/v_G"] = np.array(w), np.array(v)
    print(stem, m.nq, m.nv, m.nkey)


def opensim_case(stem):
    import opensim as osim
    model = osim.Model(str(MODELS / "osim" / f"{stem}.osim"))
    state = model.initSystem()
    coords = list(model.getCoordinateSet())
    bodies = list(model.getBodySet())
    X = [b.getTransformInGround(state) for b in bodies]
    OUT[f"{stem}/coordinate_names"] = np.array([c.getName() for c in coords])
    OUT[f"{stem}/values"] = np.array([c.getValue(state) for c in coords])
    OUT[f"{stem}/speeds"] = np.array([c.getSpeedValue(state) for c in coords])
    OUT[f"{stem}/default_values"] = np.array([c.getDefaultValue() for c in coords])
    OUT[f"{stem}/body_names"] = np.array([b.getName() for b in bodies])
    OUT[f"{stem}/R_GB"] = np.array([[[x.R().get(i, j) for j in range(3)] for i in range(3)] for x in X])
    OUT[f"{stem}/p_GB"] = np.array([[x.p().get(i) for i in range(3)] for x in X])
    moved = np.max(np.abs(OUT[f"{stem}/values"] - OUT[f"{stem}/default_values"]))
    print(stem, len(coords), "coordinates; assembly moved them by up to", moved)


if __name__ == "__main__":
    for stem in ("mjx_humanoid", "keyframes"):
        mujoco_case(stem)
    for stem in ("gait9dof18musc", "gait14dof22musc", "joints_constraints"):
        opensim_case(stem)
    np.savez(HERE / "golden" / "default_states.npz", **OUT)
