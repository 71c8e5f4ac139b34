"""MobilizedBody operators (jaxbody/mobilized_body_operators.py) against independent routes.

A 6-body branched tree (Pin, Ball, Slider, Free, Universal, Pin; gravity) with random frames is
realized to Acceleration at random q, u and applied forces. One jitted function evaluates the
operators; each result is compared with

* numpy compositions of the cached body transforms and the host mass properties (position level);
* forward-mode derivatives of position-level functions of (q, t) along the motion
  ``qdot = N(q) u``, ``udot`` = the realized udot (velocity and acceleration level, including the
  distance time derivatives, points moving on bodies and the mobilizer acceleration A_FM);
* the virtual-power definition of generalized forces for the force helpers.
"""

from __future__ import annotations

from typing import NamedTuple


import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody._topology import mobilizer_groups
from jaxbody._api.mobilized_body_mass import MassPropertiesArrays

Stage = jb.Stage

# (B, A) pairs for the "another body" operators (A = 0 is Ground); the in-Ground operators run on
# every body 1..6.
PAIRS = [(3, 5), (6, 2), (1, 4), (2, 0)]
BODIES = range(1, 7)
NBATCH = 64
ROWS = (0, 37)  # batch rows checked against the independent references
TOL = dict(rtol=1e-9, atol=1e-9)


# ----------------------------------------------------------------------------------------------
# construction


def _rotation(rng):
    w, x, y, z = rng.normal(size=4) / 1.0
    n = np.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _transform(rng):
    return jb.Transform(jb.Rotation(_rotation(rng)), rng.uniform(-0.5, 0.5, 3))


def _mass_properties(rng):
    mass = rng.uniform(0.5, 2.0)
    com = rng.uniform(-0.3, 0.3, 3)
    a = rng.uniform(0.2, 1.0, 3)
    R = _rotation(rng)
    central = R @ np.diag(mass * 0.1 * np.array([a[1] + a[2], a[0] + a[2], a[0] + a[1]])) @ R.T
    return jb.MassProperties.from_central_inertia(mass, com, jb.Inertia.from_matrix(0.5 * (central + central.T)))


def build_tree(seed=0):
    rng = np.random.default_rng(seed)
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    MB = jb.MobilizedBody

    def add(factory, parent):
        return factory(parent, _transform(rng), jb.Body.Rigid(_mass_properties(rng)), _transform(rng))

    G = matter.Ground()
    b1 = add(MB.Pin, G)
    b2 = add(MB.Ball, b1)
    b3 = add(MB.Slider, b2)
    b4 = add(MB.Free, G)
    b5 = add(MB.Universal, b4)
    b6 = add(MB.Pin, b5)
    return system, [G, b1, b2, b3, b4, b5, b6]


@jax.jit
def _realize(model, q, u, f, F):
    s = model.default_state().set_q(q).set_u(u).set_mobility_forces(f).set_body_forces(F)
    return model.realize(model.normalize_quaternions(s), Stage.Acceleration)


def random_state(model, rng):
    nb = model.get_num_bodies()
    F = rng.normal(size=(nb, 2, 3))
    F[0] = 0.0
    return _realize(
        model,
        jnp.asarray(rng.uniform(-1.0, 1.0, model.get_num_q())),
        jnp.asarray(rng.normal(size=model.get_num_u())),
        jnp.asarray(rng.normal(size=model.get_num_u())),
        jnp.asarray(F),
    )


def _stack(states):
    return jax.tree.map(lambda *x: jnp.stack(x), *states)


def _row(tree, i):
    return jax.tree.map(lambda x: x[i], tree)


@pytest.fixture(scope="module")
def setup():
    system, bodies = build_tree()
    model = system.realize_topology()
    rng = np.random.default_rng(1)
    states = [random_state(model, rng) for _ in range(NBATCH)]
    n = len(PAIRS)
    args = {k: jnp.asarray(rng.uniform(-0.6, 0.6, (n, 3))) for k in ("sB", "sA", "vB", "vA", "aB", "aA", "vec")}
    args["sG"] = jnp.asarray(rng.uniform(-0.6, 0.6, (7, 3)))  # one station per body (row 0 unused)
    args["frame"] = jb.Transform(jnp.asarray(_rotation(rng)), jnp.asarray(rng.uniform(-0.4, 0.4, 3)))
    return model, bodies, states, args


# ----------------------------------------------------------------------------------------------
# the operators, all evaluated in one function (jitted once, vmapped over the batch of states)


