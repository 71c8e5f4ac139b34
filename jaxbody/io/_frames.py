"""Host-side frame helpers shared by the importers (numpy, float64)."""

from __future__ import annotations

import numpy as np

from jaxbody._math.inertia import Inertia, MassProperties


def rotation_taking(axis_from, axis_to) -> np.ndarray:
    """A rotation R with ``R @ axis_from = axis_to`` (unit vectors); the identity when they agree.

    Used to put a file's joint axis on Simbody's Pin/Planar z or Slider x: X_PF = X_PJ R, X_BM = R.
    """
    a, b = np.asarray(axis_from, dtype=float), np.asarray(axis_to, dtype=float)
    c = float(np.dot(a, b))
    v = np.cross(a, b)
    s = float(np.linalg.norm(v))
    if s < 1e-14:
        if c > 0:
            return np.eye(3)
        n = np.cross(a, [1.0, 0.0, 0.0] if abs(a[0]) < 0.9 else [0.0, 1.0, 0.0])  # half turn about a normal
        n /= np.linalg.norm(n)
        return 2.0 * np.outer(n, n) - np.eye(3)
    k = v / s
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + s * K + (1.0 - c) * K @ K


def quaternion_matrix(quat) -> np.ndarray:
    """Rotation matrix of a quaternion (w, x, y, z), normalized first."""
    w, x, y, z = np.asarray(quat, dtype=float) / np.linalg.norm(quat)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


class MassAccumulator:
    """Sums rigid pieces given in a body frame B into one MassProperties about Bo (Simbody's convention)."""

    def __init__(self):
        self.mass, self.first_moment, self.I_o = 0.0, np.zeros(3), np.zeros((3, 3))

    def add(self, mass, com_B, central_B):
        """A piece of ``mass`` (kg) with mass center com_B and inertia about it central_B (B's axes)."""
        com_B = np.asarray(com_B, dtype=float)
        self.mass += mass
        self.first_moment += mass * com_B
        self.I_o += np.asarray(central_B, dtype=float) + mass * (com_B @ com_B * np.eye(3) - np.outer(com_B, com_B))

    def mass_properties(self, checked: bool = True) -> MassProperties:
        """The pieces as one MassProperties about Bo; ``checked=False`` skips the physical-validity checks
        (MassProperties.unchecked_from_central_inertia: for an inertia the file's engine accepts as written)."""
        com = self.first_moment / self.mass if self.mass > 0 else np.zeros(3)
        I_o = 0.5 * (self.I_o + self.I_o.T)
        if not checked:
            return MassProperties.unchecked_from_central_inertia(
                self.mass, com, I_o - self.mass * (com @ com * np.eye(3) - np.outer(com, com)))
        return MassProperties(self.mass, com, Inertia.from_matrix(I_o))


def up_direction_against(gravity) -> str | None:
    """The Ground axis opposite ``gravity`` (3,) as Simbody's up-direction text ("+z", "-y", ...), or None when
    gravity is zero or not along a coordinate axis (then the System keeps its default, +y)."""
    g = np.asarray(gravity, dtype=float)
    axis = int(np.argmax(np.abs(g)))
    if g[axis] == 0.0 or np.count_nonzero(g) != 1:
        return None
    return ("-" if g[axis] > 0 else "+") + "xyz"[axis]
