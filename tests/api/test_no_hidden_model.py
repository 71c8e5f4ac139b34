"""Handle methods follow the Model they are given, never the System's realized one (issue 27, item 6).

A method whose result depends on a Model's numbers takes that Model as a required argument
(``method(state, ..., model)``): a Model from ``jb.replace_parameters`` moves the result, gradients with
respect to its leaves reach it, a call without a Model is refused instead of answering with the numbers the
System was built with, and a Model or State that does not fit the handle is refused naming the body or
constraint. Methods that read a realized State's caches (``calc_power``) follow the Model the State was
realized with.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from helpers import assert_close

LINK = jb.MassProperties(1.0, [0, -0.5, 0], jb.Inertia(0.34, 0.01, 0.34))
PITCH = 0.1


@pytest.fixture(scope="module")
def system():
    """Ground -> arm (Pin) -> nut (Screw, pitch 0.1 m/rad); Ground -> leg (Pin); Rod(arm, leg); gravity."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0, -9.81, 0])
    arm = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(LINK), jb.Transform([0, 0.5, 0]), name="arm")
    nut = jb.MobilizedBody.Screw(arm, jb.Transform([0, -1.0, 0]), jb.Body.Rigid(LINK), jb.Transform(), PITCH, name="nut")
    leg = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform([1.0, 0, 0]), jb.Body.Rigid(LINK), jb.Transform([0, 0.5, 0]), name="leg")
    rod = jb.Constraint.Rod(arm, [0, -1.0, 0], leg, [0, -1.0, 0], 1.0, name="rod")
    model = system.realize_topology()
    return model, {"arm": arm, "nut": nut, "leg": leg}, rod


def _pitch_group(model, body):
    return next(i for i, g in enumerate(model.topology.groups) if body.index in g.bodies)


def _with_pitch(model, body, pitch):
    i = _pitch_group(model, body)
    params = list(model.parameters.mobilizer_params)
    params[i] = params[i].at[model.topology.groups[i].bodies.index(body.index), 0].set(pitch)
    return jb.replace_parameters(model, mobilizer_params=tuple(params))


def _with_station1(model, station):
    params = (model.parameters.constraint_params[0].at[0, 0:3].set(station),)
    return jb.replace_parameters(model, constraint_params=params)


