"""Constraint index bookkeeping (Simbody's Constraint: constrained q/u maps, multiplier blocks, constraint-space
vectors) and per-constraint forces, each against an independent route.

Model: a Ball-jointed body (4 q's with quaternions, 3 with Euler angles, 3 u's) under Ground, a Pin under it,
a Slider and a second Pin under Ground, with four constraints in this order:
Ball(ball body, pin body) (mp=3), SpeedCoupler on (slider u, ball u1) with the pin's q (mv=1),
CoordinateCoupler on (pin2 q, ball q2) (mp=1), ConstantAcceleration on pin2 (ma=1).
References: the layout rule of Simbody's Constraint::getIndexOfMultipliersInUse documentation (all holonomic
rows, then nonholonomic, then acceleration-only, each constraint contiguous within a block: hand-computed
below), the q/u values a state with q = arange, u = arange carries (each constrained q's global index read
back through the mobilizer's own getters), and ``G^T lambda`` from the explicit G of ``model.calc_g``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from helpers import assert_close, assert_grad_matches_fd
from systems import random_mass_properties, random_transform, random_state


@pytest.fixture(scope="module")
def sysm():
    rng = np.random.default_rng(3)
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, [0.0, -9.81, 0.0])
    G = matter.Ground()
    body = lambda: jb.Body.Rigid(random_mass_properties(rng))  # noqa: E731
    ball = jb.MobilizedBody.Ball(G, random_transform(rng), body(), random_transform(rng), name="ball")
    pin = jb.MobilizedBody.Pin(ball, random_transform(rng), body(), random_transform(rng), name="pin")
    slider = jb.MobilizedBody.Slider(G, random_transform(rng), body(), random_transform(rng), name="slider")
    pin2 = jb.MobilizedBody.Pin(G, random_transform(rng), body(), random_transform(rng), name="pin2")
    C = jb.Constraint
    cons = dict(
        ball=C.Ball(ball, [0.1, 0.2, 0.3], pin, [-0.2, 0.1, 0.0]),
        speed=C.SpeedCoupler(matter, lambda u, q, p: u[0] + p[0] * u[1] * jnp.cos(q[0]), [slider, ball], [0, 1],
                             [pin], [0], params=[0.4]),
        coupler=C.CoordinateCoupler(matter, lambda x, p: x[0] - p[0] * x[1], [pin2, ball], [0, 2], params=[0.7]),
        accel=C.ConstantAcceleration(pin2, 0.5),
    )
    model = system.realize_topology()
    state = model.realize(random_state(model, 5), jb.Stage.Acceleration)
    return model, cons, dict(ball=ball, pin=pin, slider=slider, pin2=pin2), state


def test_constrained_mobilizers_and_q_u_maps(sysm):
    model, cons, b, _ = sysm
    for euler, nq_ball in ((False, 4), (True, 3)):
        m = model.with_use_euler_angles(euler)
        s = m.default_state()
        s = s.set_q(jnp.arange(s.q.size, dtype=float)).set_u(jnp.arange(s.u.size, dtype=float))
        c = cons["coupler"]  # constrained mobilizers: pin2, ball (order of first appearance)
        assert c.get_constrained_mobilizers() == (b["pin2"], b["ball"])
        assert c.get_num_constrained_q(s) == 1 + nq_ball and c.get_num_constrained_u(s) == 1 + 3
        assert (c.get_num_constrained_q(s, 1), c.get_num_constrained_u(s, 1)) == (nq_ball, 3)
        for cm, mobod in enumerate(c.get_constrained_mobilizers()):
            for which in range(mobod.get_num_q(s)):
                i = c.get_constrained_q_index(s, cm, which)
                # independent: the value stored at the global index is the index itself (q = arange)
                assert c.get_q_index_of_constrained_q(s, i) == int(mobod.get_one_q(s, which))
            for which in range(mobod.get_num_u()):
                i = c.get_constrained_u_index(s, cm, which)
                assert c.get_u_index_of_constrained_u(s, i) == int(mobod.get_one_u(s, which))
        # constrained indices enumerate 0..n-1 exactly once
        qi = sorted(c.get_constrained_q_index(s, cm, w) for cm, mb in enumerate(c.get_constrained_mobilizers())
                    for w in range(mb.get_num_q(s)))
        assert qi == list(range(c.get_num_constrained_q(s)))
    assert cons["ball"].get_num_constrained_q() == 0 and cons["ball"].get_num_constrained_u() == 0
    # Simbody's SpeedCoupler constrains the mobilizers of its speeds only; its coordinates (the pin's) are read
    assert cons["speed"].get_constrained_mobilizers() == (b["slider"], b["ball"])
    assert cons["speed"].get_num_constrained_u() == 4 and cons["speed"].get_u_index_of_constrained_u(None, 0) == b["slider"].u_start
    with pytest.raises(jb.InvalidArgument, match="constrained q index 5"):
        cons["coupler"].get_q_index_of_constrained_q(None, 5)
    with pytest.raises(jb.InvalidArgument, match="constrained mobilizer index 2"):
        cons["coupler"].get_constrained_u_index(None, 2, 0)


def test_index_of_multipliers_in_use_follows_simbody_blocks(sysm):
    model, cons, _, state = sysm
    assert model.get_num_constraint_equations() == (4, 1, 1)
    # mp rows: ball 0..2, coupler 3; mv rows: speed 4; ma rows: accel 5
    expected = dict(ball=(0, None, None), speed=(None, 4, None), coupler=(3, None, None), accel=(None, None, 5))
    for name, c in cons.items():
        assert c.get_index_of_multipliers_in_use(state) == expected[name], name
        # disabling keeps the rows (jaxbody's static layout)
        assert c.get_index_of_multipliers_in_use(c.disable(state)) == expected[name]
    lam = model.get_constraint_multipliers(state)
    for name, c in cons.items():
        assert_close(c.get_my_part_from_constraint_space_vector(state, lam), c.get_multipliers_as_vector(state), 0)


def test_constraint_space_vector_round_trip_jit_vmap(sysm):
    model, cons, _, state = sysm
    m = model.constraints.m
    whole = jnp.arange(1.0, m + 1.0)
    c = cons["ball"]
    new = c.set_my_part_in_constraint_space_vector(state, jnp.array([-1.0, -2.0, -3.0]), whole)
    assert_close(new, [-1, -2, -3, 4, 5, 6], 0)
    assert_close(whole, np.arange(1.0, m + 1.0), 0)  # functional: the input is unchanged
    assert_close(c.set_my_part_in_constraint_space_vector(state, jnp.ones(3)), [1, 1, 1, 0, 0, 0], 0)
    # a sum of every constraint's part rebuilds the whole vector
    rebuilt = jnp.zeros(m)
    for ci in cons.values():
        rebuilt = ci.set_my_part_in_constraint_space_vector(state, ci.get_my_part_from_constraint_space_vector(state, whole), rebuilt)
    assert_close(rebuilt, whole, 0)
    f = jax.jit(jax.vmap(lambda w: cons["speed"].get_my_part_from_constraint_space_vector(state, w)))
    assert_close(f(jnp.stack([whole, 2 * whole])), [[5.0], [10.0]], 0)
    with pytest.raises(jb.InvalidArgument, match="length 3"):
        c.set_my_part_in_constraint_space_vector(state, jnp.ones(2), whole)


@pytest.fixture(scope="module")
def forces(sysm):
    """Every constraint's forces for its own multipliers, one jitted call (and the explicit G)."""
    model, cons, _, state = sysm

    @jax.jit
    def run(s, lam):
        out = {}
        for name, c in cons.items():
            part = c.get_my_part_from_constraint_space_vector(s, lam)
            out[name] = dict(from_lam=c.calc_constraint_forces_from_multipliers(s, part, model),
                             realized=c.get_constraint_forces_as_vectors(s, model),
                             body=c.get_constrained_body_forces_as_vector(s, model),
                             mobility=c.get_constrained_mobility_forces_as_vector(s, model))
        return out, model.calc_g(s)

    lam = jnp.asarray(np.random.default_rng(0).standard_normal(model.constraints.m))
    return run(state, lam), lam


