"""Controls as State inputs: layout and names, checks, invalidation, carrying through every stepper,
jit/vmap over 4096 lanes of different controls with one shared Model, and gradients against central differences."""

from __future__ import annotations

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close, assert_grad_matches_fd

import jaxbody as jb


@functools.lru_cache(maxsize=None)
def actuated_pendulum():
    """A Pin pendulum with a CoordinateActuator ("tau", 3 N m per unit), a plain spring, an
    ActivationCoordinateActuator ("act", 2 N m, tau 0.05 s) and a far hard stop: controls ("tau", "act")."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    mp = jb.MassProperties.from_central_inertia(1.0, [0.0, -1.0, 0.0], jb.Inertia(0.01))
    link = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="link")
    tau = jb.Force.CoordinateActuator(forces, link, 0, optimal_force=3.0, name="tau")
    jb.Force.MobilityLinearSpring(forces, link, 0, 1.0, 0.0)
    act = jb.Force.ActivationCoordinateActuator(forces, link, 0, optimal_force=2.0, activation_time_constant=0.05,
                                                default_activation=0.0, name="act")
    matter.adopt_unilateral_contact(jb.HardStopLower(link, 0, -2.0, 0.5))  # far away: for the impulse stepper
    return system, system.realize_topology(), {"tau": tau, "act": act}


def test_control_layout_and_names():
    _, model, h = actuated_pendulum()
    assert model.control_names == ("tau", "act") and model.num_controls == 2 == model.get_num_controls()
    assert model.get_control_index("act") == 1 and h["act"].control_slice == slice(1, 2)
    assert [e.first_control for e in model.forces if e.num_controls()] == [0, 1]
    assert model.default_state().controls.shape == (2,)
    with pytest.raises(jb.InvalidArgument, match="no control is named 'nope'.*tau, act"):
        model.get_control_index("nope")


def test_wrong_length_controls_raise_naming_the_count():
    _, model, h = actuated_pendulum()
    state = model.default_state()
    with pytest.raises(jb.InvalidArgument, match=r"expected 2 controls.*got shape \(3,\)"):
        state.set_controls([1.0, 2.0, 3.0])
    with pytest.raises(jb.InvalidArgument, match=r"tau.set_controls: expected 1 control"):
        h["tau"].set_controls(state, [1.0, 2.0])
    bad = jb.State(**{**{f: getattr(state, f) for f in ("t", "q", "u", "z", "mobility_forces", "body_forces",
                                                         "constraint_enabled", "lock_level", "lock_q", "lock_u",
                                                         "motion_enabled", "force_enabled")},
                      "controls": jnp.zeros(3), "system": state.system})
    with pytest.raises(jb.InvalidArgument, match=r"controls \(3,\) \(expected \(2,\)\).*2 controls"):
        model.realize(bad, jb.Stage.Dynamics)


def test_controls_drive_forces_and_drop_dynamics():
    _, model, h = actuated_pendulum()
    state = model.realize(model.default_state().set_q(jnp.array([0.3])), jb.Stage.Dynamics)
    changed = h["tau"].set_controls(state, 0.5)
    assert changed.get_system_stage() == jb.Stage.Velocity  # Dynamics dropped, Velocity kept
    assert_close(h["tau"].get_controls(changed), [0.5])
    dyn = model.realize(changed.set_controls(jnp.array([0.5, 0.25])), jb.Stage.Dynamics).dynamics
    assert_close(dyn.mobility_forces, [3.0 * 0.5 - 0.3], 1e-14, "CoordinateActuator + spring")
    assert_close(dyn.zdot, [(0.25 - 0.0) / 0.05], 1e-14, "activation dynamics (x - a) / tau")


def test_every_stepper_holds_controls():
    system, model, _ = actuated_pendulum()
    state = model.default_state().set_q(jnp.array([0.3])).set_controls(jnp.array([0.7, -0.4]))
    both = jax.tree_util.tree_map(lambda a, b: jnp.stack([a, b]), state, state.set_controls(jnp.zeros(2)))
    final, traj = jax.jit(jax.vmap(lambda s: jb.simulate(model, s, 1e-3, 20)))(both)
    assert_close(final.controls[0], [0.7, -0.4], 0, "jb.simulate")
    assert_close(traj.controls[0, -1], [0.7, -0.4], 0, "jb.simulate's trajectory")
    assert abs(float(final.q[0, 0] - final.q[1, 0])) > 1e-4  # the controls acted
    euler = jb.SemiExplicitEulerTimeStepper(system, model)
    new, _ = euler.step(state, 1e-3)
    assert_close(new.controls, [0.7, -0.4], 0, "SemiExplicitEulerTimeStepper")
    assert_close(new.z, [1e-3 * (-0.4) / 0.05], 1e-15, "activation integrated by the stepper")


@pytest.mark.long  # the adaptive stepper compiles for ~25 s
def test_time_stepper_holds_controls():
    _, model, _ = actuated_pendulum()
    state = model.default_state().set_q(jnp.array([0.3])).set_controls(jnp.array([0.7, -0.4]))
    stepper = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=1e-6))
    _, traj = stepper.simulate(state, jnp.array([0.01]))
    assert_close(traj.controls, [[0.7, -0.4]], 0, "TimeStepper")
    assert float(traj.t[0]) == 0.01 and abs(float(traj.z[0, 0])) > 0  # it stepped, activation integrated


def test_vmap_4096_lanes_of_controls_share_the_model():
    _, model, _ = actuated_pendulum()
    base = model.default_state().set_q(jnp.array([0.2]))
    controls = jnp.asarray(np.random.default_rng(0).uniform(-1, 1, (4096, 2)))

    @jax.jit
    def udot(c):
        return model.realize(base.set_controls(c)).acceleration.udot[0]

    batched = jax.vmap(udot)(controls)
    one = [float(udot(controls[i])) for i in (0, 17, 4095)]
    assert_close(batched[jnp.array([0, 17, 4095])], one, 1e-13, "vmap lane = single call")
    # udot is affine in the CoordinateActuator's control: slope 3 / I about the pin (1 + 0.01)
    assert_close(jnp.diff(jax.vmap(udot)(jnp.array([[0.0, 0.0], [1.0, 0.0]]))), [3.0 / 1.01], 1e-12)


def test_gradients_wrt_controls_and_parameters_match_central_differences():
    _, model, _ = actuated_pendulum()
    base = model.default_state().set_q(jnp.array([0.2])).set_u(jnp.array([0.1]))

    @jax.jit
    def final_q(c, f0):
        m = eqx.tree_at(lambda m: m.forces[1].optimal_force, model, f0)
        return jb.simulate(m, base.set_controls(c), 1e-3, 10, method="semi_explicit_euler")[0].q[0]

    c0, f0 = jnp.array([0.4, -0.3]), jnp.array(3.0)
    dc, df = jax.jit(jax.grad(final_q, argnums=(0, 1)))(c0, f0)
    assert_grad_matches_fd(lambda c: final_q(c, f0), c0, 1e-5, 1e-8, "d q(T) / d controls", grad=dc)
    assert_grad_matches_fd(lambda f: final_q(c0, f), f0, 1e-5, 1e-8, "d q(T) / d optimal_force", grad=df)