def _central_difference(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_mass_property_getters_follow_the_given_model(system):
    model, b, _ = system
    arm = b["arm"]
    heavier = jb.replace_parameters(model, mass=model.parameters.mass * 3.0, inertia_Bo_B=model.parameters.inertia_Bo_B * 3.0,
                                    com_B=model.parameters.com_B.at[arm.index].set(jnp.array([0.0, -0.25, 0.0])))
    state = heavier.default_state()
    assert_close(arm.get_body_mass(state, heavier), 3.0, 1e-15, "mass")
    assert_close(arm.get_body_mass_center_station(None, heavier), [0, -0.25, 0], 1e-15, "com")
    I_c = np.asarray(heavier.parameters.inertia_Bo_B[arm.index]) - 3.0 * 0.25**2 * np.diag([1.0, 0.0, 1.0])
    assert_close(arm.calc_body_central_inertia(state, heavier), I_c, 1e-14, "central inertia")
    # a batch of Models by vmap: each its own mass
    masses = jnp.array([1.0, 2.0, 5.0])
    batch = jax.vmap(lambda m: jb.replace_parameters(model, mass=model.parameters.mass.at[arm.index].set(m)))(masses)
    assert_close(jax.vmap(lambda m: arm.get_body_mass(None, m))(batch), masses, 0, "vmapped models")
    # no silent fallback: the construction values have their own getter
    with pytest.raises(jb.InvalidArgument, match="needs the Model"):
        arm.get_body_mass(state)
    with pytest.raises(jb.InvalidArgument, match="needs the Model"):
        arm.get_body_mass_properties()
    assert arm.get_default_mass_properties().mass == 1.0


def test_mobilizer_frame_getters_follow_the_given_model(system):
    model, b, _ = system
    nut = b["nut"]
    moved = jb.replace_parameters(model, p_PF=model.parameters.p_PF.at[nut.index].set(jnp.array([0.2, -1.5, 0.0])),
                                  p_BM=model.parameters.p_BM.at[nut.index].set(jnp.array([0.0, 0.1, 0.3])))
    assert_close(nut.get_inboard_frame(moved.default_state(), moved).p, [0.2, -1.5, 0.0], 0, "X_PF")
    assert_close(nut.get_outboard_frame(None, moved).p, [0.0, 0.1, 0.3], 0, "X_BM")
    assert_close(nut.get_default_inboard_frame().p, [0, -1.0, 0], 0, "construction X_PF")
    with pytest.raises(jb.InvalidArgument, match="needs the Model"):
        nut.get_inboard_frame(moved.default_state())
    with pytest.raises(jb.InvalidArgument, match="needs the Model"):
        nut.get_outboard_frame()


def test_fitting_follows_the_given_model_and_differentiates(system):
    model, b, _ = system
    nut = b["nut"]
    state = model.default_state()
    target = jnp.array([0.0, 0.0, 0.05])  # along the screw axis: q = p_z / pitch

    def q_fit(pitch):
        m = _with_pitch(model, nut, pitch)
        return nut.set_q_to_fit_translation(state, target, m).q[nut.q_start]

    assert_close(q_fit(0.25), 0.05 / 0.25, 1e-15, "q from the new pitch")
    assert_close(q_fit(PITCH), 0.05 / PITCH, 1e-15, "q from the built pitch")
    g = jax.grad(q_fit)(0.25)
    assert abs(float(g)) > 0.1
    assert_close(g, _central_difference(q_fit, 0.25), 1e-6, "d q / d pitch")
    assert_close(g, -0.05 / 0.25**2, 1e-12, "d q / d pitch exact")
    with pytest.raises(jb.InvalidArgument, match="needs the Model"):
        nut.set_q_to_fit_translation(state, target)


def test_constraint_methods_follow_the_given_model_and_differentiate(system):
    model, _, rod = system
    moved = _with_station1(model, jnp.array([0.3, -1.0, 0.0]))
    start = moved.default_state().set_q(jnp.array([0.3, 0.2, -0.4])).set_u(jnp.array([0.4, 0.7, -0.2]))
    p, v, a = moved.constraints.rows_of(rod.index)
    rows = np.concatenate([p, v, a])
    # Position stage: P is computed from the given model's numbers
    state = moved.realize(start, jb.Stage.Velocity)
    P_new = rod.calc_position_constraint_matrix_p(state, moved)
    assert_close(P_new, moved.calc_p(state)[p], 1e-15, "P of the new station")
    assert float(jnp.max(jnp.abs(P_new - rod.calc_position_constraint_matrix_p(state, model)))) > 1e-2  # moved P
    lam = jnp.array([0.7])
    F = rod.calc_constraint_forces_from_multipliers(state, lam, moved)[0]
    F_old = rod.calc_constraint_forces_from_multipliers(state, lam, model)[0]
    assert float(jnp.max(jnp.abs(F - F_old))) > 1e-2  # the force acts at the new station
    # Acceleration stage: the power follows the model the state was realized with (its cache)
    state = moved.realize(start, jb.Stage.Acceleration)
    mult = state.acceleration.multipliers[rows]
    assert_close(rod.calc_power(state), -jnp.dot(mult, moved.multiply_by_g(moved.realize(start, jb.Stage.Velocity), start.u)[rows]),
                 1e-12, "power from the state's own model")
    assert abs(float(rod.calc_power(state))) > 1e-3

    def perr(x):
        m = _with_station1(model, jnp.array([x, -1.0, 0.0]))
        return rod.calc_position_error_from_q(state, state.q + 0.1, m)[0]

    g = jax.grad(perr)(0.3)
    assert abs(float(g)) > 1e-3
    assert_close(g, _central_difference(perr, 0.3), 1e-6, "d perr / d station")
    for call in (lambda: rod.calc_position_constraint_matrix_p(state),
                 lambda: rod.get_constraint_forces_as_vectors(state),
                 lambda: rod.calc_constraint_forces_from_multipliers(state, mult)):
        with pytest.raises(jb.InvalidArgument, match="needs the Model"):
            call()


def test_a_model_that_does_not_fit_is_refused_naming_the_handle(system):
    model, b, rod = system
    nut = b["nut"]
    euler = model.with_use_euler_angles(True)
    with pytest.raises(jb.InvalidArgument, match="get_inboard_frame of body 'nut'.*Euler-angle mode"):
        nut.get_inboard_frame(model.default_state(), euler)
    with pytest.raises(jb.InvalidArgument, match="float32 but the model is float64"):
        nut.set_q_to_fit_rotation(model.astype(jnp.float32).default_state(), np.eye(3), model)
    with pytest.raises(jb.InvalidArgument, match="calc_position_constraint_matrix_p of constraint 'rod'"):
        rod.calc_position_constraint_matrix_p(euler.default_state(), model)
    with pytest.raises(jb.InvalidArgument, match="body 'nut' needs the Model"):
        nut.get_body_mass(None, model.default_state())


def _ball_stepper(name):
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.GeneralForceSubsystem(system)
    ball = jb.MobilizedBody.Translation(matter.Ground(), jb.Transform(), jb.Body.Rigid(LINK), jb.Transform(), name=name)
    matter.adopt_unilateral_contact(jb.PointPlaneContact(matter.Ground(), [0, 1, 0], 0.0, ball, [0, 0, 0], 0.5, 0, 0, 0))
    return system, jb.SemiExplicitEulerTimeStepper(system)


def test_a_stepper_steps_its_own_model_and_checks_a_given_one():
    """The stepper owns its Model (``stepper.model``); a Model given per call must be of its system and dtype, so
    the stepper's contacts are never mixed with another system's or dtype's Model (checked before compiling)."""
    system, stepper = _ball_stepper("ball")
    other_system, other = _ball_stepper("pebble")
    assert stepper.model is system.realize_topology()
    state = stepper.model.default_state()
    with pytest.raises(jb.InvalidArgument, match="step: the model is of .*pebble.*but this stepper steps .*ball"):
        stepper.step(other.model.default_state(), 1e-3, model=other.model)
    with pytest.raises(jb.InvalidArgument, match="simulate: the model is float32 but the stepper's contacts are float64"):
        f32 = stepper.model.astype(jnp.float32)
        stepper.simulate(f32.default_state(), 1e-3, 2, model=f32)
    with pytest.raises(jb.InvalidArgument, match="calc_contact_kinematics: the state does not fit this model"):
        stepper.calc_contact_kinematics(other.model.default_state())
    with pytest.raises(jb.InvalidArgument, match="SemiExplicitEulerTimeStepper: the model is of .*pebble"):
        jb.SemiExplicitEulerTimeStepper(system, other_system.realize_topology())
