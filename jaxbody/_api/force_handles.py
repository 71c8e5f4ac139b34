"""Handles of registered force elements: their index in ``model.forces``, their slice of ``State.z``, and the
per-State and per-Model setters Simbody offers on them (``set_disabled``, Gravity's parameters, a
MobilityDiscreteForce's value, DiscreteForces' applied forces, the Thermostat's bath energy, ...).

State setters return a new State (Dynamics dropped); Model setters return a new Model whose changed numbers
are array leaves, so neither recompiles anything.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxbody._api.force_checks import check_forces
from jaxbody._dynamics.forces import station_force
from jaxbody._dynamics.state import State, require
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument


class ForceHandle:
    """A registered force element. ``index``: its position in ``model.forces`` (and in ``State.force_enabled``);
    ``get_force_index()``: Simbody's ForceIndex within its own GeneralForceSubsystem. ``num_z``: how many
    ``State.z`` entries the element owns. ``control_names``: the names of the ``State.controls`` entries it reads
    (an actuator's; ``model.control_names`` lists every element's in element order)."""

    def __init__(self, forces, build, name: str, num_z: int = 0, controls: tuple[str, ...] = ()):
        check_forces(forces, name)
        self._build = build
        self.name = name
        self._num_z = num_z
        self._controls = tuple(controls)
        self._subsystem = forces
        self._local_index = forces._add(self)

    def _handles_before(self):
        before = []
        for fs in self._subsystem.system._force_subsystems:
            if fs is self._subsystem:
                return before + fs._elements[: self._local_index]
            before += fs._elements
        raise AssertionError("a force handle's subsystem is always in its system")

    @property
    def num_z(self) -> int:
        """How many ``State.z`` entries this element owns (static)."""
        return self._num_z

    @property
    def index(self) -> int:
        return len(self._handles_before())

    def get_force_index(self) -> int:
        return self._local_index

    @property
    def z_slice(self) -> slice:
        """This element's slice of ``State.z`` (static)."""
        start = sum(h.num_z for h in self._handles_before())
        return slice(start, start + self.num_z)

    @property
    def control_names(self) -> tuple[str, ...]:
        return self._controls

    @property
    def num_controls(self) -> int:
        """How many ``State.controls`` entries this element reads (static)."""
        return len(self._controls)

    @property
    def control_slice(self) -> slice:
        """This element's slice of ``State.controls`` (static)."""
        start = sum(h.num_controls for h in self._handles_before())
        return slice(start, start + self.num_controls)

    def get_controls(self, state: State):
        """This element's controls (num_controls,) in ``state``."""
        return self._check(state, "get_controls").controls[self.control_slice]

    def set_controls(self, state: State, controls) -> State:
        """A State with this element's controls (num_controls,) set (drops Dynamics); the length is checked here."""
        self._check(state, "set_controls")
        controls = jnp.asarray(controls, state.controls.dtype)
        if controls.shape not in ((self.num_controls,), () if self.num_controls == 1 else None):
            raise InvalidArgument(f"{self.name}.set_controls: expected {self.num_controls} control(s) "
                                  f"{list(self.control_names)}, got shape {controls.shape}")
        return state.set_controls(state.controls.at[self.control_slice].set(controls.reshape(self.num_controls)))

    def _check(self, state: State, what: str) -> State:
        if not isinstance(state, State):
            raise InvalidArgument(f"{self.name}.{what}: expected a jb.State, got {type(state).__name__}")
        matter = self._subsystem.system._matter
        if state.system is not None and matter is not None and state.system != matter._signature():
            raise InvalidArgument(f"{self.name}.{what}: the state belongs to {state.system}, this force to {matter._describe()}")
        return state

    def _element(self, model):
        return model.forces[self.index]

    def set_disabled(self, state: State, disabled: bool = True) -> State:
        """Simbody's Force::disable/enable for this State (drops Dynamics); ``disabled`` may be traced."""
        self._check(state, "set_disabled")
        return state.set_force_enabled(state.force_enabled.at[self.index].set(jnp.logical_not(disabled)))

    def is_disabled(self, state: State):
        return jnp.logical_not(self._check(state, "is_disabled").force_enabled[self.index])

    def calc_force_contribution(self, model, state: State):
        """(body_forces (nbodies, 2, 3), mobility_forces (nu,)) of this element alone, zero if disabled.

        Requires Velocity."""
        return model.calc_force_contributions_sum(state, (self,))

    def _set_leaf(self, model, field: str, value):
        old = getattr(self._element(model), field)
        return eqx.tree_at(lambda m: getattr(m.forces[self.index], field), model, jnp.asarray(value, old.dtype))


class GravityHandle(ForceHandle):
    """Force::Gravity's parameters as Model leaves (Simbody keeps them in the State): setters return a Model."""

    def set_magnitude(self, model, g):
        return self._set_leaf(model, "magnitude", g)

    def set_down_direction(self, model, down):
        """``down`` (3,) in G, normalized here (a traced value must be nonzero)."""
        down = jnp.asarray(down)
        return self._set_leaf(model, "down", down / jnp.linalg.norm(down))

    def set_gravity_vector(self, model, g):
        """Direction and magnitude from one vector (3,) in G."""
        g = jnp.asarray(g)
        return self.set_down_direction(self.set_magnitude(model, jnp.linalg.norm(g)), g)

    def set_zero_height(self, model, h):
        return self._set_leaf(model, "zero_height", h)

    def set_body_is_excluded(self, model, mobod, excluded: bool = True):
        """Exclude ``mobod`` from (or include it in) gravity; Ground is always excluded."""
        if mobod.is_ground():
            raise InvalidArgument(f"{self.name}.set_body_is_excluded: Ground is always excluded")
        included = self._element(model).included
        return self._set_leaf(model, "included", included.at[mobod.index].set(jnp.where(excluded, 0.0, 1.0)))

    def get_body_is_excluded(self, model, mobod):
        return self._element(model).included[mobod.index] == 0

    def get_magnitude(self, model):
        return self._element(model).magnitude

    def get_down_direction(self, model):
        return self._element(model).down

    def get_gravity_vector(self, model):
        return self._element(model).magnitude * self._element(model).down

    def get_zero_height(self, model):
        return self._element(model).zero_height


