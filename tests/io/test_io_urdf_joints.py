"""load_urdf details against independent formulas: every joint type with general axes and origins, mimic
couplers, fused-link visuals; and an imported robot under jit, vmap and grad."""

import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close, assert_grad_matches_fd

import jaxbody as jb

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
INERTIAL = ('<inertial><origin xyz="0.1 0.02 -0.03" rpy="0.3 0.2 0.1"/><mass value="1.5"/>'
            '<inertia ixx="0.1" iyy="0.12" izz="0.08" ixy="0.01" ixz="0" iyz="0.005"/></inertial>')
JOINTS = [  # name, type, axis, origin xyz, origin rpy
    ("j1", "continuous", (0.3, -0.5, 0.8), (0.1, 0.2, 0.3), (0.4, -0.2, 1.0)),
    ("j2", "prismatic", (-1.0, 0.0, 0.0), (0.0, 0.5, 0.0), (0.0, 0.3, 0.0)),
    ("j3", "planar", (0.0, 1.0, 0.0), (0.2, 0.0, 0.1), (0.1, 0.0, -0.3)),
    ("j4", "floating", (1.0, 0.0, 0.0), (0.0, 0.0, 0.4), (0.0, 0.5, 0.2)),
    ("j5", "revolute", (0.0, 0.0, -1.0), (0.3, 0.0, 0.0), (0.0, 0.0, 0.0)),
]
CHAIN = ["base", "a", "b", "c", "d", "e"]


def chain_urdf(mimic=""):
    text = ['<robot name="chain">'] + [f'<link name="{n}">{INERTIAL}</link>' for n in CHAIN]
    for (name, jtype, axis, xyz, rpy), parent, child in zip(JOINTS, CHAIN, CHAIN[1:]):
        text.append(f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
                    f'<origin xyz="{" ".join(map(str, xyz))}" rpy="{" ".join(map(str, rpy))}"/>'
                    f'<axis xyz="{" ".join(map(str, axis))}"/>{mimic if name == "j5" else ""}</joint>')
    return "\n".join(text + ["</robot>"])


def rot(axis, angle):
    """Rodrigues: rotation by angle about the unit axis."""
    k = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def rpy(r, p, y):
    return rot([0, 0, 1], y) @ rot([0, 1, 0], p) @ rot([1, 0, 0], r)


def test_joint_types_match_urdf_formulas():
    """X_G(child) = X_G(parent) X_origin X_joint(q) with URDF's joint motions, q being the URDF value."""
    imported = jb.io.load_urdf(chain_urdf())
    model = imported.system.realize_topology()
    rng = np.random.default_rng(5)
    j1, j2, j5 = rng.uniform(-2, 2, 3)
    theta, x, y = rng.uniform(-2, 2, 3)
    quat = rng.normal(size=4)
    quat /= np.linalg.norm(quat)
    p4 = rng.normal(size=3)
    c = imported.coordinates
    state = model.default_state()
    for name, values in (("j1", [j1]), ("j2", [j2]), ("j3", [theta, x, y]), ("j4", [*quat, *p4]), ("j5", [j5])):
        assert (c[name].nq, c[name].q_index) == (len(values), 0)
        state = c[name].mobilized_body.set_q_from_vector(state, values)
    s = model.realize(state, jb.Stage.Position)
    R, p = np.eye(3), np.zeros(3)
    for (name, jtype, axis, xyz, angles), child in zip(JOINTS, CHAIN[1:]):
        R, p = R @ rpy(*angles), R @ np.asarray(xyz) + p
        axis = np.asarray(axis) / np.linalg.norm(axis)
        X = imported.bodies[child].get_body_transform(s)
        if jtype == "planar":  # rotation about the normal, translation in the plane (its in-plane axes: importer's)
            R_rel, p_rel = R.T @ np.asarray(X.R), R.T @ (np.asarray(X.p) - p)
            assert_close(R_rel, rot(axis, theta), 1e-12, "planar rotation")
            assert abs(p_rel @ axis) < 1e-12 and abs(np.linalg.norm(p_rel) - np.hypot(x, y)) < 1e-12
            R, p = np.asarray(X.R), np.asarray(X.p)
            continue
        if jtype in ("continuous", "revolute"):
            R = R @ rot(axis, j1 if name == "j1" else j5)
        elif jtype == "prismatic":
            p = p + R @ axis * j2
        else:  # floating: (R(quaternion w, x, y, z), position) in the joint frame
            R, p = R @ np.asarray(jb.Rotation.from_quaternion(quat).R), R @ p4 + p
        assert_close(np.asarray(X.R), R, 1e-12, f"R_G{child}")
        assert_close(np.asarray(X.p), p, 1e-12, f"p_G{child}")


