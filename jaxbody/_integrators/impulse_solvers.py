"""Simbody's projected Gauss-Seidel impulse solver (PGSImpulseSolver), bounded and vectorizable.

The problem (Simbody catalogue 2.20; Simbody's ImpulseSolver.h): contacts k = 0..nc-1 each own three
rows (normal, friction 1, friction 2) of the constraint-space compliance ``A = G M^-1 G^T`` (m = 3 nc).
Given the rows' current velocity errors ``verr`` (separation rate, slip velocities) find impulses ``pi``
with ``verr + A pi = 0`` on participating rows, subject to ``pi_n >= 0`` (unilateral normals) and
``|pi_t| <= mu |pi_n + pi_n_known|`` (Coulomb cone on the two friction rows; ``pi_n_known`` is a
Poisson expansion impulse). Sign convention here: ``G u`` is the separation rate (>= 0 is good) and an
impulse ``pi`` changes u by ``M^-1 G^T pi``, so Simbody's ``m_sign`` is +1 for every normal.

Each sweep updates every participating normal (in contact order), then every friction pair (a 2-row
block), with Simbody's successive over-relaxation ``sor = 1.2``, reduced by 0.8 (not below 0.1) whenever
the RMS residual of the enforced rows grows; it stops when that RMS is below ``tol``. The sweeps run as a
fixed-length ``lax.fori_loop`` of ``max_iters`` in which a converged lane stops changing, so the solve
works under ``jit``, ``vmap`` (each lane its own active set and status) and reverse-mode ``grad``;
``early_exit=True`` stops at convergence instead (same results, not reverse-differentiable).
Gradients are those of the final sweep's formulas: exact where the active set and the stick/slip state
are settled, and discontinuous where they change.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

PGS_DEFAULT_TOL = 1e-6  # Simbody's PGS default convergence tolerance (RMS of enforced residuals)
PGS_DEFAULT_MAX_ITERS = 100  # Simbody's PGS default iteration limit
PGS_DEFAULT_SOR = 1.2


class ImpulseSolution(NamedTuple):
    """``impulse`` (nc, 3); ``verr`` (nc, 3) after ``verr + A pi``; ``converged`` (bool) and ``iterations``
    (int) of this lane; ``normal_active`` (nc,) Simbody's UniActive (a participating normal not clamped)."""

    impulse: jnp.ndarray
    verr: jnp.ndarray
    converged: jnp.ndarray
    iterations: jnp.ndarray
    normal_active: jnp.ndarray


def solve_pgs(A, verr, participating, mu, known_normal=None, lower=None, upper=None, *, unilateral=True,
              tol=PGS_DEFAULT_TOL, max_iters=PGS_DEFAULT_MAX_ITERS, sor=PGS_DEFAULT_SOR,
              early_exit=False) -> ImpulseSolution:
    """Projected Gauss-Seidel on ``A pi = -verr`` (participating rows only).

    Args:
        A: (3 nc, 3 nc) compliance, rows ordered (contact, direction).
        verr: (nc, 3) velocity errors (m/s or rad/s). participating: (nc, 3) bool.
        mu: (nc,) effective friction coefficients. known_normal: (nc,) known (expansion) normal impulses
            added to the normal when bounding friction (default 0).
        lower, upper: (nc,) bounds of the first (normal) rows' impulses (default 0 and inf: unilateral
            contact; Simbody's BoundedRT uses finite ones).
        unilateral: False solves the rows as bilateral equations (Simbody's solveBilateral: no bounds).
        early_exit: stop sweeping once converged (``lax.while_loop``; under vmap, once every lane has): the
            same result, faster, but not reverse-mode differentiable (forward mode still works).
    """
    nc = verr.shape[0]
    dtype = verr.dtype
    b = -verr.reshape(-1)
    part = participating.reshape(-1)
    n_part = jnp.maximum(jnp.sum(part), 1).astype(dtype)
    diag = jnp.diagonal(A)
    known = jnp.zeros(nc, dtype) if known_normal is None else known_normal
    lo = jnp.zeros(nc, dtype) if lower is None else lower
    hi = jnp.full(nc, jnp.inf, dtype) if upper is None else upper

    def step(i, er, pi, relax):
        """One relaxed Gauss-Seidel update of row(s) i (rows with a nonpositive diagonal are skipped)."""
        d = diag[i]
        return pi[i] + jnp.where(d > 0, relax * er / jnp.where(d > 0, d, 1.0), 0.0)

    def normal(k, carry):
        pi, e_enf, active, relax = carry
        i = 3 * k
        er = b[i] - A[i] @ pi
        stepped = step(i, er, pi, relax)
        on = part[i]
        is_active = on & (stepped >= lo[k]) & (stepped <= hi[k]) if unilateral else on
        new = jnp.clip(stepped, lo[k], hi[k]) if unilateral else stepped
        pi = pi.at[i].set(jnp.where(on, new, pi[i]))
        return pi, e_enf + jnp.where(is_active, er * er, 0.0), active.at[k].set(is_active), relax

    def friction(k, carry):
        pi, e_enf, active, relax = carry
        rows = 3 * k + jnp.arange(1, 3)
        er = b[rows] - A[rows] @ pi
        stepped = step(rows, er, pi, relax)
        limit = mu[k] * jnp.abs(pi[3 * k] + known[k])
        norm2 = jnp.sum(stepped * stepped)
        rolling = norm2 <= limit * limit
        scale = jnp.where(rolling, 1.0, limit / jnp.sqrt(jnp.where(rolling, 1.0, norm2)))
        on = part[rows]
        pi = pi.at[rows].set(jnp.where(on, stepped * scale, pi[rows]))
        e2 = jnp.sum(jnp.where(on, er * er, 0.0))
        return pi, e_enf + jnp.where(rolling, e2, 0.0), active, relax

    def sweep(_, carry):
        pi, relax, prev_rms, done, its, active = carry
        inner = (pi, jnp.zeros((), dtype), active, relax)
        inner = jax.lax.fori_loop(0, nc, normal, inner)
        if unilateral:
            inner = jax.lax.fori_loop(0, nc, friction, inner)
        new_pi, e_enf, new_active, _ = inner
        rms = jnp.sqrt(jax.lax.stop_gradient(e_enf) / n_part)  # drives control only
        new_relax = jnp.where((rms > prev_rms) & (relax > 0.1), jnp.maximum(0.8 * relax, 0.1), relax)

        def keep(old, new):  # a converged lane stops changing
            return jnp.where(done, old, new)

        return (keep(pi, new_pi), keep(relax, new_relax), keep(prev_rms, rms), done | (rms < tol),
                keep(its, its + 1), keep(active, new_active))

    m = 3 * nc
    init = (jnp.zeros(m, dtype), jnp.asarray(sor, dtype), jnp.asarray(jnp.inf, dtype), jnp.asarray(False),
            jnp.asarray(0), jnp.zeros(nc, bool))
    if early_exit:
        pi, _, _, converged, its, active = jax.lax.while_loop(
            lambda c: ~c[3] & (c[4] < max_iters), lambda c: sweep(0, c), init)
    else:
        pi, _, _, converged, its, active = jax.lax.fori_loop(0, max_iters, sweep, init)
    return ImpulseSolution(pi.reshape(nc, 3), verr + (A @ pi).reshape(nc, 3), converged, its, active)
