"""Prescribed motion, locks, known udots in the ABA, free q/u bookkeeping and System conveniences."""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
import systems
from helpers import assert_close, central_difference
from systems import MOTION_CHAIN as C

M = jb.Motion

# This file's tolerances hold for every entry on its own: |a - b| <= tol * (1 + |b|).
assert_close_per_entry = functools.partial(assert_close, per_entry=True)


@jax.jit
def residual(model, state):
    """Inverse dynamics of a realized state: ``M udot + c - f - J^T F`` with all its forces."""
    dyn = state.dynamics
    return model.calc_residual_force_ignoring_constraints(state, dyn.mobility_forces, dyn.body_forces, state.get_u_dot())


simulate_rk4 = jax.jit(lambda model, state: jb.simulate(model, state, 0.01, 60))
simulate_euler = jax.jit(lambda model, state: jb.simulate(model, state, 0.01, 60, method="semi_explicit_euler"))


# ----------------------------------------------------------------------------------------------
# Prescribed motion through an RK4 simulation


@pytest.fixture(scope="module")
def chain():
    model, b = systems.motion_chain()
    state = model.default_state().set_q([0.0, 0.4, 0.1, -0.3]).set_u([0.0, 0.7, 0.0, 0.2])
    return model, b, state


def test_prescribed_chain_follows_its_motions_through_rk4(chain):
    model, b, state = chain
    A, w, phi = C["amplitude"], C["rate"], C["phase"]
    final, traj = simulate_rk4(model, state)
    t = np.asarray(traj.t)
    i, s = b["sin_pin"].get_first_q_index(), b["slider"].get_first_u_index()
    assert_close_per_entry(traj.q[:, i], A * np.sin(w * t + phi), 1e-14, "q of the sinusoid")
    assert_close_per_entry(traj.u[:, i], A * w * np.cos(w * t + phi), 1e-14, "u of the sinusoid")
    assert_close_per_entry(traj.u[:, s], 0.2 * np.cos(3.0 * t) + 0.1 * np.asarray(traj.q[:, 1]), 1e-14, "u of the custom velocity motion")
    r = systems.realize_state(model, final)
    udot = r.get_u_dot()
    tf = float(final.t)
    qdot_pin = float(final.u[1])
    assert_close_per_entry(udot[i], -A * w**2 * np.sin(w * tf + phi), 1e-13, "udot of the sinusoid")
    assert_close_per_entry(udot[s], -0.6 * np.sin(3.0 * tf) + 0.1 * qdot_pin, 1e-13, "udot of the velocity motion (jvp)")
    a = b["acc_pin"].get_first_u_index()
    assert_close_per_entry(udot[a], C["accel_amplitude"] * np.sin(C["accel_rate"] * tf + C["accel_phase"]), 1e-13, "acceleration motion")
    # the free pin really moved under the dynamics
    assert abs(float(final.q[1]) - 0.4) > 1e-3
    # the same through semi-explicit Euler: prescribed q/u are exact after every step
    _, traj_e = simulate_euler(model, state)
    te = np.asarray(traj_e.t)
    assert_close_per_entry(traj_e.q[:, i], A * np.sin(w * te + phi), 1e-14, "semi-explicit Euler q of the sinusoid")


