"""Each force element's body forces, mobility forces and potential energy against its catalogue formula
(Simbody catalogue 5), written here independently in numpy from the realized kinematics (R_GB, p_GB, V_GB).

Elements OpenSim also has are checked against real Simbody in test_force_golden.py; this file covers the
rest (and repeats the simple ones at a richer state: quaternion bodies, every element at once).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from force_systems import all_forces_model, thermostat_chain
from helpers import assert_close
from systems import random_state

import jaxbody as jb


@pytest.fixture(scope="module")
def evaluated():
    """(handles, bodies, realized state (numpy leaves), per-element (F, f, pe)) at a random state with the
    slider beyond its stop's upper bound and the arm beyond its stop's lower bound."""
    model, handles, bodies = all_forces_model("all")
    state = random_state(model, 7)
    q = np.asarray(state.q).copy()
    q[bodies["slide"].q_start] = 0.08
    q[bodies["arm"].q_start] = -0.17
    state = handles["DiscreteForces"].set_all_mobility_forces(state.set_q(q), np.linspace(-1, 1, model.get_num_u()))
    state = handles["MobilityDiscreteForce"].set_mobility_force(state, 0.9)

    @jax.jit
    def contributions(state):
        state = model.realize(state, jb.Stage.Velocity)
        out = {}
        for name, h in handles.items():
            F, f = model.calc_force_contributions_sum(state, (h,))
            out[name] = (F, f, model.calc_force_potential_energy_sum(state, (h,)))
        return state, out

    state, out = contributions(state)
    return model, handles, bodies, state, jax.tree_util.tree_map(np.asarray, out)


def _at_station(nb, body, R, s, f):
    F = np.zeros((nb, 2, 3))
    r = R[body] @ s
    F[body] = [np.cross(r, f), f]
    return F


def _station(state, body, s):
    pos, vel = state.position, state.velocity
    R, p = np.asarray(pos.R_GB), np.asarray(pos.p_GB)
    w, v = np.asarray(vel.V_GB)[body]
    r = R[body] @ s
    return p[body] + r, v + np.cross(w, r)


def _element(model, h):
    return jax.tree_util.tree_map(np.asarray, model.forces[h.index])


def test_gravity_elements(evaluated):
    model, handles, _, state, out = evaluated
    pos = state.position
    m, pc, p = np.asarray(model.parameters.mass), np.asarray(pos.p_GBc), np.asarray(pos.p_GB)
    for name in ("Gravity", "UniformGravity"):
        e = _element(model, handles[name])
        g = e.magnitude * e.down if name == "Gravity" else e.gravity
        F = np.stack([np.cross(pc - p, m[:, None] * g), m[:, None] * g], 1)
        pe = (np.sum(m * e.magnitude * (-(pc @ e.down) - e.zero_height)) if name == "Gravity"
              else -np.sum(m * (pc @ g + e.zero_height)))  # UniformGravity: Simbody's m h0 quirk
        assert_close(out[name][0], F, 1e-13, f"{name} body forces")
        assert_close(out[name][2], pe, 1e-13, f"{name} potential energy")
        assert_close(out[name][1], np.zeros(model.get_num_u()), 0, f"{name} mobility forces")


def test_mobility_elements(evaluated):
    model, handles, bodies, state, out = evaluated
    q, u, nu = np.asarray(state.q), np.asarray(state.u), model.get_num_u()
    arm, slide = bodies["arm"], bodies["slide"]
    qa, ua, qs, us = q[arm.q_start], u[arm.u_start], q[slide.q_start], u[slide.u_start]
    ub = u[bodies["ball"].u_start + 1]

    def unit(i):
        return np.eye(nu)[i]

    expected = {
        "MobilityLinearSpring": (-3.0 * (qa - 0.2) * unit(arm.u_start), 0.5 * 3.0 * (qa - 0.2) ** 2),
        # above q_high = 0.05: min(0, -k x (1 + d qdot)) with d = 0
        "MobilityLinearStop": (min(0.0, -200.0 * (qs - 0.05)) * unit(slide.u_start), 0.5 * 200.0 * (qs - 0.05) ** 2),
        # below q_low = -0.1: max(0, -k x (1 - d qdot))
        "MobilityLinearStopDissipative": (max(0.0, -300.0 * (qa + 0.1) * (1 - 0.7 * ua)) * unit(arm.u_start),
                                          0.5 * 300.0 * (qa + 0.1) ** 2),
        "MobilityLinearDamper": (-0.8 * us * unit(slide.u_start), 0.0),
        "GlobalDamper": (-0.05 * u, 0.0),
        # jaxbody's own: -F tanh(u / v_t) on a Pin's u and on the Ball's u[1]
        "MobilitySmoothCoulombFriction": (-1.2 * np.tanh(ua / 0.5) * unit(arm.u_start), 0.0),
        "MobilitySmoothCoulombFrictionBall": (-0.7 * np.tanh(ub / 0.3) * unit(bodies["ball"].u_start + 1), 0.0),
        "MobilityConstantForce": (0.4 * unit(arm.u_start), 0.0),
        "MobilityDiscreteForce": (0.9 * unit(slide.u_start), 0.0),
        "DiscreteForces": (np.linspace(-1, 1, nu), 0.0),
    }
    for name, (f, pe) in expected.items():
        assert_close(out[name][1], f, 1e-13, f"{name} mobility forces")
        assert_close(out[name][2], pe, 1e-13, f"{name} potential energy")
        assert_close(out[name][0], np.zeros((model.get_num_bodies(), 2, 3)), 0, f"{name} body forces")
    assert abs(out["MobilityLinearStopDissipative"][1][arm.u_start]) > 1.0, "the lower stop is engaged"


def test_stop_is_silent_between_its_bounds(evaluated):
    model, handles, bodies, state, _ = evaluated
    q = np.asarray(state.q).copy()
    q[bodies["slide"].q_start] = 0.01
    inside = model.realize(state.set_q(q), jb.Stage.Velocity)
    F, f = model.calc_force_contributions_sum(inside, (handles["MobilityLinearStop"],))
    assert not np.any(np.asarray(f)) and not np.any(np.asarray(F))


def test_two_point_and_body_elements(evaluated):
    model, handles, bodies, state, out = evaluated
    nb, R = model.get_num_bodies(), np.asarray(state.position.R_GB)
    arm, slide, ball, free = (bodies[k].index for k in ("arm", "slide", "ball", "free"))

    def pair(b1, s1, b2, s2):
        (p1, v1), (p2, v2) = _station(state, b1, np.asarray(s1)), _station(state, b2, np.asarray(s2))
        d = np.linalg.norm(p2 - p1)
        return (p2 - p1) / d, d, v2 - v1

    s1, s2 = [0.1, 0.0, 0.0], [0.0, 0.2, 0.0]
    e, d, _ = pair(slide, s1, ball, s2)
    f1 = 15.0 * (d - 0.3) * e
    F = _at_station(nb, slide, R, s1, f1) + _at_station(nb, ball, R, s2, -f1)
    assert_close(out["TwoPointLinearSpring"][0], F, 1e-13, "TwoPointLinearSpring")
    assert_close(out["TwoPointLinearSpring"][2], 0.5 * 15.0 * (d - 0.3) ** 2, 1e-13, "TwoPointLinearSpring PE")

    s1, s2 = [0.3, 0.0, 0.1], [0.1, 0.0, 0.0]
    e, d, v = pair(arm, s1, free, s2)
    f1 = 2.5 * np.dot(v, e) * e
    F = _at_station(nb, arm, R, s1, f1) + _at_station(nb, free, R, s2, -f1)
    assert_close(out["TwoPointLinearDamper"][0], F, 1e-13, "TwoPointLinearDamper")

    s1, s2 = [0.1, 0.0, 0.0], [0.0, 0.1, 0.0]
    e, d, _ = pair(ball, s1, free, s2)
    F = _at_station(nb, ball, R, s1, -1.7 * e) + _at_station(nb, free, R, s2, 1.7 * e)
    assert_close(out["TwoPointConstantForce"][0], F, 1e-13, "TwoPointConstantForce")

    F = _at_station(nb, ball, R, np.array([0.0, 0.3, 0.1]), np.array([0.5, -0.2, 0.8]))
    assert_close(out["ConstantForce"][0], F, 1e-13, "ConstantForce")
    F = np.zeros((nb, 2, 3))
    F[free, 0] = [0.1, 0.3, -0.2]
    assert_close(out["ConstantTorque"][0], F, 0, "ConstantTorque")
    for name in ("TwoPointLinearDamper", "TwoPointConstantForce", "ConstantForce", "ConstantTorque"):
        assert out[name][2] == 0 and not np.any(out[name][1]), name


def test_custom_element_is_the_user_function(evaluated):
    model, handles, _, state, out = evaluated
    p = np.asarray(state.position.p_GB)[4]
    anchor = np.array([0.1, -0.4, 0.2])
    F = np.zeros((model.get_num_bodies(), 2, 3))
    F[4, 1] = -5.0 * (p - anchor)
    assert_close(out["Custom"][0], F, 1e-13, "Custom body forces")
    assert_close(out["Custom"][2], 0.5 * 5.0 * np.sum((p - anchor) ** 2), 1e-13, "Custom PE")


def test_add_force_to_body_point_matches_the_station_formula(evaluated):
    model, handles, bodies, state, _ = evaluated
    ball = bodies["ball"]
    s = handles["DiscreteForces"].clear_all_body_forces(state)
    s = handles["DiscreteForces"].add_force_to_body_point(model.realize(s, jb.Stage.Velocity), ball, [0.1, 0.2, 0.3],
                                                          [1.0, -2.0, 0.5])
    s = handles["DiscreteForces"].add_torque_to_body(s, ball, [0.0, 0.0, 2.0])
    F = _at_station(model.get_num_bodies(), ball.index, np.asarray(state.position.R_GB), np.array([0.1, 0.2, 0.3]),
                    np.array([1.0, -2.0, 0.5]))
    F[ball.index, 0] += [0.0, 0.0, 2.0]
    assert_close(handles["DiscreteForces"].get_all_body_forces(s), F, 1e-14, "DiscreteForces body forces")
    got, _ = model.calc_force_contributions_sum(model.realize(s, jb.Stage.Velocity), (handles["DiscreteForces"],))
    assert_close(got, F, 1e-14, "DiscreteForces contribution")
    assert float(handles["DiscreteForces"].get_one_mobility_force(s, bodies["arm"], 0)) == pytest.approx(
        np.linspace(-1, 1, model.get_num_u())[bodies["arm"].u_start])


def test_thermostat_force_is_minus_c0_times_momentum():
    model, handles = thermostat_chain()
    state = random_state(model, 3)
    state = handles.set_chain_state(state, jnp.asarray([0.7, -0.2, 0.1, 0.3, 0.0, 0.5]))
    state = model.realize(state, jb.Stage.Dynamics)
    M = np.asarray(model.calc_m(state))
    assert_close(state.dynamics.mobility_forces, -0.7 * M @ np.asarray(state.u), 1e-12, "thermostat forces")
    ke = 0.5 * np.asarray(state.u) @ M @ np.asarray(state.u)
    n, kT, t = model.get_num_u(), 2.0 * 1.5, 0.4
    z = np.asarray(state.z)
    c = z[:3]
    zdot = np.array([(2 * ke / (n * 2.0) / 1.5 - 1) / t**2 - c[0] * c[1], n * c[0] ** 2 - 1 / t**2 - c[1] * c[2],
                     c[1] ** 2 - 1 / t**2, *c, -2 * c[0] * ke])
    assert_close(state.dynamics.zdot, zdot, 1e-12, "thermostat zdot (Simbody's realizeDynamics)")
    bath = kT / 2 * t**2 * (n * c[0] ** 2 + c[1] ** 2 + c[2] ** 2) + kT * (n * z[3] + z[4] + z[5])
    assert_close(handles.calc_bath_energy(model, state), bath, 1e-12, "bath energy")
