"""First-order activation dynamics (OpenSim's ``MuscleFirstOrderActivationDynamicModel``, Thelen 2003's form).

da/dt = (u - a) / tau with a clamped to [a_min, 1] and
tau = tau_act (0.5 + 1.5 a) when the excitation u exceeds a, tau_deact / (0.5 + 1.5 a) otherwise.
Times in s, activation and excitation dimensionless; scalar functions (batch with ``jax.vmap``).
"""

from __future__ import annotations

import jax.numpy as jnp


def clamp_activation(activation, minimum_activation):
    """a clamped to [a_min, 1]."""
    return jnp.clip(activation, minimum_activation, 1.0)


def activation_derivative(activation, excitation, activation_time_constant, deactivation_time_constant,
                          minimum_activation):
    """da/dt (1/s) of the first-order activation model."""
    a = clamp_activation(activation, minimum_activation)
    tau = jnp.where(
        excitation > a,
        activation_time_constant * (0.5 + 1.5 * a),
        deactivation_time_constant / (0.5 + 1.5 * a),
    )
    return (excitation - a) / tau
