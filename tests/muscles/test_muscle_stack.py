"""Muscles of one class evaluated together (PathMuscle.calc_stacked, jaxbody._dynamics.paths.stacked_paths): a
two-link leg with three Thelen2003Muscles on paths of 2, 3 and 4 points (one with a ConditionalPathPoint, one with a
MovingPathPoint) and a DeGrooteFregly2016Muscle (another class: on its own). The stacked route (realize's forces and
zdot) against each muscle evaluated alone (calc_with_z, calc_z_dot: the one-path GeometryPath formulas), with a
disabled muscle, under vmap over 1024 states, its gradient against central differences, and the muscle model traced
once per stack (for forces and zdot together) rather than once per muscle. The stacked route's numbers against OpenSim: tests/muscles/
test_osim_muscles.py (gait9dof18musc's 18 Thelen2003Muscles, all in one stack)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close, central_difference

import jaxbody as jb
from jaxbody._dynamics.force_groups import group_positions
from jaxbody._dynamics.forces import force_z_slices
from jaxbody._dynamics.muscles.thelen2003 import Thelen2003Muscle
from jaxbody._dynamics.paths.geometry_path import GeometryPath
from jaxbody._dynamics.paths.path_points import PathPoints
from jaxbody._realize import realize


def _points(bodies, stations, condition=None, moving=None):
    """PathPoints on ``bodies``; condition (point, q, lo, hi); moving (point, q, f) moves the point's x by f(q)."""
    n = len(bodies)
    condition_q, condition_range = [-1] * n, np.zeros((n, 2))
    moving_f, moving_q, moving_range = [()] * n, [(-1, -1, -1)] * n, np.zeros((n, 3, 2))
    if condition:
        i, c, lo, hi = condition
        condition_q[i], condition_range[i] = c, (lo, hi)
    if moving:
        i, c, f = moving
        moving_f[i], moving_q[i], moving_range[i, 0] = (f, None, None), (c, -1, -1), (-2.0, 2.0)
    return PathPoints(tuple(bodies), jnp.asarray(stations), jnp.tile(jnp.eye(3), (n, 1, 1)), jnp.zeros((n, 3)),
                      tuple(condition_q), jnp.asarray(condition_range), tuple(moving_f), tuple(moving_q),
                      jnp.asarray(moving_range))


@pytest.fixture(scope="module")
def leg():
    system = jb.MultibodySystem()
    matter, forces = jb.SimbodyMatterSubsystem(system), jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    mp = jb.MassProperties.from_central_inertia(1.0, [0.0, -0.2, 0.0], jb.Inertia(0.02))
    thigh = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="thigh")
    shank = jb.MobilizedBody.Pin(thigh, jb.Transform([0.0, -0.4, 0.0]), jb.Body.Rigid(mp), jb.Transform(),
                                 name="shank")
    g, t, s = 0, thigh.index, shank.index
    paths = [
        GeometryPath(_points([g, t], [[0.05, 0.1, 0.0], [0.04, -0.25, 0.0]])),
        GeometryPath(_points([g, t, s], [[-0.05, 0.1, 0.0], [-0.06, -0.38, 0.0], [-0.03, -0.05, 0.0]],
                             condition=(1, 1, -0.3, 0.6))),
        GeometryPath(_points([g, t, t, s], [[0.06, 0.0, 0.0], [0.06, -0.2, 0.0], [0.07, -0.39, 0.0],
                                            [0.04, -0.08, 0.0]],
                             moving=(2, 1, lambda x: 0.07 + 0.02 * jnp.sin(x[0]) + 0.01 * x[0] ** 2))),
    ]
    thelens = [jb.Force.Thelen2003Muscle(forces, f"thelen{i}", p, 500.0 + 100 * i, 0.1 + 0.01 * i, 0.25 + 0.02 * i,
                                         0.05 * i, default_activation=0.2, default_fiber_length=0.11)
               for i, p in enumerate(paths)]
    degroote = jb.Force.DeGrooteFregly2016Muscle(
        forces, "degroote", GeometryPath(_points([g, s], [[0.0, -0.1, 0.0], [0.02, -0.1, 0.0]])), 400.0, 0.1,
        0.3, 0.0, default_activation=0.1)
    model = system.realize_topology()
    state = model.default_state().set_q(jnp.asarray([0.3, -0.2])).set_u(jnp.asarray([0.5, -1.1]))
    state = state.set_controls(jnp.asarray([0.7, 0.3, 0.9, 0.4]))
    state = state.set_z(state.z * jnp.asarray([1.5, 0.95, 1.2, 1.05, 0.8, 1.1, 1.0, 1.0]))
    return model, state, thelens, degroote


