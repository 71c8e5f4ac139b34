"""Fluid forces on a body (MuJoCo's inertia-box fluid model, ``mj_inertiaBoxFluidModel``): quadratic drag and
linear (Stokes) viscous resistance of an equivalent box moving through a fluid with a uniform wind.

Notation: body B, its inertial frame I (origin at the centre of mass, p_BI in B; axes R_BI), the box's full
dimensions b = (b0, b1, b2) (m) along I's axes, fluid density rho (kg/m^3), dynamic viscosity mu (Pa s), wind
(3,) (m/s, in G). With w and v the angular velocity and the velocity of the centre of mass relative to the wind,
both expressed in I:

* viscous: torque ``-pi d^3 mu w``, force ``-3 pi d mu v`` with d = (b0 + b1 + b2) / 3 (a sphere's Stokes law);
* drag: force_i ``-rho/2 A_i |v_i| v_i`` with A_0 = b1 b2, A_1 = b0 b2, A_2 = b0 b1, torque_i
  ``-rho b_i (b_j^4 + b_k^4) |w_i| w_i / 64`` ({i, j, k} = {0, 1, 2}).

Both act at the centre of mass (as MuJoCo applies them); no potential energy. Cost: O(1) per body. Needs Velocity.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.forces import ForceElement, no_mobility_forces, station_force, station_velocity


class InertiaBoxFluid(ForceElement):
    """MuJoCo's inertia-box fluid forces on one body (module doc); every number is a Model leaf."""

    groupable = True
    index_fields = ("body",)

    body: int = eqx.field(static=True)
    box: jnp.ndarray         # (3,) m, along I's axes
    p_BI: jnp.ndarray        # (3,) m, centre of mass in B
    R_BI: jnp.ndarray        # (3, 3) inertial axes in B
    density: jnp.ndarray     # kg/m^3
    viscosity: jnp.ndarray   # Pa s
    wind: jnp.ndarray        # (3,) m/s in G

    def calc(self, model, state):
        pos, vel = state.position, state.velocity
        R_GB = pos.R_GB[self.body]
        R_GI = R_GB @ self.R_BI
        w = R_GI.T @ vel.V_GB[self.body, 0]
        v = R_GI.T @ (station_velocity(pos, vel, self.body, self.p_BI) - self.wind)
        b, rho, mu = self.box, self.density, self.viscosity
        diam = jnp.sum(b) / 3.0
        area = jnp.stack([b[1] * b[2], b[0] * b[2], b[0] * b[1]])
        b4 = b**4
        lever = b * jnp.stack([b4[1] + b4[2], b4[0] + b4[2], b4[0] + b4[1]]) / 64.0
        torque_I = -jnp.pi * diam**3 * mu * w - rho * lever * jnp.abs(w) * w
        force_I = -3.0 * jnp.pi * diam * mu * v - 0.5 * rho * area * jnp.abs(v) * v
        f_G = R_GI @ force_I
        F = station_force(model.topology.nbodies, self.body, pos.R_GB, self.p_BI, f_G)
        F = F.at[self.body, 0].add(R_GI @ torque_I)
        return F, no_mobility_forces(model, F.dtype), jnp.zeros((), F.dtype)
