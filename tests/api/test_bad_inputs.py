"""Inputs that used to give silently wrong numbers now raise a jaxbody error that names the culprit.

Foreign handles and states (another system's body, constraint, model or State), a State that does not fit
the model (shapes, dtype, orientation mode, a batch without vmap), force elements on another system's bodies
or on a coordinate whose rate is not its speed, and constraints of a body to itself. Each case checks the
exception type and that the message names the body / force / constraint (and both systems where two are
involved). All checks are static, so almost nothing here compiles: the errors come before any XLA work.
"""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb

LINK = jb.MassProperties(1.0, [0, -0.5, 0], jb.Inertia(0.34, 0.01, 0.34))


def _chain(names, *, ball=False, constraint=False):
    """Ground -> Pin bodies named ``names`` in a chain (plus a Ball and a Rod on request); (system, matter, forces, bodies)."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    bodies = [matter.Ground()]
    for name in names:
        bodies.append(jb.MobilizedBody.Pin(bodies[-1], jb.Transform([0, -1.0, 0]), jb.Body.Rigid(LINK), jb.Transform(), name=name))
    if ball:
        bodies.append(jb.MobilizedBody.Ball(matter.Ground(), jb.Transform([2.0, 0, 0]), jb.Body.Rigid(LINK), jb.Transform(), name="ball"))
    if constraint:
        jb.Constraint.Rod(bodies[1], [0, 0, 0], bodies[-1], [0, 0, 0], 2.5, name=f"rod_{names[0]}")
    return system, matter, forces, bodies


@pytest.fixture(scope="module")
def two_systems():
    """A: Ground-a1-a2 chain + ball + Rod; B: a longer chain c1..c5 with a Rod; both realized (no compilation)."""
    sa, ma, fa, a = _chain(["a1", "a2"], ball=True, constraint=True)
    sc, mc, fc, c = _chain(["c1", "c2", "c3", "c4", "c5"], constraint=True)
    return (sa, sa.realize_topology(), a), (sc, sc.realize_topology(), c)


# -- foreign MobilizedBody / Constraint handles ------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda b, s: b.get_body_transform(s),
    lambda b, s: b.get_body_velocity(s),
    lambda b, s: b.get_q_as_vector(s),
    lambda b, s: b.get_one_u(s, 0),
    lambda b, s: b.set_one_q(s, 0, 1.0),
    lambda b, s: b.lock(s),
    lambda b, s: b.get_body_mass(s, b.matter.system.realize_topology()),
    lambda b, s: b.apply_body_torque(s, jnp.ones(3), s.body_forces),
], ids=["get_body_transform", "get_body_velocity", "get_q_as_vector", "get_one_u", "set_one_q", "lock",
        "get_body_mass", "apply_body_torque"])
def test_a_body_of_another_system_is_rejected_on_a_state(two_systems, call):
    (_, model_a, _), (_, _, c) = two_systems
    state = model_a.default_state()  # not even realized: ownership is checked before the stage
    with pytest.raises(jb.InvalidArgument, match="body 'c5' belongs to .*c1 \\(Pin\\).*made by the model of .*a1 \\(Pin\\)"):
        call(c[5], state)


def test_a_body_of_another_system_is_rejected_as_an_argument(two_systems):
    (_, model_a, a), (_, model_c, c) = two_systems
    state = model_a.default_state()
    with pytest.raises(jb.InvalidArgument, match="find_body_transform_in_another_body: body 'c5' belongs to"):
        a[1].find_body_transform_in_another_body(state, c[5])
    for call in (lambda: model_a.get_composite_body_inertia(state, c[5]),
                 lambda: model_a.calc_station_jacobian(state, [a[1], c[5]], jnp.zeros((2, 3))),
                 lambda: model_a.add_in_body_torque(state, c[3], jnp.ones(3), state.body_forces)):
        with pytest.raises(jb.InvalidArgument, match="body 'c[35]' belongs to .*c1.*not to .*a1"):
            call()
    with pytest.raises(jb.InvalidArgument, match="set_q_to_fit_rotation: the model belongs to .*c1"):
        a[1].set_q_to_fit_rotation(state, np.eye(3), model=model_c)


@pytest.mark.parametrize("call", [
    lambda k, s: k.is_enabled(s),
    lambda k, s: k.disable(s),
    lambda k, s: k.get_position_errors_as_vector(s),
    lambda k, s: k.calc_position_constraint_matrix_p(s, k.matter.system.realize_topology()),
], ids=["is_enabled", "disable", "get_position_errors_as_vector", "calc_position_constraint_matrix_p"])
def test_a_constraint_of_another_system_is_rejected(two_systems, call):
    (_, model_a, _), (system_c, _, _) = two_systems
    rod_c = system_c.get_matter_subsystem().get_constraint(0)
    with pytest.raises(jb.InvalidArgument, match="constraint 'rod_c1' \\(Rod on c1, c5\\) belongs to .*c1.*a1"):
        call(rod_c, model_a.default_state())


def test_identical_systems_share_handles_and_compiled_code():
    """A handle of one system works on the State of a system built the same way (same signature), and the
    second system reuses the first one's compiled realize."""
    from helpers import trace_count

    s1, _, _, b1 = _chain(["p1", "p2"])
    s2, _, _, b2 = _chain(["p1", "p2"])
    m1, m2 = s1.realize_topology(), s2.realize_topology()
    assert m1.signature == m2.signature and m1.signature is not m2.signature
    q = jnp.array([0.3, -0.4])
    st1 = m1.realize(m1.default_state().set_q(q), jb.Stage.Position)
    traced = trace_count("Model.realize")
    st2 = m2.realize(m2.default_state().set_q(q), jb.Stage.Position)
    assert trace_count("Model.realize") == traced
    np.testing.assert_allclose(b1[2].get_body_transform(st2).p, b2[2].get_body_transform(st2).p)
    np.testing.assert_allclose(b2[2].get_body_transform(st1).p, b1[2].get_body_transform(st1).p)


