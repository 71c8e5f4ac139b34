"""OpenSim's fixed-width pennation model (``MuscleFixedWidthPennationModel``): the fiber keeps the parallelogram
height h = l_opt sin(phi_opt) as it shortens, so sin(phi) = h / l_fiber, up to a maximum pennation angle.

Lengths in m, velocities in m/s, angles in rad; every function is scalar (batch with ``jax.vmap``).
"""

from __future__ import annotations

import jax.numpy as jnp

# SimTK::Eps: a pennation angle at optimal below this is treated as zero (the fiber runs along the tendon).
_EPS = 2.220446049250313e-16
_SIGNIFICANT = 1e-14


def parallelogram_height(optimal_fiber_length, pennation_at_optimal):
    """h = l_opt sin(phi_opt) (m)."""
    return optimal_fiber_length * jnp.sin(pennation_at_optimal)


def minimum_fiber_length(optimal_fiber_length, pennation_at_optimal, maximum_pennation_angle):
    """The shortest fiber the model allows (m): h / sin(phi_max), or 1% of l_opt when phi_max is 0."""
    h = parallelogram_height(optimal_fiber_length, pennation_at_optimal)
    sin_max = jnp.sin(maximum_pennation_angle)
    safe = jnp.where(maximum_pennation_angle > _SIGNIFICANT, sin_max, 1.0)
    return jnp.where(maximum_pennation_angle > _SIGNIFICANT, h / safe, 0.01 * optimal_fiber_length)


def pennation_angle(fiber_length, optimal_fiber_length, pennation_at_optimal, maximum_pennation_angle):
    """phi (rad) at fiber length l (m): asin(h / l), capped at phi_max; 0 for a fiber with no pennation."""
    h = parallelogram_height(optimal_fiber_length, pennation_at_optimal)
    l_min = minimum_fiber_length(optimal_fiber_length, pennation_at_optimal, maximum_pennation_angle)
    sin_phi = h / jnp.maximum(fiber_length, l_min)
    below_max = (fiber_length > l_min) & (sin_phi < jnp.sin(maximum_pennation_angle))
    phi = jnp.where(below_max, jnp.arcsin(jnp.where(below_max, sin_phi, 0.0)), maximum_pennation_angle)
    return jnp.where(pennation_at_optimal > _EPS, phi, 0.0)


def fiber_length_from_tendon(muscle_length, tendon_length, optimal_fiber_length, pennation_at_optimal,
                             maximum_pennation_angle):
    """Fiber length (m) that fills a muscle of length l_MT with a tendon of length l_T: sqrt(h^2 + (l_MT - l_T)^2),
    or the minimum fiber length where the fiber's projection is shorter than the minimum's."""
    h = parallelogram_height(optimal_fiber_length, pennation_at_optimal)
    l_min = minimum_fiber_length(optimal_fiber_length, pennation_at_optimal, maximum_pennation_angle)
    along = muscle_length - tendon_length
    min_along = l_min * jnp.cos(maximum_pennation_angle)
    return jnp.where(along >= min_along, jnp.sqrt(h * h + along * along), l_min)
