"""Jacobian operators, bias terms and reaction forces against independent routes on the mixed 30-body tree."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from helpers import central_difference
from systems import mixed_tree_30, random_forces, random_qu

TASK_BODIES = [3, 11, 17, 29]


def _tasks(model):
    rng = np.random.default_rng(5)
    return TASK_BODIES, jnp.asarray(rng.normal(size=(len(TASK_BODIES), 3)))


@functools.lru_cache(maxsize=None)
def setup():
    model, handles = mixed_tree_30()
    q, u = random_qu(model, 1)
    f, F = random_forces(model, 2)
    return model, handles, jnp.asarray(q), jnp.asarray(u), jnp.asarray(f), jnp.asarray(F)


def _realized(model, q, u, f=None, F=None):
    s = model.default_state().set_q(q).set_u(u)
    if f is not None:
        s = s.set_mobility_forces(f).set_body_forces(F)
    return model.realize(s, jb.Stage.Acceleration)


@jax.jit
def all_routes(model, q, u, f, F, probe_u, probe_F, probe_f3, probe_F6):
    bodies, stations = _tasks(model)
    s = _realized(model, q, u, f, F)
    nu = model.get_num_u()
    eye = jnp.eye(nu)
    J_sys = model.calc_system_jacobian(s)
    Jv_cols = jax.vmap(lambda e: model.multiply_by_system_jacobian(s, e), out_axes=1)(eye)
    Js = model.calc_station_jacobian(s, bodies, stations)
    Js_cols = jax.vmap(lambda e: model.multiply_by_station_jacobian(s, bodies, stations, e).reshape(-1), out_axes=1)(eye)
    Jf = model.calc_frame_jacobian(s, bodies, stations)
    Jf_cols = jax.vmap(lambda e: model.multiply_by_frame_jacobian(s, bodies, stations, e).reshape(-1), out_axes=1)(eye)

    def along_motion(fn):
        qdot = model.calc_q_dot(s, u)
        return jax.jvp(lambda qq: fn(model.realize(s.set_q(qq), jb.Stage.Position)), (q,), (qdot,))[1]

    return {
        "J_sys": J_sys, "Jv_cols": Jv_cols, "J_matrix": model.calc_system_jacobian_matrix(s),
        "Js": Js, "Js_cols": Js_cols, "Jf": Jf, "Jf_cols": Jf_cols,
        "V_GB": s.velocity.V_GB,
        "Ju": model.multiply_by_system_jacobian(s, u),
        "adj_sys": (jnp.sum(model.multiply_by_system_jacobian(s, probe_u) * probe_F),
                    probe_u @ model.multiply_by_system_jacobian_transpose(s, probe_F)),
        "adj_station": (jnp.sum(model.multiply_by_station_jacobian(s, bodies, stations, probe_u) * probe_f3),
                        probe_u @ model.multiply_by_station_jacobian_transpose(s, bodies, stations, probe_f3)),
        "adj_frame": (jnp.sum(model.multiply_by_frame_jacobian(s, bodies, stations, probe_u) * probe_F6),
                      probe_u @ model.multiply_by_frame_jacobian_transpose(s, bodies, stations, probe_F6)),
        "bias_sys": model.calc_bias_for_system_jacobian(s),
        "bias_sys_jvp": along_motion(lambda p: model.multiply_by_system_jacobian(p, u)),
        "bias_station": model.calc_bias_for_station_jacobian(s, bodies, stations),
        "bias_station_jvp": along_motion(lambda p: model.multiply_by_station_jacobian(p, bodies, stations, u)),
        "bias_frame": model.calc_bias_for_frame_jacobian(s, bodies, stations),
        "bias_frame_jvp": along_motion(lambda p: model.multiply_by_frame_jacobian(p, bodies, stations, u)),
        "reaction": model.calc_mobilizer_reaction_forces(s),
        "reaction_free_body": model.calc_mobilizer_reaction_forces_using_free_body_method(s),
        "udot": s.acceleration.udot,
        "M": model.calc_m(s),
        "applied_f": s.dynamics.mobility_forces,
        "applied_F": s.dynamics.body_forces,
        "H": s.position.H_PB_G,
        "p_BM_G": jnp.einsum("bij,bj->bi", s.position.R_GB, model.parameters.p_BM),
        "p_GB": s.position.p_GB,
    }


@pytest.fixture(scope="module")
def r():
    model, handles, q, u, f, F = setup()
    rng = np.random.default_rng(9)
    nt = len(TASK_BODIES)
    probes = (rng.normal(size=model.get_num_u()), rng.normal(size=(model.get_num_bodies(), 2, 3)),
              rng.normal(size=(nt, 3)), rng.normal(size=(nt, 2, 3)))
    return all_routes(model, q, u, f, F, *map(jnp.asarray, probes))


def test_explicit_jacobians_equal_operator_columns(r):
    np.testing.assert_allclose(r["J_sys"], r["Jv_cols"], atol=1e-13)
    J = np.asarray(r["J_sys"])  # (nbodies, nu, 2, 3)
    np.testing.assert_allclose(r["J_matrix"], np.moveaxis(J, 1, -1).reshape(-1, J.shape[1]), atol=0)
    np.testing.assert_allclose(r["Js"], r["Js_cols"], atol=1e-12)  # transpose route vs forward route
    np.testing.assert_allclose(r["Jf"], r["Jf_cols"], atol=1e-12)


def test_J_times_u_is_the_body_velocity(r):
    np.testing.assert_allclose(r["Ju"], r["V_GB"], atol=1e-12)


def test_transposes_are_adjoint(r):
    for key in ("adj_sys", "adj_station", "adj_frame"):
        a, b = r[key]
        np.testing.assert_allclose(a, b, rtol=1e-12, err_msg=key)


def test_bias_terms_equal_time_derivative_of_J_along_the_motion(r):
    np.testing.assert_allclose(r["bias_sys"], r["bias_sys_jvp"], atol=1e-10)
    np.testing.assert_allclose(r["bias_station"], r["bias_station_jvp"], atol=1e-10)
    np.testing.assert_allclose(r["bias_frame"], r["bias_frame_jvp"], atol=1e-10)


def test_reaction_routes_agree_and_balance_the_mobility_forces(r):
    np.testing.assert_allclose(r["reaction"], r["reaction_free_body"], atol=1e-10)
    # Projected on the mobilizer's own hinge (after moving back to Bo), the reaction is the mobility force.
    F_M = np.asarray(r["reaction"])
    p = np.asarray(r["p_BM_G"])
    F_Bo = np.stack([F_M[:, 0] + np.cross(p, F_M[:, 1]), F_M[:, 1]], 1).reshape(-1, 6)
    H = np.asarray(r["H"])
    model = setup()[0]
    f_b = np.einsum("bij,bi->bj", H, F_Bo)[1:]
    idx = model.topology.body_u_index[1:]
    mask = idx < model.get_num_u()
    np.testing.assert_allclose(f_b[mask], np.asarray(r["applied_f"])[idx[mask]], atol=1e-10)


def test_jacobian_operators_under_vmap_and_grad():
    model, handles, q, u, f, F = setup()
    bodies, stations = _tasks(model)
    qs, us = random_qu(model, 7, (4096,))

    @jax.jit
    @jax.vmap
    def station_velocity(q, u):
        s = model.realize(model.default_state().set_q(q), jb.Stage.Position)
        return model.multiply_by_station_jacobian(s, bodies, stations, u)

    V = station_velocity(jnp.asarray(qs), jnp.asarray(us))
    assert V.shape == (4096, len(bodies), 3)
    for lane in (0, 4095):
        np.testing.assert_allclose(V[lane], station_velocity(jnp.asarray(qs[lane : lane + 1]), jnp.asarray(us[lane : lane + 1]))[0], atol=1e-12)

    def objective(q):
        s = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Velocity)
        return jnp.sum(model.calc_bias_for_station_jacobian(s, bodies, stations) ** 2)

    g = jax.jit(jax.grad(objective))(q)
    rng = np.random.default_rng(3)
    obj = jax.jit(objective)
    for _ in range(3):
        d = jnp.asarray(rng.normal(size=q.shape))
        h = 1e-6
        fd = central_difference(obj, q, h, direction=d)
        np.testing.assert_allclose(g @ d, fd, rtol=1e-6)


@pytest.mark.long  # CI budget (2026-11-29 profile): ~14 s
def test_mobilizer_reactions_on_body_and_parent_balance_each_body():
    """Newton-Euler for each parent p at Po: own reaction + children's reactions on p = Mk A + b - F_applied."""
    model, handles, q, u, f, F = setup()

    @jax.jit
    def reactions(model, q, u, f, F):
        s = _realized(model, q, u, f, F)
        out = {
            "at_M": jnp.stack([h.find_mobilizer_reaction_on_body_at_m_in_ground(s, model) for h in handles]),
            "at_Bo": jnp.stack([h.find_mobilizer_reaction_on_body_at_origin_in_ground(s, model) for h in handles]),
            "parent_at_F": jnp.stack([h.find_mobilizer_reaction_on_parent_at_f_in_ground(s, model) for h in handles]),
            "parent_at_Po": jnp.stack([h.find_mobilizer_reaction_on_parent_at_origin_in_ground(s, model) for h in handles]),
            "all": model.calc_mobilizer_reaction_forces(s),
            "inertial": jnp.einsum("bij,bj->bi", s.position.Mk_G, s.acceleration.A_GB.reshape(-1, 6)).reshape(-1, 2, 3)
            + s.velocity.gyroscopic - s.dynamics.body_forces,
            "p_GB": s.position.p_GB,
            "p_GF": s.position.p_GB[jnp.asarray([max(p, 0) for p in model.topology.parent])]
            + jnp.einsum("bij,bj->bi", s.position.R_GB[jnp.asarray([max(p, 0) for p in model.topology.parent])], model.parameters.p_PF),
        }
        return out

    r = {k: np.asarray(v) for k, v in reactions(model, q, u, f, F).items()}
    np.testing.assert_allclose(r["at_M"], r["all"][1:], atol=1e-12)
    parent = model.topology.parent
    for p in range(1, model.get_num_bodies()):
        children = [c for c in range(1, model.get_num_bodies()) if parent[c] == p]
        total = r["at_Bo"][p - 1] + sum(r["parent_at_Po"][c - 1] for c in children)
        np.testing.assert_allclose(total, r["inertial"][p], atol=1e-9, err_msg=f"body {p}")
    # On the parent, the F-frame form is the origin form moved from Po to Fo.
    for c in range(1, model.get_num_bodies()):
        Fp = r["parent_at_Po"][c - 1]
        moved = Fp[0] + np.cross(r["p_GB"][parent[c]] - r["p_GF"][c], Fp[1])
        np.testing.assert_allclose(r["parent_at_F"][c - 1][0], moved, atol=1e-10)


