"""MobilizedBody mixin: subsystem membership, the topology-stage frames (Simbody's setDefaultInboardFrame,
setDefaultOutboardFrame) and armature, host-side, before ``realize_topology()``.

Simbody's per-State ``setInboardFrame``/``setOutboardFrame`` have no handle form here: the frames of a
realized Model are parameters (``model.parameters.X_PF``, ``X_BM``), changed with ``jb.replace_parameters``.
"""

from __future__ import annotations

import numpy as np

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

    def set_default_armature(self, armature):
        """Rotor inertia on each of this mobilizer's mobilities (a number, or one per mobility: kg m^2 on a
        rotational mobility, kg on a translational one), added to the mass matrix's diagonal:
        ``M = J^T Mk J + diag(armature)`` (MuJoCo's and Pinocchio's ``armature``; Simbody has none). Before
        ``realize_topology()``; the Model carries it as ``model.parameters.armature`` (nu,), a leaf you can
        sweep or differentiate (``jb.replace_parameters(model, armature=...)``). Default 0.

        Armature resists the rate of change of the mobility's own speed u, so it depends on the coordinates:
        a Free mobilizer's u is (w, v) in Ground, as MuJoCo's free joint, while Pinocchio's free flyer measures
        v in the body frame (the same on the angular mobilities, different on the linear ones). It exerts no
        reaction on the parent body (as in MuJoCo and Pinocchio) and counts in the kinetic energy (1/2 a u^2).
        """
        self.matter.system._check_not_frozen(f"set the armature of {self.name}")
        nu = self.armature.shape[0]
        values = np.broadcast_to(np.asarray(armature, dtype=float), (nu,)) if np.ndim(armature) == 0 else \
            np.asarray(armature, dtype=float)
        if values.shape != (nu,) or not np.all(np.isfinite(values)) or np.any(values < 0):
            raise InvalidArgument(f"{self.name}: armature must be a finite number >= 0 or {nu} of them (one per "
                                  f"mobility), got {armature!r}")
        self.armature = values.copy()
        return self

    def get_default_armature(self) -> np.ndarray:
        """The armature set with ``set_default_armature`` (nu_b,), zeros by default."""
        return self.armature.copy()


__all__ = ["MobilizedBodyBookkeeping"]
