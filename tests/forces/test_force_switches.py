"""Per-State force switches (Simbody's setForceIsDisabled), calc_force_contributions_sum, and the per-State /
per-Model values Simbody lets a user change (MobilityDiscreteForce, DiscreteForces, Gravity's parameters),
under jit and vmap with one compilation.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from force_systems import all_forces_model
from helpers import assert_close
from systems import random_state

import jaxbody as jb


@pytest.fixture(scope="module")
def setup():
    model, handles, bodies = all_forces_model("all")
    state = random_state(model, 21)
    names = list(handles)
    traces = []

    @jax.jit
    def forces_and_udot(state):
        traces.append(1)
        state = model.realize(state)
        return state.dynamics.body_forces, state.dynamics.mobility_forces, state.acceleration.udot

    @jax.jit
    def each_element(state):
        state = model.realize(state, jb.Stage.Velocity)
        return [model.calc_force_contributions_sum(state, (handles[n],)) for n in names]

    return model, handles, bodies, state, names, forces_and_udot, each_element, traces


def test_disabling_drops_dynamics_and_round_trips(setup):
    model, handles, _, state, names, *_ = setup
    h = handles["TwoPointLinearSpring"]
    realized = model.realize(state)
    off = h.set_disabled(realized)
    assert off.get_system_stage() == jb.Stage.Velocity
    assert bool(h.is_disabled(off)) and not bool(h.is_disabled(realized))
    forces = h._subsystem
    assert bool(forces.is_force_disabled(off, h.get_force_index()))
    back = forces.set_force_is_disabled(off, h, False)
    assert not bool(forces.is_force_disabled(back, h))
    assert np.asarray(back.force_enabled).all()


def test_vmap_lanes_with_different_switches_one_compilation(setup):
    model, handles, _, state, names, forces_and_udot, each_element, traces = setup
    rng = np.random.default_rng(0)
    enabled = rng.random((6, len(model.forces))) < 0.5
    enabled[0] = True
    enabled[1] = False
    forces = handles["Gravity"]._subsystem

    def switched(mask):
        """``state`` with every switch set through Simbody's API (set_force_is_disabled), the flags traced."""
        s = state
        for name in names:
            s = forces.set_force_is_disabled(s, handles[name], ~mask[handles[name].index])
        return s

    states = jax.vmap(switched)(jnp.asarray(enabled))
    F, f, udot = jax.vmap(forces_and_udot)(states)
    n_traces = len(traces)
    jax.vmap(forces_and_udot)(jax.vmap(switched)(jnp.asarray(~enabled)))
    assert len(traces) == n_traces, "other switches, same compiled function"
    parts = each_element(state)
    applied_F, applied_f = np.zeros_like(F[0]), np.zeros_like(f[0])  # the model has DiscreteForces: no extra
    realized = model.realize(state, jb.Stage.Velocity)
    for lane in range(len(enabled)):
        on = [i for i, n in enumerate(names) if enabled[lane, handles[n].index]]
        F_lane = applied_F + sum((np.asarray(parts[i][0]) for i in on), np.zeros_like(applied_F))
        f_lane = applied_f + sum((np.asarray(parts[i][1]) for i in on), np.zeros_like(applied_f))
        assert_close(F[lane], F_lane, 1e-12, f"lane {lane} body forces")
        assert_close(f[lane], f_lane, 1e-12, f"lane {lane} mobility forces")
        expected, _ = model.calc_acceleration_ignoring_constraints(realized, f_lane, F_lane)
        assert_close(udot[lane], expected, 1e-11, f"lane {lane} udot")
    assert not np.allclose(udot[0], udot[1])