def _alone(model, state):
    """The muscles' forces (summed) and zdot, each muscle evaluated on its own."""
    s = model.realize(state, jb.Stage.Velocity)
    F = jnp.zeros((model.topology.nbodies, 2, 3))
    f = jnp.zeros(model.topology.nu)
    zdot = []
    for i, (e, sl) in enumerate(zip(model.forces, force_z_slices(model.forces))):
        if e.num_z():
            Fi, fi, _ = e.calc_with_z(model, s, s.z[sl])
            on = s.force_enabled[i]
            F, f = F + jnp.where(on, Fi, 0.0), f + jnp.where(on, fi, 0.0)
            zdot.append(jnp.where(on, e.calc_z_dot(model, s, s.z[sl]), 0.0))
    return F, f, jnp.concatenate(zdot)


def _stacked(model, state, handles):
    s = model.realize(state, jb.Stage.Dynamics)
    F, f = model.calc_force_contributions_sum(s, handles)
    return F, f, s.dynamics.zdot


def test_one_stack_per_class(leg):
    model, _, thelens, degroote = leg
    groups = group_positions(model.forces, [h.index for h in thelens + [degroote]])
    assert sorted(map(sorted, groups)) == sorted([sorted(h.index for h in thelens), [degroote.index]])


@pytest.mark.parametrize("q1", [-0.2, -0.5])  # the ConditionalPathPoint active, then not
def test_stacked_equals_each_muscle_alone(leg, q1):
    model, state, thelens, degroote = leg
    state = state.set_q(jnp.asarray([0.3, q1]))
    state = thelens[0].set_disabled(state, True)  # the conditional and the moving point's paths stay on
    F, f, zdot = jax.jit(lambda s: _stacked(model, s, tuple(thelens) + (degroote,)))(state)
    F1, f1, zdot1 = jax.jit(lambda s: _alone(model, s))(state)
    assert float(jnp.max(jnp.abs(f1))) > 1e-3  # the moving point's generalized force is exercised
    assert_close(F, F1, 1e-12, "body forces")
    assert_close(f, f1, 1e-12, "mobility forces")
    assert_close(zdot, zdot1, 1e-12, "zdot")
    assert np.all(np.asarray(zdot[thelens[0].z_slice]) == 0.0)


@pytest.mark.long  # 10 s in CI; the grouped route is checked against each muscle alone in CI
def test_vmap_and_gradient(leg):
    model, state, *_ = leg
    key = jax.random.PRNGKey(3)
    q = jax.random.uniform(key, (1024, 2), minval=-0.6, maxval=0.8)
    zdot = jax.jit(jax.vmap(lambda q: model.realize(state.set_q(q), jb.Stage.Dynamics).dynamics.zdot))(q)
    for k in (0, 611):
        assert_close(zdot[k], jax.jit(lambda s: _alone(model, s)[2])(state.set_q(q[k])), 1e-12, f"zdot {k}")

    def scalar(x):
        s = model.realize(state.set_q(x[:2]).set_u(x[2:]), jb.Stage.Acceleration)
        return jnp.sum(s.acceleration.udot * jnp.asarray([1.0, 2.0])) + jnp.sum(s.dynamics.zdot)
    x = jnp.asarray([0.3, -0.2, 0.5, -1.1])
    assert_close(jax.jit(jax.grad(scalar))(x), central_difference(jax.jit(scalar), x, 1e-6), 1e-6, "gradient")


def test_muscle_model_traced_once_per_stack(leg, monkeypatch):
    model, state, *_ = leg
    calls = []
    original = Thelen2003Muscle.calc_info

    def counting(self, *args):
        calls.append(1)
        return original(self, *args)
    monkeypatch.setattr(Thelen2003Muscle, "calc_info", counting)
    jax.make_jaxpr(lambda s: realize(model, s, jb.Stage.Dynamics))(state)  # not the cached model.realize
    assert len(calls) == 1  # once for the forces and zdot together: not once per muscle, not twice
