"""Shape aliases used in kernel signatures, and the Stage enum shared by every module.

The aliases are jaxtyping annotations (documentation; not checked at run time). Per-body arrays have
``nbodies`` rows, Ground first; spatial vectors are (angular, linear) at body origins, in Ground.
"""

from __future__ import annotations

import enum

from jaxtyping import Array, Float

SpatialVec = Float[Array, "... 2 3"]
Mobilities = Float[Array, "nu"]
Coordinates = Float[Array, "nq"]
BodySpatialVecs = Float[Array, "nbodies 2 3"]
BodySpatialMats = Float[Array, "nbodies 6 6"]


class Stage(enum.IntEnum):
    """Simbody's realization stages, in order. Later stages need every earlier one."""

    Topology = 0
    Model = 1
    Instance = 2
    Time = 3
    Position = 4
    Velocity = 5
    Dynamics = 6
    Acceleration = 7
    Report = 8
