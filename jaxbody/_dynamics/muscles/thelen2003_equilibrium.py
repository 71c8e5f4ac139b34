"""Thelen2003Muscle's initial fiber equilibrium (OpenSim's ``computeInitialFiberEquilibrium``): the fiber length at
which the fiber's force along the tendon equals the tendon's, given path length l_MT (m), lengthening speed (m/s)
and activation, with the path's speed split between fiber and tendon by their stiffnesses.

The values follow OpenSim's own iteration step for step (Newton on the fiber length with step halving, at most 20
iterations, tolerance max(1e-8 F_iso, 1e-13) N on the force error; a fiber driven below its minimum length stops
there), in a ``lax.while_loop``. Derivatives do not differentiate the loop: ``lax.custom_root`` applies the
implicit function theorem to the two equations the iteration converges to, in (fiber length l, force-velocity
multiplier fv):

    (a fal(l) fv + fpe(l)) cos(phi(l)) - fse(l) = 0,   fv - fvInv(a, fal(l), v_n(l, fv)) = 0,

v_n the normalized fiber velocity of the stiffness split. A fiber at its minimum length has zero derivative.
Cost: up to 20 Newton steps of a few dozen flops each (times the step halvings); one 2x2 solve per tangent.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._dynamics.muscles import pennation
from jaxbody._dynamics.muscles import thelen_curves as curves
from jaxbody._dynamics.muscles.thelen2003 import Thelen2003Parameters

_MAX_ITERATIONS = 20
_SQRT_EPS = 1.4901161193847656e-08
_SIGNIFICANT = 1e-14


def _position(p, ml, lce):
    phi = p.pennation_angle(lce)
    cos_phi = jnp.cos(phi)
    tl = ml - lce * cos_phi
    return phi, cos_phi, tl


def _multipliers(p, lce, tl):
    lce_n = lce / p.optimal_fiber_length
    fse = curves.tendon_force_length(tl / p.tendon_slack_length, p.fmax_tendon_strain)
    fal = curves.active_force_length(lce_n, p.k_shape_active)
    fpe = curves.passive_force_length(lce_n, p.fmax_muscle_strain, p.k_shape_passive)
    return fse, fal, fpe


def _partials(p, a, lce, phi, cos_phi, tl, fv, fm):
    """OpenSim's dFmAT/dlce, dFt/dtl, dFt/dlce (N/m) as Thelen2003Muscle writes them."""
    ofl, tsl, fiso = p.optimal_fiber_length, p.tendon_slack_length, p.max_isometric_force
    h = pennation.parallelogram_height(ofl, p.pennation_angle_at_optimal)
    lce_n = lce / ofl
    dfal = jax.grad(curves.active_force_length)(lce_n, p.k_shape_active)
    dfpe = jax.grad(curves.passive_force_length)(lce_n, p.fmax_muscle_strain, p.k_shape_passive)
    dfse = jax.grad(curves.tendon_force_length)(tl / tsl, p.fmax_tendon_strain)
    dfm_dlce = (a * fv * dfal + dfpe) * fiso / ofl
    dcos_dlce = h * h / (lce**3 * jnp.sqrt(1.0 - h * h / (lce * lce)))
    dfmat_dlce = dfm_dlce * cos_phi + fm * dcos_dlce
    dphi_dlce = -h / (lce * lce * jnp.sqrt(1.0 - (h / lce) ** 2))
    dtl_dlce = -jnp.cos(phi) + lce * jnp.sin(phi) * dphi_dlce
    dft_dtl = dfse * fiso / tsl
    return dfmat_dlce, dft_dtl, dfse * dtl_dlce * fiso / tsl


def _fiber_velocity_multiplier(p, a, dml, lce, cos_phi, tl, fal, dfmat_dlce, dft_dtl):
    """fv from OpenSim's stiffness split of the path speed between tendon and fiber."""
    k_fiber = dfmat_dlce * cos_phi
    split = (jnp.abs(k_fiber + dft_dtl) > _SIGNIFICANT) & (tl > p.tendon_slack_length)
    dtl = jnp.where(split, k_fiber / jnp.where(split, k_fiber + dft_dtl, 1.0) * dml, dml)
    dlce_n = (dml - dtl) * cos_phi / (p.max_contraction_velocity * p.optimal_fiber_length)
    return curves.force_velocity_inverse(a, fal, dlce_n, p.af, p.flen, p.fv_linear_extrap_threshold)


