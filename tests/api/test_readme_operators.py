"""Operators the README lists that no other test calls, each against an independent route.

One small model, compiled once: a parallelogram four-bar closed by a Ball (3 equations, one redundant), plus
an independent Slider held at constant speed (1 nonholonomic row) and an independent Pin with a constant
acceleration (1 acceleration-only row). Every result is computed inside ONE jitted function (the operators
inline there), then compared on the host with a second route: jacfwd of the constraint errors for P, Pq,
V and A; G M^-1 G^T built from calc_g and calc_m_inv; G^T lambda against J^T F + f; the per-body cache
getters against the batched operators, the position cache (leaf bodies) and Newton-Euler formulas.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb

A_CRANK, L = 0.6, 1.0


def _rod(m, length):
    return jb.Body.Rigid(jb.MassProperties.from_central_inertia(
        m, [length / 2, 0, 0], jb.Inertia(0.01, m * length**2 / 12, m * length**2 / 12)))


def _build(disabled_ball=False):
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, [0.0, -9.81, 0.0])
    G = matter.Ground()
    crank = jb.MobilizedBody.Pin(G, jb.Transform(), _rod(1.0, A_CRANK), jb.Transform(), name="crank")
    coupler = jb.MobilizedBody.Pin(crank, jb.Transform([A_CRANK, 0, 0]), _rod(2.0, L), jb.Transform(), name="coupler")
    rocker = jb.MobilizedBody.Pin(G, jb.Transform([L, 0, 0]), _rod(1.5, A_CRANK), jb.Transform(), name="rocker")
    slider = jb.MobilizedBody.Slider(G, jb.Transform([0, 2.0, 0]), _rod(0.5, 0.4), jb.Transform(), name="slider")
    spinner = jb.MobilizedBody.Pin(G, jb.Transform([0, -2.0, 0]), _rod(0.7, 0.4), jb.Transform([0.1, 0, 0]), name="spinner")
    ball = jb.Constraint.Ball(coupler, [L, 0, 0], rocker, [A_CRANK, 0, 0], name="ball")
    if disabled_ball:
        ball.set_disabled_by_default()
    speed = jb.Constraint.ConstantSpeed(slider, 0.5, name="speed")
    accel = jb.Constraint.ConstantAcceleration(spinner, 0.7, name="accel")
    bodies = dict(crank=crank, coupler=coupler, rocker=rocker, slider=slider, spinner=spinner)
    return system, system.realize_topology(), bodies, dict(ball=ball, speed=speed, accel=accel)


@pytest.fixture(scope="module")
def results():
    system, model, bodies, cons = _build()
    theta, omega = 0.7, 1.3
    state = model.default_state().set_q(jnp.array([theta, -theta, theta, 0.1, 0.2]))
    state = state.set_u(jnp.array([omega, -omega, omega, 0.5, -0.8]))
    rng = np.random.default_rng(3)
    m, nq, nu = 5, 5, 5
    qlike, lam, lam_p, x = (jnp.asarray(rng.standard_normal(k)) for k in (nq, m, 3, m))

    @jax.jit
    def everything(state):
        s = model.realize(state)
        perr = lambda q: model.calc_constraint_position_errors(s.set_q(q))  # noqa: E731
        verr = lambda u: model.calc_constraint_velocity_errors(s, u)  # noqa: E731
        aerr = lambda udot: model.calc_constraint_acceleration_errors(s, udot)  # noqa: E731
        A = model.calc_projected_m_inv(s)
        out = dict(
            P=model.calc_p(s), Pt=model.calc_pt(s), G=model.calc_g(s), Pq=model.calc_pq(s),
            Pq_t=model.calc_pq_transpose(s), Pq_explicit=jax.jacfwd(perr)(s.q)[:3],
            V_explicit=jax.jacfwd(verr)(s.u), A_explicit=jax.jacfwd(aerr)(s.acceleration.udot),
            Pq_q=model.multiply_by_pq(s, qlike), Pq_q_bias=model.multiply_by_pq(s, qlike, model.calc_bias_for_multiply_by_pq(s)),
            Pq_t_lam=model.multiply_by_pq_transpose(s, lam_p), bias_pq=model.calc_bias_for_multiply_by_pq(s),
            verr_at_u0=verr(jnp.zeros(nu)),
            GMinvGt=A, Minv=model.calc_m_inv(s), impulses=model.solve_for_constraint_impulses(s, A @ x), dv=A @ x,
            forces_from_lam=model.calc_constraint_forces_from_multipliers(s, lam), Gt_lam=model.multiply_by_g_transpose(s, lam),
            multipliers=model.get_constraint_multipliers(s), Gt_mult=model.multiply_by_g_transpose(s, model.get_constraint_multipliers(s)),
            per_constraint={
                name: dict(pn_inv=c.calc_position_constraint_matrix_pn_inv(s, model), v=c.calc_velocity_constraint_matrix_v(s, model),
                           a=c.calc_acceleration_constraint_matrix_a(s, model), forces=c.get_constraint_forces_as_vectors(s, model),
                           in_use=c.get_num_constraint_equations_in_use(s),
                           in_use_disabled=c.get_num_constraint_equations_in_use(c.disable(s)))
                for name, c in cons.items()
            },
            composite=model.calc_composite_body_inertias(s), articulated=model.get_articulated_body_inertias(s),
            M=jax.vmap(lambda e: model.multiply_by_m(s, e))(jnp.eye(nu)),
            accel_at_udot0=model.calc_body_acceleration_from_udot(s, jnp.zeros(nu)),
            per_body={
                name: dict(composite=model.get_composite_body_inertia(s, b), articulated=model.get_articulated_body_inertia(s, b),
                           gyroscopic=model.get_gyroscopic_force(s, b), coriolis=model.get_mobilizer_coriolis_acceleration(s, b),
                           total_coriolis=model.get_total_coriolis_acceleration(s, b),
                           centrifugal=model.get_total_centrifugal_forces(s, b))
                for name, b in bodies.items()
            },
            position=s.position, velocity=s.velocity,
        )
        out["JtF_plus_f"] = model.multiply_by_system_jacobian_transpose(s, out["forces_from_lam"][0]) + out["forces_from_lam"][1]
        out["J"] = model.calc_system_jacobian(s)
        return out

    out = jax.tree_util.tree_map(np.asarray, everything(state))
    return out, model, bodies, cons, dict(qlike=qlike, lam=lam, lam_p=lam_p)


def test_p_pt_and_pq_against_the_derivative_of_the_position_errors(results):
    out, *_ = results
    np.testing.assert_allclose(out["Pt"], out["P"].T, atol=0)
    np.testing.assert_allclose(out["P"], out["G"][:3], atol=1e-12)  # holonomic rows of G
    np.testing.assert_allclose(out["Pq"], out["Pq_explicit"], atol=1e-12)  # Pq = d perr / dq
    np.testing.assert_allclose(out["Pq_t"], out["Pq_explicit"].T, atol=1e-12)


def test_multiply_by_pq_its_transpose_and_bias(results):
    out, _, _, _, args = results
    Pq = out["Pq_explicit"]
    np.testing.assert_allclose(out["Pq_q"], Pq @ np.asarray(args["qlike"]), atol=1e-12)
    np.testing.assert_allclose(out["Pq_q_bias"], out["Pq_q"], atol=0)  # bias: accepted for Simbody's signature
    np.testing.assert_allclose(out["Pq_t_lam"], Pq.T @ np.asarray(args["lam_p"]), atol=1e-12)
    np.testing.assert_allclose(out["bias_pq"], out["verr_at_u0"][:3], atol=1e-14)  # pverr at u = 0
    np.testing.assert_allclose(out["bias_pq"], 0.0, atol=1e-14)  # the Ball does not depend on t


def test_solve_for_constraint_impulses_solves_g_minv_gt(results):
    out, *_ = results
    G, Minv = out["G"], out["Minv"]
    A = G @ Minv @ G.T
    np.testing.assert_allclose(out["GMinvGt"], A, atol=1e-12)
    pi = out["impulses"]
    np.testing.assert_allclose(A @ pi, out["dv"], atol=1e-10)  # dv in the range of A (the Ball has a redundant row)
    np.testing.assert_allclose(pi, np.linalg.pinv(A, rcond=1e-10) @ out["dv"], atol=1e-10)  # minimum norm


def test_constraint_forces_from_multipliers_are_g_transpose_lambda(results):
    out, *_ = results
    np.testing.assert_allclose(out["JtF_plus_f"], out["Gt_lam"], atol=1e-12)
    np.testing.assert_allclose(out["Gt_lam"], out["G"].T @ np.asarray(results[4]["lam"]), atol=1e-12)


def test_per_constraint_matrices_against_jacobians_of_the_errors(results):
    out, model, _, cons, _ = results
    pc = out["per_constraint"]
    p, _, _ = model.constraints.rows_of(cons["ball"].index)
    np.testing.assert_allclose(pc["ball"]["pn_inv"], out["Pq_explicit"][p], atol=1e-12)
    _, v_speed, _ = model.constraints.rows_of(cons["speed"].index)
    V = out["V_explicit"][v_speed]  # d verr / du on the speed row
    np.testing.assert_allclose(pc["speed"]["v"], V, atol=1e-12)
    np.testing.assert_allclose(V, [[0, 0, 0, 1, 0]], atol=1e-12)
    _, _, a_accel = model.constraints.rows_of(cons["accel"].index)
    np.testing.assert_allclose(pc["accel"]["a"], out["A_explicit"][a_accel], atol=1e-12)
    np.testing.assert_allclose(pc["accel"]["a"], [[0, 0, 0, 0, 1]], atol=1e-12)
    assert pc["ball"]["v"].shape == (0, 5) and pc["ball"]["a"].shape == (0, 5)


def test_constraint_forces_as_vectors_add_up_to_g_transpose_lambda(results):
    out, model, _, cons, _ = results
    total = np.zeros(5)
    J = out["J"]  # (nbodies, nu, 2, 3)
    for name, c in cons.items():
        F_c, f_c = out["per_constraint"][name]["forces"]
        assert F_c.shape == (len(c.bodies), 2, 3)
        F = np.zeros((model.get_num_bodies(), 2, 3))
        F[[b.index for b in c.bodies]] = F_c
        f = np.zeros(5)
        f[[c.get_u_index_of_constrained_u(None, i) for i in range(c.get_num_constrained_u())]] = f_c
        total += np.einsum("bkij,bij->k", J, F) + f
    np.testing.assert_allclose(total, out["Gt_mult"], atol=1e-10)


def test_num_constraint_equations_in_use_and_disabled_by_default(results):
    out, *_ = results
    pc = out["per_constraint"]
    assert [tuple(int(n) for n in pc[k]["in_use"]) for k in ("ball", "speed", "accel")] == [(3, 0, 0), (0, 1, 0), (0, 0, 1)]
    assert all(tuple(int(n) for n in pc[k]["in_use_disabled"]) == (0, 0, 0) for k in pc)
    # set_disabled_by_default: a topology default, read by default_state (no realize needed).
    _, model, _, cons = _build(disabled_ball=True)
    state = model.default_state()
    assert cons["ball"].is_disabled_by_default() and not cons["speed"].is_disabled_by_default()
    assert bool(cons["ball"].is_disabled(state)) and bool(cons["speed"].is_enabled(state))
    assert tuple(int(n) for n in cons["ball"].get_num_constraint_equations_in_use(state)) == (0, 0, 0)
    with pytest.raises(jb.TopologyFrozen):
        cons["speed"].set_disabled_by_default()


def test_per_body_cache_getters(results):
    out, model, bodies, _, _ = results
    pos, vel = out["position"], out["velocity"]
    M = out["M"]
    for name, b in bodies.items():
        got, i = out["per_body"][name], b.index
        np.testing.assert_allclose(got["composite"], out["composite"][i], atol=0)
        np.testing.assert_allclose(got["articulated"], out["articulated"][i], atol=0)
        np.testing.assert_allclose(got["gyroscopic"], vel.gyroscopic[i], atol=0)
        np.testing.assert_allclose(got["coriolis"], vel.mobilizer_coriolis[i], atol=0)
        np.testing.assert_allclose(got["total_coriolis"], vel.total_coriolis[i], atol=0)
        np.testing.assert_allclose(got["centrifugal"], vel.centrifugal[i], atol=0)
        # Independent routes.
        H = pos.H_PB_G[i][:, :1]  # (6, 1): every body here has one mobility
        u = b.get_first_u_index()
        np.testing.assert_allclose((H.T @ got["composite"] @ H)[0, 0], M[u, u], rtol=1e-12)  # CRBA diagonal
        np.testing.assert_allclose(got["total_coriolis"], out["accel_at_udot0"][i], atol=1e-12)  # A_GB at udot = 0
        Mk, V = pos.Mk_G[i], vel.V_GB[i]
        w, mass, c = V[0], Mk[3, 3], pos.p_GBc[i] - pos.p_GB[i]
        np.testing.assert_allclose(got["gyroscopic"], [np.cross(w, Mk[:3, :3] @ w), mass * np.cross(w, np.cross(w, c))], atol=1e-12)
        np.testing.assert_allclose(got["centrifugal"].ravel(), Mk @ got["total_coriolis"].ravel() + got["gyroscopic"].ravel(), atol=1e-12)
    for leaf in ("coupler", "rocker", "slider", "spinner"):  # a body without children: P is its own inertia
        np.testing.assert_allclose(out["per_body"][leaf]["articulated"], pos.Mk_G[bodies[leaf].index], atol=1e-12)
    # total Coriolis of a child = the parent's, rigidly shifted to Bo, plus the mobilizer's own A_b.
    crank, coupler = out["per_body"]["crank"], out["per_body"]["coupler"]
    r = pos.p_GB[bodies["coupler"].index] - pos.p_GB[bodies["crank"].index]
    shifted = np.stack([crank["total_coriolis"][0], crank["total_coriolis"][1] + np.cross(crank["total_coriolis"][0], r)])
    np.testing.assert_allclose(coupler["total_coriolis"], shifted + coupler["coriolis"], atol=1e-12)


@pytest.mark.long  # CI budget (2026-11-29 profile): ~15 s; the whole matrices are checked in CI
def test_per_constraint_matrices_computed_alone_equal_rows_of_the_whole():
    """A constraint's P, Pq, V and A rows at a State realized to Velocity only (so nothing is cached: each is
    computed from the constraint's own rows) equal those rows of the model's whole matrices; at Acceleration
    the A rows are the cached G's."""
    _, model, _, cons = _build()
    state = model.default_state().set_q(jnp.array([0.7, -0.7, 0.7, 0.1, 0.2]))
    state = state.set_u(jnp.array([1.3, -1.3, 1.3, 0.5, -0.8]))
    vel = model.realize(state, jb.Stage.Velocity)
    P, PV, G, Pq = model.calc_p(vel), model.calc_pv(vel), model.calc_g(vel), model.calc_pq(vel)
    for name, c in cons.items():
        p, v, a = model.constraints.rows_of(c.index)
        np.testing.assert_allclose(c.calc_position_constraint_matrix_p(vel, model), P[p], atol=1e-13, err_msg=name)
        np.testing.assert_allclose(c.calc_position_constraint_matrix_pn_inv(vel, model), Pq[p], atol=1e-13, err_msg=name)
        np.testing.assert_allclose(c.calc_velocity_constraint_matrix_v(vel, model), PV[v], atol=1e-13, err_msg=name)
        np.testing.assert_allclose(c.calc_acceleration_constraint_matrix_a(vel, model), G[a], atol=1e-13, err_msg=name)
    acc = model.realize(state, jb.Stage.Acceleration)
    for name, c in cons.items():
        a = model.constraints.rows_of(c.index)[2]
        np.testing.assert_allclose(c.calc_acceleration_constraint_matrix_a(acc, model), model.calc_g(acc)[a],
                                   atol=0, err_msg=name)
