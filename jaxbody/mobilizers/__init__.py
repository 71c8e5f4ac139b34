"""Mobilizer types, one per module. See base.py for the batched interface."""

from .ball import Ball
from .base import Mobilizer
from .custom import Custom, validate_custom
from .cylinder import Cylinder
from .ellipsoid import Ellipsoid
from .free import Free
from .function_based import FunctionBased, FunctionBasedTransform, function_based
from .gimbal import Gimbal
from .pin import Pin
from .planar import Planar
from .reversed import Reversed, reversed_mobilizer
from .screw import Screw
from .slider import Slider
from .translation import Translation
from .universal import Universal
from .weld import Weld

#: Every built-in type, by Simbody name.
BUILTIN = {
    cls.simbody_name: cls
    for cls in (Pin, Slider, Universal, Cylinder, Screw, Planar, Gimbal, Ball, Translation, Free, Ellipsoid, Weld)
}


__all__ = [
    "Mobilizer", "Ball", "Cylinder", "Ellipsoid", "Free", "Gimbal", "Pin", "Planar", "Screw",
    "Slider", "Translation", "Universal", "Weld", "Reversed", "reversed_mobilizer", "Custom", "validate_custom",
    "FunctionBased", "FunctionBasedTransform", "function_based", "BUILTIN",
]
