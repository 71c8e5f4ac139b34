"""OpenSim 4.6's ``PathSpring`` and ``PathActuator``: a tension along a path (``Path.calc_tension_forces``).

* PathSpring: ``T = stiffness * max(0, L - resting_length) * (1 + dissipation * dL/dt)`` (PathSpring::getTension;
  N/m, m, s/m). Stage: Velocity.
* PathActuator: ``T = optimal_force * control`` (PathActuator::computeActuation; negative pushes), one control.
  Stage: Velocity (the control).

Cost: the path's length (and speed), one reverse-mode pass of its geometry.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbody._dynamics.forces import ForceElement
from jaxbody._dynamics.paths.base import Path


class PathSpring(ForceElement):
    """A spring along ``path``: resting_length (m), stiffness (N/m), dissipation (s/m)."""

    path: Path
    resting_length: jax.Array
    stiffness: jax.Array
    dissipation: jax.Array

    def calc_tension(self, model, state):
        """The tension (N). Needs Velocity."""
        stretch = jnp.maximum(self.path.calc_length(model, state) - self.resting_length, 0.0)
        return self.stiffness * stretch * (1.0 + self.dissipation * self.path.calc_lengthening_speed(model, state))

    def calc(self, model, state):
        F, f = self.path.calc_tension_forces(model, state, self.calc_tension(model, state))
        return F, f, jnp.zeros((), F.dtype)


class PathActuator(ForceElement):
    """An actuator along ``path``: tension ``optimal_force (N) * State.controls[first_control]``."""

    path: Path
    optimal_force: jax.Array
    first_control: int = eqx.field(static=True, default=-1)

    def num_controls(self) -> int:
        return 1

    def calc_tension(self, model, state):
        """The tension (N)."""
        return self.optimal_force * state.controls[self.first_control]

    def calc(self, model, state):
        F, f = self.path.calc_tension_forces(model, state, self.calc_tension(model, state))
        return F, f, jnp.zeros((), F.dtype)
