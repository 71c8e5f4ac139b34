"""Every constraint type of the zoo checked against independent geometry (issue 12, item 4).

The other constraint tests check identities among jaxbody's own equations (G vs its transpose, P vs Pq N, ...),
which a sign or frame error in a position error function would pass. Here each type's error is recomputed
with numpy from body kinematics alone (body transforms and spatial velocities read from the realized state,
coordinates and speeds from ``get_one_q``/``get_one_u``) using the definitions of docs/simbody-catalogue.md
section 2 (Simbody's signs and frames: vector errors in the Ancestor frame A), never jaxbody's constraint code:

(a) at 3 random (unsatisfied) states of the zoo, ``get_position_errors_as_vector`` equals the geometric
    quantity (point-to-plane distance, angle cosines, signed line-line distance, q - q0, ...) to 1e-12;
(b) after one ``system.project`` of a perturbed assembled zoo state every holonomic condition holds
    geometrically to 1e-10 (and the nonholonomic ones too, since project also projects u);
(c) at the random states, the velocity-level rows (NoSlip1D, ConstantSpeed, SpeedCoupler, the rolling rows of
    the contacts, the Custom velocity equation) equal the geometric velocity quantity (slip velocity of the
    contact points along the contact directions, u - u0, ...), every holonomic pverr equals the time derivative
    of the geometric position quantity (central differences along q + dt qdot, t + dt), and ConstantAcceleration's
    aerr is udot - a0.

SphereOnSphere's rolling basis (Cx = Cz.perp()) is not rebuilt: the norm of its two rows is checked against the
tangential slip speed. PointOnLine's perpendiculars (stored by the factory) are checked to be a right-handed
orthonormal completion of the line direction, and |perr| against the point-to-line distance.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
from constraint_systems import zoo
from systems import random_state

import jaxbody as jb
from jaxbody._constraints import projection

SEEDS = (11, 12, 13)
H = 1e-5  # time step of the central differences


class Kin:
    """Body kinematics in G, as numpy, read from a state realized to Velocity."""

    def __init__(self, state, bodies):
        self.s = state
        self.bodies = bodies
        X = [b.get_body_transform(state) for b in bodies]
        self.R = [np.asarray(x.R) for x in X]
        self.p = [np.asarray(x.p) for x in X]
        V = [np.asarray(b.get_body_velocity(state)) for b in bodies]
        self.w = [v[0] for v in V]
        self.v = [v[1] for v in V]
        self.t = float(state.t)

    def loc(self, body, station):
        i = body.index
        return self.p[i] + self.R[i] @ np.asarray(station)

    def vec(self, body, v_B):
        return self.R[body.index] @ np.asarray(v_B)

    def vel_at(self, body, x_G):
        """Velocity in G of the material point of ``body`` currently at the Ground point ``x_G``."""
        i = body.index
        return self.v[i] + np.cross(self.w[i], x_G - self.p[i])

    def q(self, body, i):
        return float(body.get_one_q(self.s, i))

    def u(self, body, i):
        return float(body.get_one_u(self.s, i))


def _frame(params, off):
    """A (R, p) frame stored as R.ravel() (row-major), p in the handle's parameter vector."""
    return params[off:off + 9].reshape(3, 3), params[off + 9:off + 12]


def _unit(x):
    return x / np.linalg.norm(x)


