"""OpenSim's PointActuator and TorqueActuator: a force at a body point, and a torque pair between two bodies,
of magnitude ``optimal_force * control`` along a direction that is fixed in the body or in Ground.

PointActuator (OpenSim ``PointActuator::implProduceForces``): ``f = optimal_force * control * d / |d|``, with
d in the body frame unless ``force_is_global`` (then in G); applied at ``point``, a station of the body, or,
if ``point_is_global``, at the body point that currently coincides with the Ground point ``point``.
TorqueActuator: ``t = optimal_force * control * axis / |axis|`` (in body A's frame unless ``torque_is_global``)
on body A and ``-t`` on body B. The direction is normalized here, so it stays a differentiable leaf (a zero
direction gives no force where OpenSim gives NaN; the builders reject it). No potential energy; Dynamics stage.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.forces import ForceElement, no_body_forces, no_mobility_forces, safe_direction, station_force
from jaxbody._math import spatial


class PointActuator(ForceElement):
    """OpenSim PointActuator on body ``body`` (see the module docstring). point (3,) m; direction (3,);
    optimal_force (N per unit control)."""

    groupable = True
    index_fields = ("body", "first_control")

    body: int = eqx.field(static=True)
    point: jnp.ndarray
    direction: jnp.ndarray
    optimal_force: jnp.ndarray
    point_is_global: bool = eqx.field(static=True, default=False)
    force_is_global: bool = eqx.field(static=True, default=False)
    first_control: int = eqx.field(static=True, default=-1)

    def num_controls(self) -> int:
        return 1

    def calc(self, model, state):
        pos = state.position
        R_GB, p_GB = pos.R_GB[self.body], pos.p_GB[self.body]
        f = self.optimal_force * state.controls[self.first_control] * safe_direction(self.direction)[0]
        f_G = f if self.force_is_global else spatial.matvec(R_GB, f)
        s_B = spatial.mattvec(R_GB, self.point - p_GB) if self.point_is_global else self.point
        F = station_force(model.topology.nbodies, self.body, pos.R_GB, s_B, f_G)
        return F, no_mobility_forces(model, f_G.dtype), jnp.zeros((), f_G.dtype)


class TorqueActuator(ForceElement):
    """OpenSim TorqueActuator: torque on ``body_a``, its opposite on ``body_b`` (see the module docstring).
    axis (3,); optimal_force (N m per unit control)."""

    groupable = True
    index_fields = ("body_a", "body_b", "first_control")

    body_a: int = eqx.field(static=True)
    body_b: int = eqx.field(static=True)
    axis: jnp.ndarray
    optimal_force: jnp.ndarray
    torque_is_global: bool = eqx.field(static=True, default=True)
    first_control: int = eqx.field(static=True, default=-1)

    def num_controls(self) -> int:
        return 1

    def calc(self, model, state):
        t = self.optimal_force * state.controls[self.first_control] * safe_direction(self.axis)[0]
        t_G = t if self.torque_is_global else spatial.matvec(state.position.R_GB[self.body_a], t)
        F = no_body_forces(model, t_G.dtype).at[self.body_a, 0].add(t_G).at[self.body_b, 0].add(-t_G)
        return F, no_mobility_forces(model, t_G.dtype), jnp.zeros((), t_G.dtype)
