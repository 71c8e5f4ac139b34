"""Force elements of a GeneralForceSubsystem (catalogue 5).

Each element is an equinox Module whose numbers (gravity, stiffness, ...)
are array leaves and whose body/coordinate indices are static. At the
Dynamics stage every element adds spatial forces at body origins in Ground
(nbodies, 2, 3) and mobility forces (nu,), and reports its potential energy.
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax.numpy as jnp

from jaxbody._math import spatial


def _station_force(nbodies, body, R_GB, station_B, f_G):
    """Body forces (nbodies, 2, 3) of force f_G applied at a station of one body."""
    r = spatial.matvec(R_GB[body], station_B)
    F = jnp.stack([jnp.cross(r, f_G), f_G])
    return jnp.zeros((nbodies, 2, 3), f_G.dtype).at[body].add(F)


class ForceElement(eqx.Module):
    """Interface: ``calc(model, state) -> (body_forces, mobility_forces, potential_energy)``.

    ``state`` is realized to Velocity (elements may read positions and velocities).

    An element with state variables of its own (Simbody's auxiliary z: a thermostat's chain, a contact
    anchor point) returns their count from ``num_z()``, their initial values from ``default_z()``, and
    implements ``calc_with_z`` (its forces given its own slice z of ``state.z``) and ``calc_z_dot`` (dz/dt).
    The model lays the elements' z out one after another in element order (``force_z_slices``).
    """

    @abc.abstractmethod
    def calc(self, model, state):
        """Body forces (nbodies, 2, 3) at Bo in G, mobility forces (nu,), potential energy (J)."""

    def num_z(self) -> int:
        """Number of this element's state variables (static)."""
        return 0

    def default_z(self, dtype) -> jnp.ndarray:
        """Initial values (num_z,) of this element's state variables."""
        return jnp.zeros((self.num_z(),), dtype)

    def calc_with_z(self, model, state, z):
        """``calc`` for an element whose forces depend on its own state variables ``z`` (num_z,)."""
        return self.calc(model, state)

    def calc_z_dot(self, model, state, z) -> jnp.ndarray:
        """Time derivative (num_z,) of this element's state variables; needs Velocity."""
        return jnp.zeros((self.num_z(),), state.q.dtype)


def force_z_slices(elements) -> tuple[slice, ...]:
    """Each element's slice of ``State.z`` (static): the elements' z one after another, in element order."""
    slices, start = [], 0
    for element in elements:
        slices.append(slice(start, start + element.num_z()))
        start += element.num_z()
    return tuple(slices)


def _zero_mobility(model, dtype):
    return jnp.zeros(model.topology.nu, dtype)


class UniformGravity(ForceElement):
    """``F_B = [(R_GB c_B) x m g ; m g]`` on every body; PE = ``-sum m (g . p_GBc + zero_height)`` (Simbody's formula)."""

    gravity: jnp.ndarray  # (3,) m/s^2 in G
    zero_height: jnp.ndarray  # scalar, m

    def calc(self, model, state):
        pos = state.position
        m = model.parameters.mass
        f = m[:, None] * self.gravity
        c_G = pos.p_GBc - pos.p_GB
        F = jnp.stack([jnp.cross(c_G, f), f], -2)
        pe = -jnp.sum(m * (pos.p_GBc @ self.gravity + self.zero_height))
        return F, _zero_mobility(model, F.dtype), pe


class Gravity(ForceElement):
    """Simbody's Force::Gravity: magnitude g along unit ``down``; PE = ``sum m g (-down . p_GBc - zero_height)``."""

    down: jnp.ndarray  # (3,) unit direction in G
    magnitude: jnp.ndarray  # scalar, m/s^2
    zero_height: jnp.ndarray  # scalar, m

    def calc(self, model, state):
        pos = state.position
        m = model.parameters.mass
        g = self.magnitude * self.down
        f = m[:, None] * g
        c_G = pos.p_GBc - pos.p_GB
        F = jnp.stack([jnp.cross(c_G, f), f], -2)
        pe = jnp.sum(m * self.magnitude * (-(pos.p_GBc @ self.down) - self.zero_height))
        return F, _zero_mobility(model, F.dtype), pe