def _line_line(k, c):
    """Signed distance of two edges per catalogue 2.17 and the contact point/frame (all in G)."""
    P = c.params
    Rf, pf = _frame(P, 0)
    Rb, pb = _frame(P, 13)
    F, B = c.bodies
    df, sf, Pf = k.vec(F, Rf[:, 0]), k.vec(F, Rf[:, 2]), k.loc(F, pf)
    db, sb, Pb = k.vec(B, Rb[:, 0]), k.vec(B, Rb[:, 2]), k.loc(B, pb)
    w = np.cross(df, db)
    if abs(w @ sf) > abs(w @ sb):
        s = 1.0 if w @ sf >= 0 else -1.0
    else:
        s = -1.0 if w @ sb >= 0 else 1.0
    n = s * w / np.linalg.norm(w)
    # closest points: Pf + tf df, Pb + tb db with the connecting vector perpendicular to both lines
    A = np.array([[df @ df, -(df @ db)], [df @ db, -(db @ db)]])
    tf, tb = np.linalg.solve(A, [(Pb - Pf) @ df, (Pb - Pf) @ db])
    Co = 0.5 * ((Pf + tf * df) + (Pb + tb * db))
    return (Pb - Pf) @ n, n, df, Co


def geometric_position_errors(k, c, name):
    """Independent perr for constraint ``c`` (None for types without position equations)."""
    P = c.params
    if name == "rod":
        return np.array([np.linalg.norm(k.loc(c.bodies[1], P[3:6]) - k.loc(c.bodies[0], P[0:3])) - P[6]])
    if name == "ball":  # p_S - p_P in the Ancestor frame
        A = c.get_ancestor_mobilized_body()
        d = k.loc(c.bodies[1], P[3:6]) - k.loc(c.bodies[0], P[0:3])
        return k.R[A.index].T @ d
    if name == "weld":
        A = c.get_ancestor_mobilized_body()
        (R1, p1), (R2, p2) = _frame(P, 0), _frame(P, 12)
        RB, RF = k.R[c.bodies[0].index] @ R1, k.R[c.bodies[1].index] @ R2
        rot = [RF[:, 0] @ RB[:, 1], RF[:, 1] @ RB[:, 2], RF[:, 2] @ RB[:, 0]]
        return np.concatenate([rot, k.R[A.index].T @ (k.loc(c.bodies[1], p2) - k.loc(c.bodies[0], p1))])
    if name == "point_in_plane":  # height of the point above the plane n.x = h fixed on the plane body
        B, F = c.bodies
        x_B = k.R[B.index].T @ (k.loc(F, P[4:7]) - k.p[B.index])
        return np.array([x_B @ P[0:3] - P[3]])
    if name == "point_on_line":  # components of (point - line point) along the two perpendiculars, in B
        B, F = c.bodies
        x, y = P[0:3], P[3:6]
        d_B = k.R[B.index].T @ (k.loc(F, P[9:12]) - k.loc(B, P[6:9]))
        return np.array([d_B @ x, d_B @ y])
    if name == "constant_angle":
        b, f = k.vec(c.bodies[0], P[0:3]), k.vec(c.bodies[1], P[3:6])
        return np.array([b @ f - np.cos(1.2)])
    if name == "constant_orientation":
        RB = k.R[c.bodies[0].index] @ P[0:9].reshape(3, 3)
        RF = k.R[c.bodies[1].index] @ P[9:18].reshape(3, 3)
        return np.array([RF[:, 0] @ RB[:, 1], RF[:, 1] @ RB[:, 2], RF[:, 2] @ RB[:, 0]])
    if name == "constant_coordinate":
        (m, i), = c.q_select
        return np.array([k.q(m, i) - 0.3])
    if name == "coordinate_coupler":  # 0.5 sin(q16) + q14^2 - 0.2 (zoo's function, written out here)
        (m0, i0), (m1, i1) = c.q_select
        return np.array([0.5 * np.sin(k.q(m0, i0)) + k.q(m1, i1) ** 2 - 0.2])
    if name == "prescribed_motion":
        (m, i), = c.q_select
        return np.array([k.q(m, i) - 0.3 * np.sin(2.0 * k.t)])
    if name == "sphere_on_plane":  # height of the center above the plane minus the radius
        F, B = c.bodies
        Rp, pp = _frame(P, 0)
        return np.array([(k.loc(B, P[12:15]) - k.loc(F, pp)) @ k.vec(F, Rp[:, 2]) - P[15]])
    if name == "sphere_on_sphere":
        F, B = c.bodies
        return np.array([np.linalg.norm(k.loc(B, P[4:7]) - k.loc(F, P[0:3])) - (P[3] + P[7])])
    if name == "line_on_line":
        return np.array([_line_line(k, c)[0]])
    if name == "point_on_plane":
        S, B = c.bodies
        Rp, pp = _frame(P, 0)
        return np.array([(k.loc(B, P[12:15]) - k.loc(S, pp)) @ k.vec(S, Rp[:, 2])])
    if name == "custom":  # body 9's origin on the unit sphere around body 4's station (0.1, 0.2, 0.3)
        b4, b9 = c.bodies
        d = k.p[b9.index] - k.loc(b4, [0.1, 0.2, 0.3])
        return np.array([0.5 * (d @ d - 1.0)])
    return None