def _is_operator(f) -> bool:
    """Whether ``f`` (possibly an eqx.filter_jit wrapper) is a method wrapped by jaxbody's @stage_operator."""
    while f is not None:
        if getattr(f, "__jaxbody_operator__", False):
            return True
        f = getattr(f, "__wrapped__", None)
    return False


def test_every_handle_method_that_reads_a_state_is_checked():
    """Every public MobilizedBody / Constraint / Model method with a ``state`` or ``model`` parameter goes through
    @stage_operator (so check_operands sees its arguments), except the mode-only helpers listed here."""
    mode_only = {"mobilizer_in", "get_num_q", "get_num_u"}
    unchecked = []
    for cls in (jb.MobilizedBody, jb.Constraint, jb.Model):
        for name, f in inspect.getmembers(cls, callable):
            if name.startswith("_") or name in mode_only or name[0].isupper():
                continue
            try:
                params = inspect.signature(f).parameters
            except (TypeError, ValueError):
                continue
            if {"state", "model"} & set(params) and not _is_operator(f):
                unchecked.append(f"{cls.__name__}.{name}")
    assert not unchecked, unchecked


# -- a State that does not fit the model ---------------------------------------------------------------------


def _cast(state, dtype):
    return jax.tree_util.tree_map(lambda x: x.astype(dtype) if jnp.issubdtype(x.dtype, jnp.floating) else x, state)


def test_a_state_of_another_system_is_rejected_by_model_operators(two_systems):
    (system_a, model_a, _), (_, model_c, _) = two_systems
    for call in (lambda s: model_a.realize(s), lambda s: model_a.calc_m(s), lambda s: model_a.calc_energy(s),
                 lambda s: jb.check_singularities(model_a, s), lambda s: system_a.project(s)):
        with pytest.raises(jb.InvalidArgument, match="made by the model of .*c1.*this model is of .*a1.*default_state"):
            call(model_c.default_state())


def test_same_shapes_other_structure_is_rejected():
    pin, _, _, _ = _chain(["x"])
    slider = jb.MultibodySystem()
    jb.MobilizedBody.Slider(jb.SimbodyMatterSubsystem(slider).Ground(), jb.Transform(), jb.Body.Rigid(LINK), jb.Transform(), name="x")
    with pytest.raises(jb.InvalidArgument, match="x \\(Slider\\).*x \\(Pin\\)"):
        pin.realize_topology().realize(slider.realize_topology().default_state())


def test_dtype_mismatch_is_one_readable_error(two_systems):
    (_, model_a, _), _ = two_systems
    with pytest.raises(jb.InvalidArgument, match="float32 but the model is float64.*model.astype\\(jnp.float32\\)"):
        model_a.realize(_cast(model_a.default_state(), jnp.float32))
    with pytest.raises(jb.InvalidArgument, match="float64 but the model is float32.*default_state"):
        model_a.astype(jnp.float32).realize(model_a.default_state())


def test_mode_mismatch_is_rejected_by_every_operator(two_systems):
    (_, model_a, _), _ = two_systems
    euler_state = model_a.with_use_euler_angles(True).default_state()
    for call in (model_a.calc_m, model_a.get_q_err, model_a.calc_energy):
        with pytest.raises(jb.InvalidArgument, match="Euler-angle mode but the model is in quaternion.*convert_to_euler_angles"):
            call(euler_state)


