"""OpenSim 4.6's ``RigidTendonMuscle``: an inextensible tendon of its slack length in series with a pennated
fiber of constant width; no state variables, its activation is its excitation.

Fiber length ``l_f = sqrt((l_MT - l_slack)^2 + w^2)`` (``(l_MT - l_slack)`` floored at 0; ``w = l_opt
sin(phi_opt)``; ``w = 0`` when ``w <= sqrt(eps)``, then ``cos(phi) = 1``), fiber velocity = the path's lengthening
speed (OpenSim's RigidTendonMuscle does not divide by cos(phi)), tension
``F_iso (a fal(l_f/l_opt) fv(v/(l_opt v_max)) + clamp(fpe(l_f/l_opt), 0, 10)) cos(phi)``; its three curves are
SimmSplines whose knots are Model leaves (``simm_spline.SimmSplineCurve``). Stage: Velocity. Cost: three
spline evaluations (O(knots) each).
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.muscles.info import MuscleInfo
from jaxbody._dynamics.muscles.path_muscle import PathMuscle
from jaxbody._dynamics.muscles.simm_spline import SimmSplineCurve

_SQRT_EPS = float(np.sqrt(np.finfo(float).eps))  # SimTK::SqrtEps


class RigidTendonParameters(eqx.Module):
    """Every number of a RigidTendonMuscle (SI units, angles in rad; curves of normalized length / velocity)."""

    max_isometric_force: jax.Array
    optimal_fiber_length: jax.Array
    tendon_slack_length: jax.Array
    pennation_angle_at_optimal: jax.Array
    max_contraction_velocity: jax.Array  # optimal fiber lengths per second
    active_force_length_curve: SimmSplineCurve
    passive_force_length_curve: SimmSplineCurve
    force_velocity_curve: SimmSplineCurve


def rigid_tendon_info(p: RigidTendonParameters, length, lengthening_speed, excitation) -> MuscleInfo:
    """The muscle at path length l_MT (m), lengthening speed (m/s) and excitation (= activation, not clamped)."""
    along = jnp.maximum(length - p.tendon_slack_length, 0.0)
    width = p.optimal_fiber_length * jnp.sin(p.pennation_angle_at_optimal)
    wide = width > _SQRT_EPS
    fiber = jnp.where(wide, jnp.sqrt(along**2 + jnp.where(wide, width, 0.0) ** 2), along)
    safe = jnp.where(fiber > 0.0, fiber, 1.0)
    cos_phi = jnp.where(wide, along / safe, 1.0)
    norm_length = fiber / p.optimal_fiber_length
    fal = p.active_force_length_curve(norm_length)
    fpe = jnp.clip(p.passive_force_length_curve(norm_length), 0.0, 10.0)
    fv = p.force_velocity_curve(lengthening_speed / (p.optimal_fiber_length * p.max_contraction_velocity))
    active = p.max_isometric_force * excitation * fal * fv
    passive = p.max_isometric_force * fpe
    zero = jnp.zeros_like(active)
    return MuscleInfo(
        activation=excitation,
        fiber_length=fiber,
        fiber_velocity=lengthening_speed,
        pennation_angle=jnp.arccos(jnp.clip(cos_phi, -1.0, 1.0)),
        tendon_length=p.tendon_slack_length,
        active_fiber_force=active,
        passive_fiber_force=passive,
        tendon_force=(active + passive) * cos_phi,
        activation_dot=zero,
        fiber_length_dot=zero,
    )


class RigidTendonMuscle(PathMuscle):
    """OpenSim's RigidTendonMuscle on a path: no state variables, tension = fiber force along the tendon."""

    state_names: ClassVar[tuple[str, ...]] = ()

    def calc_info(self, length, lengthening_speed, z, excitation) -> MuscleInfo:
        return rigid_tendon_info(self.parameters, length, lengthening_speed, excitation)

    def calc(self, model, state):
        return self.calc_with_z(model, state, jnp.zeros((0,), state.q.dtype))
