"""``jb.TendonArmature``: MuJoCo's tendon armature on a system's matter (jaxbody._dynamics.tendon_armature).

A tendon's armature is a rotor inertia a (>= 0) moving with the tendon's length L: kinetic energy ``a Ldot^2 / 2``,
so M gains ``a J^T J`` (J = dL/du). ``Spatial`` takes the tendon as straight segments through body-fixed
stations (an MJCF spatial tendon through sites), ``Fixed`` as ``L = sum_i c_i q_i`` (an MJCF fixed tendon),
``OnPath`` any jaxbody path (e.g. an MJCF spatial tendon with pulleys, jaxbody._dynamics.paths.mujoco_wrap).
Validated on the host (InvalidArgument naming the tendon); the path's stations or coefficients and the armature
are Model leaves (``model.tendon_armatures[k]``, k the index these builders return). Constraints see the
armature: the constrained solve uses ``(M + J^T A J)^-1``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.mobilized_body import MobilizedBody
from jaxbody._dynamics.paths.base import Path
from jaxbody._dynamics.paths.tendon_paths import CoordinatePath, StationPath
from jaxbody._dynamics.tendon_armature import TendonArmature as TendonArmatureElement
from jaxbody.errors import InvalidArgument


class _Builder:
    """One tendon armature as the matter keeps it until ``realize_topology()``."""

    def __init__(self, name, path, armature):
        self.name, self._path, self._armature = name, path, armature

    def build(self) -> TendonArmatureElement:
        return TendonArmatureElement(path=self._path, armature=jnp.asarray(self._armature), name=self.name)


class TendonArmature:
    """Builders of tendon armature (module doc)."""

    @staticmethod
    def Spatial(matter, name: str, armature, points) -> int:
        """Armature ``armature`` (kg) on the length of straight segments through ``points``, a sequence of at
        least two ``(mobod, station)`` (station (3,) in m, in the body's frame). Returns the tendon's index in
        ``model.tendon_armatures``."""
        label = _check(matter, name, armature)
        if len(points) < 2:
            raise InvalidArgument(f"{label}: a spatial tendon needs at least two points, got {len(points)}")
        for k, (mobod, station) in enumerate(points):
            _check_mobod(matter, mobod, f"{label}: point {k}")
            if np.shape(station) != (3,) or not np.all(np.isfinite(station)):
                raise InvalidArgument(f"{label}: point {k}'s station must be 3 finite numbers, got {station!r}")
        path = StationPath(bodies=tuple(m.index for m, _ in points),
                           stations=jnp.asarray(np.array([s for _, s in points], dtype=float)))
        return _add(matter, _Builder(name, path, float(armature)))

    @staticmethod
    def OnPath(matter, name: str, armature, path) -> int:
        """Armature ``armature`` on the length of ``path``, any jaxbody path (a
        ``jaxbody._dynamics.paths.base.Path``, e.g. an MJCF spatial tendon with pulleys). Returns the tendon's
        index in ``model.tendon_armatures``."""
        label = _check(matter, name, armature)
        if not isinstance(path, Path):
            raise InvalidArgument(f"{label}: path must be a jaxbody Path, got {type(path).__name__}")
        return _add(matter, _Builder(name, path, float(armature)))

    @staticmethod
    def Fixed(matter, name: str, armature, coordinates) -> int:
        """Armature ``armature`` on ``L = sum_i c_i q_i`` over ``coordinates``, a sequence of ``(mobod, which_q,
        c_i)`` (which_q < the body's number of q). Returns the tendon's index in ``model.tendon_armatures``."""
        label = _check(matter, name, armature)
        if not coordinates:
            raise InvalidArgument(f"{label}: a fixed tendon needs at least one coordinate")
        slots, coefs = [], []
        for k, (mobod, which_q, coef) in enumerate(coordinates):
            _check_mobod(matter, mobod, f"{label}: coordinate {k}")
            if not 0 <= int(which_q) < mobod.get_num_q():
                raise InvalidArgument(f"{label}: coordinate {k}: which_q {which_q} is not a q of {mobod.name!r}")
            if not np.isfinite(coef):
                raise InvalidArgument(f"{label}: coordinate {k}: coefficient must be finite, got {coef!r}")
            slots.append(mobod.get_first_q_index() + int(which_q))
            coefs.append(float(coef))
        path = CoordinatePath(q_indices=tuple(slots), coefficients=jnp.asarray(np.array(coefs)))
        return _add(matter, _Builder(name, path, float(armature)))


def _check(matter, name, armature) -> str:
    label = f"tendon armature {name!r}"
    if not hasattr(matter, "_tendon_armatures"):
        raise InvalidArgument(f"{label}: first argument must be a jb.SimbodyMatterSubsystem, got {type(matter).__name__}")
    a = np.asarray(armature, dtype=float)
    if a.shape != () or not np.isfinite(a) or a < 0:
        raise InvalidArgument(f"{label}: armature must be a finite number >= 0, got {armature!r}")
    return label


def _check_mobod(matter, mobod, what):
    if not isinstance(mobod, MobilizedBody) or mobod.matter is not matter:
        raise InvalidArgument(f"{what} must be a jb.MobilizedBody of this matter subsystem, got {mobod!r}")


def _add(matter, builder) -> int:
    matter.system._check_not_frozen(f"add {builder.name!r}'s tendon armature")
    matter._tendon_armatures.append(builder)
    return len(matter._tendon_armatures) - 1
