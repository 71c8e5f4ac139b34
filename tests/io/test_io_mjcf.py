"""load_mjcf against MuJoCo: MJX's humanoid (27 dofs, three hinges in one body) and tests/models/equalities.xml
(connect, weld and joint equalities; free, ball, slide, multi-hinge bodies; geom-inferred and full inertias).

Reference: tests/io/golden/mujoco_*.npz from tests/io/generate_urdf_mjcf_golden.py (armature as in the files:
jaxbody adds it to M's diagonal as MuJoCo does). M vs mj_fullM, unconstrained udot vs mj_forward's qacc (constraints, contacts, springs,
dampers, actuation disabled; jaxbody's springs and dampers switched off per State and its limit stops not
loaded: tests/io/test_io_passive.py compares those) and every body pose vs xpos/xmat, to 1e-10 relative, after jaxbody.io.mjcf's
coordinate map, ``imported.from_mujoco`` (free: q = (quaternion, position), u = (w, v) in Ground vs qvel = (v, R^T w);
ball: qvel = R_FM^T u; accelerations map exactly as velocities).

MuJoCo's equalities are soft (solref/solimp: they are only approximately satisfied in a simulation) while
jaxbody's are exact, so for them we compare what both define the same way: the residuals at MuJoCo's own
states (connect: the norm of the point offset; joint: the polynomial residual, same sign), zero residuals
at qpos0 (where MuJoCo's compiler defines the connect anchor and the weld's relative pose), and jaxbody's
constraints held to 1e-10 after ``system.project``.
"""

import functools
import os
import warnings

import jax
import numpy as np
import pytest
from helpers import assert_close

import jaxbody as jb

pytest.importorskip("mujoco", reason="load_mjcf parses with MuJoCo's compiler (extra jaxbody[io])")

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")


def coordinate_map(imported, model, qpos, qvel):
    """(q, u, T) of MuJoCo's (qpos, qvel) batch by the public converter ``imported.from_mujoco``, with T its
    Jacobian qvel = T u (also qacc = T udot) from ``to_mujoco`` (see jaxbody.io.engine_coordinates)."""
    q, u = imported.from_mujoco(qpos, qvel)
    s0 = model.default_state()
    T = jax.vmap(lambda q, u: jax.jacfwd(lambda u: imported.to_mujoco(s0.set_q(q).set_u(u))[1])(u))(q, u)
    return np.asarray(q), np.asarray(u), np.asarray(T)


def load(file):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # contact-free by design: the golden numbers are MuJoCo's with contact disabled
        return jb.io.load_mjcf(os.path.join(MODELS, file), joint_limits=False, contact=False)


@functools.cache
def build(stem):
    """One compiled evaluation per model at the 10 golden states (shared by every test of this module)."""
    imported = load(f"{stem}.xml")
    model = imported.system.realize_topology()
    g = dict(np.load(os.path.join(HERE, "golden", f"mujoco_{stem}.npz")))
    names = [str(n) for n in g["body_names"][1:]]
    without_passive = model.default_state()
    for handle in (h for hs in imported.passive_forces.values() for h in hs):
        without_passive = imported.forces.set_force_is_disabled(without_passive, handle, True)

    @jax.jit
    @jax.vmap
    def evaluate(q, u, tau):
        s = model.realize(without_passive.set_q(q).set_u(u).set_mobility_forces(tau), jb.Stage.Dynamics)
        udot, _ = model.calc_acceleration_ignoring_constraints(s, s.dynamics.mobility_forces, s.dynamics.body_forces)
        X = [imported.bodies[n].get_body_transform(s) for n in names]
        perr = {n: c.get_position_errors_as_vector(s) for n, c in imported.constraints.items()}
        return model.calc_m(s), udot, jax.numpy.stack([x.R for x in X]), jax.numpy.stack([x.p for x in X]), perr

    q, u, T = coordinate_map(imported, model, g["qpos"], g["qvel"])
    tau = np.einsum("kij,ki->kj", T, g["tau"])
    M, udot, R, p, perr = evaluate(q, u, tau)
    return {"g": g, "T": T, "M": M, "udot": udot, "R": R, "p": p, "perr": perr, "imported": imported, "model": model}


@pytest.fixture(scope="module", params=["mjx_humanoid", "equalities"])
def case(request):
    return build(request.param)


def test_mass_matrix(case):
    g, T = case["g"], case["T"]
    assert_close(case["M"], np.einsum("kai,kab,kbj->kij", T, g["M"], T), 1e-10, "M = T^T M_mj T")


def test_unconstrained_accelerations(case):
    assert_close(np.einsum("kij,kj->ki", case["T"], case["udot"]), case["g"]["qacc"], 1e-10, "udot vs qacc")


def test_body_poses(case):
    g = case["g"]
    assert_close(case["R"], g["xmat"][:, 1:], 1e-10, "R_GB vs xmat")
    assert_close(case["p"], g["xpos"][:, 1:], 1e-10, "p_GB vs xpos")


