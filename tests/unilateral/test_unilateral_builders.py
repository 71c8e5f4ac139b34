"""Building unilateral contacts: Simbody's matter methods (adopt/get/count), Constraint.set_is_conditional,
the stepper's settings (Simbody's defaults and in-use velocities), and clear InvalidArgument errors that
name the contact and body for bad input (Simbody's SimTK_ERRCHK conditions in ConditionalConstraint.cpp)."""

from __future__ import annotations

import numpy as np
import pytest

import jaxbody as jb
from jaxbody._integrators.semi_explicit_euler_time_stepper import (
    calc_effective_cof,
    calc_effective_cor,
)


def _two_bodies():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    mp = jb.MassProperties.from_central_inertia(1.0, [0, 0, 0], jb.Inertia(0.1))
    pin = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="arm")
    ball = jb.MobilizedBody.Ball(pin, jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="hand")
    return system, matter, pin, ball


def test_adopt_get_and_count():
    """Indices follow adoption order (Simbody's UnilateralContactIndex); get returns the same object."""
    system, matter, pin, ball = _two_bodies()
    a = jb.HardStopUpper(pin, 0, 1.0, 0.5)
    b = jb.PointPlaneFrictionlessContact(matter.Ground(), [0, 1, 0], 0.0, ball, [0, -0.1, 0], 0.2)
    c = jb.Rope(matter.Ground(), [0, 0, 0], ball, [0, 0, 0], 2.0, 0.0)
    assert [matter.adopt_unilateral_contact(x) for x in (a, b, c)] == [0, 1, 2]
    assert matter.get_num_unilateral_contacts() == 3
    assert matter.get_unilateral_contact(1) is b and b.index == 1
    assert not b.has_friction() and a.get_sign_convention() == -1
    stepper = jb.SemiExplicitEulerTimeStepper(system)
    assert stepper.contacts.order == (0, 1, 2)  # stops, planes, distances: already adoption order
    with pytest.raises(jb.InvalidArgument, match="already adopted"):
        matter.adopt_unilateral_contact(a)
    with pytest.raises(jb.InvalidArgument, match=r"index must be in \[0, 3\)"):
        matter.get_unilateral_contact(3)
    with pytest.raises(jb.TopologyFrozen):
        matter.adopt_unilateral_contact(jb.HardStopLower(pin, 0, -1.0, 0.5))


def test_constraint_is_conditional_flag():
    """Constraint.set_is_conditional / is_conditional (Topology stage: frozen by realize_topology)."""
    system, matter, _, ball = _two_bodies()
    rod = jb.Constraint.Rod(matter.Ground(), [0, 0, 0], ball, [0, 0, 0], 1.0)
    assert rod.is_conditional() is False
    rod.set_is_conditional(True)
    assert rod.is_conditional() is True
    system.realize_topology()
    with pytest.raises(jb.TopologyFrozen):
        rod.set_is_conditional(False)


@pytest.mark.parametrize("make, message", [
    (lambda m, p, b: jb.PointPlaneContact(m.Ground(), [0, 1, 0], 0, b, [0, 0, 0], 1.5, 0.5, 0.5, 0), "min_cor"),
    (lambda m, p, b: jb.PointPlaneContact(m.Ground(), [0, 1, 0], 0, b, [0, 0, 0], 0.5, 0.3, 0.5, 0), "mu_d=0.5"),
    (lambda m, p, b: jb.SpherePlaneContact(m.Ground(), [0, 0, 0], 0, b, [0, 0, 0], 0.1, 0.5, 0, 0, 0), "normal_B"),
    (lambda m, p, b: jb.SpherePlaneContact(m.Ground(), [0, 1, 0], 0, b, [0, 0], 0.1, 0.5, 0, 0, 0), "point_F"),
    (lambda m, p, b: jb.HardStopUpper(b, 0, 1.0, 0.5), r"HardStopUpper\(hand, q0\).*qdot = u"),
    (lambda m, p, b: jb.HardStopLower(p, 1, 1.0, 0.5), "which_q"),
    (lambda m, p, b: jb.Rope(b, [0, 0, 0], b, [0, 0, 0], 1.0, 0), "two different bodies"),
    (lambda m, p, b: jb.Rope(m.Ground(), [0, 0, 0], b, [0, 0, 0], -1.0, 0), "length"),
    (lambda m, p, b: jb.SphereSphereContact(p, [0, 0, 0], -0.1, b, [0, 0, 0], 0.1, 0.5, 0, 0, 0), "radius_F"),
    (lambda m, p, b: jb.PointPlaneContact("ground", [0, 1, 0], 0, b, [0, 0, 0], 0.5, 0, 0, 0), "plane_body"),
    (lambda m, p, b: jb.EdgeEdgeContact(p, [0, 0, 0], 1, b, jb.Transform(), 1, 0.5, 0, 0, 0),
     r"EdgeEdgeContact\(arm, hand\).*edge_frame_F"),
])
def test_bad_contacts_raise_naming_the_contact(make, message):
    """Each bad argument raises InvalidArgument with the contact, its bodies and the offending value."""
    _, matter, pin, ball = _two_bodies()
    with pytest.raises(jb.InvalidArgument, match=message):
        make(matter, pin, ball)


