"""``jb.Force``: Simbody's force elements by their Simbody names (``Force::UniformGravity`` ->
``jb.Force.UniformGravity``), host-side builders with Simbody's argument order.

Each call validates its arguments, registers the element with a GeneralForceSubsystem and returns a handle
(jaxbody._api.force_handles); ``realize_topology()`` turns the handle into the traced element of
``jaxbody._dynamics.force_elements``. Every body and matter subsystem given must belong to the force
subsystem's MultibodySystem (InvalidArgument naming the element, the body and both systems otherwise).
"""

from __future__ import annotations

from jaxbody._api.force_actuators import ActuatorForces
from jaxbody._api.force_basic import BasicForces
from jaxbody._api.force_compound import CompoundForces
from jaxbody._api.force_fluid import FluidForces
from jaxbody._api.force_muscles import MuscleForces
from jaxbody._api.force_opensim_passive import OpenSimPassiveForces
from jaxbody._api.force_path import PathForces


class Force(BasicForces, CompoundForces, ActuatorForces, OpenSimPassiveForces, MuscleForces, PathForces,
            FluidForces):
    """Namespace of Simbody's force elements: Gravity, UniformGravity, MobilityLinearSpring, MobilityLinearDamper,
    MobilityConstantForce, MobilityLinearStop, MobilityDiscreteForce, GlobalDamper, ConstantForce, ConstantTorque
    and jaxbody's own MobilitySmoothCoulombFriction (jaxbody._api.force_basic); TwoPointLinearSpring, TwoPointLinearDamper, TwoPointConstantForce, LinearBushing,
    Thermostat, DiscreteForces, Custom (jaxbody._api.force_compound); OpenSim's actuators CoordinateActuator,
    ActivationCoordinateActuator, PointActuator, TorqueActuator, driven by ``State.controls``
    (jaxbody._api.force_actuators), and passive forces SpringGeneralizedForce, CoordinateLimitForce,
    ExpressionBasedCoordinateForce, ExpressionBasedBushingForce (jaxbody._api.force_opensim_passive); OpenSim's
    Thelen2003Muscle, DeGrooteFregly2016Muscle, Millard2012EquilibriumMuscle and RigidTendonMuscle on a path
    (jaxbody._api.force_muscles); OpenSim's Ligament, PathSpring and
    PathActuator (jaxbody._api.force_path); MuJoCo's InertiaBoxFluid and EllipsoidFluid (jaxbody._api.force_fluid)."""
