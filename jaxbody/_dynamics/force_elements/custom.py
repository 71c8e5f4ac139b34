"""User-defined and State-held forces (catalogue 5): Simbody's Force::Custom and Force::DiscreteForces."""

from __future__ import annotations

from typing import Any, Callable

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.forces import ForceElement
from jaxbody.errors import InvalidArgument


class Custom(ForceElement):
    """Forces from user JAX functions (Simbody's Force::Custom with its Implementation's two methods).

    ``calc_force(model, state) -> (body_forces (nbodies, 2, 3) at Bo in G, mobility_forces (nu,))`` and
    optionally ``calc_potential_energy(model, state) -> scalar`` (default 0). With ``parameters`` (any pytree of
    arrays: model leaves, so gradients and sweeps reach them) both are called as ``f(model, state, parameters)``.
    The functions are static (compared by identity): they must be pure and traceable. ``state`` is realized to
    Velocity.
    """

    calc_force: Callable = eqx.field(static=True)
    calc_potential_energy: Callable | None = eqx.field(static=True)
    parameters: Any = None

    def _args(self, model, state):
        return (model, state) if self.parameters is None else (model, state, self.parameters)

    def calc(self, model, state):
        out = self.calc_force(*self._args(model, state))
        shapes = ((model.topology.nbodies, 2, 3), (model.topology.nu,))
        expected = f"a pair (body_forces {shapes[0]}, mobility_forces {shapes[1]})"
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            got = f"an array of shape {out.shape}" if hasattr(out, "shape") else type(out).__name__
            raise InvalidArgument(f"Force.Custom: calc_force must return {expected}, got {got}")
        try:
            F, f = (jnp.broadcast_to(jnp.asarray(x, state.q.dtype), shape) for x, shape in zip(out, shapes))
        except ValueError:
            raise InvalidArgument(f"Force.Custom: calc_force must return {expected}, got shapes "
                                  f"{tuple(jnp.shape(x) for x in out)}") from None
        pe = (jnp.zeros((), F.dtype) if self.calc_potential_energy is None
              else jnp.asarray(self.calc_potential_energy(*self._args(model, state)), F.dtype))
        return F, f, pe


class DiscreteForces(ForceElement):
    """Simbody's Force::DiscreteForces: the applied forces held in the State (``State.mobility_forces`` and
    ``State.body_forces``, set with the handle's ``set_all_mobility_forces``, ``add_force_to_body_point``, ...).

    A model without a DiscreteForces element applies those State forces unconditionally; with one, they are
    this element's contribution, so disabling it (``set_force_is_disabled``) switches them off. No PE.
    """

    def calc(self, model, state):
        F = state.body_forces.at[0].set(0.0)
        return F, state.mobility_forces, jnp.zeros((), F.dtype)
