"""The force-element interface of a GeneralForceSubsystem (catalogue 5) and the helpers elements share.

Each element is an equinox Module whose numbers (gravity, stiffness, ...) are array leaves and whose
body/coordinate indices are static. At the Dynamics stage every element adds spatial forces at body origins
in Ground (nbodies, 2, 3) and mobility forces (nu,), and reports its potential energy. The elements
themselves live in ``jaxbody._dynamics.force_elements`` (one module per family).
"""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from jaxbody._math import spatial


class ForceElement(eqx.Module):
    """Interface: ``calc(model, state) -> (body_forces, mobility_forces, potential_energy)``.

    ``state`` is realized to Velocity (elements may read positions and velocities).

    An element with state variables of its own (Simbody's auxiliary z: a thermostat's chain, a contact
    anchor point) returns their count from ``num_z()``, their initial values from ``default_z()``, and
    implements ``calc_with_z`` (its forces given its own slice z of ``state.z``) and ``calc_z_dot`` (dz/dt);
    realize asks for both at once (``calc_with_z_and_z_dot``), which an element whose forces and dz/dt share
    their work overrides. The model lays the elements' z out one after another in element order
    (``force_z_slices``).

    An element driven by controls (an actuator: OpenSim's CoordinateActuator, a MuJoCo actuator) returns how many
    it reads from ``num_controls()`` and has a static int field ``first_control``: ``realize_topology()`` lays
    the elements' controls out one after another in element order (``force_control_slices``) and sets it, so
    ``state.controls[first_control : first_control + num_controls()]`` are its own. A groupable class lists
    ``first_control`` among its ``index_fields``.

    ``groupable``: elements of this class without state variables may be evaluated together by one vmap
    (jaxbody._dynamics.force_groups), their ``index_fields`` (static body or coordinate indices) then traced
    ints; ``calc`` must then only index arrays with them (no Python use of their values). Such a class keeps the
    dataclass ``__init__`` (every field a keyword argument): the group rebuilds it by ``dataclasses.replace``.
    """

    groupable: ClassVar[bool] = False
    index_fields: ClassVar[tuple[str, ...]] = ()

    @abc.abstractmethod
    def calc(self, model, state):
        """Body forces (nbodies, 2, 3) at Bo in G, mobility forces (nu,), potential energy (J)."""

    def num_z(self) -> int:
        """Number of this element's state variables (static)."""
        return 0

    def num_controls(self) -> int:
        """Number of controls (``State.controls`` entries) this element reads (static)."""
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

    def calc_with_z_and_z_dot(self, model, state, z):
        """``(F, f, pe, z_dot)``: ``calc_with_z`` and ``calc_z_dot`` together (one evaluation where they share
        work); needs Velocity."""
        return (*self.calc_with_z(model, state, z), self.calc_z_dot(model, state, z))

    def stack_key(self):
        """Elements with state variables whose keys are equal and not None are evaluated together, by their
        class's ``calc_stacked`` (jaxbody._dynamics.force_groups); None (the default): on its own."""
        return None

    @classmethod
    def calc_stacked(cls, model, state, elements, Z, enabled):
        """k elements of equal ``stack_key`` with their state variables Z (k, num_z) and ``enabled`` (k,) bool:
        ``(F (nbodies, 2, 3), f (nu,), pe (), z_dot (k, num_z))``, the forces and energy summed over the enabled
        elements (a disabled one's selected away, not multiplied, so a NaN in it cannot leak) and every
        element's derivatives (the caller zeroes a disabled one's)."""
        raise NotImplementedError(f"{cls.__name__} has no stacked evaluation")


def force_z_slices(elements) -> tuple[slice, ...]:
    """Each element's slice of ``State.z`` (static): the elements' z one after another, in element order."""
    slices, start = [], 0
    for element in elements:
        slices.append(slice(start, start + element.num_z()))
        start += element.num_z()
    return tuple(slices)


def force_control_slices(elements) -> tuple[slice, ...]:
    """Each element's slice of ``State.controls`` (static): the elements' controls one after another, in element
    order."""
    slices, start = [], 0
    for element in elements:
        slices.append(slice(start, start + element.num_controls()))
        start += element.num_controls()
    return tuple(slices)


def no_body_forces(model, dtype) -> jnp.ndarray:
    """Zero body forces (nbodies, 2, 3)."""
    return jnp.zeros((model.topology.nbodies, 2, 3), dtype)


def no_mobility_forces(model, dtype) -> jnp.ndarray:
    """Zero mobility forces (nu,)."""
    return jnp.zeros(model.topology.nu, dtype)


def mobility_force(model, u_index: int, f):
    """(body forces, mobility forces) of the scalar generalized force ``f`` on mobility ``u_index`` alone: no body
    forces (nbodies, 2, 3) and ``f`` in slot ``u_index`` of (nu,)."""
    return no_body_forces(model, f.dtype), no_mobility_forces(model, f.dtype).at[u_index].add(f)


def station_location(pos, body: int, station_B) -> jnp.ndarray:
    """``p_GS = p_GB + R_GB s`` (3,) of a station (in B) of one body. Needs Position."""
    return pos.p_GB[body] + spatial.matvec(pos.R_GB[body], station_B)


def station_velocity(pos, vel, body: int, station_B) -> jnp.ndarray:
    """``v_GS = v_GB + w_GB x (R_GB s)`` (3,) of a station (in B) of one body. Needs Velocity."""
    w, v = vel.V_GB[body]
    return v + jnp.cross(w, spatial.matvec(pos.R_GB[body], station_B))


def station_force(nbodies: int, body: int, R_GB, station_B, f_G) -> jnp.ndarray:
    """Body forces (nbodies, 2, 3) of force f_G (in G) applied at a station (in B) of one body: ``[r x f; f]``."""
    r = spatial.matvec(R_GB[body], station_B)
    F = jnp.stack([jnp.cross(r, f_G), f_G])
    return jnp.zeros((nbodies, 2, 3), f_G.dtype).at[body].add(F)


def safe_direction(r):
    """``(e, d)``: unit vector along r and its length; e = 0 (with finite gradients) where d = 0."""
    d = spatial.safe_norm(r)
    return r / jnp.where(d == 0, 1.0, d), d