def test_mimic_is_an_exact_coupler():
    """<mimic multiplier offset>: after project, q_j5 = 2 q_j1 + 0.1 to 1e-10."""
    imported = jb.io.load_urdf(chain_urdf('<mimic joint="j1" multiplier="2" offset="0.1"/>'))
    model = imported.system.realize_topology()
    c = imported.coordinates
    state = c["j1"].mobilized_body.set_one_q(model.default_state(), 0, 0.4)
    state = c["j4"].mobilized_body.set_q_from_vector(state, [1.0, 0, 0, 0, 0, 0, 0])
    assert abs(float(imported.constraints["mimic j5"].get_position_errors_as_vector(
        model.realize(state, jb.Stage.Position))[0]) - (0 - 0.9)) < 1e-12
    projected, results = imported.system.project(state, 1e-12)
    q1 = float(c["j1"].mobilized_body.get_one_q(projected, 0))
    q5 = float(c["j5"].mobilized_body.get_one_q(projected, 0))
    assert bool(results.success) and abs(q5 - (2 * q1 + 0.1)) < 1e-10


def test_fused_visuals_and_metadata():
    """Panda: the hand's visual (fixed joints) lands on panda_link7 at the hand's frame; limits, mimic kept."""
    with pytest.warns(UserWarning, match="'panda_hand' -> 'panda_link7'"):
        imported = jb.io.load_urdf(os.path.join(MODELS, "panda.urdf"))
    hand = [v for v in imported.visuals if v.mesh and v.mesh.endswith("hand.dae")]
    assert len(hand) == 1 and hand[0].body == "panda_link7" and hand[0].kind == "mesh"
    X = imported.frames["panda_hand"].X_BF
    assert imported.frames["panda_hand"].mobilized_body is imported.bodies["panda_link7"]
    assert_close(hand[0].X_BV[:3, :3], np.asarray(X.R), 1e-15, "visual at the hand frame")
    assert_close(hand[0].X_BV[:3, 3], np.asarray(X.p), 1e-15, "visual at the hand frame")
    assert imported.joint_limits["panda_joint4"] == (-3.0718, -0.0698) and imported.damping["panda_joint4"] == 0.003
    assert list(imported.constraints) == ["mimic panda_finger_joint2"]
    box = jb.io.load_urdf('<robot name="r"><link name="a"><visual><origin xyz="1 2 3"/><geometry><box size="0.2 0.4 0.6"/>'
                          '</geometry><material name="m"><color rgba="1 0 0 1"/></material></visual></link></robot>')
    (v,) = box.visuals
    assert (v.body, v.kind) == ("a", "box") and np.allclose(v.size, [0.1, 0.2, 0.3]) and np.allclose(v.X_BV[:3, 3], [1, 2, 3])
    assert np.allclose(v.rgba, [1, 0, 0, 1])


@pytest.fixture(scope="module")
def ur5():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imported = jb.io.load_urdf(os.path.join(MODELS, "ur5_robot.urdf"))
    return imported.system.realize_topology()


def test_imported_robot_under_jit_vmap_grad(ur5):
    """UR5: jit(vmap) forward dynamics over 8 states equals 8 single calls; grad w.r.t. q equals FD."""
    model = ur5
    rng = np.random.default_rng(11)
    qs, us = rng.uniform(-2, 2, (8, model.default_state().q.shape[0])), rng.normal(size=(8, 6))

    def udot(q, u):
        return model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Acceleration).acceleration.udot

    batched = jax.jit(jax.vmap(udot))(qs, us)
    assert batched.shape == (8, 6)
    single = jax.jit(udot)
    assert_close(batched, np.array([single(q, u) for q, u in zip(qs, us)]), 1e-12, "vmap vs single")
    weights = jnp.asarray(rng.normal(size=6))

    def f(q):
        return jnp.dot(weights, udot(q, jnp.asarray(us[0])))

    assert_grad_matches_fd(f, jnp.asarray(qs[0]), 1e-6, 1e-6, "d(w . udot)/dq", grad=jax.jit(jax.grad(f))(jnp.asarray(qs[0])))


@pytest.mark.parametrize("gravity, up", [((0, 0, -9.81), (0, 0, 1)), ((0, -9.81, 0), (0, 1, 0)), ((9.81, 0, 0), (-1, 0, 0)),
                                         ((0, 0, 0), (0, 1, 0)), ((1.0, 0, -9.0), (0, 1, 0))])
def test_up_direction_is_against_gravity(gravity, up):
    """Pictures show an imported robot upright: the System's up direction is opposite an axis-aligned gravity
    (URDF's default -z gives +z); zero or oblique gravity keeps Simbody's default +y."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = jb.io.load_urdf(chain_urdf(), gravity=gravity)
    np.testing.assert_array_equal(robot.system.get_up_direction(), up)
