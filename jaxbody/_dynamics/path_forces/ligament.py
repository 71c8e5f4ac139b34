"""OpenSim 4.6's ``Ligament``: a passive tension along its path,
``T = pcsa_force * force_length_curve(L / resting_length)`` when the path length ``L > resting_length``,
0 otherwise (Ligament::getTension), applied as the path's tension forces (``Path.calc_tension_forces``).

The curve is a SimmSpline whose knots are Model leaves (``muscles.simm_spline.SimmSplineCurve``); it is not
clamped (OpenSim does not clamp it). Stage: Position. Cost: the path's length and one reverse-mode pass of its
geometry, plus one spline evaluation.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._dynamics.forces import ForceElement
from jaxbody._dynamics.muscles.simm_spline import SimmSplineCurve
from jaxbody._dynamics.paths.base import Path


class Ligament(ForceElement):
    """A ligament on ``path``: resting length (m), pcsa_force (N) and normalized force-length curve."""

    path: Path
    resting_length: jax.Array
    pcsa_force: jax.Array
    force_length_curve: SimmSplineCurve

    def calc_tension(self, model, state):
        """The tension (N, >= 0 pulls the path's ends together). Needs Position."""
        length = self.path.calc_length(model, state)
        stretched = length > self.resting_length
        ratio = jnp.where(stretched, length / self.resting_length, 1.0)
        return jnp.where(stretched, self.pcsa_force * self.force_length_curve(ratio), 0.0)

    def calc(self, model, state):
        F, f = self.path.calc_tension_forces(model, state, self.calc_tension(model, state))
        return F, f, jnp.zeros((), F.dtype)
