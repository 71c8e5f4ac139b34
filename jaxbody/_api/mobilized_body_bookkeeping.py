"""MobilizedBody mixin: subsystem membership and the topology-stage frames (Simbody's setDefaultInboardFrame,
setDefaultOutboardFrame), host-side, before ``realize_topology()``.

Simbody's per-State ``setInboardFrame``/``setOutboardFrame`` have no handle form here: the frames of a
realized Model are parameters (``model.parameters.X_PF``, ``X_BM``), changed with ``jb.replace_parameters``.
"""

from __future__ import annotations

from jaxbody._api.body import host_transform
from jaxbody._api.handle_membership import HandleMembership
from jaxbody.errors import InvalidArgument


class MobilizedBodyBookkeeping(HandleMembership):
    """Needs MobilizedBody's ``matter``, ``name``, ``X_PF``, ``X_BM`` and ``is_ground``."""

    def is_same_mobilized_body(self, other) -> bool:
        """Whether ``other`` is this very handle."""
        return other is self

    def _check_frame_change(self, what):
        self.matter.system._check_not_frozen(f"set the default {what} frame of {self.name}")
        if self.is_ground():
            raise InvalidArgument(f"Ground has no {what} frame")

    def set_default_inboard_frame(self, X_PF):
        """Replace the mobilizer's inboard frame F on the parent (a jb.Transform, m), before realize_topology."""
        self._check_frame_change("inboard")
        self.X_PF = host_transform(X_PF, "X_PF", self.name)
        return self

    def set_default_outboard_frame(self, X_BM):
        """Replace the mobilizer's outboard frame M on this body (a jb.Transform, m), before realize_topology."""
        self._check_frame_change("outboard")
        self.X_BM = host_transform(X_BM, "X_BM", self.name)
        return self


__all__ = ["MobilizedBodyBookkeeping"]