def make_evaluate(bodies):
    def evaluate(model, state, args):
        out = {}
        for k, (b, a) in enumerate(PAIRS):
            B, A = bodies[b], bodies[a]
            sB, sA, vB, vA, aB, aA, vec = (args[n][k] for n in ("sB", "sA", "vB", "vA", "aB", "aA", "vec"))
            out[f"pair{k}"] = {
                "X_AB": B.find_body_transform_in_another_body(state, A),
                "R_AB": B.find_body_rotation_in_another_body(state, A),
                "p_ABo": B.find_body_origin_location_in_another_body(state, A),
                "V_AB": B.find_body_velocity_in_another_body(state, A),
                "w_AB": B.find_body_angular_velocity_in_another_body(state, A),
                "v_ABo": B.find_body_origin_velocity_in_another_body(state, A),
                "A_AB": B.find_body_acceleration_in_another_body(state, A),
                "b_AB": B.find_body_angular_acceleration_in_another_body(state, A),
                "a_ABo": B.find_body_origin_acceleration_in_another_body(state, A),
                "S_A": B.find_station_location_in_another_body(state, sB, A),
                "v_S_A": B.find_station_velocity_in_another_body(state, sB, A),
                "a_S_A": B.find_station_acceleration_in_another_body(state, sB, A),
                "Bc_A": B.find_mass_center_location_in_another_body(state, A),
                "A_at_B_station": A.find_station_at_another_body_station(state, B, sB),
                "A_at_B_origin": A.find_station_at_another_body_origin(state, B),
                "A_at_B_masscenter": A.find_station_at_another_body_mass_center(state, B),
                "vec_A": B.express_vector_in_another_body_frame(state, vec, A),
                "mp_A": B.express_mass_properties_in_another_body_frame(state, A),
                "I_about_A_station": B.calc_body_inertia_about_another_body_station(state, A, sA),
                "d": B.calc_station_to_station_distance(state, sB, A, sA),
                "d_dot": B.calc_station_to_station_distance_time_derivative(state, sB, A, sA),
                "d_ddot": B.calc_station_to_station_distance_2nd_time_derivative(state, sB, A, sA),
                "P_vel": B.calc_body_moving_point_velocity_in_body(state, sB, vB, A),
                "P_acc": B.calc_body_moving_point_acceleration_in_body(state, sB, vB, aB, A),
                "dm_dot": B.calc_moving_point_to_point_distance_time_derivative(state, sB, vB, A, sA, vA),
                "dm_ddot": B.calc_moving_point_to_point_distance_2nd_time_derivative(state, sB, vB, aB, A, sA, vA, aA),
            }
        frame = args["frame"]
        for b in BODIES:
            B, s = bodies[b], args["sG"][b]
            nq, nu = B.get_num_q(), B.get_num_u()
            out[f"body{b}"] = {
                "S_G": B.find_station_location_in_ground(state, s),
                "v_S_G": B.find_station_velocity_in_ground(state, s),
                "a_S_G": B.find_station_acceleration_in_ground(state, s),
                "lv": B.find_station_location_and_velocity_in_ground(state, s),
                "lva": B.find_station_location_velocity_and_acceleration_in_ground(state, s),
                "Bc_G": B.find_mass_center_location_in_ground(state),
                "at_ground_point": B.find_station_at_ground_point(state, s),
                "X_GF": B.find_frame_transform_in_ground(state, frame),
                "V_GF": B.find_frame_velocity_in_ground(state, frame),
                "A_GF": B.find_frame_acceleration_in_ground(state, frame),
                "vec_G": B.express_vector_in_ground_frame(state, s),
                "vec_B": B.express_ground_vector_in_body_frame(state, s),
                "mp_G": B.express_mass_properties_in_ground_frame(state),
                "Mk": B.get_body_spatial_inertia_in_ground(state),
                "Mk2": B.calc_body_spatial_inertia_matrix_in_ground(state),
                "h_o": B.calc_body_momentum_about_body_origin_in_ground(state),
                "h_c": B.calc_body_momentum_about_body_mass_center_in_ground(state),
                "A_FM": B.get_mobilizer_acceleration(state, model=model),
                "H_cols": jnp.stack([B.get_h_col(state, j) for j in range(nu)]),
                "H_FM_cols": jnp.stack([B.get_h_fm_col(state, j) for j in range(nu)]),
                "qdot": B.get_q_dot_as_vector(state),
                "qdot1": jnp.stack([B.get_one_q_dot(state, i) for i in range(nq)]),
                "udot": B.get_u_dot_as_vector(state),
                "udot1": jnp.stack([B.get_one_u_dot(state, i) for i in range(nu)]),
                "qdotdot": B.get_q_dot_dot_as_vector(state),
                "qdotdot1": jnp.stack([B.get_one_q_dot_dot(state, i) for i in range(nq)]),
            }
        return out

    return evaluate


