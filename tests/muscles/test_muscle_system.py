"""Muscles in a model built in code: an elbow (Pin) flexed by a Thelen2003Muscle and extended by a
DeGrooteFregly2016Muscle (rigid tendon), each on a two-point path. The handles' getters and setters, the Dynamics stage's zdot
and forces against the muscle functions and the path's moment arm, vmap over 1024 states with one shared Model,
the gradient of the elbow's acceleration with respect to the muscles' parameters (Model leaves) against central
differences, and a muscle-driven simulation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close, central_difference

import jaxbody as jb
from jaxbody._dynamics.muscles.degroote2016 import degroote2016_info
from jaxbody._dynamics.muscles.thelen2003 import thelen2003_info
from jaxbody._dynamics.paths.geometry_path import GeometryPath


@pytest.fixture(scope="module")
def elbow():
    system = jb.MultibodySystem()
    matter, forces = jb.SimbodyMatterSubsystem(system), jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    mp = jb.MassProperties.from_central_inertia(1.2, [0.15, 0.0, 0.0], jb.Inertia(0.01))
    forearm = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="forearm")
    flexor = jb.Force.Thelen2003Muscle(
        forces, "flexor", GeometryPath.fixed([0, forearm.index], np.array([[0.0, 0.3, 0.0], [0.05, 0.02, 0.0]])),
        600.0, 0.12, 0.2, 0.1, default_activation=0.2, default_fiber_length=0.12)
    extensor = jb.Force.DeGrooteFregly2016Muscle(
        forces, "extensor", GeometryPath.fixed([0, forearm.index], np.array([[0.0, -0.3, 0.0], [-0.03, -0.02, 0.0]])),
        500.0, 0.1, 0.22, 0.05, default_activation=0.1, ignore_tendon_compliance=True)
    model = system.realize_topology()
    state = model.default_state().set_q(jnp.asarray([0.4])).set_u(jnp.asarray([0.3]))
    state = extensor.set_excitation(flexor.set_excitation(state, 0.7), 0.2)
    return model, state, forearm, flexor, extensor


def test_layout_defaults_and_setters(elbow):
    model, state, _, flexor, extensor = elbow
    assert model.control_names == ("flexor", "extensor")
    assert flexor.state_names == ("activation", "fiber_length")
    assert extensor.state_names == ("activation",)
    assert_close(model.default_state().z, np.array([0.2, 0.12, 0.1]), 0, "default z")
    s = flexor.set_fiber_length(flexor.set_activation(state, 0.5), 0.11)
    assert_close(s.z[flexor.z_slice], np.array([0.5, 0.11]), 0, "flexor z")
    assert float(flexor.get_excitation(s)) == 0.7
    with pytest.raises(jb.errors.InvalidArgument, match="muscle 'extensor' has no state variable 'normalized_tendon_force'"):
        extensor.set_normalized_tendon_force(state, 0.1)


@jax.jit
def _zdot(model, state):
    return model.realize(state, jb.Stage.Dynamics).dynamics.zdot


def test_dynamics_stage_against_the_muscle_functions(elbow):
    """zdot and the flexor's generalized force: the muscle functions at the path's length and speed, and the
    tension times the path's moment arm (-dL/dq)."""
    model, state, forearm, flexor, extensor = elbow

    @jax.jit
    def check(model, state):
        s = model.realize(state, jb.Stage.Dynamics)
        el, fl = model.forces[extensor.index], model.forces[flexor.index]
        f_info = thelen2003_info(fl.parameters, fl.path.calc_length(model, s), fl.path.calc_lengthening_speed(model, s),
                                 0.2, 0.12, 0.7)
        e_info = degroote2016_info(el.parameters, el.path.calc_length(model, s),
                                   el.path.calc_lengthening_speed(model, s), 0.1, 0.0, 0.2, ignore_tendon_compliance=True)
        F, f = model.calc_force_contributions_sum(s, (flexor,))
        generalized = model.multiply_by_system_jacobian_transpose(s, F) + f
        dl_dq = jax.grad(lambda q: fl.path.calc_length(model, model.realize(state.set_q(q), jb.Stage.Position)))
        return (s.dynamics.zdot, jnp.stack([f_info.activation_dot, f_info.fiber_length_dot, e_info.activation_dot]),
                flexor.get_tendon_force(s, model), f_info.tendon_force, generalized[0],
                flexor.compute_moment_arm(s, model, forearm), -dl_dq(state.q)[0])

    zdot, expected, tension, f_tension, generalized, moment_arm, minus_dl_dq = check(model, state)
    assert_close(zdot, expected, 1e-12, "zdot")
    assert_close(tension, f_tension, 1e-12, "tendon force by handle")
    assert_close(generalized, f_tension * moment_arm, 1e-12, "tension x moment arm")
    assert_close(moment_arm, minus_dl_dq, 1e-12, "moment arm = -dL/dq")


def test_vmap_1024_states_shared_model(elbow):
    model, state, *_ = elbow
    key = jax.random.PRNGKey(1)
    q = jax.random.uniform(key, (1024, 1), minval=-0.5, maxval=1.5)
    a = jax.random.uniform(jax.random.fold_in(key, 1), (1024,), minval=0.05, maxval=1.0)
    states = jax.vmap(lambda q, a: state.set_q(q).set_z(state.z.at[0].set(a)))(q, a)
    zdot = jax.jit(jax.vmap(lambda s: _zdot(model, s)))(states)
    for k in (0, 777):
        one = _zdot(model, state.set_q(q[k]).set_z(state.z.at[0].set(a[k])))
        assert_close(zdot[k], one, 1e-12, f"zdot of state {k}")


def test_acceleration_gradient_wrt_muscle_parameters(elbow):
    """d(udot)/d(flexor's max_isometric_force, optimal_fiber_length; extensor's active_force_width_scale) by reverse mode
    through realize(Acceleration), against central differences on the Model's leaves."""
    model, state, _, flexor, extensor = elbow

    def udot(values):
        m = model
        m = flexor.set_parameter(m, "max_isometric_force", values[0])
        m = flexor.set_parameter(m, "optimal_fiber_length", values[1])
        m = extensor.set_parameter(m, "active_force_width_scale", values[2])
        return m.realize(state, jb.Stage.Acceleration).acceleration.udot[0]

    x = jnp.asarray([600.0, 0.12, 1.2])
    ad = jax.jit(jax.grad(udot))(x)
    fd = central_difference(jax.jit(udot), x, 1e-6 * np.array([1e3, 0.1, 0.05]).mean())
    assert_close(ad, fd, 1e-5, "d udot / d parameters")


def test_muscle_driven_simulation(elbow):
    """200 RK4 steps of 0.5 ms: the flexor's activation rises toward its excitation 0.7 and the elbow flexes."""
    model, state, *_ = elbow
    final, trajectory = jax.jit(lambda s: jb.simulate(model, s, 5e-4, 200, save_every=50))(state)
    assert np.all(np.isfinite(np.asarray(trajectory.z)))
    assert 0.2 < float(final.z[0]) < 0.7
    assert float(final.q[0]) != float(state.q[0])
