"""MultibodySystem mixin: Simbody's System bookkeeping (name, version, subsystems).

Simbody numbers a system's subsystems by SubsystemIndex in the order they were
adopted, with a DefaultSystemSubsystem (Simbody's internal holder of events and
global state) at index 0. jaxbody has no default subsystem: index 0 is the
SimbodyMatterSubsystem and the GeneralForceSubsystems follow in creation order.
"""

from __future__ import annotations

from jaxbody._api.arguments import integer
from jaxbody.errors import InvalidArgument

#: Simbody's MultibodySystem name and version strings (MultibodySystemRep's System::Guts arguments).
DEFAULT_NAME = "MultibodySystem"
VERSION = "0.0.1"


class SystemBookkeeping:
    """Mixed into MultibodySystem; needs its ``_matter`` and ``_force_subsystems``."""

    _name: str = DEFAULT_NAME

    def get_name(self) -> str:
        """The system's name (arbitrary; default "MultibodySystem", as Simbody's)."""
        return self._name

    def set_name(self, name: str):
        """Rename the system (a label only: it changes no Model and may be called at any time)."""
        if not isinstance(name, str):
            raise InvalidArgument(f"a system name must be a str, got {type(name).__name__}")
        self._name = name
        return self

    def get_version(self) -> str:
        """Simbody's MultibodySystem version string, "0.0.1"."""
        return VERSION

    def _subsystems(self) -> list:
        return ([] if self._matter is None else [self._matter]) + list(self._force_subsystems)

    def get_num_subsystems(self) -> int:
        """The matter subsystem (if any) plus every force subsystem."""
        return len(self._subsystems())

    def get_subsystem(self, index: int):
        """Subsystem ``index``: 0 is the SimbodyMatterSubsystem, then the force subsystems in creation order."""
        subsystems = self._subsystems()
        i = integer(index, "subsystem index")
        if not 0 <= i < len(subsystems):
            raise InvalidArgument(f"subsystem index {i} out of range 0..{len(subsystems) - 1}")
        return subsystems[i]

    def is_same_system(self, other) -> bool:
        """Whether ``other`` is this very system object (Simbody's isSameSystem)."""
        return other is self


__all__ = ["SystemBookkeeping"]
