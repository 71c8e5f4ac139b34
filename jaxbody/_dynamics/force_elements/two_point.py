"""Elements acting along the line between two stations (catalogue 5): Simbody's TwoPointLinearSpring,
TwoPointLinearDamper and TwoPointConstantForce.

Notation: station s_i (in B_i) on body i, ``p_i = p_GBi + R_GBi s_i``, ``r = p2 - p1``, ``d = |r|``,
``e = r / d``. Every element is gradient-safe at d = 0 (e is then 0).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.forces import (
    ForceElement,
    no_mobility_forces,
    safe_direction,
    station_force,
    station_location,
    station_velocity,
)


class _TwoPoint(ForceElement):
    """Stations station1 (in body1) and station2 (in body2), the common part of the two-point elements."""

    groupable = True
    index_fields = ("body1", "body2")

    body1: int = eqx.field(static=True)
    body2: int = eqx.field(static=True)
    station1: jnp.ndarray
    station2: jnp.ndarray

    def _line(self, pos):
        """(e, d): unit vector from S1 to S2 and the distance (m)."""
        return safe_direction(station_location(pos, self.body2, self.station2) - station_location(pos, self.body1, self.station1))

    def _apply(self, model, state, f1):
        """Body forces of ``f1`` (in G) on S1 and ``-f1`` on S2."""
        R, nb = state.position.R_GB, model.topology.nbodies
        return station_force(nb, self.body1, R, self.station1, f1) + station_force(nb, self.body2, R, self.station2, -f1)


class TwoPointLinearSpring(_TwoPoint):
    """``f1 = k (d - x0) e`` on S1 and ``-f1`` on S2; PE ``k (d - x0)^2 / 2``. stiffness k (N/m), rest_length x0 (m).

    Needs Position.
    """

    stiffness: jnp.ndarray
    rest_length: jnp.ndarray

    def calc(self, model, state):
        e, d = self._line(state.position)
        stretch = d - self.rest_length
        F = self._apply(model, state, self.stiffness * stretch * e)
        return F, no_mobility_forces(model, F.dtype), 0.5 * self.stiffness * stretch * stretch


class TwoPointLinearDamper(_TwoPoint):
    """``f1 = c ((v2 - v1) . e) e`` on S1 and ``-f1`` on S2 (v_i the stations' velocities in G); no PE.

    damping c (N s/m). Needs Velocity.
    """

    damping: jnp.ndarray

    def calc(self, model, state):
        pos, vel = state.position, state.velocity
        e, _ = self._line(pos)
        v = station_velocity(pos, vel, self.body2, self.station2) - station_velocity(pos, vel, self.body1, self.station1)
        F = self._apply(model, state, self.damping * jnp.dot(v, e) * e)
        return F, no_mobility_forces(model, F.dtype), jnp.zeros((), F.dtype)


class TwoPointConstantForce(_TwoPoint):
    """``f e`` on S2 and ``-f e`` on S1 (positive f pushes the stations apart); no PE. force f (N). Needs Position."""

    force: jnp.ndarray

    def calc(self, model, state):
        e, _ = self._line(state.position)
        F = self._apply(model, state, -self.force * e)
        return F, no_mobility_forces(model, F.dtype), jnp.zeros((), F.dtype)
