"""Physical invariants under integration."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from golden_cases import build_case, load_case


@functools.lru_cache(maxsize=None)
def floating_tree_quaternion():
    """The 10-body floating tree of the Simbody oracle (free root, ball/gimbal/pin/universal/weld), gravity only."""
    case, _ = load_case("floating_tree")
    euler_model, _ = build_case(case, use_euler_angles=True)
    model = euler_model.with_use_euler_angles(False)
    sample = case["samples"][0]
    q = euler_model.convert_to_quaternions(euler_model.default_state().set_q(jnp.asarray(sample["q"]))).q
    state = model.default_state().set_q(q).set_u(jnp.asarray(sample["u"]))
    return model, state


@jax.jit
def _energy(model, state):
    return model.calc_energy(model.realize(state, jb.Stage.Dynamics))


@pytest.mark.parametrize("method,dt,tol", [("rk4", 1e-3, 1e-8), ("semi_explicit_euler", 1e-3, 5e-2)])
def test_energy_is_conserved(method, dt, tol):
    """Conservative 10-body tree: RK4 at dt = 1e-3 drifts < 1e-8 relative over 1 s."""
    model, state = floating_tree_quaternion()
    n = int(round(1.0 / dt))
    run = jax.jit(lambda m, s: jb.simulate(m, s, dt, n, method=method, save_every=n // 10))
    final, traj = run(model, state)
    E0 = _energy(model, state)
    E = jax.vmap(_energy, in_axes=(None, 0))(model, traj)
    drift = np.max(np.abs(np.asarray(E) - float(E0))) / abs(float(E0))
    assert drift < tol, f"{method}: relative energy drift {drift:.2e}"
    assert float(final.t) == pytest.approx(1.0)
    # The integrator leaves quaternions normalized (it renormalizes after each step; the raw step's own
    # drift is checked in test_raw_rk4_step_keeps_quaternions_near_unit_norm).
    quat = np.asarray(final.q)[model.topology.quaternion_q_index]
    np.testing.assert_allclose(np.linalg.norm(quat, axis=-1), 1.0, atol=1e-14)


def test_raw_rk4_step_keeps_quaternions_near_unit_norm():
    """Before renormalization, one RK4 step of qdot = N(q) u changes |quaternion| only at the method's order.

    This checks N (and the stage combination) rather than the renormalization: a wrong N would move |q| by
    O(dt |u|). A 100x larger step moves it by ~1e10 x more (fifth-order local error), as RK4 should.
    """
    from jaxbody._integrators.methods import calc_ydot

    model, state = floating_tree_quaternion()
    state = state.set_u(jnp.asarray(np.random.default_rng(5).normal(size=state.u.shape)))
    idx = model.topology.quaternion_q_index
    nq = state.q.shape[0]

    def qu_dot(q, u, t=state.t):
        ydot = calc_ydot(model, state, t, jnp.concatenate([q, u, state.z]))
        return ydot[:nq], ydot[nq:nq + u.shape[0]]

    @jax.jit
    def raw_norm_drift(dt):
        q, u = state.q, state.u
        k1 = qu_dot(q, u)
        k2 = qu_dot(q + 0.5 * dt * k1[0], u + 0.5 * dt * k1[1], state.t + 0.5 * dt)
        k3 = qu_dot(q + 0.5 * dt * k2[0], u + 0.5 * dt * k2[1], state.t + 0.5 * dt)
        k4 = qu_dot(q + dt * k3[0], u + dt * k3[1], state.t + dt)
        q_raw = q + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        return jnp.max(jnp.abs(jnp.linalg.norm(q_raw[idx], axis=-1) - 1.0))

    small, large = float(raw_norm_drift(1e-3)), float(raw_norm_drift(1e-1))
    assert small < 1e-13, f"raw RK4 step moved |quaternion| by {small:.2e} at dt = 1e-3"
    assert large > 1e-9, f"the check is blind: dt = 0.1 moved |quaternion| by only {large:.2e}"


def test_free_fall_of_the_mass_center():
    """With gravity only, the system mass center accelerates at g and momentum changes by m g t."""
    model, state = floating_tree_quaternion()
    a_com = jax.jit(lambda m, s: m.calc_system_mass_center_acceleration_in_ground(m.realize(s)))(model, state)
    g = np.asarray(model.forces[0].gravity)
    np.testing.assert_allclose(a_com, g, atol=1e-12)
    final, _ = jax.jit(lambda m, s: jb.simulate(m, s, 1e-3, 200, save_every=200))(model, state)
    momentum = jax.jit(lambda m, s: m.calc_system_momentum_about_ground_origin(m.realize(s, jb.Stage.Velocity))[1])
    p0, p1 = momentum(model, state), momentum(model, final)
    m = float(model.calc_system_mass())
    np.testing.assert_allclose(p1 - p0, m * g * 0.2, rtol=1e-10, atol=1e-9)
