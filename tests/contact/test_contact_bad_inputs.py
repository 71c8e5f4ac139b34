"""Bad contact arguments raise InvalidArgument at build time, naming the element and the body."""

import numpy as np
import pytest

import jaxbody as jb


def _system():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    mp = jb.MassProperties.from_central_inertia(1.0, [0, 0, 0], jb.Inertia(0.01))
    ball = jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="ball")
    return system, matter, forces, ball


def test_hunt_crossley_bad_inputs():
    system, matter, forces, ball = _system()
    hc = jb.HuntCrossleyForce(forces)
    with pytest.raises(jb.InvalidArgument, match="sphere on 'ball': radius must be positive"):
        hc.add_sphere(ball, -0.1)
    with pytest.raises(jb.InvalidArgument, match="sphere on 'ball': stiffness must be positive"):
        hc.add_sphere(ball, 0.1, stiffness=0.0)
    with pytest.raises(jb.InvalidArgument, match="half-space on 'Ground': dissipation"):
        hc.add_half_space(matter.Ground(), dissipation=-1.0)
    with pytest.raises(jb.InvalidArgument, match="X_BH must be a jb.Transform"):
        hc.add_half_space(matter.Ground(), np.eye(3))
    other_ball = _system()[3]
    with pytest.raises(jb.InvalidArgument, match="belongs to"):
        hc.add_sphere(other_ball, 0.1)
    with pytest.raises(jb.InvalidArgument, match="transition_velocity"):
        jb.HuntCrossleyForce(forces, transition_velocity=0.0)
    hc.add_sphere(ball, 0.1)
    with pytest.raises(jb.InvalidArgument, match="no sphere/half-space pair"):
        system.realize_topology()


def test_smooth_and_exponential_bad_inputs():
    _, matter, forces, ball = _system()
    sm = jb.SmoothSphereHalfSpaceForce(forces)
    with pytest.raises(jb.InvalidArgument, match="same body 'ball'"):
        sm.add_contact(ball, [0, 0, 0], 0.1, ball)
    with pytest.raises(jb.InvalidArgument, match="sphere_radius must be positive"):
        sm.add_contact(ball, [0, 0, 0], 0.0, matter.Ground())
    with pytest.raises(jb.InvalidArgument, match="hertz_smoothing must be positive"):
        jb.SmoothSphereHalfSpaceForce(forces, hertz_smoothing=-1.0)
    with pytest.raises(jb.InvalidArgument, match="station's body is Ground"):
        jb.ExponentialSpringForce(forces, jb.Transform(), matter.Ground(), [0, 0, 0])
    with pytest.raises(jb.InvalidArgument, match="parameter d2"):
        jb.ExponentialSpringForce(forces, jb.Transform(), ball, [0, 0, 0], jb.ExponentialSpringParameters(shape=(0.0, 0.5, -1.0)))
    with pytest.raises(jb.InvalidArgument, match="on 'ball': station"):
        jb.ExponentialSpringForce(forces, jb.Transform(), ball, [0, 0])
