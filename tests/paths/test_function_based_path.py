"""FunctionBasedPath with OpenSim's MultivariatePolynomialFunction against OpenSim 4.6 (arm26 with a polynomial
path actuator, tests/paths/generate_path_golden.py), and its derivatives against central differences."""

from __future__ import annotations

import json
import pathlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody._dynamics.paths.function_based_path import FunctionBasedPath, MultivariatePolynomial, monomial_exponents
from jaxbody.errors import InvalidArgument

HERE = pathlib.Path(__file__).parent
GOLDEN = json.loads((HERE / "golden" / "osim_paths.json").read_text())["function_based"]


@pytest.fixture(scope="module")
def arm26():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imp = jb.io.load_osim(HERE.parent / "models" / "osim" / "arm26.osim")
    model = imp.system.realize_topology()
    coords = GOLDEN["coordinates"]
    path = FunctionBasedPath(MultivariatePolynomial.of(GOLDEN["dimension"], GOLDEN["order"], GOLDEN["coefficients"]),
                             tuple(imp.q_index(c) for c in coords))

    @jax.jit
    def numbers(path, q, u):
        s = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Velocity)
        F, f = path.calc_tension_forces(model, s, 2.0)
        return path.calc_length(model, s), path.calc_lengthening_speed(model, s), path.calc_moment_arms(model, s), F, f

    ui = np.array([imp.u_index(c) for c in coords])
    qi = np.array([imp.q_index(c) for c in coords])
    return model, path, numbers, qi, ui


def test_monomial_order_is_opensims():
    assert monomial_exponents(2, 2) == ((0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (2, 0))
    with pytest.raises(InvalidArgument, match="needs 10 coefficients"):
        MultivariatePolynomial.of(2, 3, np.ones(9))


def test_matches_opensim(arm26):
    model, path, numbers, qi, ui = arm26
    for record in GOLDEN["states"]:
        q = jnp.zeros(model.topology.nq).at[qi].set(jnp.asarray(record["q"]))
        u = jnp.zeros(model.topology.nu).at[ui].set(jnp.asarray(record["u"]))
        L, speed, arms, F, f = numbers(path, q, u)
        assert abs(L - record["length"]) < 1e-14
        assert abs(speed - record["speed"]) < 1e-14
        np.testing.assert_allclose(arms[ui], record["moment_arms"], rtol=0, atol=1e-14)
        np.testing.assert_allclose(f, 2.0 * arms, rtol=0, atol=1e-14)  # generalized forces tension x arm
        assert not np.any(F)


def test_gradients_against_central_differences(arm26):
    model, path, numbers, qi, ui = arm26
    q = jnp.zeros(model.topology.nq).at[qi].set(jnp.array([-0.4, 0.9]))
    u = jnp.zeros(model.topology.nu)
    g = jax.grad(lambda p: numbers(p, q, u)[0])(path)  # d length / d coefficients
    h = 1e-6
    for k in (0, 4, 9):
        bump = lambda d: FunctionBasedPath(MultivariatePolynomial(path.length_function.coefficients.at[k].add(d),  # noqa: E731
                                                                  path.length_function.exponents), path.coordinates)
        fd = (numbers(bump(h), q, u)[0] - numbers(bump(-h), q, u)[0]) / (2 * h)
        assert abs(g.length_function.coefficients[k] - fd) < 1e-9
    arms = numbers(path, q, u)[2]
    for j, (a, b) in enumerate(zip(qi, ui)):
        e = jnp.zeros_like(q).at[a].set(h)
        fd = (numbers(path, q + e, u)[0] - numbers(path, q - e, u)[0]) / (2 * h)
        assert abs(arms[b] + fd) < 1e-9
    # vmap over states with one path
    qs = jnp.tile(q, (64, 1)).at[:, qi[0]].set(jnp.linspace(-1.0, 1.0, 64))
    Ls = jax.vmap(lambda q: numbers(path, q, u)[0])(qs)
    assert Ls.shape == (64,) and abs(Ls[10] - numbers(path, qs[10], u)[0]) < 1e-15