def test_motion_multipliers_equal_inverse_dynamics_and_queries(chain):
    model, b, state = chain
    r = systems.realize_state(model, model.prescribe(state.set_time(0.37)))
    tau = model.find_motion_forces(r)
    res = residual(model, r)
    known = np.array([True, False, True, True])
    # Simbody's tau sits on the left of M udot + tau = f - c: it is minus the inverse-dynamics force.
    assert_close_per_entry(tau, np.where(known, -np.asarray(res), 0.0), 1e-12, "tau vs -(inverse dynamics)")
    assert_close_per_entry(res[1], 0.0, 1e-12, "free mobility residual")
    assert np.all(np.abs(np.asarray(tau)[known]) > 1e-3)
    np.testing.assert_array_equal(model.get_known_udot_index(r), [0, 2, 3])
    np.testing.assert_allclose(model.get_motion_multipliers(r), np.asarray(tau)[known], rtol=0, atol=0)
    assert_close_per_entry(model.calc_motion_power(r), -np.dot(tau, r.u), 1e-15, "motion power")
    for name, body in b.items():
        assert_close_per_entry(body.get_tau_as_vector(r), tau[body.get_first_u_index()][None], 0.0, name)
    # methods (Simbody's Motion::calcAllMethods table)
    methods = {n: [int(body.get_q_motion_method(r)), int(body.get_u_motion_method(r)), int(body.get_udot_motion_method(r))]
               for n, body in b.items()}
    assert methods == {
        "sin_pin": [M.Prescribed] * 3,
        "pin": [M.Free] * 3,
        "slider": [M.Free, M.Prescribed, M.Prescribed],
        "acc_pin": [M.Free, M.Free, M.Prescribed],
    }
    # motion errors: zero after prescribe and realize, non-zero before
    for stage in (jb.Stage.Position, jb.Stage.Velocity, jb.Stage.Acceleration):
        assert_close_per_entry(model.calc_motion_errors(r, stage), np.zeros(len(model.calc_motion_errors(r, stage))), 1e-13, str(stage))
    raw = state.set_time(0.37)
    errors = model.calc_motion_errors(raw, jb.Stage.Position)
    assert_close_per_entry(errors, [0.0 - C["amplitude"] * np.sin(C["rate"] * 0.37 + C["phase"])], 1e-15, "q error before prescribe")
    unpacked = model.calc_motion_errors(raw, jb.Stage.Velocity, packed=False)
    assert unpacked.shape == (4,) and float(unpacked[1]) == 0.0 and abs(float(unpacked[2])) > 0


def test_motion_parameters_are_model_leaves_and_differentiable(chain):
    model, b, state = chain
    (k,) = [i for i, bm in enumerate(model.motions) if bm.body == b["sin_pin"].index]

    def q_of_amplitude(amplitude):
        m = eqx.tree_at(lambda m: m.motions[k].motion.amplitude, model, amplitude)
        return m.prescribe(state.set_time(0.5)).q[0]

    g = jax.grad(q_of_amplitude)(jnp.asarray(C["amplitude"]))
    assert_close_per_entry(g, np.sin(C["rate"] * 0.5 + C["phase"]), 1e-15, "d q / d amplitude")


# ----------------------------------------------------------------------------------------------
# Locks


def test_locks_hold_through_rk4_and_lock_api(chain):
    model, b, state = chain
    pin = b["pin"]
    locked = pin.lock(state)
    assert bool(pin.is_locked(locked)) and int(pin.get_lock_level(locked)) == M.Position
    assert float(locked.u[1]) == 0.0
    assert_close_per_entry(pin.get_lock_value_as_vector(locked), [0.4], 0.0, "lock value")
    final, traj = simulate_rk4(model, locked)
    assert np.all(np.asarray(traj.q[:, 1]) == 0.4) and np.all(np.asarray(traj.u[:, 1]) == 0.0)
    r = systems.realize_state(model, final)
    assert float(r.get_u_dot()[1]) == 0.0 and abs(float(pin.get_tau_as_vector(r)[0])) > 1e-3
    # velocity lock: u constant, q integrates it
    vel = pin.lock_at(state, 1.25, M.Velocity)
    final, traj = simulate_rk4(model, vel)
    assert np.all(np.asarray(traj.u[:, 1]) == 1.25)
    assert_close_per_entry(final.q[1], 0.4 + 1.25 * float(final.t), 1e-12, "q under a velocity lock")
    assert [int(pin.get_q_motion_method(vel)), int(pin.get_u_motion_method(vel)), int(pin.get_udot_motion_method(vel))] == \
        [M.Free, M.Prescribed, M.Zero]
    # acceleration lock: udot = value
    acc = pin.lock_at(state, -0.8, M.Acceleration)
    assert_close_per_entry(systems.realize_state(model, model.prescribe(acc)).get_u_dot()[1], -0.8, 0.0, "udot under an acceleration lock")
    # a lock overrides the Motion; unlocking gives control back to it
    over = b["sin_pin"].lock_at(state, 0.9)
    assert float(model.prescribe(over.set_time(0.5)).q[0]) == 0.9
    back = b["sin_pin"].unlock(over)
    assert not bool(b["sin_pin"].is_locked(back))
    assert_close_per_entry(model.prescribe(back.set_time(0.5)).q[0], C["amplitude"] * np.sin(C["rate"] * 0.5 + C["phase"]), 1e-15, "unlock")
    assert pin.get_lock_value_as_vector(back).shape == (0,)
    with pytest.raises(jb.InvalidArgument):
        pin.lock_at(state, [1.0, 2.0])
    with pytest.raises(jb.InvalidArgument):
        pin.lock(state, level=5)