# ----------------------------------------------------------------------------------------------
# independent reference: derivatives of position-level functions along the motion


def _vee(S):
    return 0.5 * jnp.stack([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]])


class _Frames(NamedTuple):
    R_GB: jnp.ndarray
    p_GB: jnp.ndarray
    R_FM: jnp.ndarray
    p_FM: jnp.ndarray


def _positions(model, q):
    """X_GB by composing X_PF X_FM X_MB down the tree, body by body (no tree scan, no caches)."""
    topo, prm = model.topology, model.parameters
    R_FM, p_FM, _ = mobilizer_groups.calc_X_FM_and_H_FM(topo, prm, q)
    R, p = [jnp.eye(3, dtype=q.dtype)], [jnp.zeros(3, q.dtype)]
    for b in range(1, topo.nbodies):
        P = topo.parent[b]
        R_PF, p_PF, R_BM, p_BM = prm.R_PF[b], prm.p_PF[b], prm.R_BM[b], prm.p_BM[b]
        R_GF, p_GF = R[P] @ R_PF, p[P] + R[P] @ p_PF
        R_GM, p_GM = R_GF @ R_FM[b], p_GF + R_GF @ p_FM[b]
        R.append(R_GM @ R_BM.T)
        p.append(p_GM - R[b] @ p_BM)
    return _Frames(jnp.stack(R), jnp.stack(p), R_FM, p_FM)


def make_reference(model, args):
    """Position-level functions of (q, t) and their first and second derivatives along the motion.

    qdot = N(q) u (the kinematic ODE), udot given, and t moves the points that move on bodies.
    W/dW: angular velocities from ``Rdot R^T`` and their derivatives.
    """

    def positions(q, t):
        pos = _positions(model, q)
        R, p = pos.R_GB, pos.p_GB
        out = {}
        for k, (b, a) in enumerate(PAIRS):
            sB, sA = args["sB"][k], args["sA"][k]
            sBt = sB + t * args["vB"][k] + 0.5 * t * t * args["aB"][k]
            sAt = sA + t * args["vA"][k] + 0.5 * t * t * args["aA"][k]
            RA = R[a]
            out[f"R_AB{k}"] = RA.T @ R[b]
            out[f"p_AB{k}"] = RA.T @ (p[b] - p[a])
            out[f"S_A{k}"] = RA.T @ (p[b] + R[b] @ sB - p[a])
            out[f"P_A{k}"] = RA.T @ (p[b] + R[b] @ sBt - p[a])
            out[f"d{k}"] = jnp.linalg.norm(p[a] + R[a] @ sA - p[b] - R[b] @ sB)
            out[f"dm{k}"] = jnp.linalg.norm(p[a] + R[a] @ sAt - p[b] - R[b] @ sBt)
        for b in BODIES:
            out[f"R_GB{b}"] = R[b]
            out[f"p_GB{b}"] = p[b]
            out[f"S_G{b}"] = p[b] + R[b] @ args["sG"][b]
            out[f"F_G{b}"] = p[b] + R[b] @ args["frame"].p
            out[f"R_FM{b}"] = pos.R_FM[b]
            out[f"p_FM{b}"] = pos.p_FM[b]
        return out

    def qdot_of(q, u):
        return mobilizer_groups.multiply_by_n(model.topology, model.parameters, q, u)

    def first(q, u, t):
        F, dF = jax.jvp(positions, (q, t), (qdot_of(q, u), jnp.ones_like(t)))
        W = {f"AB{k}": _vee(dF[f"R_AB{k}"] @ F[f"R_AB{k}"].T) for k in range(len(PAIRS))}
        W.update({f"GB{b}": _vee(dF[f"R_GB{b}"] @ F[f"R_GB{b}"].T) for b in BODIES})
        W.update({f"FM{b}": _vee(dF[f"R_FM{b}"] @ F[f"R_FM{b}"].T) for b in BODIES})
        return F, dF, W

    @jax.jit
    def reference(q, u, udot):
        t = jnp.zeros((), q.dtype)
        (F, dF, W), (_, ddF, dW) = jax.jvp(first, (q, u, t), (qdot_of(q, u), udot, jnp.ones_like(t)))
        return F, dF, ddF, W, dW

    return reference


