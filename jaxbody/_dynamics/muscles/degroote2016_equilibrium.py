"""DeGrooteFregly2016Muscle's muscle-tendon equilibrium: OpenSim's ``calcEquilibriumResidual`` (the implicit form
of its tendon compliance, as Moco constrains it) and ``computeInitialFiberEquilibrium`` (the normalized tendon
force at which that residual vanishes with d(normalized tendon force)/dt = 0).

Residual (dimensionless, normalized force), for path length l_MT (m), lengthening speed v_MT (m/s), activation a,
normalized tendon force f_T and its time derivative df_T/dt (1/s):

    l_T = l_s fse^-1(f_T),  l_M = sqrt((l_MT - l_T)^2 + w^2),  cos(phi) = (l_MT - l_T) / l_M,
    v_T = l_s (df_T/dt) / fse'(l_T / l_s),  v_M = (v_MT - v_T) cos(phi),  v_n = v_M / (v_max l_opt),
    residual = f_T - (a fal(l_M / l_opt) fv(v_n) + fpe(l_M / l_opt) + beta v_n) cos(phi).

Equilibrium: OpenSim's ``solveBisection`` on [0, 5] (getMin/MaxNormalizedTendonForce) to an interval width of
1e-10, at most 100 halvings, returning the last midpoint; step for step, in a ``lax.while_loop``. NaN where the
residual has the same sign at both ends (OpenSim throws). Derivatives come from the implicit function theorem on
the residual (``lax.custom_root``), not from the bisection. Cost: about 36 residual evaluations of a few dozen
flops each.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._dynamics.muscles import degroote_curves as curves
from jaxbody._dynamics.muscles.degroote2016 import DeGrooteFregly2016Parameters

MIN_NORMALIZED_TENDON_FORCE = 0.0
MAX_NORMALIZED_TENDON_FORCE = 5.0
_BISECTION_TOLERANCE = 1e-10
_MAX_BISECTIONS = 100


def degroote2016_equilibrium_residual(p: DeGrooteFregly2016Parameters, length, lengthening_speed, activation,
                                      normalized_tendon_force, normalized_tendon_force_dot):
    """OpenSim's calcEquilibriumResidual (normalized force): tendon force minus fiber force along the tendon,
    with the fiber velocity from the tendon's (implicit tendon compliance dynamics). Activation as given."""
    ofl, tsl = p.optimal_fiber_length, p.tendon_slack_length
    width = ofl * jnp.sin(p.pennation_angle_at_optimal)
    tl_n = curves.tendon_force_length_inverse(normalized_tendon_force, p.tendon_strain_at_one_norm_force)
    along = length - tsl * tl_n
    lce = jnp.sqrt(along * along + width * width)
    lce_n = lce / ofl
    cos_phi = along / lce
    tendon_speed = tsl * curves.tendon_length_rate(normalized_tendon_force_dot, tl_n, p.tendon_strain_at_one_norm_force)
    v_n = (lengthening_speed - tendon_speed) * cos_phi / (p.max_contraction_velocity * ofl)
    fiber = (activation * curves.active_force_length(lce_n, p.active_force_width_scale) * curves.force_velocity(v_n)
             + curves.passive_force_length(lce_n, p.passive_fiber_strain_at_one_norm_force)
             + p.fiber_damping * v_n)
    return normalized_tendon_force - fiber * cos_phi


def _bisection(residual):
    """OpenSim's solveBisection on [0, 5]: (last midpoint, the ends have opposite signs)."""
    left0 = jnp.asarray(MIN_NORMALIZED_TENDON_FORCE)
    right0 = jnp.asarray(MAX_NORMALIZED_TENDON_FORCE)
    r_left0 = residual(left0)
    bracketed = r_left0 * residual(right0) < 0

    def cond(c):
        left, right, _, _, it = c
        return (it < _MAX_BISECTIONS) & (right - left > _BISECTION_TOLERANCE)

    def body(c):
        left, right, r_left, _, it = c
        mid = 0.5 * (left + right)
        r_mid = residual(mid)
        go_left = r_mid * r_left < 0
        return (jnp.where(go_left, left, mid), jnp.where(go_left, mid, right),
                jnp.where(go_left, r_left, r_mid), mid, it + 1)

    _, _, _, mid, _ = jax.lax.while_loop(cond, body, (left0, right0, r_left0, left0, 0))
    return mid, bracketed


def degroote2016_equilibrium_normalized_tendon_force(p: DeGrooteFregly2016Parameters, length, lengthening_speed,
                                                     activation):
    """The normalized tendon force of OpenSim's computeInitialFiberEquilibrium (elastic tendon): the root in
    [0, 5] of the equilibrium residual with d(normalized tendon force)/dt = 0 at path length (m), lengthening
    speed (m/s) and activation (not clamped, as OpenSim); NaN where the residual does not change sign."""
    def residual(ntf, *args):
        return degroote2016_equilibrium_residual(*args, ntf, 0.0)

    frozen = jax.lax.stop_gradient((p, length, lengthening_speed, activation))
    ntf, bracketed = _bisection(lambda x: residual(x, *frozen))
    x = jax.lax.custom_root(lambda x: residual(x, p, length, lengthening_speed, activation), ntf,
                            lambda f, x0: ntf, lambda g, y: y / g(jnp.ones_like(y)))
    return jnp.where(bracketed, x, jnp.nan)
