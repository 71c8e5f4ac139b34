"""MuJoCo's muscle curves and activation dynamics (engine_util_misc.c), as elementwise JAX functions.

``mjMINVAL`` (1e-15) guards every denominator as in MuJoCo. prm (..., >= 9): MuJoCo's muscle parameters
``(range0, range1, force, scale, lmin, lmax, vmax, fpmax, fvmax)``; lengthrange (..., 2), acc0 (...,).
Piecewise branches are selected with ``jnp.where`` on safe operands, so values and gradients are finite.
"""

from __future__ import annotations

import jax.numpy as jnp

MINVAL = 1e-15


def _peak_force(prm, acc0):
    """prm's force, or ``scale / acc0`` where it is negative (MuJoCo's automatic force scaling)."""
    return jnp.where(prm[..., 2] < 0, prm[..., 3] / jnp.maximum(MINVAL, acc0), prm[..., 2])


def _normalized_length(length, lengthrange, prm):
    """(L, L0): MuJoCo's normalized muscle length and optimal length."""
    L0 = (lengthrange[..., 1] - lengthrange[..., 0]) / jnp.maximum(MINVAL, prm[..., 1] - prm[..., 0])
    return prm[..., 0] + (length - lengthrange[..., 0]) / jnp.maximum(MINVAL, L0), L0


def muscle_gain_length(L, lmin, lmax):
    """mju_muscleGainLength: the piecewise-quadratic active force-length curve (1 at L = 1, 0 outside)."""
    a, b = 0.5 * (lmin + 1), 0.5 * (1 + lmax)
    x1 = (L - lmin) / jnp.maximum(MINVAL, a - lmin)
    x2 = (1 - L) / jnp.maximum(MINVAL, 1 - a)
    x3 = (L - 1) / jnp.maximum(MINVAL, b - 1)
    x4 = (lmax - L) / jnp.maximum(MINVAL, lmax - b)
    value = jnp.where(L <= a, 0.5 * x1 * x1, jnp.where(L <= 1, 1 - 0.5 * x2 * x2,
                      jnp.where(L <= b, 1 - 0.5 * x3 * x3, 0.5 * x4 * x4)))
    return jnp.where((lmin <= L) & (L <= lmax), value, 0.0)


def muscle_gain(length, velocity, lengthrange, acc0, prm):
    """mju_muscleGain: ``-force FL(L) FV(V)`` (N per unit activation; negative: muscles pull)."""
    force = _peak_force(prm, acc0)
    L, L0 = _normalized_length(length, lengthrange, prm)
    V = velocity / jnp.maximum(MINVAL, L0 * prm[..., 6])
    FL = muscle_gain_length(L, prm[..., 4], prm[..., 5])
    fvmax = prm[..., 8]
    y = fvmax - 1
    FV = jnp.where(V <= -1, 0.0, jnp.where(V <= 0, (V + 1) * (V + 1),
                   jnp.where(V <= y, fvmax - (y - V) * (y - V) / jnp.maximum(MINVAL, y), fvmax)))
    return -force * FL * FV


def muscle_bias(length, lengthrange, acc0, prm):
    """mju_muscleBias: the passive force, half-quadratic up to ``(1 + lmax) / 2`` and linear beyond."""
    force = _peak_force(prm, acc0)
    L, _ = _normalized_length(length, lengthrange, prm)
    b = 0.5 * (1 + prm[..., 5])
    fpmax = prm[..., 7]
    x_quadratic = (L - 1) / jnp.maximum(MINVAL, b - 1)
    x_linear = (L - b) / jnp.maximum(MINVAL, b - 1)
    return jnp.where(L <= 1, 0.0, jnp.where(L <= b, -force * fpmax * 0.5 * x_quadratic * x_quadratic,
                                            -force * fpmax * (0.5 + x_linear)))


def sigmoid(x):
    """mju_sigmoid: ``6 x^5 - 15 x^4 + 10 x^3`` on [0, 1], 0 below, 1 above."""
    t = jnp.clip(x, 0.0, 1.0)
    return t * t * t * (3 * t * (2 * t - 5) + 10)


def muscle_dynamics(ctrl, act, dynprm):
    """mju_muscleDynamics: ``d act/dt = (clip(ctrl, 0, 1) - act) / tau``, tau from Millard et al. (2013)'s
    activation-dependent time constants (dynprm: tau_act, tau_deact, smoothing width; hard switch if 0)."""
    actclamp = jnp.clip(act, 0.0, 1.0)
    tau_act = dynprm[..., 0] * (0.5 + 1.5 * actclamp)
    tau_deact = dynprm[..., 1] / (0.5 + 1.5 * actclamp)
    width = dynprm[..., 2]
    dctrl = jnp.clip(ctrl, 0.0, 1.0) - act
    smooth = tau_deact + (tau_act - tau_deact) * sigmoid(dctrl / jnp.where(width < MINVAL, 1.0, width) + 0.5)
    tau = jnp.where(width < MINVAL, jnp.where(dctrl > 0, tau_act, tau_deact), smooth)
    return dctrl / jnp.maximum(MINVAL, tau)
