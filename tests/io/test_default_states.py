"""Imported models start where their file puts them (issue 38 item 1).

Reference: tests/io/golden/default_states.npz from tests/io/generate_default_state_golden.py:
* MJCF: MuJoCo 4.0's body poses and velocities (mj_forward, mj_objectVelocity in world axes) at qpos0 and at
  every ``<key>`` of MJX's humanoid and tests/models/keyframes.xml (free body off the origin, ball, slide and
  two hinges in one body, keyframes with velocities and a time) vs ``imported.default_state()`` and
  ``imported.keyframe(name)``: X_GB and V_GB to 1e-10.
* OpenSim 4.6: initSystem's State of two gait models (pelvis at 0.91 m; no ConstraintSet) vs
  ``ImportedOsim.default_state``: X_GB to 1e-10; joints_constraints.osim (four constraint types and locks):
  the assembled State satisfies the constraints to 1e-10 and its poses are near OpenSim's (OpenSim's
  assembler minimizes the distance to the defaults; jaxbody's projection takes the weighted least-squares step).
* URDF: the Panda's joint 4, whose limits exclude zero, starts at its nearest limit, with a warning.
"""

import os
import warnings

import jax
import numpy as np
import pytest
from helpers import assert_close

import jaxbody as jb

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
GOLDEN = dict(np.load(os.path.join(HERE, "golden", "default_states.npz")))


