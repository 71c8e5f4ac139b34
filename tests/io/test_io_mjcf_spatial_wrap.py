"""MJCF spatial tendons wrapping sphere and cylinder geoms (side sites outside and inside the geom), pulleys, and
actuators on them and on sites (with and without a refsite), against MuJoCo 4.0.

Golden numbers: tests/io/golden/mujoco_spatial_wrap.npz from tests/io/generate_spatial_wrap_golden.py on
tests/models/spatial_wrap.xml (hinges and slides: q = qpos, u = qvel) at 200 random states. Compared to 1e-10:
ten_length, ten_velocity and ten_J of every tendon (jaxbody._dynamics.paths.mujoco_wrap); actuator_length,
actuator_velocity, actuator_moment, actuator_force and qfrc_actuator; the tendon spring-dampers against
qfrc_passive; qacc and M with MuJoCo's constraints off (jaxbody's tendon-limit stop left out of that sum); the
stop on the wrapped tendon against its documented law. Gradients of the lengths and of the actuator forces
against central differences; everything runs under jit and vmap over the states.
"""

import functools
import os
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close, assert_grad_matches_fd

import jaxbody as jb
from jaxbody.io._passive import LIMIT_DISSIPATION, LIMIT_TIME_CONSTANT

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "models", "spatial_wrap.xml")
GOLDEN = dict(np.load(os.path.join(HERE, "golden", "mujoco_spatial_wrap.npz")))


def tendon_paths(imported):
    """Each tendon's jaxbody path (MuJoCo's tendon order) as the importer builds it."""
    import mujoco

    from jaxbody.io.mjcf_tendons import spatial_path
    m = mujoco.MjModel.from_xml_path(MODEL)
    mobods = [imported.bodies[mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b)] for b in range(m.nbody)]
    return [spatial_path(m, t, mobods) for t in range(m.ntendon)]


@functools.cache
def imported_model():
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # every tendon, spring, limit and actuator here is modelled
        imported = jb.io.load_mjcf(MODEL)
    return imported, imported.system.realize_topology(), tendon_paths(imported)


def golden_states(model, actuators):
    """MuJoCo's states as a batch of jaxbody States with the controls set (q = qpos, u = qvel here)."""
    return jax.vmap(lambda q, u, c: actuators.set_ctrl(model.default_state().set_q(q).set_u(u), c))(
        *(jnp.asarray(GOLDEN[k]) for k in ("qpos", "qvel", "ctrl")))


@functools.cache
def kinematics():
    """Tendon and actuator fields at every golden state (one jit of a vmap)."""
    imported, model, paths = imported_model()

    @jax.jit
    @jax.vmap
    def evaluate(state):
        s = model.realize(state, jb.Stage.Velocity)
        return {"ten_length": jnp.stack([p.calc_length(model, s) for p in paths]),
                "ten_velocity": jnp.stack([p.calc_lengthening_speed(model, s) for p in paths]),
                "ten_J": jnp.stack([-p.calc_moment_arms(model, s) for p in paths]),
                "actuators": imported.actuators.calc_actuator_outputs(model, s)}

    return evaluate(golden_states(model, imported.actuators))


@functools.cache
def dynamics():
    """Passive tendon forces, the limit stop, qacc (without the stop) and M at every golden state."""
    imported, model, _ = imported_model()
    stop = imported.limit_stops["tendon over_both"]
    passive = tuple(imported.passive_forces[f"tendon {n}"][0] for n in ("over_both", "elbow_inside", "sphere_plain"))

    @jax.jit
    @jax.vmap
    def evaluate(state):
        s = model.realize(state, jb.Stage.Dynamics)
        F_stop, f_stop = model.calc_force_contributions_sum(s, (stop,))
        F_passive, f_passive = model.calc_force_contributions_sum(s, passive)
        udot, _ = model.calc_acceleration_ignoring_constraints(
            s, s.dynamics.mobility_forces - f_stop, s.dynamics.body_forces - F_stop)
        return {"qfrc_passive": f_passive + model.multiply_by_system_jacobian_transpose(s, F_passive),
                "stop": f_stop + model.multiply_by_system_jacobian_transpose(s, F_stop),
                "stop_pe": model.calc_force_potential_energy_sum(s, (stop,)), "qacc": udot, "M": model.calc_m(s)}

    return evaluate(golden_states(model, imported.actuators))


