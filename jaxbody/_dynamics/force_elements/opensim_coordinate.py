"""OpenSim's passive forces on one coordinate: SpringGeneralizedForce, CoordinateLimitForce and
ExpressionBasedCoordinateForce, each a generalized force on the coordinate's mobility (u index ``u_index``,
read at q index ``q_index``; OpenSim coordinates have qdot = u).

* SpringGeneralizedForce: ``f = -stiffness (q - rest_length) - viscosity qdot``; PE ``stiffness (q -
  rest_length)^2 / 2`` (OpenSim reports none).
* CoordinateLimitForce (OpenSim ``calcLimitForce``): with ``w`` = pi/180 for a rotational coordinate (its limits
  and transition are in degrees, stiffnesses per degree) else 1, ``q_up = w upper_limit``, ``K_up =
  upper_stiffness / w``, ``s_up`` = Simbody's Function::Step from 0 at q_up to 1 at ``q_up + w transition``
  (``3x^5``-type smooth step ``x^3 (10 - 15 x + 6 x^2)``), likewise ``s_low`` from 1 at ``q_low - w transition``
  to 0 at q_low: ``f = -K_up s_up (q - q_up) + K_low s_low (q_low - q) - (damping / w) (s_up + s_low) qdot``.
  PE is OpenSim's integral of the smoothed spring. With ``compute_dissipation_energy`` the dissipated energy
  (integral of ``(damping / w) (s_up + s_low) qdot^2``) is the element's one z variable.
* ExpressionBasedCoordinateForce: ``f = expression(q, qdot)`` in OpenSim's grammar (jaxbody._math.lepton), the
  parsed tree a static field; no PE.

Parameters are array leaves in OpenSim's units; Dynamics stage; O(1) per element.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.forces import ForceElement, mobility_force
from jaxbody._math import lepton



def smooth_step(x, x0, x1):
    """Simbody's Function::Step from 0 at x0 to 1 at x1 (x0 < x1): ``t^3 (10 - 15 t + 6 t^2)``, t clamped."""
    t = jnp.clip((x - x0) / (x1 - x0), 0.0, 1.0)
    return t * t * t * (10.0 + t * (-15.0 + 6.0 * t))


class SpringGeneralizedForce(ForceElement):
    """OpenSim SpringGeneralizedForce (module docstring): stiffness (N/m or N m/rad), rest_length (m or rad),
    viscosity (N s/m or N m s/rad)."""

    groupable = True
    index_fields = ("q_index", "u_index")

    q_index: int = eqx.field(static=True)
    u_index: int = eqx.field(static=True)
    stiffness: jnp.ndarray
    rest_length: jnp.ndarray
    viscosity: jnp.ndarray

    def calc(self, model, state):
        x = state.q[self.q_index] - self.rest_length
        F, f = mobility_force(model, self.u_index, -self.stiffness * x - self.viscosity * state.u[self.u_index])
        return F, f, 0.5 * self.stiffness * x * x


class CoordinateLimitForce(ForceElement):
    """OpenSim CoordinateLimitForce (module docstring). ``rotational`` (static): the coordinate's limits are in
    degrees. upper/lower_stiffness, upper/lower_limit, damping, transition: OpenSim's values and units."""

    groupable = True
    index_fields = ("q_index", "u_index")

    q_index: int = eqx.field(static=True)
    u_index: int = eqx.field(static=True)
    upper_stiffness: jnp.ndarray
    upper_limit: jnp.ndarray
    lower_stiffness: jnp.ndarray
    lower_limit: jnp.ndarray
    damping: jnp.ndarray
    transition: jnp.ndarray
    rotational: bool = eqx.field(static=True, default=True)
    compute_dissipation_energy: bool = eqx.field(static=True, default=False)

    def _terms(self, state):
        """(generalized force, dissipated power ``(damping / w) (s_up + s_low) qdot^2`` >= 0, potential energy)."""
        w = jnp.pi / 180.0 if self.rotational else 1.0
        q, qdot = state.q[self.q_index], state.u[self.u_index]
        q_up, q_low, width = w * self.upper_limit, w * self.lower_limit, w * self.transition
        s_up = smooth_step(q, q_up, q_up + width)
        s_low = 1.0 - smooth_step(q, q_low - width, q_low)
        k_up, k_low, c = self.upper_stiffness / w, self.lower_stiffness / w, self.damping / w
        damping = -c * (s_up + s_low) * qdot
        f = -k_up * s_up * (q - q_up) + k_low * s_low * (q_low - q) + damping
        pe = jnp.where(q > q_up, _limit_energy(k_up, q - q_up, width),
                       jnp.where(q < q_low, _limit_energy(k_low, q_low - q, width), 0.0))
        return f, -damping * qdot, pe

    def calc(self, model, state):
        return self.calc_with_z(model, state, None)

    def calc_with_z(self, model, state, z):
        f, _, pe = self._terms(state)
        F, f = mobility_force(model, self.u_index, f)
        return F, f, pe

    def num_z(self) -> int:
        return 1 if self.compute_dissipation_energy else 0

    def calc_z_dot(self, model, state, z):
        """(1,) the dissipated power (only called with compute_dissipation_energy, num_z = 1)."""
        return self._terms(state)[1][None]


def _limit_energy(K, delta, width):
    """OpenSim's CoordinateLimitForce::computePotentialEnergy past a limit by ``delta`` >= 0."""
    x = delta / width
    smooth = K * x * x * x * (2.0 - 2.5 * x + (6.0 / 7.0) * x * x) * delta * delta
    return jnp.where(delta >= width, K * ((-2.0 / 14.0) * width * width + 0.5 * delta * delta), smooth)


class ExpressionBasedCoordinateForce(ForceElement):
    """OpenSim ExpressionBasedCoordinateForce: ``f = expression(q, qdot)`` (``expression``: a static tree from
    ``jaxbody._math.lepton.parse`` over the variables ``q`` and ``qdot``)."""

    groupable = True
    index_fields = ("q_index", "u_index")

    q_index: int = eqx.field(static=True)
    u_index: int = eqx.field(static=True)
    expression: tuple = eqx.field(static=True)

    def calc(self, model, state):
        q, qdot = state.q[self.q_index], state.u[self.u_index]
        F, f = mobility_force(model, self.u_index, lepton.evaluate(self.expression, {"q": q, "qdot": qdot}))
        return F, f, jnp.zeros((), f.dtype)
