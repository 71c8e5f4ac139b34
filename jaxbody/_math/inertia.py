"""Mass properties as Simbody defines them, validated on the host.

Simbody's ``MassProperties(m, com, inertia)`` takes the inertia **about the
body origin Bo**, expressed in the body frame B (not about the mass center).
``Inertia(xx, yy, zz, xy, xz, yz)`` takes matrix elements: the matrix is
``[[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]`` so products of inertia carry
their minus sign already.

These classes are host-side construction values (numpy float64). The model
stores them as array leaves; traced code works on those arrays.
"""

from __future__ import annotations

import numpy as np

from jaxbody._math.validity import first_failure, inertia_failures, mass_failures, message
from jaxbody.errors import InvalidArgument, InvalidInertia


def _vec3(x, what):
    a = np.asarray(x, dtype=float)
    if a.shape != (3,):
        raise InvalidArgument(f"{what} must have 3 elements, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise InvalidArgument(f"{what} must be finite, got {a}")
    return a


def check_inertia_matrix(I, what="inertia"):
    """Raise InvalidInertia unless I is symmetric, PSD-diagonal and obeys the triangle inequalities."""
    I = np.asarray(I, dtype=float)
    failed = ("inertia finite", ()) if I.shape != (3, 3) else first_failure(inertia_failures(I))
    if failed:
        raise InvalidInertia(message(failed[0], what, I))
    return I


def only_triangle_fails(I) -> bool:
    """True when the first of ``check_inertia_matrix``'s checks that a (3, 3) inertia fails is the triangle
    inequality of its principal moments: an inertia OpenSim and Pinocchio load as written (the importers' tolerant
    mode), unlike a non-finite, asymmetric or negative one."""
    I = np.asarray(I, dtype=float)
    failed = first_failure(inertia_failures(I)) if I.shape == (3, 3) else None
    return bool(failed) and failed[0] == "triangle"


class Inertia:
    """Rotational inertia matrix from Simbody's six matrix elements (kg m^2).

    ``Inertia(xx, yy, zz, xy=0, xz=0, yz=0)``; ``Inertia(moment)`` for a
    scalar (``moment * I``) and ``Inertia([xx, yy, zz])`` for principal
    moments are accepted as in Simbody.
    """

    def __init__(self, xx, yy=None, zz=None, xy=0.0, xz=0.0, yz=0.0):
        if yy is None and zz is None:
            a = np.asarray(xx, dtype=float)
            xx, yy, zz = (a, a, a) if a.ndim == 0 else _vec3(a, "Inertia moments")
        m = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)
        self.matrix = check_inertia_matrix(m)

    @classmethod
    def from_matrix(cls, I):
        I = check_inertia_matrix(I)
        return cls(I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2])

    @staticmethod
    def point_mass_inertia(mass, p):
        """Inertia about the origin of a point mass at p: ``m (|p|^2 1 - p p^T)``."""
        p = _vec3(p, "point")
        return mass * (np.dot(p, p) * np.eye(3) - np.outer(p, p))

    def shift_from_mass_center(self, p, mass) -> "Inertia":
        """Simbody's shiftFromMassCenter: self is the central inertia; return it about a point O.

        ``p`` is the mass center measured from O (``p_OBc``); the result is
        ``I_c + m (|p|^2 1 - p p^T)``.
        """
        return Inertia.from_matrix(self.matrix + self.point_mass_inertia(mass, p))

    def shift_to_mass_center(self, p, mass) -> "Inertia":
        """Inverse of shift_from_mass_center; raises InvalidInertia if the result is unphysical."""
        return Inertia.from_matrix(self.matrix - self.point_mass_inertia(mass, p))

    def as_elements(self):
        I = self.matrix
        return np.array([I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])

    def __repr__(self):
        return f"Inertia({', '.join(f'{x:g}' for x in self.as_elements())})"


class MassProperties:
    """Simbody's MassProperties: mass (kg), mass center ``p_BBc`` in B (m), inertia about Bo in B.

    Raises InvalidInertia for negative or non-finite mass, or when the
    inertia about the mass center implied by the arguments is unphysical.
    """

    def __init__(self, mass, com=(0.0, 0.0, 0.0), inertia=None):
        mass = float(mass)
        if first_failure(mass_failures(np.float64(mass))):
            raise InvalidInertia(message("mass", "mass", mass))
        self.mass = mass
        self.com = _vec3(com, "mass center")
        if inertia is None:
            inertia = Inertia(0.0)
        elif not isinstance(inertia, Inertia):
            inertia = Inertia.from_matrix(inertia)
        self.inertia = inertia
        central = inertia.matrix - Inertia.point_mass_inertia(mass, self.com)
        check_inertia_matrix(central, "inertia about the mass center")

    @classmethod
    def from_central_inertia(cls, mass, com, central_inertia):
        """Build from the inertia about the mass center (as OpenSim and URDF give it)."""
        if not isinstance(central_inertia, Inertia):
            central_inertia = Inertia.from_matrix(central_inertia)
        return cls(mass, com, central_inertia.shift_from_mass_center(com, mass))

    @classmethod
    def unchecked_from_central_inertia(cls, mass, com, central_matrix) -> "MassProperties":
        """From a central inertia matrix (3, 3) without the physical checks (finite values only): for importers
        whose engine accepts an inertia that violates the triangle inequality (OpenSim). Simbody's dynamics
        need no such inequality; only a Model built this way fails ``jb.check_parameters``."""
        mass, com = float(mass), _vec3(com, "mass center")
        central = np.asarray(central_matrix, dtype=float)
        if not (np.isfinite(mass) and mass >= 0 and central.shape == (3, 3) and np.all(np.isfinite(central))):
            raise InvalidInertia(f"mass {mass} and inertia {central.tolist()} must be finite (mass >= 0)")
        self = cls.__new__(cls)
        self.mass, self.com = mass, com
        self.inertia = Inertia.__new__(Inertia)
        self.inertia.matrix = central + Inertia.point_mass_inertia(mass, com)
        return self

    def __repr__(self):
        return f"MassProperties(mass={self.mass:g}, com={self.com.tolist()}, inertia={self.inertia!r})"