def _scatter(model, c, state, F, f):
    """The system vectors (nbodies, 2, 3), (nu,) of a constraint's per-constrained-body/-u forces."""
    F_all = np.zeros((model.get_num_bodies(), 2, 3))
    for i in range(c.get_num_constrained_bodies()):
        F_all[c.get_mobilized_body_from_constrained_body(i).index] += F[i]
    f_all = np.zeros(model.get_num_u())
    for i in range(c.get_num_constrained_u(state)):
        f_all[c.get_u_index_of_constrained_u(state, i)] += f[i]
    return F_all, f_all


def test_forces_from_multipliers_are_g_transpose_lambda(sysm, forces):
    model, cons, _, state = sysm
    (out, G), lam = forces
    J = np.asarray(model.calc_system_jacobian(state))  # (nbodies, nu, 2, 3)
    for name, c in cons.items():
        F_A, f = out[name]["from_lam"]
        assert F_A.shape == (c.get_num_constrained_bodies(), 2, 3) and f.shape == (c.get_num_constrained_u(state),)
        R_GA = np.asarray(c.get_ancestor_mobilized_body().get_body_rotation(state))
        F_G, f_all = _scatter(model, c, state, np.einsum("ij,bkj->bki", R_GA, F_A), f)
        rows = np.concatenate(model.constraints.rows_of(c.index))
        assert_close(np.einsum("bkij,bij->k", J, F_G) + f_all, G[rows].T @ lam[rows], 1e-11, name)