def test_a_batch_of_states_needs_vmap(two_systems):
    (_, model_a, a), _ = two_systems
    batch = jax.tree_util.tree_map(lambda x: jnp.stack([x, x]), model_a.default_state())
    with pytest.raises(jb.InvalidArgument, match="a batch of 2 states \\(q shape \\(2, 6\\)\\): map over it with jax.vmap"):
        model_a.realize(batch)
    with pytest.raises(jb.InvalidArgument, match="body 'a1' reads one state, got a batch.*jax.vmap"):
        a[1].get_body_transform(batch)


def test_not_a_state_or_stage(two_systems):
    (_, model_a, _), _ = two_systems
    with pytest.raises(jb.InvalidArgument, match="expected a jb.State"):
        model_a.realize(None)
    with pytest.raises(jb.InvalidArgument, match="stage must be a jb.Stage"):
        model_a.realize(model_a.default_state(), "Position")
    with pytest.raises(jb.InvalidArgument, match="t must be numbers"):
        model_a.default_state().set_time("abc")


# -- force elements ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda f, m, b: jb.Force.ConstantForce(f, b, [0, 0, 0], [1, 0, 0]),
    lambda f, m, b: jb.Force.ConstantTorque(f, b, [0, 0, 1]),
    lambda f, m, b: jb.Force.MobilityLinearSpring(f, b, 0, 10.0, 0.0),
    lambda f, m, b: jb.Force.MobilityLinearDamper(f, b, 0, 1.0),
    lambda f, m, b: jb.Force.MobilityConstantForce(f, b, 0, 1.0),
    lambda f, m, b: jb.Force.TwoPointLinearSpring(f, m.Ground(), [0, 0, 0], b, [0, 0, 0], 1.0, 0.0),
], ids=["ConstantForce", "ConstantTorque", "MobilityLinearSpring", "MobilityLinearDamper", "MobilityConstantForce",
        "TwoPointLinearSpring"])
def test_a_force_on_a_body_of_another_system_is_rejected(make):
    _, matter_a, forces_a, _ = _chain(["a1"])
    _, _, _, b = _chain(["b1"])
    with pytest.raises(jb.InvalidArgument, match="body2? 'b1' belongs to the system of bodies \\[Ground, b1 \\(Pin\\)\\], "
                                                 "but the force subsystem belongs to .*a1"):
        make(forces_a, matter_a, b[1])


def test_gravity_with_the_matter_of_another_system_is_rejected():
    _, _, forces_a, _ = _chain(["a1"])
    _, matter_b, _, _ = _chain(["b1"])
    for make in (lambda: jb.Force.UniformGravity(forces_a, matter_b, [0, -9.8, 0]),
                 lambda: jb.Force.Gravity(forces_a, matter_b, [0, -1, 0], 9.8),
                 lambda: jb.Force.GlobalDamper(forces_a, matter_b, 1.0)):
        with pytest.raises(jb.InvalidArgument, match="matter subsystem is of .*b1.*force subsystem belongs to .*a1"):
            make()


def test_mobility_spring_needs_qdot_equal_u():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    G = matter.Ground()
    ball = jb.MobilizedBody.Ball(G, jb.Transform(), jb.Body.Rigid(), jb.Transform(), name="shoulder")
    free = jb.MobilizedBody.Free(G, jb.Transform(), jb.Body.Rigid(), jb.Transform(), name="floater")
    gimbal = jb.MobilizedBody.Gimbal(G, jb.Transform(), jb.Body.Rigid(), jb.Transform(), name="gimbal")
    pin = jb.MobilizedBody.Pin(G, jb.Transform(), jb.Body.Rigid(), jb.Transform(), name="elbow")
    with pytest.raises(jb.InvalidArgument, match="shoulder: q index 3 out of range 0..2 \\(Ball: 4 q, 3 u"):
        jb.Force.MobilityLinearSpring(forces, ball, 3, 10.0, 0.0)
    with pytest.raises(jb.InvalidArgument, match="on 'shoulder': q\\[0\\] .* does not have qdot = u\\[0\\] in quaternion mode"):
        jb.Force.MobilityLinearSpring(forces, ball, 0, 10.0, 0.0)
    with pytest.raises(jb.InvalidArgument, match="on 'floater': q\\[4\\] .* qdot = u\\[4\\]"):
        jb.Force.MobilityLinearSpring(forces, free, 4, 10.0, 0.0)
    with pytest.raises(jb.InvalidArgument, match="which_q must be an integer, got 0.5"):
        jb.Force.MobilityLinearSpring(forces, pin, 0.5, 10.0, 0.0)
    with pytest.raises(jb.InvalidArgument, match="MobilityLinearSpring on 'elbow': stiffness"):
        jb.Force.MobilityLinearSpring(forces, pin, 0, -1.0, 0.0)
    with pytest.raises(jb.InvalidArgument, match="MobilityConstantForce on 'elbow': elbow: u index 1 out of range"):
        jb.Force.MobilityConstantForce(forces, pin, 1, 1.0)
    jb.Force.MobilityLinearSpring(forces, gimbal, 1, 10.0, 0.0)  # Gimbal: u = qdot, accepted
    jb.Force.MobilityLinearSpring(forces, pin, 0, 10.0, 0.0)


