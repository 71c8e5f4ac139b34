"""The force element of a muscle on a path (OpenSim's ``Muscle``, a PathActuator): its model's tension along
its path (``Path.calc_tension_forces``), its state variables in ``State.z`` and its excitation from
``State.controls``.

A concrete muscle class says which mechanics it runs (``calc_info``: a muscle model's function of path length,
lengthening speed, its z and its excitation, returning a ``MuscleInfo``), how many state variables it has and
in which order (``state_names``, OpenSim's order: "activation" first when present); their derivatives
(``z_dot_of``) are read from the info (``activation_dot``, then ``fiber_length_dot`` for the second state). Indices
(``first_control``) are static; the path's numbers, the model's parameters and the default state values are
array leaves. Stage: Velocity (the lengthening speed). Cost: one evaluation of the path's length, speed and
forces (Path.calc_forces_of_tension), plus the muscle model's few dozen flops. In a model, muscles of one class on
wrap-free paths are evaluated as one stack (``stack_key``, ``calc_stacked``: jaxbody._dynamics.muscles.muscle_stack).
"""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.forces import ForceElement
from jaxbody._dynamics.muscles.info import MuscleInfo
from jaxbody._dynamics.muscles.muscle_stack import calc_muscle_stack, muscle_stack_key
from jaxbody._dynamics.paths.base import Path


class PathMuscle(ForceElement):
    """Interface of a muscle on a path: ``calc_info(length, speed, z, excitation)`` and ``state_names``."""

    state_names: ClassVar[tuple[str, ...]] = ()  # a class constant, or a property on static fields

    path: Path
    parameters: eqx.Module  # the muscle model's numbers (e.g. Thelen2003Parameters)
    default_state: jnp.ndarray  # (num_z,) default values of state_names
    first_control: int = eqx.field(static=True, default=-1)

    @abc.abstractmethod
    def calc_info(self, length, lengthening_speed, z, excitation) -> MuscleInfo:
        """The muscle model at path length (m), lengthening speed (m/s), its state z (num_z,) and excitation."""

    def z_dot_of(self, info: MuscleInfo) -> jnp.ndarray:
        """dz/dt (num_z,) from the model's info: ``activation_dot`` for "activation", ``fiber_length_dot`` for the
        other state (fiber length, or DeGroote's normalized tendon force)."""
        rates = [info.activation_dot if name == "activation" else info.fiber_length_dot for name in self.state_names]
        return jnp.stack(rates) if rates else jnp.zeros((0,), info.tendon_force.dtype)

    def num_z(self) -> int:
        return len(self.state_names)

    def num_controls(self) -> int:
        return 1

    def default_z(self, dtype) -> jnp.ndarray:
        return jnp.asarray(self.default_state, dtype)

    def excitation(self, state):
        """This muscle's excitation: its control (OpenSim's getExcitation; not clamped)."""
        return state.controls[self.first_control]

    def calc_info_at(self, model, state, z) -> MuscleInfo:
        """The muscle's info at a State realized to Velocity, with its state variables z (num_z,)."""
        length = self.path.calc_length(model, state)
        speed = self.path.calc_lengthening_speed(model, state)
        return self.calc_info(length, speed, z, self.excitation(state))

    def calc(self, model, state):
        raise NotImplementedError("a muscle's forces depend on its state variables: use calc_with_z")

    def calc_with_z(self, model, state, z):
        return self.calc_with_z_and_z_dot(model, state, z)[:3]

    def calc_z_dot(self, model, state, z) -> jnp.ndarray:
        return self.z_dot_of(self.calc_info_at(model, state, z))

    def calc_with_z_and_z_dot(self, model, state, z):
        """Forces and dz/dt from one evaluation of the path (``Path.calc_forces_of_tension``)."""
        def tension_of(length, speed):
            info = self.calc_info(length, speed, z, self.excitation(state))
            return info.tendon_force, info

        F, f, info = self.path.calc_forces_of_tension(model, state, tension_of)
        return F, f, jnp.zeros((), info.tendon_force.dtype), self.z_dot_of(info)

    def stack_key(self):
        return muscle_stack_key(self)

    @classmethod
    def calc_stacked(cls, model, state, elements, Z, enabled):
        return calc_muscle_stack(model, state, elements, Z, enabled)
