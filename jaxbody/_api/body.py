"""Body kinds and host-side validation of construction frames."""

from __future__ import annotations

import numpy as np

from jaxbody._math.inertia import Inertia, MassProperties
from jaxbody._math.spatial import Rotation, Transform
from jaxbody._math.validity import first_failure, message, rotation_failures, vector_failures
from jaxbody.errors import InvalidArgument


class Body:
    """Simbody's Body kinds: ``Body.Rigid(mass_properties)`` and ``Body.Massless()``."""

    def __init__(self, mass_properties: MassProperties):
        if not isinstance(mass_properties, MassProperties):
            raise InvalidArgument(f"Body needs a jb.MassProperties, got {type(mass_properties).__name__}")
        self.mass_properties = mass_properties

    @classmethod
    def Rigid(cls, mass_properties: MassProperties | None = None) -> "Body":
        """A rigid body; Simbody's default is mass 1 at the origin with unit inertia."""
        return cls(mass_properties if mass_properties is not None else MassProperties(1.0, np.zeros(3), Inertia(1.0)))

    @classmethod
    def Massless(cls) -> "Body":
        return cls(MassProperties(0.0, np.zeros(3), Inertia(0.0)))


def host_transform(X, what: str, body_name: str) -> tuple[np.ndarray, np.ndarray]:
    """Validate a Transform/Rotation/None given at construction; return numpy (R, p)."""
    if X is None:
        return np.eye(3), np.zeros(3)
    if isinstance(X, Rotation):
        X = Transform(X)
    if not isinstance(X, Transform):
        raise InvalidArgument(f"{body_name}: {what} must be a jb.Transform, got {type(X).__name__}")
    R = np.asarray(X.R, dtype=float)
    p = np.asarray(X.p, dtype=float)
    if R.shape != (3, 3) or p.shape != (3,):
        raise InvalidArgument(f"{body_name}: {what} must hold a 3x3 rotation and a 3-vector, got {R.shape}, {p.shape}")
    failed = first_failure({**rotation_failures(R), **vector_failures(p)})
    if failed:
        raise InvalidArgument(f"{body_name}: " + message(failed[0], what, R))
    return R, p
