"""De Groote, Kinney, Rao and Fregly 2016's muscle curves in closed form, with OpenSim 4.6's constants
(``DeGrooteFregly2016Muscle``: the active curve's b11 set so fal(1) = 1, the force-velocity d1, d4 solved so the
curve passes (-1, 0) and (0, 1), the tendon's c2 = c3 so fse(1) = 0).

Scalar functions of normalized quantities (dimensionless), smooth everywhere; batch with ``jax.vmap``.
"""

from __future__ import annotations

import jax.numpy as jnp

# (b1, b2, b3, b4) of the three Gaussian-like terms of the active force-length curve.
_ACTIVE_TERMS = (
    (0.8150671134243542, 1.055033428970575, 0.162384573599574, 0.063303448465465),
    (0.433004984392647, 0.716775413397760, -0.029947116970696, 0.200356847296188),
    (0.1, 1.0, 0.353553390593274, 0.0),
)
K_PE = 4.0
C1, C2, C3 = 0.200, 1.0, 0.200
D1, D2, D3, D4 = -0.3211346127989808, -8.149, -0.374, 0.8825327733249912
MIN_NORM_FIBER_LENGTH = 0.2
MAX_NORM_FIBER_LENGTH = 1.8


def active_force_length(lce_n, active_force_width_scale):
    """fal (1): three Gaussian-like terms at x = (lce_n - 1) / scale + 1."""
    x = (lce_n - 1.0) / active_force_width_scale + 1.0
    return sum(b1 * jnp.exp(-0.5 * (x - b2) ** 2 / (b3 + b4 * x) ** 2) for b1, b2, b3, b4 in _ACTIVE_TERMS)


def passive_force_length(lce_n, passive_fiber_strain_at_one_norm_force):
    """fpe (1): exponential, 0 at the minimum normalized fiber length 0.2 and 1 at 1 + e0."""
    e0 = passive_fiber_strain_at_one_norm_force
    offset = jnp.exp(K_PE * (MIN_NORM_FIBER_LENGTH - 1.0) / e0)
    return (jnp.exp(K_PE * (lce_n - 1.0) / e0) - offset) / (jnp.exp(K_PE) - offset)


def tendon_stiffness_parameter(tendon_strain_at_one_norm_force):
    """kT (1): the tendon curve's exponent, from the strain at which the tendon force is F_iso."""
    return jnp.log((1.0 + C3) / C1) / (1.0 + tendon_strain_at_one_norm_force - C2)


def tendon_force_length(tl_n, tendon_strain_at_one_norm_force):
    """fse (1) = c1 exp(kT (tl_n - c2)) - c3."""
    return C1 * jnp.exp(tendon_stiffness_parameter(tendon_strain_at_one_norm_force) * (tl_n - C2)) - C3


def tendon_force_length_inverse(fse, tendon_strain_at_one_norm_force):
    """tl_n (1) with ``tendon_force_length(tl_n) = fse``."""
    return jnp.log((fse + C3) / C1) / tendon_stiffness_parameter(tendon_strain_at_one_norm_force) + C2


def tendon_length_rate(normalized_tendon_force_dot, tl_n, tendon_strain_at_one_norm_force):
    """d(tl_n)/dt (1/s) at normalized tendon length tl_n from d(fse)/dt = fse'(tl_n) d(tl_n)/dt (OpenSim's
    calcTendonForceLengthInverseCurveDerivative)."""
    k_t = tendon_stiffness_parameter(tendon_strain_at_one_norm_force)
    return normalized_tendon_force_dot / (C1 * k_t * jnp.exp(k_t * (tl_n - C2)))


def force_velocity(v_n):
    """fv (1) at normalized fiber velocity v_n (max contraction velocities; negative shortening)."""
    t = D2 * v_n + D3
    return D1 * jnp.log(t + jnp.sqrt(t * t + 1.0)) + D4


def force_velocity_inverse(fv):
    """v_n (1) with ``force_velocity(v_n) = fv``."""
    return (jnp.sinh((fv - D4) / D1) - D3) / D2
