"""What comes out at exact gimbal lock (q1 = +-pi/2 of body-fixed XYZ angles), as README "NaN behaviour" says.

In floating point cos(pi/2) is 6.1e-17 (float64) or -4.4e-8 (float32), not 0, so Euler-angle N gives finite,
huge qdot (about |u| / |cos q1|) and qdotdot rather than inf/NaN. The way to tell is check_singularities:
its distance is |cos q1| and its ``near`` flag works per lane under jit and vmap.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb


@pytest.fixture(scope="module")
def euler_system():
    """A Ball in Euler-angle mode (q = XYZ angles, u = w) and a Gimbal (u = angle rates), both off Ground."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, [0, -9.81, 0])
    matter.set_use_euler_angles(True)
    mp = jb.MassProperties.from_central_inertia(1.0, [0.1, 0.2, 0.3], jb.Inertia(1.0, 2.0, 2.5))
    ball = jb.MobilizedBody.Ball(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="ball")
    gimbal = jb.MobilizedBody.Gimbal(matter.Ground(), jb.Transform([1.0, 0, 0]), jb.Body.Rigid(mp), jb.Transform(),
                                     name="gimbal")
    return system.realize_topology(), ball, gimbal


def _state(model, ball, gimbal, q1):
    state = model.default_state()
    state = ball.set_q_from_vector(state, jnp.stack([jnp.asarray(0.2, q1.dtype), q1, jnp.asarray(-0.4, q1.dtype)]))
    state = gimbal.set_q_from_vector(state, jnp.stack([jnp.asarray(0.1, q1.dtype), q1, jnp.asarray(0.3, q1.dtype)]))
    return state.set_u(jnp.asarray([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], q1.dtype))


@pytest.mark.parametrize("dtype", [jnp.float64, jnp.float32])
@pytest.mark.parametrize("sign", [1, -1])
def test_exact_gimbal_lock_gives_finite_huge_rates_and_a_flag(euler_system, dtype, sign):
    base, ball, gimbal = euler_system
    model = base.astype(dtype)
    q1 = jnp.asarray(sign * np.pi / 2, dtype)
    cos_q1 = abs(float(jnp.cos(q1)))
    assert 0 < cos_q1 < {jnp.float64: 1e-16, jnp.float32: 1e-7}[dtype]  # 6.1e-17 / 4.4e-8: not 0
    state = model.realize(_state(model, ball, gimbal, q1))

    # Ball in Euler mode: N divides by cos q1, so qdot and qdotdot are finite and huge, not inf/NaN ...
    qdot, qdotdot = ball.get_q_dot_as_vector(state), ball.get_q_dot_dot_as_vector(state)
    assert np.all(np.isfinite(qdot)) and np.all(np.isfinite(qdotdot))
    assert 0.05 / cos_q1 < np.max(np.abs(qdot)) < 1.0 / cos_q1
    assert np.max(np.abs(qdotdot)) > 1e-3 / cos_q1**2
    # ... while w and its derivative (u, udot of a Ball) are not singular and stay ordinary.
    assert np.all(np.isfinite(ball.get_u_dot_as_vector(state))) and np.max(np.abs(ball.get_u_dot_as_vector(state))) < 100

    # check_singularities tells: distance |cos q1| and a per-body flag.
    report = jb.check_singularities(model, state)
    np.testing.assert_allclose(np.asarray(report.distance)[[ball.index, gimbal.index]], cos_q1, rtol=1e-6)
    assert bool(report.near[ball.index]) and bool(report.near[gimbal.index]) and bool(report.any_near())
    assert "'ball'" in report.summary() and "'gimbal'" in report.summary()

    # The flag is per lane under jit + vmap: a batch of one locked and one regular configuration.
    regular = _state(model, ball, gimbal, jnp.asarray(0.3, dtype))
    batch = jax.tree_util.tree_map(lambda a, b: jnp.stack([a, b]), _state(model, ball, gimbal, q1), regular)
    near = jax.jit(jax.vmap(lambda s: jb.check_singularities(model, s).near))(batch)
    assert np.asarray(near)[:, [ball.index, gimbal.index]].tolist() == [[True, True], [False, False]]