class MobilityDiscreteForceHandle(ForceHandle):
    """A MobilityDiscreteForce's value lives in ``State.z`` (zdot = 0): per State, jit/vmap-able."""

    def set_mobility_force(self, state: State, f) -> State:
        self._check(state, "set_mobility_force")
        return state.set_z(state.z.at[self.z_slice.start].set(f))

    def get_mobility_force(self, state: State):
        return self._check(state, "get_mobility_force").z[self.z_slice.start]


class LinearBushingHandle(ForceHandle):
    """Force::LinearBushing's dissipated energy (its z variable)."""

    def get_dissipated_energy(self, state: State):
        return self._check(state, "get_dissipated_energy").z[self.z_slice.start]

    def set_dissipated_energy(self, state: State, energy) -> State:
        self._check(state, "set_dissipated_energy")
        return state.set_z(state.z.at[self.z_slice.start].set(energy))


class ThermostatHandle(ForceHandle):
    """Force::Thermostat: its chain state (z), bath energy and temperature."""

    def get_chain_state(self, state: State):
        """(c_0..c_{m-1}, s_0..s_{m-1}) (2m,) (Simbody's getChainState)."""
        s = self.z_slice
        return self._check(state, "get_chain_state").z[s.start : s.stop - 1]

    def set_chain_state(self, state: State, chain) -> State:
        s = self.z_slice
        self._check(state, "set_chain_state")
        return state.set_z(state.z.at[s.start : s.stop - 1].set(chain))

    def get_external_work(self, state: State):
        """Work (J) the thermostat did on the system so far."""
        return self._check(state, "get_external_work").z[self.z_slice.stop - 1]

    def calc_bath_energy(self, model, state: State):
        """Simbody's calcBathEnergy (J); KE + PE + bath energy is conserved. Requires Velocity."""
        require(state, Stage.Velocity, f"{self.name}.calc_bath_energy")
        return self._element(model).calc_bath_energy(model, state, state.z[self.z_slice])

    def get_current_temperature(self, model, state: State):
        """``2 KE / (N k_B)``. Requires Velocity."""
        require(state, Stage.Velocity, f"{self.name}.get_current_temperature")
        return self._element(model).get_current_temperature(model, state)

    def get_num_thermal_dofs(self, model, state: State):
        return self._element(model).num_thermal_dofs(model, state)


class DiscreteForcesHandle(ForceHandle):
    """Force::DiscreteForces: functional updates of the State's applied forces (each returns a new State)."""

    def set_all_mobility_forces(self, state: State, f) -> State:
        return self._check(state, "set_all_mobility_forces").set_mobility_forces(f)

    def get_all_mobility_forces(self, state: State):
        return self._check(state, "get_all_mobility_forces").mobility_forces

    def clear_all_mobility_forces(self, state: State) -> State:
        return self.set_all_mobility_forces(state, jnp.zeros_like(state.mobility_forces))

    def set_one_mobility_force(self, state: State, mobod, which_u: int, f) -> State:
        mobod._check_u_index(which_u)
        return self.set_all_mobility_forces(state, state.mobility_forces.at[mobod.u_start + which_u].set(f))

    def get_one_mobility_force(self, state: State, mobod, which_u: int):
        mobod._check_u_index(which_u)
        return self.get_all_mobility_forces(state)[mobod.u_start + which_u]

    def set_all_body_forces(self, state: State, F) -> State:
        """(nbodies, 2, 3) spatial forces at Bo in G (Ground's row is ignored)."""
        return self._check(state, "set_all_body_forces").set_body_forces(F)

    def get_all_body_forces(self, state: State):
        return self._check(state, "get_all_body_forces").body_forces

    def clear_all_body_forces(self, state: State) -> State:
        return self.set_all_body_forces(state, jnp.zeros_like(state.body_forces))

    def add_all_body_forces(self, state: State, F) -> State:
        return self.set_all_body_forces(state, state.body_forces + jnp.asarray(F, state.body_forces.dtype))

    def add_force_to_body_point(self, state: State, mobod, station_B, force_G) -> State:
        """Add force ``force_G`` (in G) at a station (in B) of ``mobod``. Requires Position (reads R_GB)."""
        require(self._check(state, "add_force_to_body_point"), Stage.Position, f"{self.name}.add_force_to_body_point")
        force_G = jnp.asarray(force_G, state.body_forces.dtype)
        F = station_force(state.body_forces.shape[0], mobod.index, state.position.R_GB,
                          jnp.asarray(station_B, force_G.dtype), force_G)
        return self.add_all_body_forces(state, F)

    def add_torque_to_body(self, state: State, mobod, torque_G) -> State:
        F = jnp.zeros_like(state.body_forces).at[mobod.index, 0].set(torque_G)
        return self.add_all_body_forces(state, F)
