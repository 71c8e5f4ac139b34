"""System bookkeeping and statistics (Simbody's System: name, version, subsystems, projection counters),
the system's mass properties in Ground, and the MobilizedBody Body/lock-default bookkeeping.

References: Simbody's System.cpp for the counter rules (a failed projectQ/projectU counts as failed; a
successful one counts as a projection only if it changed something, and as an error-estimate projection if
one was given) and MultibodySystemRep for the name/version strings; the mass properties against an
independent numpy sum over the bodies (parallel-axis theorem on each body's central inertia).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from helpers import assert_close, assert_grad_matches_fd
from systems import random_mass_properties, random_transform


def _two_pins_with_rod(locked_default=False):
    """Two Pins in a chain whose tip is held at distance 1.2 from a Ground point (one holonomic equation)."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    rng = np.random.default_rng(11)
    a = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(random_mass_properties(rng)),
                             jb.Transform([0.0, 0.5, 0.0]), name="a")
    b = jb.MobilizedBody.Pin(a, jb.Transform([0.0, -0.5, 0.0]), jb.Body.Rigid(random_mass_properties(rng)),
                             jb.Transform([0.0, 0.5, 0.0]), name="b")
    jb.Constraint.Rod(matter.Ground(), [0.8, -0.6, 0.0], b, [0.0, -0.5, 0.0], 1.2)
    if locked_default:
        a.lock_by_default(jb.Motion.Velocity)
    return system, matter, forces, a, b


def test_name_version_subsystems():
    system, matter, forces, *_ = _two_pins_with_rod()
    assert system.get_name() == "MultibodySystem" and system.get_version() == "0.0.1"
    assert system.set_name("arm").get_name() == "arm"
    with pytest.raises(jb.InvalidArgument, match="str"):
        system.set_name(3)
    second = jb.GeneralForceSubsystem(system)
    assert system.get_num_subsystems() == 3
    assert [system.get_subsystem(i) for i in range(3)] == [matter, forces, second]
    with pytest.raises(jb.InvalidArgument, match="out of range"):
        system.get_subsystem(3)
    assert system.is_same_system(system) and not system.is_same_system(jb.MultibodySystem())


@pytest.mark.long  # CI budget (2026-11-29 profile): ~9 s
def test_projection_counters_follow_simbody_rules():
    system, *_ = _two_pins_with_rod()
    model = system.realize_topology()
    state = model.default_state().set_q(jnp.array([0.3, 0.4]))  # far from the Rod's manifold
    projected, res = system.project_q(state)
    assert bool(res.success)
    assert (system.get_num_project_q_calls(), system.get_num_q_projections(), system.get_num_failed_project_q_calls()) == (1, 1, 0)
    again, res = system.project_q(projected)  # already accurate: nothing changes, no projection counted
    assert bool(res.success) and np.array_equal(again.q, projected.q)
    assert (system.get_num_project_q_calls(), system.get_num_q_projections()) == (2, 1)
    system.project_q(projected, q_err_estimate=jnp.array([1e-3, -2e-3]))
    assert system.get_num_q_error_estimate_projections() == 1
    _, res = system.project_q(state, options=jb.ProjectOptions(projection_limit=1e-9))  # gives up: fails
    assert not bool(res.success)
    assert (system.get_num_failed_project_q_calls(), system.get_num_q_projections()) == (1, 1)
    # velocities: project_u on a state with nonzero constraint velocity error
    moving = projected.set_u(jnp.array([1.0, -0.3]))
    _, res = system.project_u(moving)
    assert bool(res.success) and (system.get_num_project_u_calls(), system.get_num_u_projections()) == (1, 1)
    system.project_u(moving, u_err_estimate=jnp.array([1e-3, 1e-3]))
    assert system.get_num_u_error_estimate_projections() == 1 and system.get_num_failed_project_u_calls() == 0
    # inside jit the outcome is data: calls count per trace, outcome counters do not change
    jitted = jax.jit(lambda s: system.project_q(s)[1].success)
    assert bool(jitted(state)) and bool(jitted(state.set_q(jnp.array([0.2, 0.1]))))
    assert (system.get_num_project_q_calls(), system.get_num_q_projections()) == (5, 1)  # one trace, two runs
    system.reset_all_counters()
    assert (system.get_num_q_projections(), system.get_num_failed_project_q_calls(), system.get_num_u_projections(),
            system.get_num_q_error_estimate_projections()) == (0, 0, 0, 0)
    # project: q and u each counted by their own outcome
    system.project(state.set_u(jnp.array([1.0, -0.3])))
    assert (system.get_num_project_q_calls(), system.get_num_project_u_calls(), system.get_num_q_projections(),
            system.get_num_u_projections(), system.get_num_failed_project_q_calls()) == (1, 1, 1, 1, 0)