def test_lock_by_default_and_topology_errors():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    mp = jb.MassProperties.from_central_inertia(1.0, [0.0, -1.0, 0.0], jb.Inertia(0.01))
    ball = jb.MobilizedBody.Ball(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform())
    slider = jb.MobilizedBody.Slider(ball, jb.Body.Rigid(mp))
    weld = jb.MobilizedBody.Weld(slider, jb.Body.Rigid(mp))
    with pytest.raises(jb.InvalidArgument):
        weld.adopt_motion(M.Steady(1.0))
    with pytest.raises(jb.InvalidArgument):
        slider.adopt_motion(M.Sinusoid(M.Velocity, [1.0, 2.0], 1.0, 0.0))
    with pytest.raises(jb.InvalidArgument):
        slider.adopt_motion("not a motion")
    with pytest.raises(jb.InvalidArgument):
        M.Sinusoid(7, 1.0, 1.0, 0.0)
    ball.lock_by_default(M.Position)
    slider.adopt_motion(M.Steady(0.5))
    model = system.realize_topology()
    with pytest.raises(jb.TopologyFrozen):
        slider.clear_motion()
    with pytest.raises(jb.TopologyFrozen):
        ball.lock_by_default(M.Velocity)
    state = system.get_default_state()
    assert int(ball.get_lock_level(state)) == M.Position
    assert_close_per_entry(ball.get_lock_value_as_vector(state), [1.0, 0.0, 0.0, 0.0], 0.0, "default lock value")
    state = model.prescribe(state.set_u([0.3, 0.2, 0.1, 9.0]))
    assert_close_per_entry(state.u, [0.0, 0.0, 0.0, 0.5], 0.0, "prescribed u: locked ball and steady slider")
    np.testing.assert_array_equal(model.get_free_q_index(state), [4])
    assert model.get_free_u_index(state).size == 0


# ----------------------------------------------------------------------------------------------
# Known udots in the ABA vs a partitioned mass matrix, on the 30-body tree


LOCKED = (0, 3, 7, 12, 20)  # handle positions in mixed_tree_30's list (several mobilizer types)


def _locked_state(seed, levels=M.Acceleration):
    model, handles = systems.mixed_tree_30()
    rng = np.random.default_rng(seed)
    state = systems.random_state(model, seed)
    f, F = systems.random_forces(model, seed + 1)
    state = state.set_mobility_forces(f).set_body_forces(F)
    for k in LOCKED:
        h = handles[k]
        if h.get_num_u():
            state = h.lock_at(state, rng.normal(size=h.get_num_u()), levels)
    return model, handles, state


@jax.jit
def known_udot_routes(model, state, known, v):
    """The operators on a realized state, and udot, tau, M_rr^-1 from M and the bias ``c - f - J^T F`` densely."""
    dyn = state.dynamics
    M_ = model.calc_m(state)
    bias = model.calc_residual_force_ignoring_constraints(state, dyn.mobility_forces, dyn.body_forces, jnp.zeros_like(state.u))
    udot_p = jnp.where(known, state.lock_u, 0.0)
    free = ~known
    M_ff = jnp.where(free[:, None] & free[None, :], M_, 0.0) + jnp.diag(jnp.where(free, 0.0, 1.0))
    udot = jnp.linalg.solve(M_ff, jnp.where(free, -bias - M_ @ udot_p, 0.0)) + udot_p
    Minv = jnp.where(free[:, None] & free[None, :], jnp.linalg.inv(M_ff), 0.0)
    return {
        "reference": (udot, jnp.where(known, -(M_ @ udot + bias), 0.0), Minv, Minv @ v, udot),
        "jaxbody": (
            state.get_u_dot(), model.find_motion_forces(state), model.calc_m_inv(state), model.multiply_by_m_inv(state, v),
            model.calc_acceleration_ignoring_constraints(state, dyn.mobility_forces, dyn.body_forces)[0],
        ),
        "reactions": (model.calc_mobilizer_reaction_forces(state), model.calc_mobilizer_reaction_forces_using_free_body_method(state)),
    }


