"""Mixin for MobilizedBody and Constraint handles: Simbody's subsystem-membership queries.

A jaxbody handle is created inside its matter subsystem (there are no empty
handles), so ``is_in_subsystem`` is always True; two handles are "the same"
when they are one object (Simbody's isSameMobilizedBody compares
implementation pointers).
"""

from __future__ import annotations


class HandleMembership:
    """Needs the handle's ``matter``."""

    def get_matter_subsystem(self):
        """The SimbodyMatterSubsystem this handle belongs to."""
        return self.matter

    def is_in_subsystem(self) -> bool:
        """Always True: handles are created by their matter subsystem."""
        return self.matter is not None

    def is_in_same_subsystem(self, other) -> bool:
        """Whether ``other`` (a MobilizedBody or Constraint) belongs to the same matter subsystem object."""
        return getattr(other, "matter", None) is self.matter


__all__ = ["HandleMembership"]