def test_the_states_exercise_every_wrap_case():
    """Each wrapping segment wraps in some states and not in others (MuJoCo's ten_wrapnum)."""
    wrapnum = GOLDEN["ten_wrapnum"]
    assert set(np.unique(wrapnum[:, 0])) == {3, 5, 7}      # over_both: neither, one, both wraps
    assert set(np.unique(wrapnum[:, 1])) == {2, 4}         # elbow_inside (inside wrap)
    assert set(np.unique(wrapnum[:, 2])) == {2, 4}         # sphere_plain (no side site)
    assert set(np.unique(wrapnum[:, 3])) == {8, 10}        # pulley branch wrapping the cylinder
    assert all(min(np.sum(wrapnum[:, t] == v) for v in np.unique(wrapnum[:, t])) >= 3 for t in range(4))


@pytest.mark.parametrize("field", ["ten_length", "ten_velocity", "ten_J"])
def test_tendon_kinematics_match_mujoco(field):
    out = kinematics()
    for t, name in enumerate(GOLDEN["tendon_names"]):
        assert_close(out[field][:, t], GOLDEN[field][:, t], 1e-10, f"{name}: {field}")


@pytest.mark.parametrize("field", ["length", "velocity", "moment", "force"])
def test_actuator_fields_match_mujoco(field):
    actual = np.asarray(getattr(kinematics()["actuators"], field))
    for a, name in enumerate(GOLDEN["actuator_names"]):
        assert_close(actual[:, a], GOLDEN[f"actuator_{field}"][:, a], 1e-10, f"actuator {name}: {field}")
    if field == "moment":
        assert np.min(np.max(np.abs(actual), axis=(0, 2))) > 0.05   # every transmission moves


def test_qfrc_actuator_matches_mujoco():
    assert_close(kinematics()["actuators"].mobility_forces, GOLDEN["qfrc_actuator"], 1e-10, "qfrc_actuator")


@pytest.mark.long
def test_passive_qacc_and_mass_matrix_match_mujoco():
    out = dynamics()
    assert_close(out["qfrc_passive"], GOLDEN["qfrc_passive"], 1e-10, "tendon spring-dampers vs qfrc_passive")
    assert_close(out["M"], GOLDEN["M"], 1e-10, "M")
    assert_close(out["qacc"], GOLDEN["qacc"], 1e-10, "qacc (constraints off)")


@pytest.mark.long
def test_limit_stop_on_the_wrapped_tendon_follows_its_law():
    """The stop (jaxbody.io.mjcf_tendons) on ``over_both``: ``T(L, Ldot) ten_J`` with MuJoCo's length, rate and
    ten_J, k = J M0 J^T / tau^2 at qpos0, engaged on both sides of its range in these states."""
    imported, model, paths = imported_model()
    out = dynamics()
    s0 = model.realize(imported.default_state(model), jb.Stage.Position)
    J0 = -paths[0].calc_moment_arms(model, s0)
    k = float(J0 @ model.calc_m(s0) @ J0) / LIMIT_TIME_CONSTANT**2
    L, Ldot = GOLDEN["ten_length"][:, 0], GOLDEN["ten_velocity"][:, 0]
    lower, upper = 0.9, 1.05
    tension = np.where(L > upper, np.minimum(0.0, -k * (L - upper) * (1 + LIMIT_DISSIPATION * Ldot)),
                       np.where(L < lower, np.maximum(0.0, -k * (L - lower) * (1 - LIMIT_DISSIPATION * Ldot)), 0.0))
    assert np.sum(L > upper) >= 5 and np.sum(L < lower) >= 5
    assert_close(out["stop"], tension[:, None] * GOLDEN["ten_J"][:, 0], 1e-10, "stop force")
    np.testing.assert_array_equal(np.asarray(out["stop_pe"]) > 0, (L > upper) | (L < lower))


