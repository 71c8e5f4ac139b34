"""Simbody's Force::Thermostat (catalogue 5): a Nose-Hoover chain that drives the kinetic energy towards
the bath temperature.

With m chains, thermal dofs ``N = max(1, nu - (enabled constraint equations) - num_excluded_dofs)``,
``kT = k_B T_b`` and relaxation time t: mobility forces ``-c0 M u``; ``T = 2 KE / (N k_B)``;
``c0dot = (T / T_b - 1) / t^2 - c0 c1``, ``c_kdot = N_k c_{k-1}^2 - 1 / t^2 - c_k c_{k+1}`` (N_1 = N, then 1;
the last chain has no ``c_k c_{k+1}`` term); ``s_kdot = c_k``; and the work done on the system,
``Wdot = -2 c0 KE``. z = (c_0..c_{m-1}, s_0..s_{m-1}, W). The bath energy
``kT t^2 (N c0^2 + sum_{k>0} c_k^2) / 2 + kT (N s0 + sum_{k>0} s_k)`` plus KE + PE is conserved (the
Nose-Hoover invariant). The element has no potential energy of its own.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.forces import ForceElement, no_body_forces
from jaxbody._dynamics.mass_matrix import multiply_by_m


class Thermostat(ForceElement):
    """Nose-Hoover chain thermostat (module docstring). boltzmanns_constant k_B (J/K in the model's units),
    bath_temperature T_b (K), relaxation_time t (s): array leaves. num_chains m, num_excluded_dofs: static.
    Needs Velocity.
    """

    boltzmanns_constant: jnp.ndarray
    bath_temperature: jnp.ndarray
    relaxation_time: jnp.ndarray
    num_chains: int = eqx.field(static=True, default=3)
    num_excluded_dofs: int = eqx.field(static=True, default=0)

    def num_z(self) -> int:
        return 2 * self.num_chains + 1

    def calc(self, model, state):
        raise NotImplementedError("Thermostat reads its chain from State.z: use calc_with_z")

    def num_thermal_dofs(self, model, state):
        """N (float scalar): mobilities less the enabled acceleration-level constraint equations and exclusions."""
        cset = model.constraints
        rows = jnp.sum(state.constraint_enabled[jnp.asarray(cset.row_constraint, jnp.int32)]) if cset.m else 0
        return jnp.maximum(1.0, model.topology.nu - rows - self.num_excluded_dofs).astype(state.u.dtype)

    def _momentum_and_ke(self, model, state):
        p = multiply_by_m(model, state.position, state.u)
        return p, 0.5 * jnp.dot(state.u, p)

    def calc_with_z(self, model, state, z):
        p, _ = self._momentum_and_ke(model, state)
        f = -z[0] * p
        return no_body_forces(model, f.dtype), f, jnp.zeros((), f.dtype)

    def calc_z_dot(self, model, state, z):
        m = self.num_chains
        c = z[:m]
        _, ke = self._momentum_and_ke(model, state)
        n = self.num_thermal_dofs(model, state)
        oot2 = 1.0 / self.relaxation_time**2
        temperature = 2 * ke / (n * self.boltzmanns_constant)
        dofs = jnp.concatenate([n[None], jnp.ones(m - 1, c.dtype)])  # dofs controlled by chain k-1, for k >= 1
        driven = jnp.concatenate([(temperature / self.bath_temperature - 1) * oot2 * jnp.ones(1, c.dtype),
                                  dofs[:-1] * c[:-1] ** 2 - oot2])
        coupling = jnp.concatenate([c[:-1] * c[1:], jnp.zeros(1, c.dtype)])
        return jnp.concatenate([driven - coupling, c, (-2 * c[0] * ke)[None]])

    def calc_bath_energy(self, model, state, z):
        """Simbody's calcBathEnergy (J): ``kT t^2 (N c0^2 + sum c_k^2) / 2 + kT (N s0 + sum s_k)``."""
        m = self.num_chains
        c, s = z[:m], z[m : 2 * m]
        n = self.num_thermal_dofs(model, state)
        kT = self.boltzmanns_constant * self.bath_temperature
        weights = jnp.concatenate([n[None], jnp.ones(m - 1, c.dtype)])
        return 0.5 * kT * self.relaxation_time**2 * jnp.sum(weights * c * c) + kT * jnp.sum(weights * s)

    def get_current_temperature(self, model, state):
        """``2 KE / (N k_B)`` (K)."""
        _, ke = self._momentum_and_ke(model, state)
        return 2 * ke / (self.num_thermal_dofs(model, state) * self.boltzmanns_constant)