def test_subset_sum_is_the_sum_of_its_elements(setup):
    model, handles, _, state, names, _, each_element, _ = setup
    parts = each_element(state)
    subset = ("Gravity", "LinearBushing", "ConstantTorque")
    F, f = model.calc_force_contributions_sum(model.realize(state, jb.Stage.Velocity), tuple(handles[n] for n in subset))
    assert_close(F, sum(np.asarray(parts[names.index(n)][0]) for n in subset), 1e-13, "body forces")
    assert_close(f, sum(np.asarray(parts[names.index(n)][1]) for n in subset), 1e-13, "mobility forces")
    off = handles["LinearBushing"].set_disabled(state)
    F_off, _ = model.calc_force_contributions_sum(model.realize(off, jb.Stage.Velocity), tuple(handles[n] for n in subset))
    assert_close(F_off, F - parts[names.index("LinearBushing")][0], 1e-13, "a disabled element is left out")


def test_discrete_values_per_lane(setup):
    model, handles, bodies, state, *_ = setup
    h, slide = handles["MobilityDiscreteForce"], bodies["slide"]
    assert float(h.get_mobility_force(state)) == -0.3  # the default
    values = jnp.linspace(-2.0, 2.0, 5)

    @jax.jit
    @jax.vmap
    def contribution(value):
        s = model.realize(h.set_mobility_force(state, value), jb.Stage.Velocity)
        return model.calc_force_contributions_sum(s, (h,))[1]

    f = contribution(values)
    assert_close(f, values[:, None] * np.eye(model.get_num_u())[slide.u_start], 0, "per-lane discrete force")
    final, _ = jb.simulate(model, h.set_mobility_force(state, 1.25), 1e-3, 3)
    assert float(h.get_mobility_force(final)) == 1.25, "integration keeps it"


def test_discrete_forces_switch_off_the_state_applied_forces(setup):
    model, handles, _, state, names, forces_and_udot, *_ = setup
    d = handles["DiscreteForces"]
    with_f = d.set_all_mobility_forces(state, np.full(model.get_num_u(), 3.0))
    _, f_on, _ = forces_and_udot(with_f)
    _, f_off, _ = forces_and_udot(d.set_disabled(with_f))
    assert_close(f_on - f_off, np.full(model.get_num_u(), 3.0), 1e-12, "DiscreteForces owns the applied forces")


def test_gravity_parameters_are_model_leaves_without_recompiling(setup):
    model, handles, bodies, state, *_ = setup
    g = handles["Gravity"]
    traces = []

    @jax.jit
    def gravity_forces(model, state):
        traces.append(1)
        s = model.realize(state, jb.Stage.Velocity)
        return model.calc_force_contributions_sum(s, (g,))[0], model.calc_force_potential_energy_sum(s, (g,))

    F0, pe0 = gravity_forces(model, state)
    ball = bodies["ball"]
    excluded = g.set_body_is_excluded(model, ball)
    F1, pe1 = gravity_forces(excluded, state)
    doubled = g.set_magnitude(model, 2 * g.get_magnitude(model))
    F2, _ = gravity_forces(doubled, state)
    F3, _ = gravity_forces(g.set_gravity_vector(model, [0.0, 0.0, -7.0]), state)
    assert len(traces) == 1, "parameters are leaves: no retrace"
    assert bool(g.get_body_is_excluded(excluded, ball)) and not bool(g.get_body_is_excluded(model, ball))
    assert not np.any(np.asarray(F1[ball.index])) and np.any(np.asarray(F0[ball.index]))
    others = [b for b in range(model.get_num_bodies()) if b != ball.index]
    assert_close(np.asarray(F1)[others], np.asarray(F0)[others], 0, "other bodies unchanged")
    assert float(pe1) != float(pe0)
    assert_close(F2, 2 * F0, 1e-13, "magnitude doubled")
    m = np.asarray(model.parameters.mass)
    assert_close(np.asarray(F3)[:, 1], m[:, None] * [0.0, 0.0, -7.0], 1e-13, "gravity vector")
    with pytest.raises(jb.InvalidArgument, match="Ground"):
        g.set_body_is_excluded(model, model_ground(bodies))


def model_ground(bodies):
    return bodies["arm"].get_parent_mobilized_body()


def test_state_of_a_model_with_other_forces_is_rejected(setup):
    model, *_ = setup
    other, _, _ = all_forces_model("loads")
    with pytest.raises(jb.InvalidArgument, match="force_enabled"):
        model.realize(other.default_state())
