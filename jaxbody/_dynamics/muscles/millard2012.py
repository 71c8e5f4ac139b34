"""OpenSim 4.6's ``Millard2012EquilibriumMuscle``: Millard 2012's quintic Bézier curves (``millard_curves``), a
fixed-width pennated fiber, first-order activation (as Thelen's), and either an elastic tendon with the fiber
length as a state or a rigid tendon (``ignore_tendon_compliance``); with fiber damping (beta > 0: the fiber
velocity solves ``(a fal fv(v) + fpe + beta v) cos(phi) = fse`` by Newton's method) or without (v from the
inverse force-velocity curve).

Structure is static (``rigid_tendon``, ``damped``, ``ignore_activation_dynamics``: OpenSim fixes them when it
finalizes the muscle); every number is an array leaf of ``Millard2012Parameters``, its curves included. The
curve adjustments OpenSim makes at finalization (fal's minimum value, the force-velocity end slopes) are made by
the builder (jaxbody._api.muscle_parameters). The damped fiber velocity is iterated to rounding (12 Newton steps
from OpenSim's start) with one last step taken with gradients on, so its first derivatives are exact (implicit
function theorem); OpenSim stops at |force error| < 1e-10 F_iso. Cost: about 10 Bézier solves per call.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbody._dynamics.muscles import activation as act
from jaxbody._dynamics.muscles import pennation
from jaxbody._dynamics.muscles.info import MuscleInfo
from jaxbody._dynamics.muscles.millard_curves import (
    ActiveForceLengthCurve,
    FiberForceLengthCurve,
    ForceVelocityCurve,
    TendonForceLengthCurve,
)
from jaxbody._dynamics.muscles.path_muscle import PathMuscle

_SIGNIFICANT = 1e-14
_NEWTON_STEPS = 12


class Millard2012Parameters(eqx.Module):
    """Every number of a Millard2012EquilibriumMuscle (OpenSim's property names; SI units, angles in rad)."""

    max_isometric_force: jax.Array
    optimal_fiber_length: jax.Array
    tendon_slack_length: jax.Array
    pennation_angle_at_optimal: jax.Array
    max_contraction_velocity: jax.Array
    activation_time_constant: jax.Array
    deactivation_time_constant: jax.Array
    minimum_activation: jax.Array
    maximum_pennation_angle: jax.Array
    fiber_damping: jax.Array
    active_force_length_curve: ActiveForceLengthCurve
    force_velocity_curve: ForceVelocityCurve
    fiber_force_length_curve: FiberForceLengthCurve
    tendon_force_length_curve: TendonForceLengthCurve

    @property
    def minimum_fiber_length(self):
        """max(1e-14, the active curve's shortest active length, the pennation model's shortest fiber) (m)."""
        penn = pennation.minimum_fiber_length(self.optimal_fiber_length, self.pennation_angle_at_optimal,
                                              self.maximum_pennation_angle)
        active = self.active_force_length_curve.min_norm_active_fiber_length * self.optimal_fiber_length
        return jnp.maximum(_SIGNIFICANT, jnp.maximum(active, penn))

    def force_velocity_inverse_curve(self) -> ForceVelocityCurve:
        """OpenSim's fvInvCurve: the force-velocity curve's shape with end slopes half the near-vmax slopes."""
        fv = self.force_velocity_curve
        return ForceVelocityCurve(0.5 * fv.concentric_slope_near_vmax, fv.concentric_slope_near_vmax,
                                  fv.isometric_slope, 0.5 * fv.eccentric_slope_near_vmax,
                                  fv.eccentric_slope_near_vmax, fv.max_eccentric_velocity_force_multiplier,
                                  fv.concentric_curviness, fv.eccentric_curviness, inverse=True)


MILLARD2012_DEFAULTS = dict(
    max_contraction_velocity=10.0,
    activation_time_constant=0.010,
    deactivation_time_constant=0.040,
    minimum_activation=0.01,
    maximum_pennation_angle=float(jnp.arccos(0.1)),
    fiber_damping=0.1,
)
"""OpenSim 4.6's defaults for Millard2012EquilibriumMuscle's scalar properties (curves: see millard_curves)."""


def _damped_velocity(p, a, fal, fpe, fse, cos_phi):
    """Normalized fiber velocity with ``(a fal fv(v) + fpe + beta v) cos(phi) = fse`` (all in F_iso units)."""
    fv_curve = p.force_velocity_curve.curve()
    beta = p.fiber_damping
    guess_fv = (fse / jnp.maximum(cos_phi, 0.01) - fpe) / (jnp.maximum(a, 0.01) * jnp.maximum(fal, 0.01))
    v0 = jnp.clip(p.force_velocity_inverse_curve().value(guess_fv), -1.0, 1.0)

    def error(v, a, fal, fpe, fse, cos_phi, beta):
        return (a * fal * fv_curve.value(v) + fpe + beta * v) * cos_phi - fse

    frozen = jax.lax.stop_gradient((a, fal, fpe, fse, cos_phi, beta))
    slope_of = jax.grad(error)

    def newton(_, v):
        s = slope_of(v, *frozen)
        return jnp.where(jnp.abs(s) > _SIGNIFICANT, v - error(v, *frozen) / jnp.where(s == 0, 1.0, s), v)

    v_star = jax.lax.stop_gradient(jax.lax.fori_loop(0, _NEWTON_STEPS, newton, jax.lax.stop_gradient(v0)))
    v = v_star - error(v_star, a, fal, fpe, fse, cos_phi, beta) / slope_of(v_star, *frozen)
    return v, fv_curve.value(v)


def millard2012_info(p: Millard2012Parameters, length, lengthening_speed, activation, fiber_length, excitation, *,
                     rigid_tendon: bool, damped: bool, ignore_activation_dynamics: bool = False) -> MuscleInfo:
    """The muscle at path length (m), lengthening speed (m/s), activation and fiber-length states (each ignored
    where the structure has no such state) and excitation."""
    ofl, tsl, fiso = p.optimal_fiber_length, p.tendon_slack_length, p.max_isometric_force
    v_max = p.max_contraction_velocity * ofl
    a = act.clamp_activation(excitation if ignore_activation_dynamics else activation, p.minimum_activation)
    l_min = p.minimum_fiber_length
    if rigid_tendon:
        lce = pennation.fiber_length_from_tendon(length, tsl, ofl, p.pennation_angle_at_optimal,
                                                 p.maximum_pennation_angle)
    else:
        lce = fiber_length
    lce = jnp.maximum(lce, l_min)
    phi = pennation.pennation_angle(lce, ofl, p.pennation_angle_at_optimal, p.maximum_pennation_angle)
    cos_phi = jnp.cos(phi)
    tendon_length = length - lce * cos_phi
    lce_n = lce / ofl
    fal = p.active_force_length_curve.value(lce_n)
    fpe = p.fiber_force_length_curve.value(lce_n)
    if rigid_tendon:
        buckled = tendon_length < tsl - _SIGNIFICANT
        v_n = jnp.where(buckled, 0.0, lengthening_speed * cos_phi / v_max)
        fv = jnp.where(buckled, 1.0, p.force_velocity_curve.value(v_n))
        fse = jnp.zeros_like(lce)
    else:
        fse = p.tendon_force_length_curve.value(tendon_length / tsl)
        if damped:
            v_n, fv = _damped_velocity(p, a, fal, fpe, fse, cos_phi)
        else:
            fv = (fse / cos_phi - fpe) / (a * fal)
            v_n = p.force_velocity_inverse_curve().value(fv)
    dlce = v_n * v_max
    clamped = (lce <= l_min) & (dlce <= 0.0)
    dlce = jnp.where(clamped, 0.0, dlce)
    v_n = jnp.where(clamped, 0.0, v_n)
    fv = jnp.where(clamped, 1.0, fv)
    active = jnp.where(clamped, 0.0, fiso * a * fal * fv)
    elastic = jnp.where(clamped, 0.0, fiso * fpe)
    damping = jnp.where(clamped, 0.0, fiso * p.fiber_damping * v_n)
    fiber_force = active + elastic + damping
    if rigid_tendon:
        compressive = fiber_force < 0.0
        damping = jnp.where(compressive, -active - elastic, damping)
        fiber_force = jnp.where(compressive, 0.0, fiber_force)
        tendon_force = fiber_force * cos_phi
    else:
        tendon_force = fse * fiso
    return MuscleInfo(
        activation=a,
        fiber_length=lce,
        fiber_velocity=dlce,
        pennation_angle=phi,
        tendon_length=tendon_length,
        active_fiber_force=active,
        passive_fiber_force=elastic + damping,
        tendon_force=tendon_force,
        activation_dot=act.activation_derivative(activation, excitation, p.activation_time_constant,
                                                 p.deactivation_time_constant, p.minimum_activation),
        fiber_length_dot=dlce,
    )


class Millard2012EquilibriumMuscle(PathMuscle):
    """OpenSim's Millard2012EquilibriumMuscle on a path; ``state_names`` follow the static switches."""

    rigid_tendon: bool = eqx.field(static=True, default=False)
    damped: bool = eqx.field(static=True, default=True)
    ignore_activation_dynamics: bool = eqx.field(static=True, default=False)

    @property
    def state_names(self) -> tuple[str, ...]:
        return (() if self.ignore_activation_dynamics else ("activation",)) + (
            () if self.rigid_tendon else ("fiber_length",))

    def calc_info(self, length, lengthening_speed, z, excitation) -> MuscleInfo:
        a = excitation if self.ignore_activation_dynamics else z[0]
        lce = jnp.zeros_like(length) if self.rigid_tendon else z[-1]
        return millard2012_info(self.parameters, length, lengthening_speed, a, lce, excitation,
                                rigid_tendon=self.rigid_tendon, damped=self.damped,
                                ignore_activation_dynamics=self.ignore_activation_dynamics)
