"""Force elements with state variables of their own (State.z): layout, zdot at Dynamics, integration.

The element here is a first-order lag on one mobility: ``f = z``, ``zdot = (target - z) / tau``, so z(t)
has the closed form ``target + (z0 - target) exp(-t / tau)`` whatever the bodies do.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from systems import conservative_tree_10

import jaxbody as jb
from jaxbody._dynamics.forces import ForceElement


class _Lag(ForceElement):
    u_index: int = eqx.field(static=True)
    target: jnp.ndarray
    tau: jnp.ndarray
    z0: jnp.ndarray

    def calc(self, model, state):
        raise AssertionError("an element with state variables is evaluated through calc_with_z")

    def num_z(self):
        return 1

    def default_z(self, dtype):
        return jnp.asarray([self.z0], dtype)

    def calc_with_z(self, model, state, z):
        f = jnp.zeros(model.topology.nu, z.dtype).at[self.u_index].add(z[0])
        return jnp.zeros((model.topology.nbodies, 2, 3), z.dtype), f, jnp.zeros((), z.dtype)

    def calc_z_dot(self, model, state, z):
        return (self.target - z) / self.tau


@pytest.fixture(scope="module")
def lagged():
    model, _ = conservative_tree_10()
    elements = (_Lag(0, jnp.asarray(2.0), jnp.asarray(0.1), jnp.asarray(0.5)), _Lag(1, jnp.asarray(-1.0), jnp.asarray(0.2), jnp.asarray(0.0)))
    return eqx.tree_at(lambda m: m.forces, model, model.forces + elements)


def test_z_layout_defaults_and_zdot(lagged):
    state = lagged.default_state()
    assert lagged.nz == 2 and state.z.shape == (2,)
    np.testing.assert_allclose(state.z, [0.5, 0.0])
    s = lagged.realize(state, jb.Stage.Dynamics)
    np.testing.assert_allclose(s.dynamics.zdot, [(2.0 - 0.5) / 0.1, (-1.0 - 0.0) / 0.2])
    plain = eqx.tree_at(lambda m: m.forces, lagged, lagged.forces[:-2])
    f_plain = plain.realize(plain.default_state(), jb.Stage.Dynamics).dynamics.mobility_forces
    np.testing.assert_allclose(s.dynamics.mobility_forces - f_plain, np.eye(lagged.get_num_u())[0] * 0.5)


@pytest.mark.parametrize("method, tol", [("rk4", 1e-9), ("semi_explicit_euler", 2e-2)])
def test_z_integrated_with_q_and_u(lagged, method, tol):
    final, _ = jax.jit(lambda s: jb.simulate(lagged, s, 1e-3, 300, method=method))(lagged.default_state())
    t = 0.3
    exact = [2.0 + (0.5 - 2.0) * np.exp(-t / 0.1), -1.0 + (0.0 + 1.0) * np.exp(-t / 0.2)]
    np.testing.assert_allclose(final.z, exact, rtol=tol, atol=tol)
