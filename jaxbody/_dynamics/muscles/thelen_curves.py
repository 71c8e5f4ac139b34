"""Thelen 2003's muscle curves in closed form, as OpenSim 4.6's ``Thelen2003Muscle`` writes them.

Every curve is a scalar function of normalized quantities (dimensionless) and differentiable in all of its
arguments; batch with ``jax.vmap``. The piecewise curves select with ``jnp.where`` on operands that are finite on
every branch, so their gradients are finite everywhere.

- ``active_force_length(lce_n, k_shape_active)``: fal = exp(-(lce_n - 1)^2 / K_shape_active).
- ``passive_force_length(lce_n, fmax_muscle_strain, k_shape_passive)``: fpe, exponential above lce_n = 1, 0 below.
- ``tendon_force_length(tl_n, fmax_tendon_strain)``: fse, an exponential toe up to the exact toe strain
  eToe = 99 e0 e^3 / (166 e^3 - 67), then linear (Ftoe = 0.33, kToe = 3).
- ``normalized_fiber_velocity(a, fal, a_fal_fv, af, flen, threshold)``: Thelen's inverted force-velocity relation
  dlce_n(F) (in units of max contraction velocity x optimal fiber length), linearly extrapolated below 0 and above
  ``threshold * a * fal * flen`` as OpenSim does.
- ``force_velocity_inverse(a, fal, dlce_n, af, flen, threshold)``: the fv that gives dlce_n, in closed form (OpenSim
  iterates Newton to |error| < 1e-6 on dlce_n; this is its exact root), clamped at 0 like OpenSim.
"""

from __future__ import annotations

import jax.numpy as jnp

_F_TOE = 0.33
_K_TOE = 3.0


def active_force_length(lce_n, k_shape_active):
    """Thelen's active force-length multiplier fal (1) at normalized fiber length lce_n."""
    return jnp.exp(-((lce_n - 1.0) ** 2) / k_shape_active)


def passive_force_length(lce_n, fmax_muscle_strain, k_shape_passive):
    """Thelen's passive force-length multiplier fpe (1): (exp(kpe (lce_n - 1)/e0) - 1)/(exp(kpe) - 1) above 1, else 0."""
    x = jnp.maximum(lce_n - 1.0, 0.0)
    fpe = (jnp.exp(k_shape_passive * x / fmax_muscle_strain) - 1.0) / (jnp.exp(k_shape_passive) - 1.0)
    return jnp.where(lce_n > 1.0, fpe, 0.0)


def toe_strain(fmax_tendon_strain):
    """(eToe, klin): the strain where the tendon curve turns linear, and its linear stiffness (1)."""
    e3 = jnp.exp(3.0)
    e_toe = 99.0 * fmax_tendon_strain * e3 / (166.0 * e3 - 67.0)
    k_lin = 0.67 / (fmax_tendon_strain - e_toe)
    return e_toe, k_lin


def tendon_force_length(tl_n, fmax_tendon_strain):
    """Thelen's tendon force multiplier fse (1) at normalized tendon length tl_n."""
    x = tl_n - 1.0
    e_toe, k_lin = toe_strain(fmax_tendon_strain)
    x_toe = jnp.clip(x, 0.0, e_toe)
    toe = _F_TOE / (jnp.exp(_K_TOE) - 1.0) * (jnp.exp(_K_TOE * x_toe / e_toe) - 1.0)
    linear = k_lin * (x - e_toe) + _F_TOE
    return jnp.where(x > e_toe, linear, jnp.where(x > 0.0, toe, 0.0))


def _velocity_branch(a, afl, force, af, flen):
    """dlce_n and d(dlce_n)/dF of Thelen's hyperbola at fiber force ``force`` = a fal fv (1)."""
    c = 0.25 + 0.75 * a
    k_ecc = (2.0 + 2.0 / af) / (flen - 1.0)
    concentric = force <= afl
    b = jnp.where(concentric, afl + force / af, k_ecc * (afl * flen - force))
    db = jnp.where(concentric, 1.0 / af, -k_ecc)
    dlce_n = c * (force - afl) / b
    return dlce_n, c / b - c * (force - afl) / (b * b) * db


def normalized_fiber_velocity(a, fal, a_fal_fv, af, flen, threshold):
    """Thelen's normalized fiber velocity dlce_n (1) at activation a, fal and fiber force multiple a fal fv."""
    afl = a * fal
    upper = threshold * afl * flen
    inside = (a_fal_fv > 0.0) & (a_fal_fv < upper)
    anchor = jnp.where(a_fal_fv <= 0.0, 0.0, upper)
    force = jnp.where(inside, a_fal_fv, anchor)
    dlce_n, slope = _velocity_branch(a, afl, force, af, flen)
    return jnp.where(inside, dlce_n, dlce_n + slope * (a_fal_fv - anchor))


def force_velocity_inverse(a, fal, dlce_n, af, flen, threshold):
    """fv (1) with ``normalized_fiber_velocity(a, fal, a fal fv) = dlce_n``, clamped at 0 (OpenSim's calcfvInv)."""
    afl = a * fal
    c = 0.25 + 0.75 * a
    k_ecc = (2.0 + 2.0 / af) / (flen - 1.0)
    upper = threshold * afl * flen
    v_lo, slope_lo = _velocity_branch(a, afl, jnp.zeros_like(afl), af, flen)
    v_hi, slope_hi = _velocity_branch(a, afl, upper, af, flen)
    shortening, lengthening = jnp.minimum(dlce_n, 0.0), jnp.maximum(dlce_n, 0.0)
    concentric = afl * (shortening + c) / (c - shortening / af)
    eccentric = afl * (lengthening * k_ecc * flen + c) / (c + lengthening * k_ecc)
    below = (dlce_n - v_lo) / slope_lo
    above = upper + (dlce_n - v_hi) / slope_hi
    force = jnp.where(
        dlce_n <= v_lo, below, jnp.where(dlce_n >= v_hi, above, jnp.where(dlce_n <= 0.0, concentric, eccentric))
    )
    return jnp.maximum(force / afl, 0.0)
