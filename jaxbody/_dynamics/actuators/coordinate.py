"""OpenSim's CoordinateActuator and ActivationCoordinateActuator: a generalized force on one coordinate's
mobility, ``optimal_force * control`` (N or N m), or ``optimal_force * a`` with first-order activation ``a``.

The control is the element's entry of ``State.controls`` (``first_control``, set by ``realize_topology()``);
OpenSim does not clamp it to ``[min_control, max_control]`` when it computes the force, and neither does
jaxbody (those bounds are for controllers and optimizers). Indices are static, ``optimal_force`` and the time
constant are array leaves. Cost: O(1) per element; no body forces, no potential energy.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.forces import ForceElement, mobility_force



class CoordinateActuator(ForceElement):
    """OpenSim CoordinateActuator: mobility force ``optimal_force * control`` on u index ``u_index``.

    optimal_force (N or N m per unit control). Reads one control; applied at the Dynamics stage.
    """

    groupable = True
    index_fields = ("u_index", "first_control")

    u_index: int = eqx.field(static=True)
    optimal_force: jnp.ndarray
    first_control: int = eqx.field(static=True, default=-1)

    def num_controls(self) -> int:
        return 1

    def calc(self, model, state):
        F, f = mobility_force(model, self.u_index, self.optimal_force * state.controls[self.first_control])
        return F, f, jnp.zeros((), f.dtype)


class ActivationCoordinateActuator(ForceElement):
    """OpenSim ActivationCoordinateActuator: mobility force ``optimal_force * a`` with ``da/dt = (x - a) / tau``
    (x the control, tau ``activation_time_constant`` in s); ``a`` is the element's one ``State.z`` entry, default
    ``default_activation``. OpenSim neither clamps x nor a here."""

    u_index: int = eqx.field(static=True)
    optimal_force: jnp.ndarray
    activation_time_constant: jnp.ndarray
    default_activation: jnp.ndarray
    first_control: int = eqx.field(static=True, default=-1)

    def num_controls(self) -> int:
        return 1

    def num_z(self) -> int:
        return 1

    def default_z(self, dtype) -> jnp.ndarray:
        return jnp.reshape(self.default_activation, (1,)).astype(dtype)

    def calc(self, model, state):
        raise NotImplementedError("ActivationCoordinateActuator reads its activation from State.z: use calc_with_z")

    def calc_with_z(self, model, state, z):
        F, f = mobility_force(model, self.u_index, self.optimal_force * z[0])
        return F, f, jnp.zeros((), f.dtype)

    def calc_z_dot(self, model, state, z) -> jnp.ndarray:
        return (state.controls[self.first_control] - z) / self.activation_time_constant