@pytest.fixture(scope="module")
def results(setup):
    """Batched operator results (numpy) and, for the rows in ROWS, the reference derivatives."""
    model, bodies, states, args = setup
    evaluate = make_evaluate(bodies)
    batched = jax.jit(jax.vmap(evaluate, in_axes=(None, 0, None)))
    out = jax.tree.map(np.asarray, batched(model, _stack(states), args))
    reference = make_reference(model, args)
    refs = {
        i: jax.tree.map(np.asarray, reference(states[i].q, states[i].u, states[i].acceleration.udot)) for i in ROWS
    }
    return evaluate, out, refs


def close(a, b, **kw):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), **{**TOL, **kw})


def _pi(m, p):
    return m * (p @ p * np.eye(3) - np.outer(p, p))


# ----------------------------------------------------------------------------------------------
# position level vs numpy


def test_position_level_operators_match_numpy(setup, results):
    model, bodies, states, args = setup
    _, out_b, _ = results
    for i in ROWS:
        state, out = states[i], _row(out_b, i)
        X = {b.index: (np.asarray(b.get_body_transform(state).R), np.asarray(b.get_body_transform(state).p)) for b in bodies}
        for k, (b, a) in enumerate(PAIRS):
            o = out[f"pair{k}"]
            (RB, pB), (RA, pA) = X[b], X[a]
            sB, sA, vec = (np.asarray(args[n][k]) for n in ("sB", "sA", "vec"))
            R_AB = RA.T @ RB
            close(o["X_AB"].R, R_AB)
            close(o["X_AB"].p, RA.T @ (pB - pA))
            close(o["R_AB"], R_AB)
            close(o["p_ABo"], RA.T @ (pB - pA))
            close(o["S_A"], RA.T @ (pB + RB @ sB - pA))
            close(o["A_at_B_station"], RA.T @ (pB + RB @ sB - pA))
            close(o["A_at_B_origin"], RA.T @ (pB - pA))
            mpB = bodies[b].body.mass_properties
            p_GBc = pB + RB @ mpB.com
            close(o["Bc_A"], RA.T @ (p_GBc - pA))
            close(o["A_at_B_masscenter"], RA.T @ (p_GBc - pA))
            close(o["vec_A"], R_AB @ vec)
            close(o["mp_A"].mass, mpB.mass)
            close(o["mp_A"].com, R_AB @ mpB.com)
            close(o["mp_A"].inertia, R_AB @ mpB.inertia.matrix @ R_AB.T)
            # inertia about station PA of A, in A: shift in B from Bo to PA, then re-express
            p_Bo_PA = RB.T @ (pA + RA @ sA - pB)
            I_c = mpB.inertia.matrix - _pi(mpB.mass, mpB.com)
            close(o["I_about_A_station"], R_AB @ (I_c + _pi(mpB.mass, mpB.com - p_Bo_PA)) @ R_AB.T)
            close(o["d"], np.linalg.norm(pA + RA @ sA - pB - RB @ sB))
        Rf, pf = np.asarray(args["frame"].R), np.asarray(args["frame"].p)
        for b in BODIES:
            o, (RB, pB), s = out[f"body{b}"], X[b], np.asarray(args["sG"][b])
            mpB = bodies[b].body.mass_properties
            close(o["S_G"], pB + RB @ s)
            close(o["lv"][0], pB + RB @ s)
            close(o["lva"][0], pB + RB @ s)
            close(o["Bc_G"], pB + RB @ mpB.com)
            close(o["at_ground_point"], RB.T @ (s - pB))
            close(o["X_GF"].R, RB @ Rf)
            close(o["X_GF"].p, pB + RB @ pf)
            close(o["vec_G"], RB @ s)
            close(o["vec_B"], RB.T @ s)
            close(o["mp_G"].mass, mpB.mass)
            close(o["mp_G"].com, RB @ mpB.com)
            close(o["mp_G"].inertia, RB @ mpB.inertia.matrix @ RB.T)
            mc = mpB.mass * RB @ mpB.com
            S = np.array([[0, -mc[2], mc[1]], [mc[2], 0, -mc[0]], [-mc[1], mc[0], 0]])
            Mk = np.block([[RB @ mpB.inertia.matrix @ RB.T, S], [-S, mpB.mass * np.eye(3)]])
            close(o["Mk"], Mk)
            close(o["Mk2"], Mk)
    # same body: the plain station distance, no state needed beyond the stations
    b2 = bodies[2]
    sB, sA = args["sB"][0], args["sA"][0]
    close(b2.calc_station_to_station_distance(states[0], sB, b2, sA), np.linalg.norm(np.asarray(sA - sB)))


