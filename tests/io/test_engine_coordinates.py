"""The public converters between jaxbody's (q, u) and the engines' coordinates (issue 38 item 2).

``ImportedModel.from_mujoco``/``to_mujoco`` (MJCF), ``from_pinocchio``/``to_pinocchio`` (URDF) and
``ImportedOsim.from_opensim``/``to_opensim``: round trips on random batches (unnormalized engine quaternions
come back normalized in direction), Pinocchio's joint order (urdfdom's) against the idx_q/idx_v Pinocchio wrote
into the golden files, jit/vmap/grad (a body height's gradient in MuJoCo's qpos vs central differences), and
the refusals. That each equals the engine's own numbers is what tests/io/test_io_mjcf.py, test_io_passive.py,
test_io_urdf.py (M, udot, X_GB vs MuJoCo and Pinocchio through these converters) and test_default_states.py
(MuJoCo's keyframes with velocities) check.
"""

import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close

import jaxbody as jb

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")


def quiet(loader, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return loader(*args, **kwargs)


@pytest.fixture(scope="module")
def mjcf():
    pytest.importorskip("mujoco", reason="load_mjcf parses with MuJoCo's compiler (extra jaxbody[io])")
    imported = quiet(jb.io.load_mjcf, os.path.join(MODELS, "keyframes.xml"))
    return imported, imported.system.realize_topology()


def random_engine_vectors(imported, rng, n):
    """n random (positions, velocities) in the engine's layout; quaternions unit length."""
    nq = max(e.q_adr + {"mujoco_free": 7, "pinocchio_free": 7, "mujoco_ball": 4}.get(e.kind, 1)
             for e in imported.engine_joints)
    nv = max(e.v_adr + {"mujoco_free": 6, "pinocchio_free": 6, "mujoco_ball": 3}.get(e.kind, 1)
             for e in imported.engine_joints)
    q, v = rng.normal(size=(n, nq)), rng.normal(size=(n, nv))
    for e in imported.engine_joints:
        at = {"mujoco_free": e.q_adr + 3, "pinocchio_free": e.q_adr + 3, "mujoco_ball": e.q_adr}.get(e.kind)
        if at is not None:
            q[:, at:at + 4] /= np.linalg.norm(q[:, at:at + 4], axis=1, keepdims=True)
    return q, v


def test_mujoco_round_trip_batched_and_jitted(mjcf):
    imported, model = mjcf
    qpos, qvel = random_engine_vectors(imported, np.random.default_rng(0), 64)
    q, u = jax.jit(imported.from_mujoco)(qpos, qvel)
    assert q.shape == (64, model.default_state().q.size) and u.shape == (64, model.default_state().u.size)
    states = jax.vmap(lambda q, u: model.default_state().set_q(q).set_u(u))(q, u)
    back_q, back_v = imported.to_mujoco(states)
    assert_close(back_q, qpos, 1e-14, "qpos round trip")
    assert_close(back_v, qvel, 1e-14, "qvel round trip")
    assert np.max(np.abs(np.asarray(u) - qvel)) > 0.1           # the velocities really are re-expressed


def test_mujoco_free_joint_layout(mjcf):
    """Free joint: qpos = (p, quaternion) vs q = (quaternion, p); qvel = (v in world, w in body) vs u = (w, v) in G."""
    imported, model = mjcf
    qpos, qvel = np.zeros(14), np.zeros(12)
    qpos[:7] = (1.0, 2.0, 3.0, np.cos(0.5), 0.0, 0.0, np.sin(0.5))   # turned 1 rad about z
    qpos[7] = 1.0
    qvel[:6] = (0.1, 0.2, 0.3, 1.0, 0.0, 0.0)                           # w = body x = (cos 1, sin 1, 0) in G
    q, u = imported.from_mujoco(qpos, qvel)
    i, j = imported.q_index("root"), imported.u_index("root")
    assert_close(q[i:i + 7], [np.cos(0.5), 0, 0, np.sin(0.5), 1, 2, 3], 1e-15, "free q")
    assert_close(u[j:j + 6], [np.cos(1.0), np.sin(1.0), 0, 0.1, 0.2, 0.3], 1e-15, "free u")


def test_gradient_through_from_mujoco_matches_central_differences(mjcf):
    imported, model = mjcf
    qpos, _ = random_engine_vectors(imported, np.random.default_rng(1), 1)
    forearm = imported.bodies["forearm"]

    def height(qpos):
        q, _ = imported.from_mujoco(qpos)
        return forearm.get_body_origin_location(model.realize(model.default_state().set_q(q), jb.Stage.Position))[2]

    grad = jax.jit(jax.grad(height))(jnp.asarray(qpos[0]))
    h, eye = 1e-6, np.eye(len(qpos[0]))
    fd = np.array([(height(qpos[0] + h * e) - height(qpos[0] - h * e)) / (2 * h) for e in eye])
    assert_close(grad, fd, 1e-7, "d height / d qpos")
    assert np.max(np.abs(fd)) > 0.1


@pytest.mark.parametrize("stem, floating", [("solo12", True), ("human", False)])
def test_pinocchio_joint_order_and_round_trip(stem, floating):
    imported = quiet(jb.io.load_urdf, os.path.join(MODELS, f"{stem}.urdf"), floating_base=floating)
    golden = np.load(os.path.join(HERE, "golden", f"pinocchio_{stem}_{'floating' if floating else 'fixed'}.npz"))
    slots = {e.name: (e.q_adr, e.v_adr) for e in imported.engine_joints}
    assert slots == {str(n): (int(a), int(b)) for n, a, b in zip(golden["joint_names"], golden["idx_q"], golden["idx_v"])}
    q, u = imported.from_pinocchio(golden["q"], golden["v"])
    state = imported.system.realize_topology().default_state()
    back = imported.to_pinocchio(jax.vmap(lambda q, u: state.set_q(q).set_u(u))(q, u))
    scale = np.ones(golden["q"].shape[1])
    if floating:   # Pinocchio's golden quaternions are not unit length: compare directions
        n = np.linalg.norm(golden["q"][:, 3:7], axis=1)
        assert_close(back[0][:, 3:7] * n[:, None], golden["q"][:, 3:7], 1e-14, "quaternion direction")
        scale[3:7] = 0
    assert_close(back[0] * scale, golden["q"] * scale, 1e-14, "q round trip")
    assert_close(back[1], golden["v"], 1e-13, "v round trip")


def test_pinocchio_continuous_joint_is_cos_sin():
    urdf = """<robot name="r"><link name="base"/><link name="wheel"><inertial><mass value="1"/>
      <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="spin" type="continuous"><parent link="base"/><child link="wheel"/><axis xyz="0 0 1"/></joint></robot>"""
    imported = quiet(jb.io.load_urdf, urdf)
    q, u = imported.from_pinocchio(np.array([np.cos(2.5), np.sin(2.5)]), np.array([0.3]))
    assert_close(q, [2.5], 1e-15, "angle")
    back_q, back_v = imported.to_pinocchio(imported.system.realize_topology().default_state().set_q(q).set_u(u))
    assert_close(back_q, [np.cos(2.5), np.sin(2.5)], 1e-15, "cos, sin")


def test_opensim_by_name_round_trip_and_batch():
    imported = quiet(jb.io.load_osim, os.path.join(MODELS, "osim", "arm26.osim"))
    model = imported.system.realize_topology()
    names = list(imported.coordinate_info)
    values = {names[0]: jnp.linspace(-0.5, 0.5, 5)}                   # a batch in one coordinate, defaults elsewhere
    q, u = imported.from_opensim(values, {names[-1]: 0.25}, model=model)
    assert q.shape == (5, model.default_state().q.size)
    states = jax.vmap(lambda q, u: model.default_state().set_q(q).set_u(u))(q, u)
    got, speeds = imported.to_opensim(states)
    assert_close(got[names[0]], values[names[0]], 0.0, "value")
    assert_close(got[names[-1]], np.full(5, imported.coordinate_info[names[-1]].default_value), 0.0, "default kept")
    assert_close(speeds[names[-1]], np.full(5, 0.25), 0.0, "speed")
    array_q, _ = imported.from_opensim(np.arange(len(names), dtype=float), model=model)
    assert [float(array_q[imported.q_index(n)]) for n in names] == list(range(len(names)))


def test_converters_refuse_what_they_cannot_convert(mjcf):
    imported, _ = mjcf
    with pytest.raises(jb.InvalidArgument, match=r"from_mujoco: positions.*\(\.\.\., 14\)"):
        imported.from_mujoco(np.zeros(13))
    with pytest.raises(jb.InvalidArgument, match="use from_mujoco"):
        imported.from_pinocchio(np.zeros(14))
    osim = quiet(jb.io.load_osim, os.path.join(MODELS, "osim", "arm26.osim"))
    with pytest.raises(jb.InvalidArgument, match=r"unknown coordinates \['elbow'\]"):
        osim.from_opensim({"elbow": 1.0})
    planar = quiet(jb.io.load_urdf, """<robot name="p"><link name="a"/><link name="b"><inertial><mass value="1"/>
      <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="slab" type="planar">
      <parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint></robot>""")
    with pytest.raises(jb.InvalidArgument, match=r"joint 'slab': no conversion for its planar"):
        planar.from_pinocchio(np.zeros(4))
