"""State is immutable, realize is pure, and setters drop exactly the caches Simbody invalidates."""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody._dynamics.state import Unrealized


def unrealized(cache) -> bool:
    return isinstance(cache, Unrealized)


@pytest.fixture(scope="module")
def double_pendulum():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0, -9.81, 0])
    body = jb.Body.Rigid(jb.MassProperties(2.0, [0, -0.5, 0], jb.Inertia.from_matrix(np.diag([0.7, 0.2, 0.7]))))
    b1 = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), body, jb.Transform([0, 0.5, 0]))
    b2 = jb.MobilizedBody.Ball(b1, jb.Transform([0, -1.0, 0]), body, jb.Transform())
    return system.realize_topology(), b1, b2


def test_realize_fills_caches_in_order_and_is_pure(double_pendulum):
    model, b1, b2 = double_pendulum
    s0 = model.default_state()
    assert s0.get_system_stage() == jb.Stage.Time
    s1 = model.realize(s0, jb.Stage.Velocity)
    assert unrealized(s0.position) and s0.get_system_stage() == jb.Stage.Time  # input untouched
    assert s1.get_system_stage() == jb.Stage.Velocity and unrealized(s1.dynamics)
    s2 = model.realize(s1, jb.Stage.Acceleration)
    assert s2.get_system_stage() == jb.Stage.Acceleration
    # Valid caches are reused, not recomputed: a (deliberately) altered cache survives realize.
    marked = dataclasses.replace(s1, position=eqx.tree_at(lambda p: p.p_GB, s1.position, s1.position.p_GB + 7.0))
    s3 = model.realize(marked, jb.Stage.Acceleration)
    np.testing.assert_array_equal(s3.position.p_GB, s1.position.p_GB + 7.0)
    np.testing.assert_array_equal(s3.velocity.V_GB, s1.velocity.V_GB)


def test_setters_drop_what_they_invalidate(double_pendulum):
    model, b1, b2 = double_pendulum
    s = model.realize(model.default_state(), jb.Stage.Acceleration)
    assert b1.set_one_q(s, 0, 0.3).get_system_stage() == jb.Stage.Time
    assert unrealized(b2.set_q_from_vector(s, jnp.array([0.6, 0.0, 0.8, 0.0])).position)
    su = b1.set_one_u(s, 0, 1.0)
    assert su.position is s.position and unrealized(su.velocity)
    sf = s.set_mobility_forces(jnp.ones(4))
    assert sf.velocity is s.velocity and unrealized(sf.dynamics) and unrealized(sf.acceleration)
    assert unrealized(s.set_body_forces(jnp.zeros((3, 2, 3))).dynamics)
    assert unrealized(s.set_time(1.0).position)
    dropped = s.drop_caches()
    assert dropped.get_system_stage() == jb.Stage.Time and unrealized(dropped.position) and unrealized(dropped.acceleration)
    assert all(a is b for a, b in zip((dropped.t, dropped.q, dropped.u, dropped.z), (s.t, s.q, s.u, s.z)))


def test_stale_cache_cannot_be_read(double_pendulum):
    model, b1, b2 = double_pendulum
    s = model.realize(model.default_state(), jb.Stage.Acceleration)
    moved = b1.set_one_q(s, 0, 0.3)
    with pytest.raises(jb.StageViolation, match="Stage.Position"):
        b2.get_body_transform(moved)
    with pytest.raises(jb.StageViolation, match="Stage.Velocity"):
        b1.get_body_velocity(b1.set_one_u(s, 0, 2.0))
    with pytest.raises(jb.StageViolation, match="Stage.Acceleration"):
        b1.get_body_acceleration(s.set_mobility_forces(jnp.ones(4)))
    with pytest.raises(jb.StageViolation):
        model.calc_m(moved)
    # After realizing again the reader sees the new configuration, not the old one.
    fresh = model.realize(moved, jb.Stage.Position)
    R = np.asarray(b1.get_body_rotation(fresh))
    np.testing.assert_allclose(R[:2, :2], [[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]], atol=1e-15)


