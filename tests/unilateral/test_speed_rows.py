"""Velocity-level conditional rows (StateLimitedFriction, BoundedSpeedConstraint, UnilateralSpeedConstraint)
under jb.SemiExplicitEulerTimeStepper, against closed-form rigid-body dynamics of a pendulum about its pin
(I = 1.01 kg m^2, gravity torque -m g l sin q). Simbody declares these classes (ConditionalConstraint.h) and
its PGS solver bounds such rows (boundScalar, boundVector), but its stepper leaves them as TODO; jaxbody
solves them in the dynamics phase with those bounds."""

from __future__ import annotations

import jax.numpy as jnp
import pytest
from contact_systems import G, pendulum_with_speed_rows
from helpers import assert_close

import jaxbody as jb

H = 1e-3
INERTIA = 1.01


@pytest.mark.parametrize("q0, sticks", [(0.3, True), (1.0, False)])
def test_state_limited_friction_sticks_or_slips(q0, sticks):
    """Friction torque at most mu N = 5 N m: at q = 0.3 gravity's 2.90 N m is held (no motion, friction impulse
    m g l sin q h to I times the PGS tolerance); at q = 1.0 its 8.25 N m exceeds 5, so the first step's speed
    is -(8.25 - 5) h / I (to 1e-9)."""
    stepper, _ = pendulum_with_speed_rows("friction")
    state = stepper.model.default_state().set_q(jnp.array([q0]))
    final, report = stepper.step(state, H)
    if sticks:
        assert abs(float(final.u[0])) < 1e-6
        assert float(report.impulse[0, 0]) == pytest.approx(G * float(jnp.sin(q0)) * H, abs=2e-6)  # I x PGS tol
    else:
        expected = -(G * jnp.sin(q0) - 5.0) * H / INERTIA
        assert_close(final.u[0], expected, 1e-9, "sliding speed")
        assert float(report.impulse[0, 0]) == pytest.approx(5.0 * H, rel=1e-12)


def test_bounded_speed_motor_saturates_then_holds():
    """A torque-limited speed motor (target 2 rad/s, |torque| <= 20 N m) on a rotor without gravity accelerates
    at 20 / I until it reaches 2 rad/s (t = 0.101 s), then holds 2 rad/s."""
    stepper, _ = pendulum_with_speed_rows("motor")
    final, traj, _ = stepper.simulate(stepper.model.default_state(), H, 150)
    u = traj.u[:, 0]
    assert_close(u[:50], 20.0 / INERTIA * H * jnp.arange(1, 51), 1e-9, "saturated acceleration")
    assert_close(final.u[0], 2.0, 1e-6, "held speed")


def test_ratchet_holds_speed_nonnegative():
    """UnilateralSpeedConstraint u >= 0: released at q = 0.5 rad with u = 1 rad/s the pendulum swings up,
    stops (u -> 0) and is then held there by the ratchet against gravity (u stays >= -1e-6)."""
    stepper, _ = pendulum_with_speed_rows("ratchet")
    state = stepper.model.default_state().set_q(jnp.array([0.5])).set_u(jnp.array([1.0]))
    final, traj, _ = stepper.simulate(state, H, 400)
    assert float(jnp.min(traj.u[:, 0])) >= -1e-6
    assert abs(float(final.u[0])) < 1e-6
    assert float(final.q[0]) > 0.5 and float(traj.q[-100, 0]) == pytest.approx(float(final.q[0]), abs=1e-6)


def test_adopt_state_limited_friction_api():
    """adopt_state_limited_friction / get_num_state_limited_frictions / get_state_limited_friction."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    mp = jb.MassProperties.from_central_inertia(1.0, [0, 0, 0], jb.Inertia(0.1))
    link = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="arm")
    f = jb.StateLimitedFriction(link, 0, 3.0, 0.4, 0.3, 0.0)
    assert matter.adopt_state_limited_friction(f) == 0
    assert matter.get_num_state_limited_frictions() == 1 and matter.get_state_limited_friction(0) is f
    assert f.get_normal_force_magnitude() == 3.0
    with pytest.raises(jb.InvalidArgument, match="which_u"):
        jb.StateLimitedFriction(link, 1, 3.0, 0.4, 0.3, 0.0)
    with pytest.raises(jb.InvalidArgument, match="exceeds upper"):
        jb.BoundedSpeedConstraint(link, 0, 1.0, -1.0)
    with pytest.raises(jb.InvalidArgument, match="already adopted"):
        matter.adopt_state_limited_friction(f)