def test_aba_with_known_udots_matches_partitioned_mass_matrix():
    model, handles, state = _locked_state(11)
    r = systems.realize_state(model, state)
    known = np.asarray(model.get_known_udot_mask(r))
    expected = np.zeros(model.get_num_u(), bool)
    for k in LOCKED:
        expected[handles[k]._u_slice()] = True
    np.testing.assert_array_equal(known, expected)
    v = jnp.asarray(np.random.default_rng(3).normal(size=model.get_num_u()))
    out = known_udot_routes(model, r, jnp.asarray(known), v)
    names = ("udot", "tau", "restricted M^-1", "restricted M^-1 v", "calc_acceleration_ignoring_constraints")
    for name, got, want in zip(names, out["jaxbody"], out["reference"]):
        assert_close_per_entry(got, want, 1e-9, name)
    assert np.all(np.abs(np.asarray(out["jaxbody"][1])[known]) > 1e-6)
    assert_close_per_entry(*out["reactions"], 1e-9, "reactions of a tree with locked bodies, articulated vs free-body route")


def test_grad_of_udot_with_prescribed_mobilities_matches_finite_differences(chain):
    """d(w . udot) with respect to q, u and a Motion amplitude, by reverse mode vs central differences."""
    model, b, state = chain
    state = state.set_time(0.41)
    (k,) = [i for i, bm in enumerate(model.motions) if bm.body == b["acc_pin"].index]
    w = jnp.asarray([0.3, -1.1, 0.7, 0.9])
    d_q, d_u = jnp.asarray([0.2, -0.5, 0.3, 0.8]), jnp.asarray([0.6, 0.1, -0.4, 0.5])

    def objective(eps):
        m = eqx.tree_at(lambda m: m.motions[k].motion.amplitude, model, model.motions[k].motion.amplitude + eps[2])
        s = state.set_q(state.q + eps[0] * d_q).set_u(state.u + eps[1] * d_u)
        return w @ m.realize(m.prescribe(s)).get_u_dot()

    value_and_grad = jax.jit(jax.value_and_grad(objective))
    g = np.asarray(value_and_grad(jnp.zeros(3))[1])
    h = 1e-5
    fd = central_difference(lambda eps: value_and_grad(eps)[0], jnp.zeros(3), h)
    for i in range(3):  # each entry on its own: |g_i - fd_i| <= 1e-6 * max(1, |fd_i|)
        assert_close(g[i], fd[i], 1e-6, f"d(w . udot) / d eps[{i}]")
        assert abs(fd[i]) > 1e-3


# ----------------------------------------------------------------------------------------------
# A mixed batch: half the lanes with a locked mobilizer, one compiled function


def test_mixed_locked_and_free_batch_under_vmap():
    model, handles = systems.mixed_tree_30()
    n = 4096
    q, u = systems.random_qu(model, 31, (n,))
    ball = next(h for h in handles if h.mobilizer_cls.simbody_name == "Ball")
    base = model.default_state()
    states = jax.vmap(lambda q, u: base.set_q(q).set_u(u))(jnp.asarray(q), jnp.asarray(u))
    lock_mask = (np.arange(n) % 2) == 0
    locked_level = base.lock_level.at[ball.index].set(M.Position)
    us = ball._u_slice()
    lock_q = jnp.where(lock_mask[:, None], states.q, states.lock_q)
    level = jnp.where(lock_mask[:, None], locked_level, base.lock_level)
    states = states.set_u(states.u.at[:, us].set(jnp.where(lock_mask[:, None], 0.0, states.u[:, us])))
    states = states.set_locks(level, lock_q, states.lock_u)
    traces = []

    def one(model, state):
        traces.append(1)
        r = model.realize(state)
        return r.get_u_dot(), r.acceleration.motion_forces

    batched = jax.jit(jax.vmap(one, in_axes=(None, 0)))
    udot, tau = batched(model, states)
    assert len(traces) == 1
    for lane in list(range(8)) + [n - 2, n - 1]:
        s = jax.tree_util.tree_map(lambda x: x[lane], states)
        r1 = systems.realize_state(model, s)
        ud1, tau1 = r1.get_u_dot(), r1.acceleration.motion_forces
        assert_close_per_entry(udot[lane], ud1, 1e-12, f"udot lane {lane}")
        assert_close_per_entry(tau[lane], tau1, 1e-12, f"tau lane {lane}")
        if lock_mask[lane]:
            assert np.all(np.asarray(udot[lane, us]) == 0.0) and np.any(np.asarray(tau[lane, us]) != 0.0)
        else:
            assert np.all(np.asarray(tau[lane]) == 0.0)
    free_lane = jax.tree_util.tree_map(lambda x: x[1], states)
    assert_close_per_entry(udot[1], systems.forward_dynamics(model, free_lane.q, free_lane.u, free_lane.mobility_forces,
                                            free_lane.body_forces), 1e-12, "free lane vs the plain forward dynamics")