def test_reading_an_unrealized_cache_names_the_stage_to_realize(double_pendulum):
    """``realize(s, Stage.Dynamics).acceleration.udot``: a StageViolation saying where the State is and what to
    call (eagerly and under jit), not an AttributeError on None; the placeholders add no leaves."""
    model, b1, b2 = double_pendulum
    s = model.realize(model.default_state(), jb.Stage.Dynamics)
    message = (r"State.acceleration.udot: the State is realized to Stage.Dynamics, and State.acceleration needs "
               r"Stage.Acceleration; call model.realize\(state, jb.Stage.Acceleration\) first")
    with pytest.raises(jb.StageViolation, match=message):
        s.acceleration.udot
    with pytest.raises(jb.StageViolation, match="realized to Stage.Time, and State.position needs Stage.Position"):
        jax.jit(lambda s: s.position.R_GB)(model.default_state())
    with pytest.raises(jb.StageViolation, match="realized to Stage.Position, and State.velocity"):
        model.realize(s.set_u(jnp.ones(4)), jb.Stage.Position).velocity.V_GB
    assert len(jax.tree_util.tree_leaves(model.default_state())) == 13   # the State's variables only (controls among them)
    assert not hasattr(s.acceleration, "__deepcopy__")   # Python's protocol look-ups still see AttributeError


def test_handles_read_and_write_their_own_slots(double_pendulum):
    model, b1, b2 = double_pendulum
    assert (model.get_num_q(), model.get_num_u(), model.get_num_bodies()) == (5, 4, 3)
    s = b2.set_u_from_vector(b1.set_one_q(model.default_state(), 0, 0.25), jnp.array([1.0, 2.0, 3.0]))
    assert float(b1.get_one_q(s, 0)) == 0.25
    np.testing.assert_array_equal(b2.get_u_as_vector(s), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(b2.get_q_as_vector(s), [1.0, 0, 0, 0])  # default quaternion
    s = model.realize(s, jb.Stage.Acceleration)
    np.testing.assert_allclose(b2.get_mobilizer_velocity(s)[0], [1.0, 2.0, 3.0])
    X = b2.get_body_transform(s)
    X1 = b1.get_body_transform(s)
    # X_GB2 = X_GB1 X_B1F X_FM X_MB2 with X_FM identity here.
    np.testing.assert_allclose((X1 * jb.Transform([0, -1.0, 0])).p, X.p, atol=1e-15)
    assert b2.get_level_in_multibody_tree() == 2 and b2.get_parent_mobilized_body() is b1


def test_stage_checks_also_hold_under_jit(double_pendulum):
    model, b1, b2 = double_pendulum
    with pytest.raises(jb.StageViolation):
        jax.jit(lambda s: b1.get_body_velocity(s))(model.realize(model.default_state(), jb.Stage.Position))


def test_state_remembers_its_orientation_mode(double_pendulum):
    model, b1, b2 = double_pendulum
    s = b2.set_q_from_vector(model.default_state(), jnp.array([0.6, 0.8, 0.0, 0.0]))  # 1.85 rad about x
    assert b2.get_num_q(s) == 4 and not s.use_euler_angles
    euler_model = model.with_use_euler_angles(True)
    e = model.convert_to_euler_angles(s)
    assert e.use_euler_angles and b2.get_num_q(e) == 3
    np.testing.assert_allclose(b2.get_q_as_vector(e), [2 * np.arctan2(0.8, 0.6), 0.0, 0.0], atol=1e-15)
    with pytest.raises(jb.InvalidArgument, match="Euler-angle mode but the model is in quaternion"):
        model.realize(e, jb.Stage.Position)
    with pytest.raises(jb.InvalidArgument, match="quaternion mode but the model is in Euler"):
        euler_model.realize(s, jb.Stage.Position)
    back = euler_model.convert_to_quaternions(e)
    np.testing.assert_allclose(back.q, s.q, atol=1e-15)
    np.testing.assert_allclose(
        model.realize(s, jb.Stage.Position).position.R_GB, euler_model.realize(e, jb.Stage.Position).position.R_GB, atol=1e-15
    )


def test_float32_model_computes_in_float32(double_pendulum):
    model, b1, b2 = double_pendulum
    m32 = model.astype(jnp.float32)
    s = m32.default_state()
    assert s.q.dtype == jnp.float32
    s = m32.realize(b1.set_one_q(s, 0, 0.3), jb.Stage.Acceleration)
    assert s.acceleration.udot.dtype == jnp.float32
    ref = model.realize(b1.set_one_q(model.default_state(), 0, 0.3), jb.Stage.Acceleration)
    np.testing.assert_allclose(s.acceleration.udot, ref.acceleration.udot, rtol=1e-5, atol=1e-5)