def test_stepper_settings_and_errors():
    """Simbody's defaults: accuracy 1e-2, consTol 1e-3, Poisson, Bilateral projection, PLUS impulse solver, in-use
    velocities max(setting, 2 consTol); unsupported choices and systems without contacts raise InvalidArgument."""
    system, *_ = _two_bodies()
    with pytest.raises(jb.InvalidArgument, match="no unilateral contacts"):
        jb.SemiExplicitEulerTimeStepper(system)
    system2, matter2, pin2, _ = _two_bodies()
    matter2.adopt_unilateral_contact(jb.HardStopUpper(pin2, 0, 1.0, 0.5))
    stepper = jb.SemiExplicitEulerTimeStepper(system2)
    assert stepper.get_accuracy_in_use() == 1e-2 and stepper.get_constraint_tolerance_in_use() == 1e-3
    assert stepper.get_restitution_model() == "poisson" and stepper.get_position_projection_method() == "bilateral"
    assert stepper.get_default_impact_capture_velocity_in_use() == 2e-3
    stepper.set_default_impact_min_cor_velocity(0.5)
    assert stepper.get_default_impact_min_cor_velocity_in_use() == 0.5
    stepper.set_restitution_model("NoRestitution")
    assert stepper.get_restitution_model() == "none"
    with pytest.raises(jb.InvalidArgument, match="restitution model"):
        stepper.set_restitution_model("elastic")
    assert stepper.get_induced_impact_model() == "simultaneous" and stepper.get_max_induced_impacts_per_step() == 5
    stepper.set_induced_impact_model("Mixed")
    stepper.set_max_induced_impacts_per_step(3)
    assert stepper.options().induced == "mixed" and stepper.options().max_induced_impacts == 3
    with pytest.raises(jb.InvalidArgument, match="nonnegative integer"):
        stepper.set_max_induced_impacts_per_step(-1)
    assert stepper.get_impulse_solver_type() == "plus" and stepper.options().solver == "plus"  # Simbody's default
    stepper.set_impulse_solver_type(jb.SemiExplicitEulerTimeStepper.ImpulseSolverType.PGS)
    assert stepper.get_impulse_solver_type() == "pgs" and stepper.options().solver == "pgs"
    stepper.set_impulse_solver_type(jb.SemiExplicitEulerTimeStepper.PLUS)
    assert stepper.get_impulse_solver_type() == "plus"
    with pytest.raises(jb.InvalidArgument, match="impulse solver type"):
        stepper.set_impulse_solver_type("Lemke")
    with pytest.raises(jb.InvalidArgument, match="nonnegative"):
        stepper.set_default_impact_capture_velocity(-1)
    other = jb.MultibodySystem()
    jb.MobilizedBody.Slider(jb.SimbodyMatterSubsystem(other).Ground(), jb.Transform(), jb.Body.Rigid(
        jb.MassProperties.from_central_inertia(1.0, [0, 0, 0], jb.Inertia(0.1))), jb.Transform())
    with pytest.raises(jb.InvalidArgument, match="SemiExplicitEulerTimeStepper.step: the state does not fit"):
        stepper.step(other.realize_topology().default_state(), 1e-3)
    system3, matter3, pin3, ball3 = _two_bodies()
    matter3.adopt_unilateral_contact(jb.HardStopUpper(pin3, 0, 1.0, 0.5))
    jb.Constraint.Rod(matter3.Ground(), [0, 0, 0], ball3, [0, 0, 0], 1.0)
    with pytest.raises(jb.InvalidArgument, match="1 bilateral constraint"):
        jb.SemiExplicitEulerTimeStepper(system3)


def test_effective_cor_and_cof_formulas():
    """ConditionalConstraint::calcEffectiveCOR (0 at or below capture, min COR at or above min-COR speed, linear
    1 - (1 - e) v / v_minCOR between) and calcEffectiveCOF (mu_v v + mu_s at or below the transition, else mu_d)."""
    cor = calc_effective_cor(0.4, 0.01, 0.1, np.array([0.0, 0.01, 0.05, 0.1, 3.0]))
    np.testing.assert_allclose(cor, [0.0, 0.0, 1 - 0.6 / 0.1 * 0.05, 0.4, 0.4], rtol=0, atol=1e-15)
    cof = calc_effective_cof(0.8, 0.5, 0.1, 0.01, np.array([0.0, 0.01, 0.02, 2.0]))
    np.testing.assert_allclose(cof, [0.8, 0.801, 0.502, 0.7], rtol=0, atol=1e-15)