# ----------------------------------------------------------------------------------------------
# Free q/u bookkeeping


def test_free_q_and_u_pack_unpack_round_trips():
    model, handles = systems.mixed_tree_30()
    ball = next(h for h in handles if h.mobilizer_cls.simbody_name == "Ball")
    pin = next(h for h in handles if h.mobilizer_cls.simbody_name == "Pin")
    state = pin.lock(ball.lock(systems.random_state(model, 41)), M.Velocity)
    fq, fu = model.get_free_q_index(state), model.get_free_u_index(state)
    ball_q = set(range(ball.q_start, ball.q_start + 4))
    assert set(fq) == set(range(model.get_num_q())) - ball_q
    assert set(fu) == set(range(model.get_num_u())) - set(range(ball.u_start, ball.u_start + 3)) - {pin.u_start}
    np.testing.assert_array_equal(model.get_free_udot_index(state), fu)
    np.testing.assert_array_equal(np.sort(np.concatenate([model.get_known_udot_index(state), fu])), np.arange(model.get_num_u()))
    np.testing.assert_array_equal(np.flatnonzero(np.asarray(model.get_free_q_mask(state))), fq)
    q = np.asarray(state.q)
    packed = model.pack_free_q(state, q)
    assert packed.shape == (fq.size,)
    assert_close_per_entry(model.unpack_free_q(state, packed, q), q, 0.0, "q round trip")
    unpacked = np.asarray(model.unpack_free_q(state, packed))
    assert np.all(unpacked[list(ball_q)] == 0.0)
    uu = np.arange(model.get_num_u(), dtype=float)
    assert_close_per_entry(model.unpack_free_u(state, model.pack_free_u(state, uu), uu), uu, 0.0, "u round trip")
    with pytest.raises(jb.InvalidArgument):
        jax.jit(lambda s: model.pack_free_q(s, s.q))(state)
    with pytest.raises(jb.InvalidArgument):
        model.unpack_free_u(state, np.zeros(fu.size + 1))


# ----------------------------------------------------------------------------------------------
# System conveniences and counters


def test_system_conveniences_and_counters():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    mp = jb.MassProperties.from_central_inertia(1.0, [0.0, -1.0, 0.0], jb.Inertia(0.01))
    link = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform())
    np.testing.assert_array_equal(system.get_up_direction(), [0, 1, 0])
    system.set_up_direction("-z")
    np.testing.assert_array_equal(system.get_up_direction(), [0, 0, -1])
    with pytest.raises(jb.InvalidArgument):
        system.set_up_direction("w")
    assert system.get_use_uniform_background() is False
    assert system.set_use_uniform_background(True).get_use_uniform_background() is True
    assert system.get_default_time_scale() == 0.1 and system.get_default_length_scale() == 1.0
    system.set_default_time_scale(0.5).set_default_length_scale(2.0)
    assert system.get_default_time_scale() == 0.5 and system.get_default_length_scale() == 2.0
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(jb.InvalidArgument):
            system.set_default_time_scale(bad)
    state = system.get_default_state()
    assert system.get_num_realizations_of_this_stage(jb.Stage.Topology) == 1
    assert system.get_num_realizations_of_this_stage(jb.Stage.Model) == 1
    s = system.realize(link.lock_at(state, 0.3), jb.Stage.Velocity)
    s = system.realize(s, jb.Stage.Acceleration)
    s = system.realize(s, jb.Stage.Acceleration)
    assert system.get_num_realize_calls() == 3
    assert [system.get_num_realizations_of_this_stage(st) for st in
            (jb.Stage.Position, jb.Stage.Velocity, jb.Stage.Dynamics, jb.Stage.Acceleration)] == [1, 1, 1, 1]
    system.prescribe(s)
    system.prescribe_q(s)
    assert system.get_num_prescribe_q_calls() == 2 and system.get_num_prescribe_u_calls() == 1
    # under jit a call counts once per trace, not per execution
    f = jax.jit(lambda st: system.realize(st).get_u_dot())
    f(state), f(state.set_time(1.0))
    assert system.get_num_realize_calls() == 4
    back = system.realize_model(s)
    assert not bool(link.is_locked(back)) and back.get_system_stage() == jb.Stage.Time
    system.reset_all_counters()
    assert system.get_num_realize_calls() == 0 and system.get_num_prescribe_q_calls() == 0
    assert system.get_num_realizations_of_this_stage(jb.Stage.Model) == 0