def test_realized_forces_are_forces_of_realized_multipliers(sysm, forces):
    model, cons, _, state = sysm
    (out, _), _ = forces
    total_F, total_f = np.zeros((model.get_num_bodies(), 2, 3)), np.zeros(model.get_num_u())
    for name, c in cons.items():
        F_G, f = out[name]["realized"]
        assert_close(out[name]["body"], F_G, 0)
        assert_close(out[name]["mobility"], f, 0)
        F_A, f_lam = c.calc_constraint_forces_from_multipliers(state, c.get_multipliers_as_vector(state), model)
        R_GA = np.asarray(c.get_ancestor_mobilized_body().get_body_rotation(state))
        assert_close(F_G, np.einsum("ij,bkj->bki", R_GA, F_A), 1e-12, name)
        assert_close(f, f_lam, 1e-12, name)
        Fs, fs = _scatter(model, c, state, F_G, f)
        total_F, total_f = total_F + Fs, total_f + fs
    F_sys, f_sys = model.find_constraint_forces(state)  # the system's cached constraint forces
    assert_close(total_F, F_sys, 1e-12)
    assert_close(total_f, f_sys, 1e-12)


def test_forces_from_multipliers_vmap_and_grad(sysm):
    model, cons, _, state = sysm
    c = cons["ball"]
    lam = jnp.array([0.3, -0.2, 0.5])
    batched = jax.vmap(lambda l: c.calc_constraint_forces_from_multipliers(state, l, model)[0])(jnp.stack([lam, 2 * lam]))
    assert_close(batched[1], 2 * batched[0], 1e-12)  # linear in lambda

    def torque_x(q):
        s = model.realize(state.set_q(q), jb.Stage.Velocity)
        F_A, _ = c.calc_constraint_forces_from_multipliers(s, lam, model)
        return F_A[1, 0, 0] + F_A[1, 1, 2]

    assert_grad_matches_fd(torque_x, state.q, 1e-6, 1e-6, "d(ball constraint force)/dq")
