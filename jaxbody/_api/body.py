"""Body kinds (with their contact surfaces) and host-side validation of construction frames."""

from __future__ import annotations

import numpy as np

from jaxbody._api.contact_surface import ContactSurface
from jaxbody._math.inertia import Inertia, MassProperties
from jaxbody._math.spatial import Rotation, Transform
from jaxbody._math.validity import first_failure, message, rotation_failures, vector_failures
from jaxbody.errors import InvalidArgument


class Body:
    """Simbody's Body kinds: ``Body.Rigid(mass_properties)`` and ``Body.Massless()``, with the contact surfaces
    fixed on them (``add_contact_surface``)."""

    def __init__(self, mass_properties: MassProperties):
        if not isinstance(mass_properties, MassProperties):
            raise InvalidArgument(f"Body needs a jb.MassProperties, got {type(mass_properties).__name__}")
        self.mass_properties = mass_properties
        #: (R_BS (3, 3), p_BS (3,), ContactSurface) per surface, in the order added.
        self.contact_surfaces: list = []
        #: (system, mobilized body name) whose realize_topology() read the surfaces into a Model (None: not read);
        #: they are fixed then (the Model's surface indices count on this list).
        self._surfaces_read_by = None

    def add_contact_surface(self, X_BS, surface: ContactSurface) -> int:
        """Fix ``surface`` (a jb.ContactSurface) on this body at frame ``X_BS`` (jb.Transform or None); returns
        its index on the body (Simbody's Body::addContactSurface). Add surfaces before ``realize_topology()``;
        after a MobilizedBody is built use ``mobilized_body.update_body().add_contact_surface(...)``."""
        if not isinstance(surface, ContactSurface):
            raise InvalidArgument(f"add_contact_surface needs a jb.ContactSurface, got {type(surface).__name__}")
        if self._surfaces_read_by is not None:
            system, name = self._surfaces_read_by
            system._check_not_frozen(f"add a contact surface ({surface.geometry!r}) to the Body of {name!r}")
        R, p = host_transform(X_BS, "X_BS", f"contact surface {surface.geometry!r}")
        self.contact_surfaces.append((R, p, surface))
        return len(self.contact_surfaces) - 1

    def get_num_contact_surfaces(self) -> int:
        return len(self.contact_surfaces)

    def get_contact_surface(self, index: int) -> ContactSurface:
        return self.contact_surfaces[index][2]

    def copy(self) -> "Body":
        """A Body with the same mass properties and its own list of the same contact surfaces."""
        body = Body(self.mass_properties)
        body.contact_surfaces = list(self.contact_surfaces)
        return body

    @classmethod
    def Rigid(cls, mass_properties: MassProperties | None = None) -> "Body":
        """A rigid body; Simbody's default is mass 1 at the origin with unit inertia."""
        return cls(mass_properties if mass_properties is not None else MassProperties(1.0, np.zeros(3), Inertia(1.0)))

    @classmethod
    def Massless(cls) -> "Body":
        return cls(MassProperties(0.0, np.zeros(3), Inertia(0.0)))


def host_transform(X, what: str, body_name: str) -> tuple[np.ndarray, np.ndarray]:
    """Validate a Transform/Rotation/None given at construction (a proper rotation, finite numbers); return numpy
    (R, p). Errors read ``"{body_name}: {what} ..."`` (``"{what} ..."`` for an empty ``body_name``)."""
    prefix = f"{body_name}: " if body_name else ""
    if X is None:
        return np.eye(3), np.zeros(3)
    if isinstance(X, Rotation):
        X = Transform(X)
    if not isinstance(X, Transform):
        raise InvalidArgument(f"{prefix}{what} must be a jb.Transform, got {type(X).__name__}")
    R_given, p_given = np.asarray(X.R), np.asarray(X.p)
    if R_given.shape != (3, 3) or p_given.shape != (3,):
        raise InvalidArgument(f"{prefix}{what} must hold a 3x3 rotation and a 3-vector, got {R_given.shape}, "
                              f"{p_given.shape}")
    # Checked at the precision it was given in (a Transform composed in float32, JAX's default, is orthonormal to
    # float32's tolerance, not float64's), then kept as float64 numpy.
    failed = first_failure({**rotation_failures(R_given), **vector_failures(p_given)})
    if failed:
        raise InvalidArgument(prefix + message(failed[0], what, R_given))
    return np.asarray(R_given, dtype=float), np.asarray(p_given, dtype=float)
