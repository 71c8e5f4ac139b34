"""Bad input is rejected at construction time with an error that names the body."""

import numpy as np
import pytest

import jaxbody as jb


def _system():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    return system, matter


def test_negative_mass_is_rejected():
    with pytest.raises(jb.InvalidInertia, match="mass"):
        jb.MassProperties(-1.0, [0, 0, 0], jb.Inertia(1.0))


def test_non_physical_inertia_is_rejected():
    with pytest.raises(jb.InvalidInertia, match="triangle"):
        jb.Inertia(1.0, 1.0, 3.0)
    with pytest.raises(jb.InvalidInertia, match="negative"):
        jb.Inertia(-1.0, 1.0, 1.0)
    with pytest.raises(jb.InvalidInertia, match="semidefinite"):
        jb.Inertia(1.0, 1.0, 1.0, -0.9, -0.9, -0.9)


def test_inertia_about_origin_must_contain_the_mass_center_shift():
    # A point mass of 1 kg at x = 1 needs at least Iyy = Izz = 1 about the origin.
    with pytest.raises(jb.InvalidInertia, match="mass center"):
        jb.MassProperties(1.0, [1.0, 0, 0], jb.Inertia(0.1))
    mp = jb.MassProperties.from_central_inertia(1.0, [1.0, 0, 0], jb.Inertia(0.1))
    np.testing.assert_allclose(np.diag(mp.inertia.matrix), [0.1, 1.1, 1.1])


def test_wrong_vector_lengths_are_rejected():
    with pytest.raises(jb.InvalidArgument, match="3 elements"):
        jb.MassProperties(1.0, [0, 0], jb.Inertia(1.0))
    system, matter = _system()
    with pytest.raises(jb.InvalidArgument, match="leg.*X_PF"):
        jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(p=[1.0, 2.0]), jb.Body.Rigid(), jb.Transform(), name="leg")
    with pytest.raises(jb.InvalidArgument, match="radii"):
        jb.MobilizedBody.Ellipsoid(matter.Ground(), jb.Transform(), jb.Body.Rigid(), jb.Transform(), radii=[1, 2])


def test_non_orthonormal_rotation_is_rejected():
    system, matter = _system()
    with pytest.raises(jb.InvalidArgument, match="arm.*orthonormal"):
        jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(jb.Rotation(2 * np.eye(3))), jb.Body.Rigid(), jb.Transform(), name="arm")


def test_zero_quaternion_is_rejected():
    with pytest.raises(jb.InvalidArgument, match="zero norm"):
        jb.Rotation.from_quaternion([0.0, 0.0, 0.0, 0.0])


def test_unknown_parent_is_rejected():
    with pytest.raises(jb.UnknownParent, match="foot"):
        jb.MobilizedBody.Pin("ground", jb.Transform(), jb.Body.Rigid(), jb.Transform(), name="foot")


def test_body_must_be_a_body():
    system, matter = _system()
    with pytest.raises(jb.InvalidArgument, match="hand.*jb.Body"):
        jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.MassProperties(1.0), jb.Transform(), name="hand")


def test_nothing_can_be_added_after_realize_topology():
    system, matter = _system()
    b1 = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(), jb.Transform(), name="b1")
    model = system.realize_topology()
    assert system.realize_topology() is model
    with pytest.raises(jb.TopologyFrozen, match="late"):
        jb.MobilizedBody.Pin(b1, jb.Transform(), jb.Body.Rigid(), jb.Transform(), name="late")
    with pytest.raises(jb.TopologyFrozen):
        matter.set_use_euler_angles(True)
    with pytest.raises(jb.TopologyFrozen):
        jb.GeneralForceSubsystem(system)


def test_screw_needs_a_pitch_and_indices_are_checked():
    system, matter = _system()
    with pytest.raises(jb.InvalidArgument, match="pitch"):
        jb.MobilizedBody.Screw(matter.Ground(), jb.Transform(), jb.Body.Rigid(), jb.Transform())
    b = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(), jb.Transform(), name="b")
    forces = jb.GeneralForceSubsystem(system)
    with pytest.raises(jb.InvalidArgument, match="b: q index 1"):
        jb.Force.MobilityLinearSpring(forces, b, 1, 10.0, 0.0)
    model = system.realize_topology()
    with pytest.raises(jb.InvalidArgument, match="length 1"):
        b.set_q_from_vector(model.default_state(), [1.0, 2.0])
    with pytest.raises(jb.InvalidArgument, match="shape"):
        model.default_state().set_u([1.0, 2.0])
