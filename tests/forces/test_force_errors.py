"""Bad force-element input raises jb.InvalidArgument at build time, naming the element and the body."""

import numpy as np
import pytest

import jaxbody as jb


def _system():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    body = jb.Body.Rigid(jb.MassProperties(1.0, [0.0, 0.1, 0.0], jb.Inertia(0.1)))
    G = matter.Ground()
    bodies = {
        "pin": jb.MobilizedBody.Pin(G, jb.Transform(), body, jb.Transform(), name="elbow"),
        "ball": jb.MobilizedBody.Ball(G, jb.Transform(), body, jb.Transform(), name="shoulder"),
        "free": jb.MobilizedBody.Free(G, jb.Transform(), body, jb.Transform(), name="pelvis"),
    }
    return matter, forces, bodies


F = jb.Force
CASES = {
    "spring q index beyond the body's mobilities (Ball q[3] would act on the next body's u)":
        (lambda m, f, b: F.MobilityLinearSpring(f, b["ball"], 3, 1.0, 0.0), ("MobilityLinearSpring", "shoulder", "out of range")),
    "spring on a quaternion coordinate (qdot != u)":
        (lambda m, f, b: F.MobilityLinearSpring(f, b["ball"], 0, 1.0, 0.0), ("MobilityLinearSpring", "shoulder", "qdot = u")),
    "stop on a Free body's quaternion":
        (lambda m, f, b: F.MobilityLinearStop(f, b["free"], 1, 1.0, 0.0, -1, 1), ("MobilityLinearStop", "pelvis", "qdot = u")),
    "pin q index 1":
        (lambda m, f, b: F.MobilityLinearSpring(f, b["pin"], 1, 1.0, 0.0), ("MobilityLinearSpring", "elbow", "out of range")),
    "damper u index":
        (lambda m, f, b: F.MobilityLinearDamper(f, b["ball"], 3, 1.0), ("MobilityLinearDamper", "shoulder", "out of range")),
    "discrete force u index":
        (lambda m, f, b: F.MobilityDiscreteForce(f, b["pin"], -1), ("MobilityDiscreteForce", "elbow", "out of range")),
    "negative spring stiffness":
        (lambda m, f, b: F.MobilityLinearSpring(f, b["pin"], 0, -1.0, 0.0), ("MobilityLinearSpring", "elbow", "stiffness")),
    "negative damping":
        (lambda m, f, b: F.MobilityLinearDamper(f, b["pin"], 0, -0.1), ("MobilityLinearDamper", "elbow", "damping")),
    "friction u index beyond a Ball's mobilities":
        (lambda m, f, b: F.MobilitySmoothCoulombFriction(f, b["ball"], 3, 1.0, 0.1),
         ("MobilitySmoothCoulombFriction", "shoulder", "out of range")),
    "negative friction":
        (lambda m, f, b: F.MobilitySmoothCoulombFriction(f, b["pin"], 0, -1.0, 0.1),
         ("MobilitySmoothCoulombFriction", "elbow", "friction", "non-negative")),
    "zero friction transition velocity":
        (lambda m, f, b: F.MobilitySmoothCoulombFriction(f, b["free"], 4, 1.0, 0.0),
         ("MobilitySmoothCoulombFriction", "pelvis", "transition_velocity", "positive")),
    "negative stop dissipation":
        (lambda m, f, b: F.MobilityLinearStop(f, b["pin"], 0, 1.0, -1.0, -1, 1), ("MobilityLinearStop", "elbow", "dissipation")),
    "stop bounds reversed":
        (lambda m, f, b: F.MobilityLinearStop(f, b["pin"], 0, 1.0, 0.0, 1.0, -1.0), ("MobilityLinearStop", "elbow", "q_low")),
    "negative two-point stiffness":
        (lambda m, f, b: F.TwoPointLinearSpring(f, b["pin"], [0, 0, 0], b["free"], [0, 0, 0], -2.0, 1.0),
                                     ("TwoPointLinearSpring", "elbow", "pelvis", "stiffness")),
    "negative two-point damping": (lambda m, f, b: F.TwoPointLinearDamper(f, b["pin"], [0, 0, 0], b["free"], [0, 0, 0], -2.0),
                                   ("TwoPointLinearDamper", "elbow", "damping")),
    "station not a 3-vector":
        (lambda m, f, b: F.ConstantForce(f, b["free"], [0, 0], [1, 0, 0]), ("ConstantForce", "pelvis", "station")),
    "negative bushing stiffness":
        (lambda m, f, b: F.LinearBushing(f, b["pin"], None, b["free"], None, [1, 1, 1, 1, -1, 1], [0] * 6),
                                   ("LinearBushing", "elbow", "pelvis", "stiffness")),
    "bushing on one body":
        (lambda m, f, b: F.LinearBushing(f, b["pin"], None, b["pin"], None, [1] * 6, [0] * 6),
         ("LinearBushing", "elbow", "differ")),
    "zero gravity direction with a magnitude": (lambda m, f, b: F.Gravity(f, m, [0, 0, 0], 9.8), ("Gravity", "zero")),
    "negative gravity magnitude": (lambda m, f, b: F.Gravity(f, m, [0, -1, 0], -9.8), ("Gravity", "magnitude")),
    "non-positive bath temperature": (lambda m, f, b: F.Thermostat(f, m, 1.0, 0.0, 1.0), ("Thermostat", "bath_temperature")),
    "too many excluded dofs": (lambda m, f, b: F.Thermostat(f, m, 1.0, 1.0, 1.0, 7), ("Thermostat", "num_excluded_dofs")),
    "custom force not callable": (lambda m, f, b: F.Custom(f, 3.0), ("Custom", "calc_force")),
    "body instead of matter": (lambda m, f, b: F.GlobalDamper(f, b["pin"], 1.0), ("GlobalDamper", "SimbodyMatterSubsystem")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_names_the_element_and_the_body(case):
    matter, forces, bodies = _system()
    build, words = CASES[case]
    with pytest.raises(jb.InvalidArgument) as error:
        build(matter, forces, bodies)
    for word in words:
        assert word in str(error.value), (word, str(error.value))


def test_body_of_another_system():
    _, forces, _ = _system()
    _, _, others = _system()
    with pytest.raises(jb.InvalidArgument, match="'elbow' belongs to .* a force element can only act on bodies of its own"):
        F.MobilityLinearSpring(forces, others["pin"], 0, 1.0, 0.0)
    with pytest.raises(jb.InvalidArgument, match="TwoPointLinearSpring.*body2 'pelvis' belongs to"):
        F.TwoPointLinearSpring(forces, _system_body(forces), [0, 0, 0], others["free"], [0, 0, 0], 1.0, 0.0)


def _system_body(forces):
    return forces.system.get_matter_subsystem().get_mobilized_body(1)


def test_a_second_discrete_forces_is_refused():
    matter, forces, _ = _system()
    F.DiscreteForces(forces, matter)
    with pytest.raises(jb.InvalidArgument, match="DiscreteForces: this system already has one"):
        F.DiscreteForces(jb.GeneralForceSubsystem(forces.system), matter)


def test_valid_coordinates_are_accepted():
    matter, forces, bodies = _system()
    F.MobilityLinearSpring(forces, bodies["pin"], 0, 1.0, 0.0)
    F.MobilityLinearStop(forces, bodies["pin"], 0, 1.0, 0.5, -1.0, 1.0)
    F.MobilityLinearDamper(forces, bodies["ball"], 2, 1.0)
    model = forces.system.realize_topology()
    assert len(model.forces) == 3 and np.asarray(model.default_state().force_enabled).all()