def test_mobility_spring_needs_qdot_equal_u_in_euler_mode_too():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    matter.set_use_euler_angles(True)
    ball = jb.MobilizedBody.Ball(matter.Ground(), jb.Transform(), jb.Body.Rigid(), jb.Transform(), name="hip")
    with pytest.raises(jb.InvalidArgument, match="on 'hip': q\\[1\\] .* qdot = u\\[1\\]"):
        jb.Force.MobilityLinearSpring(jb.GeneralForceSubsystem(system), ball, 1, 10.0, 0.0)


# -- constraints -------------------------------------------------------------------------------------------

C = jb.Constraint
SAME_BODY = {
    "Rod": lambda b: C.Rod(b, [0, 0, 0], b, [1, 0, 0], 1.0),
    "Ball": lambda b: C.Ball(b, [0, 0, 0], b, [1, 0, 0]),
    "Weld": lambda b: C.Weld(b, b),
    "PointInPlane": lambda b: C.PointInPlane(b, [0, 0, 1], 0.0, b, [0, 0, 0]),
    "PointOnLine": lambda b: C.PointOnLine(b, [1, 0, 0], [0, 0, 0], b, [0, 0, 0]),
    "ConstantAngle": lambda b: C.ConstantAngle(b, [1, 0, 0], b, [0, 1, 0]),
    "ConstantOrientation": lambda b: C.ConstantOrientation(b, None, b, None),
    "SphereOnPlaneContact": lambda b: C.SphereOnPlaneContact(b, jb.Transform(), b, [0, 0, 0], 0.1),
    "SphereOnSphereContact": lambda b: C.SphereOnSphereContact(b, [0, 0, 0], 0.1, b, [1, 0, 0], 0.1),
    "LineOnLineContact": lambda b: C.LineOnLineContact(b, jb.Transform(), 0.1, b, jb.Transform(), 0.1),
    "PointOnPlaneContact": lambda b: C.PointOnPlaneContact(b, jb.Transform(), b, [0, 0, 0]),
    "Custom": lambda b: C.Custom(b.matter, bodies=[b, b], position_error=lambda k: k.p[0] - k.p[1]),
}


@pytest.mark.parametrize("kind", list(SAME_BODY))
def test_a_body_constrained_to_itself_is_rejected(kind):
    _, matter, _, bodies = _chain(["hand"])
    with pytest.raises(jb.InvalidArgument, match=f"{kind}\\(hand\\): constrains body 'hand' to itself"):
        SAME_BODY[kind](bodies[1])
    assert matter.get_num_constraints() == 0
    with pytest.raises(jb.InvalidArgument, match="Ball\\(Ground\\): constrains body 'Ground' to itself"):
        C.Ball(matter.Ground(), matter.Ground())


def test_constraint_errors_name_the_bodies():
    _, matter, _, a = _chain(["upper", "lower"])
    _, _, _, b = _chain(["other"])
    with pytest.raises(jb.InvalidArgument, match="Rod\\(upper, lower\\): length must be positive"):
        C.Rod(a[1], [0, 0, 0], a[2], [0, 0, 0], 0.0)
    with pytest.raises(jb.InvalidArgument, match="Ball\\(upper, other\\): body 'other' belongs to .*other.*upper"):
        C.Ball(a[1], b[1])
    with pytest.raises(jb.InvalidArgument, match="ConstantCoordinate\\(upper\\): q index must be an integer"):
        C.ConstantCoordinate(a[1], 0.5, 0.0)
    with pytest.raises(jb.InvalidArgument, match="NoSlip1D\\(Ground, upper\\): the two moving bodies must differ"):
        C.NoSlip1D(matter.Ground(), [0, 0, 0], [1, 0, 0], a[1], a[1])
    C.NoSlip1D(matter.Ground(), [0, 0, 0], [1, 0, 0], matter.Ground(), a[1])  # the case body may be a moving body
