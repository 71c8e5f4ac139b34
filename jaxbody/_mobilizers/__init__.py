"""Mobilizer types, one per module. See base.py for the batched interface."""

from jaxbody._mobilizers.ball import Ball
from jaxbody._mobilizers.base import Mobilizer
from jaxbody._mobilizers.bend_stretch import BendStretch
from jaxbody._mobilizers.bushing import Bushing
from jaxbody._mobilizers.cantilever_free_beam import CantileverFreeBeam
from jaxbody._mobilizers.custom import Custom, validate_custom
from jaxbody._mobilizers.cylinder import Cylinder
from jaxbody._mobilizers.ellipsoid import Ellipsoid
from jaxbody._mobilizers.free import Free
from jaxbody._mobilizers.free_line import FreeLine
from jaxbody._mobilizers.function_based import (
    FunctionBased,
    FunctionBasedTransform,
    function_based,
)
from jaxbody._mobilizers.gimbal import Gimbal
from jaxbody._mobilizers.line_orientation import LineOrientation
from jaxbody._mobilizers.pin import Pin
from jaxbody._mobilizers.planar import Planar
from jaxbody._mobilizers.reversed import Reversed, reversed_mobilizer
from jaxbody._mobilizers.screw import Screw
from jaxbody._mobilizers.slider import Slider
from jaxbody._mobilizers.spherical_coords import SphericalCoords
from jaxbody._mobilizers.translation import Translation
from jaxbody._mobilizers.universal import Universal
from jaxbody._mobilizers.weld import Weld

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