def test_mass_property_getters(setup):
    model, bodies, states, _ = setup
    state = states[0]
    assert np.all(np.isinf(np.diag(np.asarray(bodies[0].calc_body_spatial_inertia_matrix_in_ground(state)))))
    for B in bodies[1:]:
        mp = B.body.mass_properties
        got = B.get_body_mass_properties(state, model)
        assert isinstance(got, MassPropertiesArrays)
        close(got.mass, mp.mass)
        close(got.com, mp.com)
        close(got.inertia, mp.inertia.matrix)
        close(B.get_body_mass(state, model), mp.mass)
        close(B.get_body_mass_center_station(state, model), mp.com)
        close(B.calc_body_central_inertia(state, model), mp.inertia.matrix - _pi(mp.mass, mp.com))
        close(B.get_body_unit_inertia_about_body_origin(state, model), mp.inertia.matrix / mp.mass)
        close(B.get_inboard_frame(state, model).R, B.X_PF[0])
        close(B.get_inboard_frame(state, model).p, B.X_PF[1])
        close(B.get_outboard_frame(state, model).R, B.X_BM[0])
        close(B.get_outboard_frame(state, model).p, B.X_BM[1])
    # a model with changed parameters is what is read when it is given
    heavier = jb.replace_parameters(model, mass=model.parameters.mass * 2.0,  # inertia scaled too: still physical
                                    inertia_Bo_B=model.parameters.inertia_Bo_B * 2.0)
    close(bodies[3].get_body_mass(state, model=heavier), 2.0 * bodies[3].body.mass_properties.mass)


# ----------------------------------------------------------------------------------------------
# velocity and acceleration level vs derivatives along the motion


def test_body_velocities_and_accelerations_in_another_body(results):
    _, out_b, refs = results
    for i, (F, dF, ddF, W, dW) in refs.items():
        out = _row(out_b, i)
        for k in range(len(PAIRS)):
            o = out[f"pair{k}"]
            close(o["V_AB"][0], W[f"AB{k}"])
            close(o["w_AB"], W[f"AB{k}"])
            close(o["V_AB"][1], dF[f"p_AB{k}"])
            close(o["v_ABo"], dF[f"p_AB{k}"])
            close(o["A_AB"][0], dW[f"AB{k}"], atol=1e-8)
            close(o["b_AB"], dW[f"AB{k}"], atol=1e-8)
            close(o["A_AB"][1], ddF[f"p_AB{k}"], atol=1e-8)
            close(o["a_ABo"], ddF[f"p_AB{k}"], atol=1e-8)


def test_station_and_frame_velocities_and_accelerations(results):
    _, out_b, refs = results
    for i, (F, dF, ddF, W, dW) in refs.items():
        out = _row(out_b, i)
        for k in range(len(PAIRS)):
            o = out[f"pair{k}"]
            close(o["v_S_A"], dF[f"S_A{k}"])
            close(o["a_S_A"], ddF[f"S_A{k}"], atol=1e-8)
        for b in BODIES:
            o = out[f"body{b}"]
            close(o["v_S_G"], dF[f"S_G{b}"])
            close(o["a_S_G"], ddF[f"S_G{b}"], atol=1e-8)
            close(o["lv"][1], dF[f"S_G{b}"])
            close(o["lva"][1], dF[f"S_G{b}"])
            close(o["lva"][2], ddF[f"S_G{b}"], atol=1e-8)
            close(o["V_GF"][0], W[f"GB{b}"])
            close(o["V_GF"][1], dF[f"F_G{b}"])
            close(o["A_GF"][0], dW[f"GB{b}"], atol=1e-8)
            close(o["A_GF"][1], ddF[f"F_G{b}"], atol=1e-8)


def test_distance_time_derivatives(results):
    _, out_b, refs = results
    for i, (F, dF, ddF, W, dW) in refs.items():
        out = _row(out_b, i)
        for k in range(len(PAIRS)):
            o = out[f"pair{k}"]
            close(o["d"], F[f"d{k}"])
            close(o["d_dot"], dF[f"d{k}"])
            close(o["d_ddot"], ddF[f"d{k}"], atol=1e-8)


