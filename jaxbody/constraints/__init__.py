"""Constraint types, one family per module. See base.py for the batched interface."""

from .base import ConstrainedKinematics, ConstraintType
from .contact import LineOnLineContact, PointOnPlaneContact, SphereOnPlaneContact, SphereOnSphereContact
from .coordinate import (
    ConstantAcceleration,
    ConstantCoordinate,
    ConstantSpeed,
    CoordinateCoupler,
    PrescribedMotion,
    SpeedCoupler,
)
from .custom import Custom
from .geometric import Ball, ConstantAngle, ConstantOrientation, NoSlip1D, PointInPlane, PointOnLine, Rod, Weld

__all__ = [
    "Ball", "ConstantAcceleration", "ConstantAngle", "ConstantCoordinate", "ConstantOrientation", "ConstantSpeed",
    "ConstrainedKinematics", "ConstraintType", "CoordinateCoupler", "NoSlip1D", "PointInPlane", "PointOnLine",
    "PrescribedMotion", "Rod", "SpeedCoupler", "Weld", "Custom", "LineOnLineContact", "PointOnPlaneContact",
    "SphereOnPlaneContact", "SphereOnSphereContact",
]