@pytest.fixture(scope="module")
def equalities():
    imported = load("equalities.xml")
    return imported, imported.system.realize_topology(), dict(np.load(os.path.join(HERE, "golden", "mujoco_equalities.npz")))


def test_equality_residuals_at_mujoco_states():
    """connect and weld: |point offset| equal; joint: q1 - poly(q2) equal (MuJoCo's residual rows, equalities only).

    MuJoCo's weld orientation rows (a quaternion-difference form scaled by torquescale) differ from Simbody's
    perpendicular-axes rows by definition and are not compared; their zeros are (test below)."""
    case = build("equalities")
    g = case["g"]
    rows = {str(n): g["eq_pos"][:, g["eq_id"] == e] for e, n in enumerate(g["eq_names"])}
    assert_close(np.linalg.norm(case["perr"]["loop"], axis=-1), np.linalg.norm(rows["loop"], axis=-1), 1e-10, "connect")
    assert_close(case["perr"]["couple"], rows["couple"], 1e-10, "joint equality")
    assert_close(np.linalg.norm(case["perr"]["glue"][:, 3:], axis=-1), np.linalg.norm(rows["glue"][:, :3], axis=-1),
                 1e-10, "weld position rows")
    assert np.min(np.linalg.norm(rows["loop"], axis=-1)) > 1e-2   # random states: the residuals are not trivially 0


def test_equalities_hold_at_qpos0_and_after_project(equalities):
    """MuJoCo's compiler defines connect anchors and the weld's relative pose at qpos0: jaxbody's errors vanish there;
    from a perturbed state, ``system.project`` restores all three to 1e-10."""
    imported, model, g = equalities
    state = imported.default_state(model)     # MuJoCo's qpos0
    q0 = np.asarray(state.q)
    errors = lambda s: np.concatenate([np.asarray(c.get_position_errors_as_vector(model.realize(s, jb.Stage.Position)))
                                       for c in imported.constraints.values()])
    assert len(errors(state)) == 3 + 6 + 1
    assert np.max(np.abs(errors(state))) < 1e-12
    rng = np.random.default_rng(3)
    perturbed = state.set_q(q0 + 0.05 * rng.normal(size=q0.shape))
    assert np.max(np.abs(errors(perturbed))) > 1e-3
    projected, results = imported.system.project(perturbed, 1e-12)
    assert bool(results.success)
    assert np.max(np.abs(errors(projected))) < 1e-10


def test_visuals_and_metadata():
    """Geoms as Visual records in MuJoCo's sizes (half-extents, half-lengths); metadata in radians."""
    imported = build("equalities")["imported"]
    kinds = {v.body: (v.kind, v.size.tolist()) for v in imported.visuals}
    assert kinds["base"] == ("box", [0.1, 0.1, 0.05]) and kinds["floater"] == ("cylinder", [0.04, 0.1])
    assert kinds["slider"] == ("box", [0.05, 0.03, 0.02]) and kinds["arm2"] == ("capsule", [0.03, 0.15])
    humanoid = load("mjx_humanoid.xml")
    assert np.allclose(humanoid.joint_limits["knee_right"], np.radians([-160, 2]))
    assert humanoid.armature["knee_right"] == 0.01 and humanoid.damping["knee_right"] == 0.2
    assert np.array_equal(humanoid.gravity, [0, 0, -9.81])


def test_up_direction_is_against_gravity():
    """MuJoCo's gravity (0, 0, -9.81) makes +z the System's up direction, so pictures show the model upright."""
    robot = jb.io.load_mjcf('<mujoco><worldbody><body><joint type="hinge"/><geom size="0.1"/></body></worldbody></mujoco>')
    np.testing.assert_array_equal(robot.system.get_up_direction(), (0, 0, 1))


def test_coordinate_slots_in_the_state():
    """``q_index``/``u_index`` of imported joints (one record type for URDF, MJCF and OpenSim): a ball's 4 q and
    3 u, then two hinges of one body; each slot moves exactly the joint's own coordinate."""
    xml = """<mujoco><worldbody><body name="a"><joint name="ball" type="ball"/><geom size="0.1"/>
      <body name="b" pos="0 0 -0.5"><joint name="h1" type="hinge" axis="1 0 0"/>
      <joint name="h2" type="hinge" axis="0 1 0"/><geom size="0.1"/></body></body></worldbody></mujoco>"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        record = jb.io.load_mjcf(xml)
    assert [(record.q_index(n), record.u_index(n)) for n in ("ball", "h1", "h2")] == [(0, 0), (4, 3), (5, 4)]
    model = record.system.realize_topology()
    state = model.default_state()
    for name in ("h1", "h2"):
        c = record.coordinates[name]
        moved = state.set_u(state.u.at[record.u_index(name)].set(1.0))
        assert float(c.mobilized_body.get_one_u(moved, c.q_index)) == 1.0