def quiet(loader, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return loader(*args, **kwargs)


def poses_and_velocities(model, bodies, states):
    """(R_GB, p_GB, w_GB, v_GBo) of ``bodies`` at each State, one jitted vmap."""
    @jax.jit
    @jax.vmap
    def evaluate(q, u, t):
        s = model.realize(states[0].set_q(q).set_u(u).set_time(t), jb.Stage.Velocity)
        X = [b.get_body_transform(s) for b in bodies]
        V = [b.get_body_velocity(s) for b in bodies]
        return (jax.numpy.stack([x.R for x in X]), jax.numpy.stack([x.p for x in X]),
                jax.numpy.stack([v[0] for v in V]), jax.numpy.stack([v[1] for v in V]))
    stack = lambda f: np.stack([np.asarray(f(s)) for s in states])  # noqa: E731
    return evaluate(stack(lambda s: s.q), stack(lambda s: s.u), stack(lambda s: s.t))


def poses(model, bodies, state):
    """(R_GB, p_GB) of ``bodies`` at one State (Position stage only: OpenSim's functions compile slowly)."""
    s = model.realize(state, jb.Stage.Position)
    X = [b.get_body_transform(s) for b in bodies]
    return np.stack([np.asarray(x.R) for x in X]), np.stack([np.asarray(x.p) for x in X])


@pytest.mark.parametrize("stem", ["mjx_humanoid", "keyframes"])
def test_mjcf_default_state_and_keyframes_are_mujocos(stem):
    pytest.importorskip("mujoco", reason="load_mjcf parses with MuJoCo's compiler (extra jaxbody[io])")
    g = {k.split("/", 1)[1]: v for k, v in GOLDEN.items() if k.startswith(stem + "/")}
    imported = quiet(jb.io.load_mjcf, os.path.join(MODELS, f"{stem}.xml"))
    model = imported.system.realize_topology()
    names = [str(n) for n in g["state_names"]]
    states = [imported.default_state(model)] + [imported.keyframe(n, model) for n in names[1:]]
    assert sorted(imported.keyframes) == sorted(names[1:])
    R, p, w, v = poses_and_velocities(model, [imported.bodies[str(b)] for b in g["body_names"]], states)
    assert_close(R, g["xmat"], 1e-10, "R_GB vs xmat")
    assert_close(p, g["xpos"], 1e-10, "p_GB vs xpos")
    assert_close(w, g["w_G"], 1e-10, "w_GB vs mj_objectVelocity")
    assert_close(v, g["v_G"], 1e-10, "v_GBo vs mj_objectVelocity")
    assert_close(np.array([float(s.t) for s in states]), g["time"], 0.0, "keyframe times")
    if stem == "mjx_humanoid":   # the torso (body 0) stands where MuJoCo puts it, not 1.26 m under the floor
        assert str(g["body_names"][0]) == "torso" and float(p[0, 0, 2]) == pytest.approx(1.282)
    else:                        # velocities are compared too
        assert np.max(np.abs(g["qvel"])) > 0.1


def test_unknown_keyframe_is_refused_naming_the_known_ones():
    pytest.importorskip("mujoco")
    imported = quiet(jb.io.load_mjcf, os.path.join(MODELS, "keyframes.xml"))
    with pytest.raises(jb.InvalidArgument, match=r"'squat'.*\['bent', 'key1'\]"):
        imported.keyframe("squat")


@pytest.mark.parametrize("stem, pelvis_height", [("gait9dof18musc", 0.91), ("gait14dof22musc", 0.94)])
def test_opensim_default_state_is_init_systems(stem, pelvis_height):
    g = {k.split("/", 1)[1]: v for k, v in GOLDEN.items() if k.startswith(stem + "/")}
    imported = quiet(jb.io.load_osim, os.path.join(MODELS, "osim", f"{stem}.osim"))
    model = imported.system.realize_topology()
    state = imported.default_state(model)
    values, speeds = imported.to_opensim(state)
    assert_close(np.array([values[str(n)] for n in g["coordinate_names"]]), g["values"], 1e-12, "values")
    R, p = poses(model, [imported.bodies[str(b)] for b in g["body_names"]], state)
    assert_close(R, g["R_GB"], 1e-10, "R_GB vs OpenSim initSystem")
    assert_close(p, g["p_GB"], 1e-10, "p_GB vs OpenSim initSystem")
    assert float(p[0, 1]) == pytest.approx(pelvis_height)     # the pelvis stands at its file height


@pytest.mark.long   # the projection of this 21-coordinate, four-constraint model compiles in about 40 s
def test_opensim_default_state_is_assembled():
    stem = "joints_constraints"
    g = {k.split("/", 1)[1]: v for k, v in GOLDEN.items() if k.startswith(stem + "/")}
    imported = quiet(jb.io.load_osim, os.path.join(MODELS, "osim", f"{stem}.osim"))
    model = imported.system.realize_topology()
    unassembled, state = imported.default_state(model, assemble=False), imported.default_state(model)
    perr = lambda s: np.asarray(model.get_q_err(model.realize(s, jb.Stage.Position)))  # noqa: E731
    assert np.max(np.abs(perr(unassembled))) > 1e-2 and np.max(np.abs(perr(state))) < 1e-10
    values, _ = imported.to_opensim(state)
    assert all(float(values[n]) == c.default_value for n, c in imported.coordinate_info.items() if c.locked)
    _, p = poses(model, [imported.bodies[str(b)] for b in g["body_names"]], state)
    assert np.max(np.abs(p - g["p_GB"])) < 0.01, "assembled near OpenSim's assembly"


def test_clamped_default_outside_its_range_is_refused_as_opensim_does():
    text = open(os.path.join(MODELS, "osim", "gait9dof18musc.osim")).read()
    start = text.index('<Coordinate name="knee_angle_r">')
    end = text.index("</Coordinate>", start)
    block = text[start:end]
    broken = block.replace(block[block.index("<default_value>"):block.index("</default_value>")],
                           "<default_value>1.5").replace("<clamped>false", "<clamped>true")
    with pytest.raises(jb.InvalidArgument, match=r"knee_angle_r.*clamped.*outside its range"):
        quiet(jb.io.load_osim, text[:start] + broken + text[end:])


def test_urdf_zero_outside_limits_starts_at_the_nearest_limit():
    with pytest.warns(UserWarning, match=r"'panda_joint4' -> -0.0698"):
        imported = jb.io.load_urdf(os.path.join(MODELS, "panda.urdf"))
    state = imported.default_state()
    for name, (lo, hi) in imported.joint_limits.items():
        assert lo <= float(state.q[imported.q_index(name)]) <= hi, name
    assert float(state.q[imported.q_index("panda_joint4")]) == -0.0698
