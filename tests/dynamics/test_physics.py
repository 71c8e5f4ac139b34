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
    # Quaternions stay normalized.
    quat = np.asarray(final.q)[model.topology.quaternion_q_index]
    np.testing.assert_allclose(np.linalg.norm(quat, axis=-1), 1.0, atol=1e-14)


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