def geometric_velocity_errors(k, c, name):
    """Independent nonholonomic verr rows for ``c`` (None when it has none or they are not checked here)."""
    P = c.params
    if name == "no_slip":  # relative velocity of the moving bodies' points at P along n
        C, b0, b1 = c.bodies
        x = k.loc(C, P[0:3])
        return np.array([(k.vel_at(b1, x) - k.vel_at(b0, x)) @ k.vec(C, P[3:6])])
    if name == "constant_speed":
        (m, i), = c.u_select
        return np.array([k.u(m, i) - 0.5])
    if name == "speed_coupler":  # u16 + 0.4 u13[2] cos(q15)
        (m0, i0), (m1, i1) = c.u_select
        (mq, iq), = c.q_select
        return np.array([k.u(m0, i0) + 0.4 * k.u(m1, i1) * np.cos(k.q(mq, iq))])
    if name == "custom":  # body 9's origin velocity along body 4's x axis minus 0.1 q14
        b4, b9 = c.bodies
        (m, i), = c.q_select
        return np.array([k.v[b9.index] @ k.R[b4.index][:, 0] - 0.1 * k.q(m, i)])
    if name == "sphere_on_plane":  # slip velocity of the sphere's lowest point relative to the plane body
        F, B = c.bodies
        Rp, _ = _frame(P, 0)
        Pz = k.vec(F, Rp[:, 2])
        x = k.loc(B, P[12:15]) - P[15] * Pz
        slip = k.vel_at(B, x) - k.vel_at(F, x)
        return np.array([slip @ k.vec(F, Rp[:, 0]), slip @ k.vec(F, Rp[:, 1])])
    if name == "point_on_plane":
        S, B = c.bodies
        Rp, _ = _frame(P, 0)
        x = k.loc(B, P[12:15])
        slip = k.vel_at(B, x) - k.vel_at(S, x)
        return np.array([slip @ k.vec(S, Rp[:, 0]), slip @ k.vec(S, Rp[:, 1])])
    if name == "line_on_line":  # Cx = df, Cy = n x df at Co
        _, n, df, Co = _line_line(k, c)
        F, B = c.bodies
        slip = k.vel_at(B, Co) - k.vel_at(F, Co)
        return np.array([slip @ df, slip @ np.cross(n, df)])
    return None


def sphere_sphere_slip(k, c):
    """|tangential slip| at Co (the basis Cx = Cz.perp(), Cy is not rebuilt here; its norm is basis-free)."""
    P = c.params
    F, B = c.bodies
    Sf, Sb = k.loc(F, P[0:3]), k.loc(B, P[4:7])
    d = Sb - Sf
    Cz = _unit(d)
    Co = Sf + P[3] / (P[3] + P[7]) * d
    slip = k.vel_at(B, Co) - k.vel_at(F, Co)
    return np.linalg.norm(slip - (slip @ Cz) * Cz)


HOLONOMIC = ["rod", "ball", "weld", "point_in_plane", "point_on_line", "constant_angle", "constant_orientation",
             "constant_coordinate", "coordinate_coupler", "prescribed_motion", "sphere_on_plane", "sphere_on_sphere",
             "line_on_line", "point_on_plane", "custom"]
