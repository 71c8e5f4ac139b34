"""Constant loads on one body (catalogue 5): Simbody's ConstantForce and ConstantTorque."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.forces import (
    ForceElement,
    no_body_forces,
    no_mobility_forces,
    station_force,
)


class ConstantForce(ForceElement):
    """Force ``force`` (N, fixed in G) at a station (m, in B) of one body: ``F_B += [(R_GB s) x f ; f]``; no PE.

    Needs Position.
    """

    groupable = True
    index_fields = ("body",)

    body: int = eqx.field(static=True)
    station: jnp.ndarray
    force: jnp.ndarray

    def calc(self, model, state):
        F = station_force(model.topology.nbodies, self.body, state.position.R_GB, self.station, self.force)
        return F, no_mobility_forces(model, F.dtype), jnp.zeros((), F.dtype)


class ConstantTorque(ForceElement):
    """Torque ``torque`` (N m, fixed in G) on one body; no PE."""

    groupable = True
    index_fields = ("body",)

    body: int = eqx.field(static=True)
    torque: jnp.ndarray

    def calc(self, model, state):
        F = no_body_forces(model, state.q.dtype).at[self.body, 0].add(self.torque)
        return F, no_mobility_forces(model, F.dtype), jnp.zeros((), F.dtype)