def test_length_gradients_match_central_differences():
    """d(length)/dq of every tendon (jax.jacfwd through the wrap geometry) at states where the wrap choices do not
    switch within the step, and d(length)/d(radius) of both wrap geoms of ``over_both``."""
    _, model, paths = imported_model()
    s0 = model.default_state()

    def lengths(q):
        s = model.realize(s0.set_q(q), jb.Stage.Position)
        return jnp.stack([p.calc_length(model, s) for p in paths])

    i = 33   # over_both wraps both geoms, elbow_inside its inside wrap, sphere_plain its sphere
    assert list(GOLDEN["ten_wrapnum"][i]) == [7, 4, 4, 8]
    q = jnp.asarray(GOLDEN["qpos"][i])
    assert_grad_matches_fd(jax.jit(lengths), q, 1e-6, 1e-8, "dL/dq", grad=jax.jit(jax.jacfwd(lengths))(q))
    s = model.realize(s0.set_q(q), jb.Stage.Position)
    by_radius = jax.jit(lambda r: eqx.tree_at(lambda p: p.geom_radii, paths[0], r).calc_length(model, s))
    assert_grad_matches_fd(by_radius, paths[0].geom_radii, 1e-7, 1e-8, "dL/dradius")


@pytest.mark.long
def test_actuator_force_gradient_matches_central_differences():
    """jax.jacfwd of qfrc_actuator (gear x tendon moments through the wrap geometry, site transmissions) w.r.t. q
    against central differences at a state with both outside wraps of ``over_both`` and the pulley's wrap engaged
    (an inside wrap's point is held on the geom for derivatives: its second derivatives, here in dqfrc/dq through
    the moment, omit the point's motion)."""
    imported, model, _ = imported_model()
    handle = imported.actuators
    i = 4
    assert list(GOLDEN["ten_wrapnum"][i]) == [7, 2, 2, 10]
    q, u, c = (jnp.asarray(GOLDEN[k][i]) for k in ("qpos", "qvel", "ctrl"))

    def qfrc(q):
        s = model.realize(handle.set_ctrl(model.default_state().set_q(q).set_u(u), c), jb.Stage.Velocity)
        return handle.calc_actuator_outputs(model, s).mobility_forces

    assert_grad_matches_fd(jax.jit(qfrc), q, 1e-6, 1e-6, "dqfrc/dq", grad=jax.jit(jax.jacfwd(qfrc))(q))


MJX_TENDONS = ["fixed_site_wrap", "pulley_fixed_site_wrap", "pulley_site", "pulley_site_wrap", "pulley_wrap",
               "site_wrap", "tendon", "wrap_sidesite"]   # mujoco-mjx's test files with wrap geoms or pulleys


@pytest.mark.long
@pytest.mark.parametrize("stem", MJX_TENDONS)
def test_mjx_wrap_tendon_files_match_mujoco(stem):
    """Every tendon of mujoco-mjx's wrapping/pulley test files (the pip sweep's files with such tendons; none in
    dm_control or gymnasium): ten_length and ten_velocity vs MuJoCo run here, at 5 random states."""
    mujoco = pytest.importorskip("mujoco")
    path = os.path.join(os.path.dirname(mujoco.__file__), "mjx", "test_data", "tendon", f"{stem}.xml")
    if not os.path.exists(path):
        pytest.skip(f"{path} not installed")
    from jaxbody.io.mjcf_tendons import length_and_rate, tendon_path
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imported = jb.io.load_mjcf(path, contact=False)
    model = imported.system.realize_topology()
    name = lambda kind, i, default: mujoco.mj_id2name(m, kind, i) or f"{default}{i}"  # noqa: E731
    mobods = [imported.bodies[name(mujoco.mjtObj.mjOBJ_BODY, b, "body")] for b in range(m.nbody)]
    joints = [name(mujoco.mjtObj.mjOBJ_JOINT, j, "joint") for j in range(m.njnt)]
    tendons = [tendon_path(m, t, imported.coordinates, joints, mobods) for t in range(m.ntendon)]
    evaluate = jax.jit(lambda s: [length_and_rate(*p, model.realize(s, jb.Stage.Velocity)) for p in tendons])
    rng = np.random.default_rng(3)
    for _ in range(5):
        d.qpos[:] = m.qpos0
        scalar = [j for j in range(m.njnt) if m.jnt_type[j] in (2, 3)]
        d.qpos[m.jnt_qposadr[scalar]] += rng.uniform(-0.5, 0.5, len(scalar))
        d.qvel[:] = rng.normal(size=m.nv)
        mujoco.mj_forward(m, d)
        q, u = imported.from_mujoco(d.qpos.copy(), d.qvel.copy())
        for t, (L, Ldot) in enumerate(evaluate(model.default_state().set_q(q).set_u(u))):
            assert_close([L, Ldot], [d.ten_length[t], d.ten_velocity[t]], 1e-10, f"{stem} tendon {t}")
