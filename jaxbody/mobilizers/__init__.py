"""Mobilizer types, one per module. See base.py for the batched interface."""

from .ball import Ball
from .base import Mobilizer
from .bend_stretch import BendStretch
from .bushing import Bushing
from .cantilever_free_beam import CantileverFreeBeam
from .cylinder import Cylinder
from .ellipsoid import Ellipsoid
from .free import Free
from .free_line import FreeLine
from .gimbal import Gimbal
from .line_orientation import LineOrientation
from .pin import Pin
from .planar import Planar
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


def reversed_mobilizer(mobilizer: Mobilizer, name: str) -> Mobilizer:
    """The mobilizer with q and u defined child->parent (Simbody's Direction::Reverse)."""
    from ..errors import InvalidArgument

    raise InvalidArgument(f"{name}: reversed mobilizers are not available in this version")


__all__ = [
    "Mobilizer", "Ball", "Cylinder", "Ellipsoid", "Free", "Gimbal", "Pin", "Planar", "Screw",
    "Slider", "Translation", "Universal", "Weld", "BendStretch", "SphericalCoords", "LineOrientation", "FreeLine",
    "Bushing", "CantileverFreeBeam", "BUILTIN",
]
