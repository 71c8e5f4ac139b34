"""Millard2012EquilibriumMuscle's initial fiber equilibrium (OpenSim's ``computeInitialFiberEquilibrium``, which
is ``computeFiberEquilibrium(s, solveForVelocity=false)``): the fiber length at which the fiber's force along the
tendon equals the tendon's with the fiber at rest (force-velocity multiplier 1, no damping force), given path
length l_MT (m) and activation (clamped to [a_min, 1]). The path's lengthening speed plays no part.

The values follow OpenSim's ``estimateMuscleFiberState`` step for step: start at the fiber length that leaves the
tendon at 1.01 slack lengths, then Newton on the fiber length with step halving, OpenSim's analytic slope of the
force error, at most 200 iterations, tolerance max(1e-8 F_iso, 10 SignificantReal) N; a fiber driven below its
minimum length stops there. In a ``lax.while_loop``. Derivatives do not differentiate the loop:
``lax.custom_root`` applies the implicit function theorem to the equation the iteration converges to,

    (a fal(l) + fpe(l)) cos(phi(l)) - fse((l_MT - l cos(phi(l))) / l_s) = 0   (in units of F_iso).

A fiber at its minimum length returns that length (its derivatives are the minimum length's). NaN where OpenSim
throws MuscleCannotEquilibrate. A rigid-tendon muscle has no fiber state: there is nothing to solve.
Cost: up to 200 Newton steps (a handful when it converges) of three Bézier curve evaluations and slopes each.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._dynamics.muscles import activation as act
from jaxbody._dynamics.muscles import pennation
from jaxbody._dynamics.muscles.millard2012 import Millard2012Parameters
from jaxbody._math.linalg import SIGNIFICANT_REAL

_MAX_ITERATIONS = 200
_SQRT_EPS = 1.4901161193847656e-08


class _AtRest:
    """The muscle's curves built once (Bézier control points), with its numbers, for one solve."""

    def __init__(self, p: Millard2012Parameters, a, ml):
        self.p, self.a, self.ml = p, a, ml
        self.fal = p.active_force_length_curve.curve()
        self.fpe = p.fiber_force_length_curve.curve()
        self.fse = p.tendon_force_length_curve.curve()
        self.h = pennation.parallelogram_height(p.optimal_fiber_length, p.pennation_angle_at_optimal)

    def force_error(self, lce):
        """(fiber force along the tendon - tendon force) (N) at fiber length lce, fiber at rest."""
        p = self.p
        phi = pennation.pennation_angle(lce, p.optimal_fiber_length, p.pennation_angle_at_optimal,
                                        p.maximum_pennation_angle)
        cos_phi = jnp.cos(phi)
        lce_n = lce / p.optimal_fiber_length
        tl_n = (self.ml - lce * cos_phi) / p.tendon_slack_length
        fm = p.max_isometric_force * (self.a * self.fal.value(lce_n) + self.fpe.value(lce_n))
        return fm * cos_phi - self.fse.value(tl_n) * p.max_isometric_force

    def slope(self, lce):
        """OpenSim's d(force error)/d(fiber length) (N/m): dFmAT/dlce - dFt/dtl dtl/dlce with the pennation
        model's unclamped dphi/dlce = -(h/l)/l / sqrt(1 - (h/l)^2)."""
        p = self.p
        ofl, tsl, fiso = p.optimal_fiber_length, p.tendon_slack_length, p.max_isometric_force
        phi = pennation.pennation_angle(lce, ofl, p.pennation_angle_at_optimal, p.maximum_pennation_angle)
        cos_phi, sin_phi = jnp.cos(phi), jnp.sin(phi)
        lce_n = lce / ofl
        tl_n = (self.ml - lce * cos_phi) / tsl
        one = jnp.ones_like(lce_n)
        fal, dfal = jax.jvp(self.fal.value, (lce_n,), (one,))
        fpe, dfpe = jax.jvp(self.fpe.value, (lce_n,), (one,))
        fm = fiso * (self.a * fal + fpe)
        dfm = fiso * (self.a * dfal + dfpe) / ofl
        h_over_l = self.h / lce
        dphi = (-h_over_l / lce) / jnp.sqrt(1.0 - h_over_l * h_over_l)
        dfmat = dfm * cos_phi - fm * sin_phi * dphi
        dtl = lce * sin_phi * dphi - cos_phi
        dfse = jax.jvp(self.fse.value, (tl_n,), (jnp.ones_like(tl_n),))[1]
        return dfmat - dfse * fiso / tsl * dtl


def _solve(p, a, ml):
    """OpenSim's iteration: (fiber length, converged)."""
    s = _AtRest(p, a, ml)
    l_min = p.minimum_fiber_length
    tol = jnp.maximum(1e-8 * p.max_isometric_force, 10.0 * SIGNIFICANT_REAL)
    lce0 = jnp.maximum(pennation.fiber_length_from_tendon(ml, 1.01 * p.tendon_slack_length, p.optimal_fiber_length,
                                                          p.pennation_angle_at_optimal, p.maximum_pennation_angle),
                       l_min)
    ferr0 = s.force_error(lce0)

    def outer_cond(c):
        _, ferr, _, it = c
        return (jnp.abs(ferr) > tol) & (it < _MAX_ITERATIONS)

    def outer_body(c):
        lce_prev, ferr_prev, slope, it = c

        def inner_cond(ic):
            _, ferr, _, done = ic
            return (jnp.abs(ferr) >= jnp.abs(ferr_prev)) & ~done

        def inner_body(ic):
            _, _, h, _ = ic
            delta = -h * ferr_prev / slope
            big = jnp.abs(delta) > SIGNIFICANT_REAL
            lce = jnp.where(big, lce_prev + delta, lce_prev - jnp.sign(delta) * _SQRT_EPS)
            h = jnp.where(big, h, 0.0)
            lce = jnp.where(lce < l_min, l_min, lce)
            return lce, s.force_error(lce), 0.5 * h, h <= _SQRT_EPS

        lce, ferr, _, _ = jax.lax.while_loop(inner_cond, inner_body, (lce_prev, ferr_prev, 1.0, False))
        return lce, ferr, s.slope(lce), it + 1

    lce, ferr, _, _ = jax.lax.while_loop(outer_cond, outer_body, (lce0, ferr0, s.slope(lce0), 0))
    return lce, jnp.abs(ferr) < tol


def millard2012_equilibrium_fiber_length(p: Millard2012Parameters, length, activation):
    """The fiber length (m) at rest-equilibrium at path length (m) and activation (clamped to [a_min, 1]):
    OpenSim's computeInitialFiberEquilibrium of an elastic-tendon Millard2012EquilibriumMuscle; its minimum
    fiber length where OpenSim's iteration stops there, NaN where OpenSim throws."""
    a = act.clamp_activation(activation, p.minimum_activation)
    l_min = p.minimum_fiber_length
    lce, converged = _solve(*jax.lax.stop_gradient((p, a, length)))
    at_min = ~converged & (lce <= jax.lax.stop_gradient(l_min))

    def residual(x):
        return _AtRest(p, a, length).force_error(x) / p.max_isometric_force

    x = jax.lax.custom_root(residual, lce, lambda f, x0: lce, lambda g, y: y / g(jnp.ones_like(y)))
    return jnp.where(converged, jnp.maximum(x, l_min), jnp.where(at_min, l_min, jnp.nan))