@pytest.fixture(scope="module")
def tree():
    rng = np.random.default_rng(2)
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    b1 = jb.MobilizedBody.Ball(matter.Ground(), random_transform(rng), jb.Body.Rigid(random_mass_properties(rng)),
                               random_transform(rng))
    b2 = jb.MobilizedBody.Pin(b1, random_transform(rng), jb.Body.Rigid(random_mass_properties(rng)), random_transform(rng))
    b3 = jb.MobilizedBody.Slider(matter.Ground(), random_transform(rng), jb.Body.Rigid(random_mass_properties(rng)),
                                 random_transform(rng))
    return system.realize_topology(), [b1, b2, b3]


def test_system_mass_properties_in_ground(tree):
    model, bodies = tree
    q = jnp.array([0.9, 0.1, -0.3, 0.2, 0.7, -0.4])
    q = q.at[:4].set(q[:4] / jnp.linalg.norm(q[:4]))
    state = model.realize(model.default_state().set_q(q), jb.Stage.Position)
    mass, com, inertia = model.calc_system_mass_properties_in_ground(state)
    # independent: sum over bodies of (R I_c R^T + m (|c|^2 1 - c c^T)) with c each mass center from Go
    M, first, I_Go = 0.0, np.zeros(3), np.zeros((3, 3))
    for b in bodies:
        mp = b.get_default_mass_properties()
        X = b.get_body_transform(state)
        R, p = np.asarray(X.R), np.asarray(X.p)
        c = p + R @ np.asarray(mp.com)
        m = float(mp.mass)
        I_c_B = np.asarray(mp.inertia.matrix) - m * (np.dot(mp.com, mp.com) * np.eye(3) - np.outer(mp.com, mp.com))
        I_Go += R @ I_c_B @ R.T + m * (c @ c * np.eye(3) - np.outer(c, c))
        M, first = M + m, first + m * c
    assert_close(mass, M, 1e-14)
    assert_close(com, first / M, 1e-13)
    assert_close(inertia, I_Go, 1e-12)
    # jit + vmap over configurations, and the gradient of one inertia entry against finite differences
    qs = jnp.stack([q, q.at[4].add(0.3), q.at[5].add(-0.2)])
    f = jax.jit(jax.vmap(lambda qq: model.calc_system_mass_properties_in_ground(
        model.realize(state.set_q(qq), jb.Stage.Position)).inertia))
    batched = f(qs)
    assert_close(batched[0], I_Go, 1e-12)
    Ixy = lambda qq: model.calc_system_mass_properties_in_ground(model.realize(state.set_q(qq), jb.Stage.Position)).inertia[0, 1]  # noqa: E731
    assert_grad_matches_fd(Ixy, q, 1e-6, 1e-7, "d I_Go[0,1] / dq")


def test_set_body_and_locked_by_default():
    system, matter, _, a, b = _two_pins_with_rod(locked_default=True)
    assert a.is_locked_by_default() and not b.is_locked_by_default()
    new = jb.MassProperties(3.5, [0.1, 0.0, 0.0], jb.Inertia(0.2, 0.3, 0.4))
    b.set_body(jb.Body.Rigid(new))
    assert b.get_body().mass_properties is new and b.get_default_mass_properties() is new
    a.set_default_mass_properties(jb.MassProperties(2.0, [0, 0, 0], jb.Inertia(0.1)))
    with pytest.raises(jb.InvalidArgument, match="jb.Body"):
        b.set_body(new)
    with pytest.raises(jb.InvalidArgument, match="Ground"):
        matter.Ground().set_body(jb.Body.Rigid(new))
    model = system.realize_topology()
    assert_close(model.parameters.mass[1:], [2.0, 3.5], 0)
    assert bool(a.is_locked(model.default_state()))
    with pytest.raises(jb.TopologyFrozen):
        b.set_body(jb.Body.Rigid(new))