VELOCITY = ["no_slip", "constant_speed", "speed_coupler", "custom", "sphere_on_plane", "point_on_plane",
            "line_on_line"]


@functools.lru_cache(maxsize=None)
def _realize():
    """One compiled realize (to Acceleration) of the zoo, shared by all the states here."""
    model = zoo()[0]
    return jax.jit(lambda s: model.realize(s, jb.Stage.Acceleration))


@functools.lru_cache(maxsize=None)
def random_realized():
    """The zoo at 3 random states (t = 0.4), realized to Acceleration, with their numpy kinematics."""
    model, cons, bodies = zoo()
    realize = _realize()
    out = []
    for seed in SEEDS:
        s = random_state(model, seed).set_time(0.4)
        r = realize(s)
        qdot = r.velocity.qdot
        # the motion q(t) = q + (t - 0.4) qdot, for central differences of the geometry in time (part (c))
        moved = [Kin(realize(s.set_q(s.q + e * H * qdot).set_time(0.4 + e * H)), bodies) for e in (1, -1)]
        out.append((r, Kin(r, bodies), moved))
    return model, cons, out


@functools.lru_cache(maxsize=None)
def projected():
    """system.project (one compiled call) of a perturbed assembled zoo state, realized."""
    model, cons, bodies = zoo()
    system = cons["rod"].matter.system
    project = jax.jit(lambda s: system.project(s, 1e-12))
    s0 = random_state(model, 3, u_scale=0.3).set_time(0.4)
    assembled, res0 = project(s0)
    perturbed = assembled.set_q(assembled.q + 1e-3 * jax.random.normal(jax.random.PRNGKey(8), assembled.q.shape))
    perturbed = perturbed.set_u(perturbed.u + 1e-2 * jax.random.normal(jax.random.PRNGKey(9), perturbed.u.shape))
    final, res = project(perturbed)
    r = _realize()(final)
    return model, cons, res0, res, r, Kin(r, bodies)


def test_every_type_is_covered():
    _, cons, _ = random_realized()
    checked = set(HOLONOMIC) | set(VELOCITY) | {"sphere_on_sphere", "constant_acceleration"}
    assert set(cons) == checked, set(cons) ^ checked


@pytest.mark.parametrize("name", HOLONOMIC)
def test_position_error_is_the_geometric_quantity(name):
    _, cons, states = random_realized()
    c = cons[name]
    for r, k, _ in states:
        expected = geometric_position_errors(k, c, name)
        got = np.asarray(c.get_position_errors_as_vector(r))
        assert np.max(np.abs(expected)) > 1e-3, (name, expected)  # the random states are far from assembled
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("name", VELOCITY)
def test_velocity_error_is_the_geometric_quantity(name):
    _, cons, states = random_realized()
    c = cons[name]
    mp = c.get_num_constraint_equations()[0]
    for r, k, _ in states:
        expected = geometric_velocity_errors(k, c, name)
        got = np.asarray(c.get_velocity_errors_as_vector(r))[mp:]
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("name", HOLONOMIC)
def test_position_dot_error_is_the_rate_of_the_geometric_quantity(name):
    """pverr = d/dt of the geometric position quantity along the state's motion (central differences)."""
    _, cons, states = random_realized()
    c = cons[name]
    mp = c.get_num_constraint_equations()[0]
    for r, _, (plus, minus) in states:
        rate = (geometric_position_errors(plus, c, name) - geometric_position_errors(minus, c, name)) / (2 * H)
        got = np.asarray(c.get_velocity_errors_as_vector(r))[:mp]
        np.testing.assert_allclose(got, rate, rtol=0, atol=1e-6 * max(1.0, np.max(np.abs(rate))), err_msg=name)