def test_moving_point_operators(results):
    _, out_b, refs = results
    for i, (F, dF, ddF, W, dW) in refs.items():
        out = _row(out_b, i)
        for k in range(len(PAIRS)):
            o = out[f"pair{k}"]
            close(o["P_vel"], dF[f"P_A{k}"])
            close(o["P_acc"], ddF[f"P_A{k}"], atol=1e-8)
            close(o["dm_dot"], dF[f"dm{k}"])
            close(o["dm_ddot"], ddF[f"dm{k}"], atol=1e-8)


def test_distance_derivative_conventions_at_coincidence(setup):
    model, bodies, states, _ = setup
    state, B, A = states[0], bodies[3], bodies[5]
    s = jnp.array([0.1, -0.2, 0.3])
    vA, vB = jnp.array([0.3, 0.1, -0.2]), jnp.array([-0.1, 0.4, 0.2])
    acc = jnp.array([1.0, -2.0, 0.5])
    # Two points at the same place on the same body: r = 0 exactly, so Simbody's conventions apply:
    # the rate is the relative speed, and with equal velocities the 2nd derivative is |a_rel|.
    close(B.calc_moving_point_to_point_distance_time_derivative(state, s, vB, B, s, vA), np.linalg.norm(vA - vB))
    close(B.calc_moving_point_to_point_distance_2nd_time_derivative(state, s, vA, 0 * acc, B, s, vA, acc), np.linalg.norm(acc))
    # fixed stations on one body never change their distance
    assert float(B.calc_station_to_station_distance_time_derivative(state, s, B, 2 * s)) == 0.0
    assert float(B.calc_station_to_station_distance_2nd_time_derivative(state, s, B, 2 * s)) == 0.0
    # the coincident-station gradient is finite (no NaN through the safe norms)
    g = jax.jit(jax.grad(lambda x: B.calc_moving_point_to_point_distance_time_derivative(state, s, x, B, s, vB)))(vA)
    assert np.all(np.isfinite(np.asarray(g)))
    del A


def test_mobilizer_velocity_and_acceleration(setup, results):
    _, bodies, states, _ = setup
    _, out_b, refs = results
    for i, (F, dF, ddF, W, dW) in refs.items():
        out = _row(out_b, i)
        for b in BODIES:
            o = out[f"body{b}"]
            V_FM = np.asarray(bodies[b].get_mobilizer_velocity(states[i]))
            close(V_FM[0], W[f"FM{b}"])
            close(V_FM[1], dF[f"p_FM{b}"])
            close(o["A_FM"][0], dW[f"FM{b}"], atol=1e-8)
            close(o["A_FM"][1], ddF[f"p_FM{b}"], atol=1e-8)


def test_momentum(setup, results):
    model, bodies, states, _ = setup
    _, out_b, _ = results
    for i in ROWS:
        out = _row(out_b, i)
        for b in BODIES:
            B, o = bodies[b], out[f"body{b}"]
            V = np.asarray(B.get_body_velocity(states[i]))
            close(o["h_o"].reshape(6), o["Mk"] @ V.reshape(6))
            mp = B.body.mass_properties
            R = np.asarray(B.get_body_rotation(states[i]))
            c = R @ mp.com
            I_c = R @ (mp.inertia.matrix - _pi(mp.mass, mp.com)) @ R.T
            close(o["h_c"][0], I_c @ V[0])
            close(o["h_c"][1], mp.mass * (V[1] + np.cross(V[0], c)))


def test_hinge_columns_and_derivative_getters(setup, results):
    model, bodies, states, _ = setup
    _, out_b, _ = results
    i = ROWS[0]
    state, out = states[i], _row(out_b, i)
    qdot_all = np.asarray(model.calc_q_dot(state, state.u))
    qdotdot_all = np.asarray(model.calc_q_dot_dot(state, state.acceleration.udot))
    for b in BODIES:
        B, o = bodies[b], out[f"body{b}"]
        u = np.asarray(B.get_u_as_vector(state))
        close(np.einsum("jab,j->ab", o["H_cols"], u), state.velocity.V_PB_G[b])
        close(np.einsum("jab,j->ab", o["H_FM_cols"], u), state.velocity.V_FM[b])
        sl = slice(B.q_start, B.q_start + B.get_num_q())
        close(o["qdot"], qdot_all[sl])
        close(o["qdot1"], qdot_all[sl])
        close(o["udot"], np.asarray(state.acceleration.udot)[B.u_start : B.u_start + B.get_num_u()])
        close(o["udot1"], o["udot"])
        close(o["qdotdot"], qdotdot_all[sl])
        close(o["qdotdot1"], o["qdotdot"])
        close(B.get_one_from_u_partition(state, 0, state.u), state.u[B.u_start])
        close(B.get_one_from_q_partition(state, 0, state.q), state.q[B.q_start])
    with pytest.raises(jb.InvalidArgument):
        bodies[1].get_h_col(state, 1)


