"""Constraint types, one family per module. See base.py for the batched interface."""

from jaxbody._constraints.types.base import ConstrainedKinematics, ConstraintType
from jaxbody._constraints.types.contact import (
    LineOnLineContact,
    PointOnPlaneContact,
    SphereOnPlaneContact,
    SphereOnSphereContact,
)
from jaxbody._constraints.types.coordinate import (
    ConstantAcceleration,
    ConstantCoordinate,
    ConstantSpeed,
    CoordinateCoupler,
    PrescribedMotion,
    SpeedCoupler,
)
from jaxbody._constraints.types.custom import Custom
from jaxbody._constraints.types.geometric import (
    Ball,
    ConstantAngle,
    ConstantOrientation,
    NoSlip1D,
    PointInPlane,
    PointOnLine,
    Rod,
    Weld,
)

__all__ = [
    "Ball", "ConstantAcceleration", "ConstantAngle", "ConstantCoordinate", "ConstantOrientation", "ConstantSpeed",
    "ConstrainedKinematics", "ConstraintType", "CoordinateCoupler", "NoSlip1D", "PointInPlane", "PointOnLine",
    "PrescribedMotion", "Rod", "SpeedCoupler", "Weld", "Custom", "LineOnLineContact", "PointOnPlaneContact",
    "SphereOnPlaneContact", "SphereOnSphereContact",
]