def test_constant_acceleration_error_is_udot_minus_a0():
    """aerr(udot) = udot[that u] - a0 for an arbitrary udot, and forward dynamics gives udot = a0."""
    model, cons, states = random_realized()
    c = cons["constant_acceleration"]
    (m, i), = c.u_select
    _, _, a = model.constraints.rows_of(c.index)
    x = np.random.default_rng(4).normal(size=model.get_num_u())
    for r, _, _ in states:
        x_i = float(m.get_one_u(r.set_u(x), i))  # the entry of x on that mobility
        aerr = np.asarray(model.calc_constraint_acceleration_errors(r, x))[a]
        np.testing.assert_allclose(aerr, [x_i - 0.7], rtol=0, atol=1e-12)
        np.testing.assert_allclose(float(m.get_one_u_dot(r, i)), 0.7, rtol=0, atol=1e-10)
        np.testing.assert_allclose(np.asarray(c.get_acceleration_errors_as_vector(r)), [0.0], rtol=0, atol=1e-10)


def test_sphere_on_sphere_rolling_rows_are_the_tangential_slip():
    _, cons, states = random_realized()
    c = cons["sphere_on_sphere"]
    for r, k, _ in states:
        got = np.asarray(c.get_velocity_errors_as_vector(r))[1:]
        np.testing.assert_allclose(np.linalg.norm(got), sphere_sphere_slip(k, c), rtol=0, atol=1e-12)


def test_point_on_line_perpendiculars_and_distance():
    """x, y are an orthonormal basis of the plane perpendicular to the line, so |perr| is the point-line distance."""
    _, cons, states = random_realized()
    c = cons["point_on_line"]
    z = _unit(np.array([1.0, 0.2, 0.1]))
    x, y = c.params[0:3], c.params[3:6]
    np.testing.assert_allclose(np.array([[x @ x, x @ y, x @ z], [y @ x, y @ y, y @ z], [z @ x, z @ y, z @ z]]),
                               np.eye(3), atol=1e-15)
    np.testing.assert_allclose(np.cross(x, y), z, atol=1e-15)  # right-handed (x, y, z) per the catalogue
    B, F = c.bodies
    for r, k, _ in states:
        d = k.loc(F, c.params[9:12]) - k.loc(B, c.params[6:9])
        zG = k.vec(B, z)
        dist = np.linalg.norm(d - (d @ zG) * zG)
        np.testing.assert_allclose(np.linalg.norm(np.asarray(c.get_position_errors_as_vector(r))), dist, atol=1e-12)


def test_every_constraint_row_satisfied_after_project():
    """Projection (catalogue 4.7) from a perturbed start: every type's position and velocity rows below 1e-10,
    quaternion norms to 1e-12, within Simbody's iteration limit."""
    model, cons, res0, res, r, _ = projected()
    assert bool(res0.success) and bool(res.success)
    assert int(res.q_iterations) <= projection.MAX_Q_ITERATIONS
    perr, verr = np.asarray(model.get_q_err(r)), np.asarray(model.get_u_err(r))
    for name, c in cons.items():
        p, v, _ = model.constraints.rows_of(c.index)
        assert np.all(np.abs(perr[p]) < 1e-10), (name, perr[p])
        assert np.all(np.abs(verr[np.concatenate([p, v])]) < 1e-10), (name, verr[np.concatenate([p, v])])
    assert np.all(np.abs(perr[model.constraints.mp:]) < 1e-12)  # quaternion norms


def test_geometric_conditions_hold_after_project():
    _, cons, _, _, _, k = projected()
    for name in HOLONOMIC:
        e = geometric_position_errors(k, cons[name], name)
        assert np.max(np.abs(e)) < 1e-10, (name, e)
    for name in VELOCITY:
        e = geometric_velocity_errors(k, cons[name], name)
        assert np.max(np.abs(e)) < 1e-10, (name, e)
    assert sphere_sphere_slip(k, cons["sphere_on_sphere"]) < 1e-10