# ----------------------------------------------------------------------------------------------
# force helpers


def test_force_helpers_accumulate_and_map_through_J_transpose(setup):
    model, bodies, states, _ = setup
    state = states[0]
    rng = np.random.default_rng(7)
    zero = jnp.zeros((model.get_num_bodies(), 2, 3))
    applied = []  # (body, station, force at station, torque, force at Bo)
    F = zero
    for b in (1, 3, 5, 6):
        B = bodies[b]
        s, f, t, sf = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3), rng.normal(size=(2, 3))
        F = B.apply_force_to_body_point(state, s, f, F)
        F = B.apply_body_torque(state, t, F)
        F = B.apply_body_force(state, sf, F)
        applied.append((b, s, f, t + sf[0], sf[1]))
    F_ref = zero
    for b, s, f, t, f0 in applied:
        F_ref = model.add_in_station_force(state, bodies[b], s, f, F_ref)
        F_ref = model.add_in_station_force(state, bodies[b], np.zeros(3), f0, F_ref)
        F_ref = model.add_in_body_torque(state, bodies[b], t, F_ref)
    close(F, F_ref)
    assert np.all(np.asarray(F[0]) == 0) and np.all(np.asarray(F[2]) == 0)

    # generalized effect J^T F (at u = 0 the velocity terms vanish) vs d(power)/du, with the
    # power of each force from position-level derivatives along qdot = N u
    nu = model.get_num_u()
    state0 = _realize(model, state.q, jnp.zeros(nu), state.mobility_forces, state.body_forces)
    got = jax.jit(type(model).calc_tree_equivalent_mobility_forces)(model, state0, F)

    def power(u):
        def frames(q):
            pos = _positions(model, q)
            return pos.R_GB, pos.p_GB

        qd = mobilizer_groups.multiply_by_n(model.topology, model.parameters, state.q, u)
        (R, p), (dR, dp) = jax.jvp(frames, (state.q,), (qd,))
        P = 0.0
        for b, s, f, t, f0 in applied:
            P = P + jnp.dot(f, dp[b] + dR[b] @ s) + jnp.dot(f0, dp[b]) + jnp.dot(t, _vee(dR[b] @ R[b].T))
        return P

    close(got, jax.jit(jax.grad(power))(jnp.zeros(nu)))

    f = jnp.zeros(model.get_num_u())
    f = bodies[4].apply_one_mobility_force(state, 5, 2.5, f)
    f = bodies[4].apply_one_mobility_force(state, 5, 0.5, f)
    f = bodies[1].apply_one_mobility_force(state, 0, -1.0, f)
    expected = np.zeros(model.get_num_u())
    expected[bodies[4].u_start + 5] = 3.0
    expected[bodies[1].u_start] = -1.0
    close(f, expected)
    with pytest.raises(jb.InvalidArgument):
        bodies[1].apply_one_mobility_force(state, 1, 1.0, f)
    with pytest.raises(jb.InvalidArgument):
        bodies[1].apply_body_force(state, np.zeros((2, 3)), jnp.zeros((3, 2, 3)))


def test_convert_q_force_to_u_force(setup):
    model, bodies, states, _ = setup
    state = states[0]
    rng = np.random.default_rng(3)
    nu = model.get_num_u()
    for B in bodies[1:]:
        nq_b, nu_b = B.get_num_q(), B.get_num_u()
        fq = rng.normal(size=nq_b)
        fu = B.convert_q_force_to_u_force(state, fq)
        N = np.stack(
            [
                np.asarray(model.calc_q_dot(state, jnp.zeros(nu).at[B.u_start + j].set(1.0)))[B.q_start : B.q_start + nq_b]
                for j in range(nu_b)
            ],
            1,
        )
        close(fu, N.T @ fq)
    with pytest.raises(jb.InvalidArgument):
        bodies[2].convert_q_force_to_u_force(state, np.zeros(3))  # Ball uses 4 q in quaternion mode