class MobilityLinearSpring(ForceElement):
    """Mobility force ``-K (q_k - q0)`` on u index k of a mobilizer (assumes qdot = u there); PE ``K (q_k - q0)^2 / 2``."""

    q_index: int = eqx.field(static=True)
    u_index: int = eqx.field(static=True)
    stiffness: jnp.ndarray
    q0: jnp.ndarray

    def calc(self, model, state):
        x = state.q[self.q_index] - self.q0
        f = _zero_mobility(model, state.q.dtype).at[self.u_index].add(-self.stiffness * x)
        return jnp.zeros((model.topology.nbodies, 2, 3), f.dtype), f, 0.5 * self.stiffness * x * x


class MobilityLinearDamper(ForceElement):
    """Mobility force ``-c u_k``; no potential energy."""

    u_index: int = eqx.field(static=True)
    damping: jnp.ndarray

    def calc(self, model, state):
        f = _zero_mobility(model, state.u.dtype).at[self.u_index].add(-self.damping * state.u[self.u_index])
        return jnp.zeros((model.topology.nbodies, 2, 3), f.dtype), f, jnp.zeros((), f.dtype)


class MobilityConstantForce(ForceElement):
    """Constant mobility force ``f`` on u index k."""

    u_index: int = eqx.field(static=True)
    force: jnp.ndarray

    def calc(self, model, state):
        f = _zero_mobility(model, state.u.dtype).at[self.u_index].add(self.force)
        return jnp.zeros((model.topology.nbodies, 2, 3), f.dtype), f, jnp.zeros((), f.dtype)


class GlobalDamper(ForceElement):
    """Mobility forces ``-c u`` on every mobility."""

    damping: jnp.ndarray

    def calc(self, model, state):
        f = -self.damping * state.u
        return jnp.zeros((model.topology.nbodies, 2, 3), f.dtype), f, jnp.zeros((), f.dtype)


class ConstantForce(ForceElement):
    """Force ``f`` fixed in Ground applied at a station (in B) of one body."""

    body: int = eqx.field(static=True)
    station: jnp.ndarray
    force: jnp.ndarray

    def calc(self, model, state):
        F = _station_force(model.topology.nbodies, self.body, state.position.R_GB, self.station, self.force)
        return F, _zero_mobility(model, F.dtype), jnp.zeros((), F.dtype)


class ConstantTorque(ForceElement):
    """Torque fixed in Ground applied to one body."""

    body: int = eqx.field(static=True)
    torque: jnp.ndarray

    def calc(self, model, state):
        F = jnp.zeros((model.topology.nbodies, 2, 3), self.torque.dtype).at[self.body, 0].add(self.torque)
        return F, _zero_mobility(model, F.dtype), jnp.zeros((), F.dtype)


class TwoPointLinearSpring(ForceElement):
    """Spring of stiffness k and rest length x0 between station s1 on body1 and s2 on body2.

    ``f1 = k (d - x0) e`` on S1 (e from S1 to S2) and ``-f1`` on S2; PE ``k (d - x0)^2 / 2``.
    Gradient-safe at d = 0 (the force direction is then zero).
    """

    body1: int = eqx.field(static=True)
    body2: int = eqx.field(static=True)
    station1: jnp.ndarray
    station2: jnp.ndarray
    stiffness: jnp.ndarray
    rest_length: jnp.ndarray

    def calc(self, model, state):
        pos = state.position
        p1 = pos.p_GB[self.body1] + spatial.matvec(pos.R_GB[self.body1], self.station1)
        p2 = pos.p_GB[self.body2] + spatial.matvec(pos.R_GB[self.body2], self.station2)
        r = p2 - p1
        d = spatial.safe_norm(r)
        e = r / jnp.where(d == 0, 1.0, d)
        stretch = d - self.rest_length
        f1 = self.stiffness * stretch * e
        nb = model.topology.nbodies
        F = _station_force(nb, self.body1, pos.R_GB, self.station1, f1) + _station_force(
            nb, self.body2, pos.R_GB, self.station2, -f1
        )
        return F, _zero_mobility(model, F.dtype), 0.5 * self.stiffness * stretch * stretch