@pytest.mark.long  # ~90 s of CPU; the same operators are checked under jit/vmap/grad on smaller trees in tests/api/test_transforms.py; CI time budget
def test_mobilized_body_operators_on_the_30_body_tree_under_vmap_and_grad():
    """A broad set of MobilizedBody operators, several mobilizer types, under vmap (4096 states) and grad."""
    model, handles, q, u, f, F = setup()
    picks = [handles[i] for i in (2, 9, 16, 23, 29)]
    station = jnp.array([0.1, -0.2, 0.3])

    def outputs(q, u):
        s = _realized(model, q, u, f, F)
        out = []
        for h, other in zip(picks, picks[1:] + picks[:1]):
            X = h.find_body_transform_in_another_body(s, other)
            out += [
                h.find_station_location_in_ground(s, station),
                h.find_station_velocity_in_ground(s, station),
                h.find_station_acceleration_in_ground(s, station),
                X.p, X.R.reshape(-1),
                h.find_body_velocity_in_another_body(s, other).reshape(-1),
                h.find_body_acceleration_in_another_body(s, other).reshape(-1),
                h.calc_station_to_station_distance(s, station, other, station)[None],
                h.calc_station_to_station_distance_time_derivative(s, station, other, station)[None],
                h.calc_station_to_station_distance_2nd_time_derivative(s, station, other, station)[None],
                h.calc_body_moving_point_velocity_in_body(s, station, station, other),
                h.get_mobilizer_acceleration(s, model=model).reshape(-1),
                h.find_mobilizer_reaction_on_body_at_m_in_ground(s, model).reshape(-1),
                h.calc_body_momentum_about_body_origin_in_ground(s).reshape(-1),
                h.express_vector_in_ground_frame(s, station),
            ]
        return jnp.concatenate(out)

    one = jax.jit(outputs)
    many = jax.jit(jax.vmap(outputs))
    qs, us = random_qu(model, 11, (4096,))
    batch = many(jnp.asarray(qs), jnp.asarray(us))
    assert batch.shape[0] == 4096 and np.all(np.isfinite(np.asarray(batch)))
    for lane in (0, 2047, 4095):
        np.testing.assert_allclose(batch[lane], one(jnp.asarray(qs[lane]), jnp.asarray(us[lane])), rtol=1e-10, atol=1e-10)

    weights = jnp.asarray(np.random.default_rng(4).normal(size=batch.shape[1]))
    scalar = jax.jit(lambda q, u: weights @ outputs(q, u))
    gq, gu = jax.jit(jax.grad(lambda q, u: weights @ outputs(q, u), argnums=(0, 1)))(q, u)
    rng = np.random.default_rng(8)
    h = 1e-6
    for g, which in ((gq, 0), (gu, 1)):
        d = jnp.asarray(rng.normal(size=g.shape))
        along = (lambda x: scalar(x, u)) if which == 0 else (lambda x: scalar(q, x))  # noqa: E731
        fd = central_difference(along, (q, u)[which], h, direction=d)
        np.testing.assert_allclose(g @ d, fd, rtol=2e-6)