def test_convert_q_force_in_euler_mode(setup):
    model, bodies, states, _ = setup
    euler = model.with_use_euler_angles(True)
    st = euler.realize(model.convert_to_euler_angles(states[0]), Stage.Position)
    B = bodies[4]  # Free: 6 q in use in Euler mode
    fq = np.arange(1.0, 7.0)
    fu = B.convert_q_force_to_u_force(st, fq)
    u = np.random.default_rng(0).normal(size=euler.get_num_u())
    qdot = np.asarray(euler.calc_q_dot(st, jnp.asarray(u)))[B.q_start : B.q_start + 6]
    close(np.dot(fu, u[B.u_start : B.u_start + 6]), np.dot(fq, qdot))


# ----------------------------------------------------------------------------------------------
# topology utilities, stage checks


def test_base_body_and_clone_for_new_parent():
    system, bodies = build_tree(seed=5)
    G, b1, b2, b3, b4, b5, b6 = bodies
    assert b3.get_base_mobilized_body() is b1
    assert b6.get_base_mobilized_body() is b4
    assert b4.get_base_mobilized_body() is b4
    assert G.get_base_mobilized_body() is G

    clone = b6.clone_for_new_parent(b5)
    assert type(clone) is type(b6) and clone.mobilizer_cls is b6.mobilizer_cls
    assert clone.parent is b5 and clone.index == 7 and clone.body is b6.body
    np.testing.assert_array_equal(clone.X_PF[0], b6.X_PF[0])
    np.testing.assert_array_equal(clone.X_BM[1], b6.X_BM[1])
    model = system.realize_topology()
    q = np.asarray(model.default_q).copy()
    q[: b6.q_start + 1] = np.random.default_rng(2).uniform(-1, 1, b6.q_start + 1)
    q[clone.q_start] = q[b6.q_start]
    st = model.realize(model.normalize_quaternions(model.default_state().set_q(jnp.asarray(q))), Stage.Position)
    close(clone.get_body_transform(st).R, b6.get_body_transform(st).R)
    close(clone.get_body_transform(st).p, b6.get_body_transform(st).p)

    with pytest.raises(jb.TopologyFrozen):
        b1.clone_for_new_parent(G)

    # mobilizer parameters are cloned too
    s2 = jb.MultibodySystem()
    m2 = jb.SimbodyMatterSubsystem(s2)
    screw = jb.MobilizedBody.Screw(m2.Ground(), jb.Transform(), jb.Body.Rigid(), jb.Transform(), pitch=0.25)
    np.testing.assert_array_equal(screw.clone_for_new_parent(screw).params, [0.25])
    with pytest.raises(jb.UnknownParent):
        screw.clone_for_new_parent("not a body")


def test_stage_violations(setup):
    model, bodies, states, args = setup
    pos_only = model.realize(model.default_state(), Stage.Position)
    B, A = bodies[3], bodies[5]
    B.find_station_location_in_ground(pos_only, args["sB"][0])  # fine at Position
    with pytest.raises(jb.StageViolation):
        B.find_station_velocity_in_ground(pos_only, args["sB"][0])
    with pytest.raises(jb.StageViolation):
        B.find_body_acceleration_in_another_body(pos_only, A)
    with pytest.raises(jb.StageViolation):
        B.get_mobilizer_acceleration(pos_only, model)
    with pytest.raises(jb.StageViolation):
        B.find_body_transform_in_another_body(model.default_state(), A)


# ----------------------------------------------------------------------------------------------
# batching and differentiation


def test_vmap_batch_matches_unbatched_eager(setup, results):
    """The jitted, vmapped batch of 64 states equals op-by-op evaluation of single states."""
    model, _, states, args = setup
    evaluate, out_b, _ = results
    assert jax.tree.leaves(out_b)[0].shape[0] == NBATCH
    for i in (NBATCH - 1,):
        single = evaluate(model, states[i], args)
        jax.tree.map(lambda x, y: close(x[i], y), out_b, single)


def test_grad_of_station_distance_matches_finite_differences(setup):
    model, bodies, states, args = setup
    B, A = bodies[6], bodies[3]
    sB, sA = args["sB"][1], args["sA"][1]

    def dist(q):
        st = model.realize(model.default_state().set_q(q), Stage.Position)
        return B.calc_station_to_station_distance(st, sB, A, sA)

    value_and_grad = jax.jit(jax.value_and_grad(dist))
    q0 = np.asarray(states[0].q)
    g = np.asarray(value_and_grad(jnp.asarray(q0))[1])
    h = 1e-6
    f = lambda q: float(value_and_grad(jnp.asarray(q))[0])  # noqa: E731
    fd = np.array([(f(q0 + h * e) - f(q0 - h * e)) / (2 * h) for e in np.eye(q0.size)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)
