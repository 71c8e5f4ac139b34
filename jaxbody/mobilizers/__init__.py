"""Mobilizer types, one per module. See base.py for the batched interface."""

from .ball import Ball
from .base import Mobilizer
from .bend_stretch import BendStretch
from .bushing import Bushing
from .cantilever_free_beam import CantileverFreeBeam
from .custom import Custom, validate_custom
from .cylinder import Cylinder
from .ellipsoid import Ellipsoid
from .free import Free
from .free_line import FreeLine
from .function_based import FunctionBased, FunctionBasedTransform, function_based
from .gimbal import Gimbal
from .line_orientation import LineOrientation
from .pin import Pin
from .planar import Planar
from .reversed import Reversed, reversed_mobilizer
from .screw import Screw
from .slider import Slider
from .spherical_coords import SphericalCoords
from .translation import Translation
from .universal import Universal
from .weld import Weld

#: Every built-in type, by Simbody name.
BUILTIN = {
    cls.simbody_name: cls
    for cls in (
        Pin, Slider, Universal, Cylinder, Screw, Planar, Gimbal, Ball, Translation, Free, Ellipsoid, Weld,
        BendStretch, SphericalCoords, LineOrientation, FreeLine, Bushing, CantileverFreeBeam,
    )
}


__all__ = [
    "Mobilizer", "Ball", "Cylinder", "Ellipsoid", "Free", "Gimbal", "Pin", "Planar", "Screw",
    "Slider", "Translation", "Universal", "Weld", "BendStretch", "SphericalCoords", "LineOrientation", "FreeLine",
    "Bushing", "CantileverFreeBeam", "Reversed", "reversed_mobilizer", "Custom", "validate_custom",
    "FunctionBased", "FunctionBasedTransform", "function_based", "BUILTIN",
]