def _force_error(p, a, lce, ml, fv):
    phi, cos_phi, tl = _position(p, ml, lce)
    fse, fal, fpe = _multipliers(p, lce, tl)
    fm = (a * fal * fv + fpe) * p.max_isometric_force
    return fm * cos_phi - fse * p.max_isometric_force, fm, (phi, cos_phi, tl, fal)


def _solve(p, a, ml, dml, tol):
    """OpenSim's iteration: (fiber length, fv, converged, at lower bound)."""
    l_min = p.minimum_fiber_length
    lce0 = pennation.fiber_length_from_tendon(ml, 1.01 * p.tendon_slack_length, p.optimal_fiber_length,
                                              p.pennation_angle_at_optimal, p.maximum_pennation_angle)

    def derivatives(lce, fv, fm):
        phi, cos_phi, tl = _position(p, ml, lce)
        _, fal, _ = _multipliers(p, lce, tl)
        dfmat, dft_dtl, dft_dlce = _partials(p, a, lce, phi, cos_phi, tl, fv, fm)
        fv_new = _fiber_velocity_multiplier(p, a, dml, lce, cos_phi, tl, fal, dfmat, dft_dtl)
        return dfmat - dft_dlce, fv_new

    _, fv1 = derivatives(lce0, 1.0, jnp.zeros_like(ml))
    ferr, fm, _ = _force_error(p, a, lce0, ml, fv1)
    slope, _ = derivatives(lce0, fv1, fm)

    def outer_cond(c):
        _, _, ferr, _, _, it = c
        return (jnp.abs(ferr) > tol) & (it < _MAX_ITERATIONS)

    def outer_body(c):
        lce_prev, fv, ferr_prev, fm, slope, it = c

        def inner_cond(ic):
            _, ferr, _, h, done = ic
            return (jnp.abs(ferr) >= jnp.abs(ferr_prev)) & ~done

        def inner_body(ic):
            _, _, _, h, _ = ic
            delta = -h * ferr_prev / slope
            big = jnp.abs(delta) > _SIGNIFICANT
            lce = jnp.where(big, lce_prev + delta, lce_prev - jnp.sign(delta) * _SQRT_EPS)
            h = jnp.where(big, h, 0.0)
            lce = jnp.where(lce < l_min, l_min, lce)
            ferr, fm, _ = _force_error(p, a, lce, ml, fv)
            return lce, ferr, fm, 0.5 * h, h <= _SQRT_EPS

        lce, ferr, fm, _, _ = jax.lax.while_loop(inner_cond, inner_body, (lce_prev, ferr_prev, fm, 1.0, False))
        slope_new, fv_new = derivatives(lce, fv, fm)
        return lce, fv_new, ferr, fm, slope_new, it + 1

    lce, fv, ferr, _, _, _ = jax.lax.while_loop(outer_cond, outer_body, (lce0, fv1, ferr, fm, slope, 0))
    return lce, fv, jnp.abs(ferr) < tol, lce <= l_min


def _residual(p, a, ml, dml, x):
    """The two equilibrium equations in x = (fiber length, fv), normalized by F_iso."""
    lce, fv = x[0], x[1]
    ferr, fm, (phi, cos_phi, tl, fal) = _force_error(p, a, lce, ml, fv)
    dfmat, dft_dtl, _ = _partials(p, a, lce, phi, cos_phi, tl, fv, fm)
    fv_of_speed = _fiber_velocity_multiplier(p, a, dml, lce, cos_phi, tl, fal, dfmat, dft_dtl)
    return jnp.stack([ferr / p.max_isometric_force, fv - fv_of_speed])


def thelen2003_equilibrium_fiber_length(p: Thelen2003Parameters, length, lengthening_speed, activation):
    """The equilibrium fiber length (m) at path length (m), lengthening speed (m/s) and activation (clamped to
    [a_min, 1]); NaN where OpenSim's iteration fails (it throws MuscleCannotEquilibrate there)."""
    a = jnp.clip(activation, p.minimum_activation, 1.0)
    tol = jnp.maximum(1e-8 * p.max_isometric_force, 1e-13)
    lce, fv, converged, at_min = _solve(*jax.lax.stop_gradient((p, a, length, lengthening_speed, tol)))
    at_min = at_min & ~converged

    def solve(f, x0):
        return jnp.stack([lce, fv])

    def tangent_solve(g, y):
        return jnp.linalg.solve(jax.jacfwd(g)(jnp.zeros_like(y)), y)

    x = jax.lax.custom_root(lambda x: _residual(p, a, length, lengthening_speed, x),
                            jnp.stack([lce, fv]), solve, tangent_solve)
    l_min = p.minimum_fiber_length
    return jnp.where(converged, x[0], jnp.where(at_min, l_min, jnp.nan))
