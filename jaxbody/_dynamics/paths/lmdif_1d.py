"""OpenSim's MINPACK ``lmdif_C`` (OpenSim 4.6 OpenSim/Common/Lmdif.cpp) for one residual in one unknown, replayed
step by step as a fixed-count, jit/vmap-clean JAX loop.

OpenSim's copy differs from MINPACK in two places, both reproduced: the Jacobian is a forward difference with the
fixed step 1e-5 (not sqrt(eps) |x|), and the initial trust radius is ``factor`` whenever ``factor |D x|`` is at
most 1e-4. With m = n = 1 every MINPACK routine has a scalar form, written out here in OpenSim's order of
operations: qrfac (R = -J, Q^T f = -f), qrsolv (one Givens rotation), lmpar (at most 10 iterations on the
Levenberg-Marquardt parameter), and lmdif's trust-region update and its stopping tests (info 1..8).

:func:`solve` runs ``STEPS`` trial steps (each: a Jacobian when the previous step succeeded, an lmpar, one
residual at the trial point); a lane stops changing once lmdif would have returned. WrapTorus's use (ftol = xtol =
1e-4, from 0), on 1024 random segments through a torus (both directions): 84 % finish within 4 trial steps, 99.3 %
within 10, all within 20, so STEPS = 40 leaves a margin; :func:`solve` also returns whether lmdif finished, so a
caller or test can check that. No derivative is taken through the loop: the
caller differentiates the root implicitly (wrap_torus.circle_parameter).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

#: Lmdif.cpp: MACHEP and DWARF (its own constants), fdjac2's fixed forward-difference step.
MACHEP = 1.2e-16
DWARF = 1.0e-38
DIFFERENCE_STEP = 1e-5
#: lmpar's iteration limit.
LMPAR_ITERATIONS = 10
#: Trial steps replayed (each one residual at a trial point, one more for its Jacobian after a success).
STEPS = 40


def _lmpar(r, d, qtb, delta, par):
    """MINPACK lmpar for n = 1: (step x with |d x| ~ delta, new par). r: R's diagonal (-J), d: the scaling,
    qtb: Q^T f, par: the previous Levenberg-Marquardt parameter."""
    nonsingular = r != 0.0
    x_gn = jnp.where(nonsingular, qtb / jnp.where(nonsingular, r, 1.0), 0.0)
    dxnorm = jnp.abs(d * x_gn)
    fp = dxnorm - delta
    gauss_newton = fp <= 0.1 * delta
    safe_dx = jnp.where(dxnorm != 0.0, dxnorm, 1.0)
    low = jnp.abs((d * ((d * x_gn) / safe_dx)) / jnp.where(nonsingular, r, 1.0))
    parl = jnp.where(nonsingular, ((fp / delta) / low) / low, 0.0)
    gnorm = jnp.abs((r * qtb) / d)
    paru = gnorm / delta
    paru = jnp.where(paru == 0.0, DWARF / jnp.minimum(delta, 0.1), paru)
    par = jnp.maximum(par, parl)
    par = jnp.minimum(par, paru)
    par = jnp.where(par == 0.0, gnorm / safe_dx, par)

    def step(i, c):
        par, parl, paru, fp, x, done = c
        par = jnp.where(par == 0.0, jnp.maximum(DWARF, 0.001 * paru), par)
        s = jnp.sqrt(par) * d
        # qrsolv: one Givens rotation eliminating s against r
        small = jnp.abs(r) < jnp.abs(s)
        cotan = r / jnp.where(s != 0.0, s, 1.0)
        sin_a = 0.5 / jnp.sqrt(0.25 + 0.25 * cotan * cotan)
        tan = s / jnp.where(r != 0.0, r, 1.0)
        cos_b = 0.5 / jnp.sqrt(0.25 + 0.25 * tan * tan)
        cos, sin = jnp.where(small, sin_a * cotan, cos_b), jnp.where(small, sin_a, cos_b * tan)
        rotate = s != 0.0
        sdiag = jnp.where(rotate, cos * r + sin * s, r)
        w = jnp.where(rotate, cos * qtb + sin * 0.0, qtb)
        x_new = jnp.where(sdiag != 0.0, w / jnp.where(sdiag != 0.0, sdiag, 1.0), 0.0)
        wa2 = d * x_new
        dx = jnp.abs(wa2)
        fp_new = dx - delta
        accept = (jnp.abs(fp_new) <= 0.1 * delta) | ((parl == 0.0) & (fp_new <= fp) & (fp < 0.0)) | (i == 9)
        wa1 = (d * (wa2 / jnp.where(dx != 0.0, dx, 1.0))) / jnp.where(sdiag != 0.0, sdiag, 1.0)
        temp = jnp.abs(wa1)
        parc = ((fp_new / delta) / temp) / temp
        parl_new = jnp.where(fp_new > 0.0, jnp.maximum(parl, par), parl)
        paru_new = jnp.where(fp_new < 0.0, jnp.minimum(paru, par), paru)
        par_next = jnp.where(accept, par, jnp.maximum(parl_new, par + parc))
        keep = lambda old, new: jnp.where(done, old, new)  # noqa: E731
        return (keep(c[0], par_next), keep(parl, parl_new), keep(paru, paru_new), keep(fp, fp_new),
                keep(x, x_new), done | accept)

    start = (par, parl, paru, fp, x_gn, gauss_newton)
    par, _, _, _, x, _ = jax.lax.fori_loop(0, LMPAR_ITERATIONS, step, start)
    return jnp.where(gauss_newton, x_gn, x), jnp.where(gauss_newton, 0.0, par)


def solve(residual, x0, ftol, xtol, factor, max_fev):
    """lmdif_C (mode 1, gtol 0, epsfcn unused) on the scalar ``residual(x)`` from ``x0``: (x, finished), x where
    lmdif returns and whether it returned within STEPS trial steps."""
    f0 = residual(x0)
    one = jnp.ones_like(x0)
    # (x, f, |f|, R, Q^T f, |J|, D, delta, par, |D x|, gnorm, iter, nfev, need Jacobian, done)
    start = (x0, f0, jnp.abs(f0), one, one, one, one, one, 0.0 * one, one, one, jnp.asarray(1), jnp.asarray(1),
             jnp.asarray(True), jnp.asarray(False))

    def step(_, c):
        x, f, fnorm, r, qtf, acnorm, diag, delta, par, xnorm, gnorm, it, nfev, need, done = c
        # outer loop: the forward-difference Jacobian, qrfac, Q^T f, the gradient test, the scaling
        J = (residual(x + DIFFERENCE_STEP) - f) / DIFFERENCE_STEP
        acn = jnp.abs(J)
        r_n, qtf_n = jnp.where(J != 0.0, -J, -acn), jnp.where(J != 0.0, -f, f)
        g = jnp.where((fnorm != 0.0) & (acn != 0.0),
                      jnp.abs((r_n * (qtf_n / jnp.where(fnorm != 0.0, fnorm, 1.0))) / jnp.where(acn != 0.0, acn, 1.0)),
                      0.0)
        first = it == 1
        d_n = jnp.where(first, jnp.where(acn == 0.0, 1.0, acn), diag)
        xnorm_n = jnp.where(first, jnp.abs(d_n * x), xnorm)
        delta_n = jnp.where(first, factor * xnorm_n, delta)
        delta_n = jnp.where(first & (jnp.abs(delta_n) <= 1e-4), factor, delta_n)
        d_n = jnp.maximum(d_n, acn)
        pick = lambda new, old: jnp.where(need, new, old)  # noqa: E731
        r, qtf, acnorm, diag = pick(r_n, r), pick(qtf_n, qtf), pick(acn, acnorm), pick(d_n, diag)
        xnorm, delta, gnorm = pick(xnorm_n, xnorm), pick(delta_n, delta), pick(g, gnorm)
        stop_gradient_test = need & (gnorm <= 0.0)
        # inner loop: one trial step
        p_neg, par_t = _lmpar(r, diag, qtf, delta, par)
        p = -p_neg
        trial = x + p
        pnorm = jnp.abs(diag * p)
        delta_t = jnp.where(first, jnp.minimum(delta, pnorm), delta)
        f1 = residual(trial)
        fnorm1 = jnp.abs(f1)
        safe_fnorm = jnp.where(fnorm != 0.0, fnorm, 1.0)
        actred = jnp.where(0.1 * fnorm1 < fnorm, 1.0 - (fnorm1 / safe_fnorm) ** 2, -1.0)
        temp1 = jnp.abs(r * p) / safe_fnorm
        temp2 = (jnp.sqrt(par_t) * pnorm) / safe_fnorm
        prered = temp1 * temp1 + (temp2 * temp2) / 0.5
        dirder = -(temp1 * temp1 + temp2 * temp2)
        ratio = jnp.where(prered != 0.0, actred / jnp.where(prered != 0.0, prered, 1.0), 0.0)
        shrink = ratio <= 0.25
        temp = jnp.where(actred >= 0.0, 0.5, 0.5 * dirder / (dirder + 0.5 * actred))
        temp = jnp.where((0.1 * fnorm1 >= fnorm) | (temp < 0.1), 0.1, temp)
        grow = ~shrink & ((par_t == 0.0) | (ratio >= 0.75))
        delta_u = jnp.where(shrink, temp * jnp.minimum(delta_t, pnorm / 0.1), jnp.where(grow, pnorm / 0.5, delta_t))
        par_u = jnp.where(shrink, par_t / temp, jnp.where(grow, 0.5 * par_t, par_t))
        success = ratio >= 1e-4
        x_u, f_u = jnp.where(success, trial, x), jnp.where(success, f1, f)
        xnorm_u = jnp.where(success, jnp.abs(diag * x_u), xnorm)
        fnorm_u = jnp.where(success, fnorm1, fnorm)
        nfev_u = nfev + 1
        stop = (((jnp.abs(actred) <= ftol) & (prered <= ftol) & (0.5 * ratio <= 1.0)) | (delta_u <= xtol * xnorm_u)
                | (nfev_u >= max_fev) | ((jnp.abs(actred) <= MACHEP) & (prered <= MACHEP) & (0.5 * ratio <= 1.0))
                | (delta_u <= MACHEP * xnorm_u) | (gnorm <= MACHEP))
        new = (x_u, f_u, fnorm_u, r, qtf, acnorm, diag, delta_u, par_u, xnorm_u, gnorm,
               jnp.where(success, it + 1, it), nfev_u, success, stop)
        # a gradient-test stop returns before the trial step
        new = tuple(jnp.where(stop_gradient_test, o, n) for o, n in zip(c, new))[:-1] + (stop | stop_gradient_test,)
        return tuple(jnp.where(done, o, n) for o, n in zip(c, new))

    final = jax.lax.fori_loop(0, STEPS, step, start)
    return final[0], final[-1]
