"""OpenSim 4.6's ``Thelen2003Muscle``: an elastic tendon in series with a pennated fiber (fixed-width pennation),
first-order activation; state variables activation and fiber length.

At a state the fiber velocity is not a state: it follows from force balance along the tendon,
``(a fal fv + fpe) cos(phi) = fse``, by inverting Thelen's force-velocity curve (``thelen_curves``). When the
fiber sits at its minimum length and would shorten further, OpenSim clamps it (fiber velocity 0, fv = 1, no
active force); so does ``thelen2003_info``. Its tension is the tendon force ``fse * F_iso``.

Parameters are array leaves of ``Thelen2003Parameters`` (scalars for one muscle; a leading axis batches muscles
under ``jax.vmap``). Cost: a few dozen flops per muscle, no iteration.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbody._dynamics.muscles import activation as act
from jaxbody._dynamics.muscles import pennation
from jaxbody._dynamics.muscles import thelen_curves as curves
from jaxbody._dynamics.muscles.info import MuscleInfo
from jaxbody._dynamics.muscles.path_muscle import PathMuscle


class Thelen2003Parameters(eqx.Module):
    """Every number of a Thelen2003Muscle (OpenSim's property names in snake_case; SI units, angles in rad)."""

    max_isometric_force: jax.Array
    optimal_fiber_length: jax.Array
    tendon_slack_length: jax.Array
    pennation_angle_at_optimal: jax.Array
    max_contraction_velocity: jax.Array  # optimal fiber lengths per second
    activation_time_constant: jax.Array
    deactivation_time_constant: jax.Array
    minimum_activation: jax.Array
    maximum_pennation_angle: jax.Array
    fmax_tendon_strain: jax.Array
    fmax_muscle_strain: jax.Array
    k_shape_active: jax.Array
    k_shape_passive: jax.Array
    af: jax.Array
    flen: jax.Array
    fv_linear_extrap_threshold: jax.Array

    @property
    def minimum_fiber_length(self):
        """The pennation model's shortest fiber (m)."""
        return pennation.minimum_fiber_length(
            self.optimal_fiber_length, self.pennation_angle_at_optimal, self.maximum_pennation_angle
        )

    def pennation_angle(self, fiber_length):
        """phi (rad) at fiber length (m)."""
        return pennation.pennation_angle(
            fiber_length, self.optimal_fiber_length, self.pennation_angle_at_optimal, self.maximum_pennation_angle
        )


THELEN2003_DEFAULTS = dict(
    max_contraction_velocity=10.0,
    activation_time_constant=0.015,
    deactivation_time_constant=0.050,
    minimum_activation=0.01,
    maximum_pennation_angle=float(jnp.arccos(0.1)),
    fmax_tendon_strain=0.04,
    fmax_muscle_strain=0.6,
    k_shape_active=0.45,
    k_shape_passive=5.0,
    af=0.25,
    flen=1.4,
    fv_linear_extrap_threshold=0.95,
)
"""OpenSim 4.6's defaults for the Thelen2003Muscle properties that have one."""


def thelen2003_info(p: Thelen2003Parameters, length, lengthening_speed, activation, fiber_length,
                    excitation) -> MuscleInfo:
    """The muscle at path length l_MT (m), lengthening speed (m/s), activation and fiber-length states, excitation."""
    a = act.clamp_activation(activation, p.minimum_activation)
    l_min = p.minimum_fiber_length
    lce = jnp.maximum(fiber_length, l_min)
    phi = p.pennation_angle(lce)
    cos_phi = jnp.cos(phi)
    tendon_length = length - lce * cos_phi
    lce_n = lce / p.optimal_fiber_length
    fse = curves.tendon_force_length(tendon_length / p.tendon_slack_length, p.fmax_tendon_strain)
    fal = curves.active_force_length(lce_n, p.k_shape_active)
    fpe = curves.passive_force_length(lce_n, p.fmax_muscle_strain, p.k_shape_passive)
    a_fal_fv = fse / cos_phi - fpe
    dlce_n = curves.normalized_fiber_velocity(a, fal, a_fal_fv, p.af, p.flen, p.fv_linear_extrap_threshold)
    clamped = (fiber_length <= l_min) & (dlce_n <= 0.0)
    dlce = jnp.where(clamped, 0.0, dlce_n * p.max_contraction_velocity * p.optimal_fiber_length)
    active = jnp.where(clamped, 0.0, a_fal_fv * p.max_isometric_force)
    return MuscleInfo(
        activation=a,
        fiber_length=lce,
        fiber_velocity=dlce,
        pennation_angle=phi,
        tendon_length=tendon_length,
        active_fiber_force=active,
        passive_fiber_force=fpe * p.max_isometric_force,
        tendon_force=fse * p.max_isometric_force,
        activation_dot=act.activation_derivative(
            activation, excitation, p.activation_time_constant, p.deactivation_time_constant, p.minimum_activation
        ),
        fiber_length_dot=dlce,
    )


class Thelen2003Muscle(PathMuscle):
    """OpenSim's Thelen2003Muscle on a path: state (activation, fiber_length), tension = tendon force."""

    state_names: ClassVar[tuple[str, ...]] = ("activation", "fiber_length")

    def calc_info(self, length, lengthening_speed, z, excitation) -> MuscleInfo:
        return thelen2003_info(self.parameters, length, lengthening_speed, z[0], z[1], excitation)
