"""Each dynamics operator against an independent formulation on a branched tree with many mobilizer types."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from golden_cases import build_case, load_case


@functools.lru_cache(maxsize=None)
def floating_tree(euler):
    case, _ = load_case("floating_tree")
    model, _ = build_case(case, use_euler_angles=euler)
    return case, model


def _random_inputs(model, seed):
    rng = np.random.default_rng(seed)
    nu, nb = model.get_num_u(), model.get_num_bodies()
    return (
        jnp.asarray(rng.normal(size=nu)),
        jnp.asarray(rng.normal(size=nu)),
        jnp.asarray(np.concatenate([np.zeros((1, 2, 3)), rng.normal(size=(nb - 1, 2, 3))])),
        jnp.asarray(rng.normal(size=nu)),
    )


@jax.jit
def routes(model, q, u, tau, F, v):
    state = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Velocity)
    M = model.calc_m(state)
    Minv = model.calc_m_inv(state)
    udot, A = model.calc_acceleration_ignoring_constraints(state, tau, F)
    # Bias forces c from inverse dynamics at udot = 0 without applied forces.
    c = model.calc_residual_force_ignoring_constraints(state, jnp.zeros_like(tau), jnp.zeros_like(F), jnp.zeros_like(tau))
    JtF = model.calc_residual_force_ignoring_constraints(
        model.realize(state.set_u(jnp.zeros_like(u)), jb.Stage.Velocity), jnp.zeros_like(tau), -F, jnp.zeros_like(tau)
    )
    return {
        "M": M,
        "Minv": Minv,
        "M_columns": jax.vmap(lambda e: model.multiply_by_m(state, e), out_axes=1)(jnp.eye(u.shape[0])),
        "Mv": model.multiply_by_m(state, v),
        "MinvMv": model.multiply_by_m_inv(state, model.multiply_by_m(state, v)),
        "udot": udot,
        "A_GB": A,
        "A_from_udot": model.calc_body_acceleration_from_udot(state, udot),
        "residual_of_udot": model.calc_residual_force_ignoring_constraints(state, tau, F, udot),
        "c": c,
        "JtF": JtF,
        "tree_equivalent": model.calc_tree_equivalent_mobility_forces(state, F),
        "ke": model.calc_kinetic_energy(state),
        "composite": model.calc_composite_body_inertias(state),
        "p_GBc": state.position.p_GBc,
        "p_GB1": state.position.p_GB[1],
        "mass": model.parameters.mass,
    }


@pytest.fixture(scope="module", params=[True, False], ids=["euler", "quaternion"])
def results(request):
    case, model = floating_tree(request.param)
    out = []
    for seed, sample in enumerate(case["samples"]):
        q = jnp.asarray(sample["q"])
        if not request.param:
            euler_model = floating_tree(True)[1]
            q = euler_model.convert_to_quaternions(euler_model.default_state().set_q(q)).q
            q = q.at[:4].multiply(1.3)  # an unnormalized quaternion is legal: R normalizes it
        tau, u, F, v = _random_inputs(model, seed)
        out.append((model, u, tau, F, v, routes(model, q, u, tau, F, v)))
    return out


def test_mass_matrix_routes_agree(results):
    for model, u, tau, F, v, r in results:
        M = np.asarray(r["M"])
        np.testing.assert_allclose(M, M.T, atol=1e-12)
        assert np.min(np.linalg.eigvalsh(M)) > 0
        np.testing.assert_allclose(r["M_columns"], M, rtol=1e-11, atol=1e-11)
        np.testing.assert_allclose(r["Mv"], M @ np.asarray(v), rtol=1e-11, atol=1e-11)
        np.testing.assert_allclose(r["Minv"] @ M, np.eye(M.shape[0]), atol=1e-10)
        np.testing.assert_allclose(r["MinvMv"], v, rtol=1e-10, atol=1e-10)


def test_aba_equals_crba_plus_solve(results):
    """udot from the articulated-body algorithm equals M^-1 (tau + J^T F - c) with M from composite bodies."""
    for model, u, tau, F, v, r in results:
        rhs = np.asarray(tau) + np.asarray(r["JtF"]) - np.asarray(r["c"])
        np.testing.assert_allclose(r["udot"], np.linalg.solve(r["M"], rhs), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(r["tree_equivalent"], np.asarray(r["JtF"]) - np.asarray(r["c"]), atol=1e-10)


def test_inverse_dynamics_of_forward_dynamics_returns_the_forces(results):
    for model, u, tau, F, v, r in results:
        np.testing.assert_allclose(r["residual_of_udot"], 0.0, atol=1e-10)
        np.testing.assert_allclose(r["A_from_udot"], r["A_GB"], atol=1e-10)


def test_kinetic_energy_is_half_u_M_u(results):
    for model, u, tau, F, v, r in results:
        np.testing.assert_allclose(r["ke"], 0.5 * np.asarray(u) @ np.asarray(r["M"]) @ np.asarray(u), rtol=1e-12)


def test_composite_inertia_of_the_base_is_the_whole_system(results):
    """The root's composite inertia has the total mass and the system mass center."""
    for model, u, tau, F, v, r in results:
        R = np.asarray(r["composite"])[1]  # body 1 is the free root; everything hangs below it
        m = np.asarray(r["mass"]).sum()
        np.testing.assert_allclose(R[3:, 3:], m * np.eye(3), rtol=1e-12)
        # R[0:3, 3:6] = m [c]x with c from the root origin to the system mass center.
        mc = np.array([R[2, 4], R[0, 5], R[1, 3]])
        com = np.asarray(r["mass"]) @ np.asarray(r["p_GBc"]) / m
        np.testing.assert_allclose(mc / m, com - np.asarray(r["p_GB1"]), atol=1e-12)
