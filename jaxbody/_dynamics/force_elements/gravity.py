"""Gravity elements: Simbody's Force::Gravity and Force::UniformGravity (catalogue 5).

Both apply ``m g`` at every body's mass center. Their parameters (direction, magnitude, zero height, the
per-body exclusion mask) are array leaves of the Model, so changing one (``jb.Force`` handles' setters
return a new Model) never recompiles; Simbody keeps them in the State instead.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._dynamics.forces import ForceElement, no_mobility_forces


def _weight_forces(pos, weights_G):
    """Body forces (nbodies, 2, 3) at Bo of the weights (nbodies, 3) acting at the mass centers."""
    c_G = pos.p_GBc - pos.p_GB
    return jnp.stack([jnp.cross(c_G, weights_G), weights_G], -2)


class UniformGravity(ForceElement):
    """``F_B = [(R_GB c_B) x m g ; m g]`` on every body; PE ``-sum m (g . p_GBc + zero_height)``.

    Simbody's formula, quirk included: the zero height enters as ``m h0``, not ``m |g| h0`` (catalogue 5).
    gravity: (3,) m/s^2 in G. zero_height: scalar (see the quirk). Needs Position.
    """

    groupable = True

    gravity: jnp.ndarray
    zero_height: jnp.ndarray

    def calc(self, model, state):
        pos = state.position
        m = model.parameters.mass
        F = _weight_forces(pos, self.calc_weights(model))
        pe = -jnp.sum(m * (pos.p_GBc @ self.gravity + self.zero_height))
        return F, no_mobility_forces(model, F.dtype), pe

    def calc_weights(self, model):
        """Weights m g (nbodies, 3) in N, in G, acting at the mass centers (needs no stage)."""
        return model.parameters.mass[:, None] * self.gravity


class Gravity(ForceElement):
    """Simbody's Force::Gravity: ``f = m g d`` at each included body's mass center; PE ``sum m g (-d . p_GBc - h0)``.

    down: (3,) unit direction in G. magnitude: g (m/s^2). zero_height: h0 (m). included: (nbodies,) 1.0 for
    bodies gravity acts on, 0.0 for bodies excluded with ``set_body_is_excluded`` (Ground always 0).
    Needs Position.
    """

    groupable = True

    down: jnp.ndarray
    magnitude: jnp.ndarray
    zero_height: jnp.ndarray
    included: jnp.ndarray

    def calc(self, model, state):
        pos = state.position
        m = model.parameters.mass * self.included
        F = _weight_forces(pos, self.calc_weights(model))
        pe = jnp.sum(m * self.magnitude * (-(pos.p_GBc @ self.down) - self.zero_height))
        return F, no_mobility_forces(model, F.dtype), pe

    def calc_weights(self, model):
        """Weights m g d (nbodies, 3) in N, in G, acting at the mass centers; zero on excluded bodies."""
        return (model.parameters.mass * self.included)[:, None] * (self.magnitude * self.down)