def test_matter_and_handle_bookkeeping():
    system, matter, _, a, b = _two_pins_with_rod()
    rod = matter.get_constraint(0)
    assert matter.get_ground() is matter.Ground()
    assert a.get_matter_subsystem() is matter and rod.get_matter_subsystem() is matter
    assert a.is_in_subsystem() and rod.is_in_subsystem() and a.is_in_same_subsystem(rod)
    other = jb.SimbodyMatterSubsystem(jb.MultibodySystem()).Ground()
    assert not a.is_in_same_subsystem(other) and not rod.is_in_same_subsystem(other)
    assert a.is_same_mobilized_body(a) and not a.is_same_mobilized_body(b)
    X = jb.Transform([0.0, -0.4, 0.1])
    b.set_default_inboard_frame(X).set_default_outboard_frame(jb.Transform([0.0, 0.3, 0.0]))
    assert_close(b.get_default_inboard_frame().p, [0.0, -0.4, 0.1], 0)
    with pytest.raises(jb.InvalidArgument, match="Ground"):
        matter.Ground().set_default_inboard_frame(X)
    model = system.realize_topology()
    assert_close(model.parameters.p_PF[b.index], [0.0, -0.4, 0.1], 0)
    assert_close(model.parameters.p_BM[b.index], [0.0, 0.3, 0.0], 0)
    with pytest.raises(jb.TopologyFrozen):
        b.set_default_outboard_frame(X)
    state = model.default_state()
    off = matter.set_constraint_is_disabled(state, rod)
    assert bool(matter.is_constraint_disabled(off, rod)) and bool(rod.is_disabled(off))
    assert bool(rod.is_enabled(matter.set_constraint_is_disabled(off, rod, False)))
    flags = jax.vmap(lambda d: matter.is_constraint_disabled(matter.set_constraint_is_disabled(state, rod, d), rod))
    assert flags(jnp.array([True, False])).tolist() == [True, False]
    with pytest.raises(jb.InvalidArgument, match="jb.Constraint"):
        matter.is_constraint_disabled(state, a)


def test_pv_operators_against_explicit_matrix():
    """multiply_by_pv (+ transpose, bias) against calc_pv and the velocity errors on a Rod + ConstantSpeed system."""
    system, matter, _, a, b = _two_pins_with_rod()
    jb.Constraint.ConstantSpeed(a, 0.25)
    model = system.realize_topology()
    s = model.realize(model.default_state().set_q(jnp.array([0.3, -0.5])).set_u(jnp.array([0.7, 0.2])), jb.Stage.Position)
    x, lam = jnp.array([0.4, -1.1]), jnp.array([0.6, -0.8])

    @jax.jit
    def run(s, x, lam):
        return (model.calc_pv(s), model.calc_pv_transpose(s), model.multiply_by_pv(s, x), model.multiply_by_pv_transpose(s, lam),
                model.calc_bias_for_multiply_by_pv(s), model.calc_constraint_velocity_errors(s, jnp.zeros(2)))

    PV, PVt, PVx, PVt_lam, bias, verr0 = run(s, x, lam)
    assert PV.shape == (2, 2)
    assert_close(PVt, PV.T, 0)
    assert_close(PVx, PV @ x, 1e-13)
    assert_close(PVt_lam, PV.T @ lam, 1e-13)
    assert_close(bias, verr0, 1e-15)
    assert_close(bias, [0.0, -0.25], 1e-15)  # the Rod is scleronomic; ConstantSpeed's verr = u - 0.25
    assert_close(PV[1], [1.0, 0.0], 1e-15)
