"""A primal-dual interior-point solver for direct-collocation problems with a sparse constraint Jacobian (shared by
the Moco-style examples; ``moco_style_arm26.Problem`` describes a problem).

    minimize J(z)  subject to  c(z) = 0,  lower <= z <= upper

Bound multipliers z_L, z_U >= 0 are iterated beside z (IPOPT's primal-dual barrier method without its filter):
each Newton step solves the sparse KKT system [[H + Sigma, -C^T], [C, 0]] [dz; y] = [-(grad J - mu/(z - l) +
mu/(u - z)); -c] with Sigma = z_L/(z - l) + z_U/(u - z) (the primal-dual barrier Hessian: unlike the primal mu/d^2
it keeps its scale when mu drops), H the objective's exact (diagonal) Hessian + a proximal weight (no constraint
curvature: a Gauss-Newton-like Lagrangian Hessian; the weight acts as a Levenberg-Marquardt trust region: x 10
after a step cut below 0.1, / 3 after a full one, never below PROXIMAL), by one sparse LU (scipy's SuperLU: the
KKT matrix of a collocation is banded, so a step costs milliseconds where a dense solve costs seconds at 100
nodes).
Steps: fraction to the boundary 0.99 for z and for the multipliers, backtracking on the l1 merit, with up to
three second-order corrections of a rejected full step (the constraints' curvature, the Maratos effect). mu drops
(x 0.2, or to mu^1.5) when the barrier problem's error is below 10 mu. It stops when max |c| <= constraint_tol,
the Lagrangian's stationarity <= optimality_tol and the complementarity <= optimality_tol.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

PROXIMAL = 1e-6     # the least weight on the Hessian's diagonal (a Levenberg-Marquardt trust region, adapted)
BARRIER = 1e-2      # the first barrier parameter
MIN_BARRIER = 1e-9
FRACTION = 0.99     # fraction to the boundary


def kkt_factor(H_diag, C):
    """The sparse LU of the KKT matrix [[diag(H_diag), -C^T], [C, 0]]; ``.solve([-g; -c])`` gives [dz; y]."""
    return spla.splu(sp.bmat([[sp.diags(H_diag), -C.T], [C, None]], format="csc"), permc_spec="COLAMD")


def _fraction_to_boundary(x, dx):
    """The largest alpha <= 1 keeping x + alpha dx >= (1 - FRACTION) x for x > 0."""
    shrinking = dx < 0
    return min(1.0, float(np.min(-FRACTION * x[shrinking] / dx[shrinking], initial=np.inf)))


def _merit(problem, z, c, barrier, nu):
    """The l1 merit of the barrier problem at z with constraints c."""
    merit = float(problem.objective(jnp.asarray(z))) + barrier(z) + nu * np.abs(c).sum()
    return merit if np.isfinite(merit) else np.inf


def solve(problem, max_iterations=300, constraint_tol=1e-6, optimality_tol=1e-6, log=print):
    """Solve ``problem`` (moco_style_arm26.Problem; its ``evaluate`` may return C dense or scipy-sparse). Returns a
    dict: z, iterations (Newton steps = evaluations of the constraint Jacobian), violation (max |c|), objective,
    stationarity (max |grad of the Lagrangian|, bound multipliers included), barrier, solve_s (after compiling),
    compile_s, history ((objective, max |c|) per iteration)."""
    lower, upper = problem.lower, problem.upper
    has_lo, has_hi = np.isfinite(lower), np.isfinite(upper)
    lo, hi = np.where(has_lo, lower, 0.0), np.where(has_hi, upper, 0.0)
    grad_J = jax.jit(jax.grad(problem.objective))
    ones = jnp.ones_like(jnp.asarray(problem.guess))
    hess_diag = jax.jit(lambda z_: jax.jvp(grad_J, (z_,), (ones,))[1])  # the objective is separable
    z = problem.guess.copy()
    t0 = time.perf_counter()
    J, c, C = problem.evaluate(z)
    for fn in (problem.constraints, problem.objective, grad_J, hess_diag):
        jax.block_until_ready(fn(jnp.asarray(z)))
    compile_s, t0 = time.perf_counter() - t0, time.perf_counter()
    D = np.asarray(hess_diag(jnp.asarray(z)))
    proximal = PROXIMAL
    mu, nu, history = BARRIER, 1.0, []
    zl = np.where(has_lo, mu / np.where(has_lo, z - lo, 1.0), 0.0)
    zu = np.where(has_hi, mu / np.where(has_hi, hi - z, 1.0), 0.0)

    def gaps(z_):
        return np.where(has_lo, z_ - lo, 1.0), np.where(has_hi, hi - z_, 1.0)

    def barrier(z_):
        g_lo, g_hi = gaps(z_)
        return -mu * (np.log(g_lo)[has_lo].sum() + np.log(g_hi)[has_hi].sum())

    y = np.zeros(len(c))
    for iteration in range(1, max_iterations + 1):
        c, C = np.asarray(c), sp.csr_matrix(C)
        g = np.asarray(grad_J(jnp.asarray(z)))
        g_lo, g_hi = gaps(z)
        stationarity = float(np.abs(g - C.T @ y - zl + zu).max())
        complementarity = float(max(np.abs(g_lo * zl)[has_lo].max(initial=0.0),
                                    np.abs(g_hi * zu)[has_hi].max(initial=0.0)))
        violation = float(np.abs(c).max())
        history.append((float(J), violation))
        if violation <= constraint_tol and stationarity <= optimality_tol and complementarity <= optimality_tol:
            break
        barrier_error = max(violation, stationarity,
                            float(np.abs(g_lo * zl - mu)[has_lo].max(initial=0.0)),
                            float(np.abs(g_hi * zu - mu)[has_hi].max(initial=0.0)))
        if barrier_error <= 10 * mu and mu > MIN_BARRIER:
            mu = max(MIN_BARRIER, min(0.2 * mu, mu ** 1.5))
        sigma = np.where(has_lo, zl / g_lo, 0.0) + np.where(has_hi, zu / g_hi, 0.0)
        g_bar = g - np.where(has_lo, mu / g_lo, 0.0) + np.where(has_hi, mu / g_hi, 0.0)
        lu = kkt_factor(D + proximal + sigma, C)
        step = lu.solve(-np.concatenate([g_bar, c]))
        d, y_new = step[:len(z)], step[len(z):]
        dzl = np.where(has_lo, mu / g_lo - zl - zl / g_lo * d, 0.0)
        dzu = np.where(has_hi, mu / g_hi - zu + zu / g_hi * d, 0.0)
        alpha = min(_fraction_to_boundary(g_lo[has_lo], d[has_lo]),
                    _fraction_to_boundary(g_hi[has_hi], -d[has_hi]))
        alpha_dual = min(_fraction_to_boundary(zl[has_lo], dzl[has_lo]),
                         _fraction_to_boundary(zu[has_hi], dzu[has_hi]))
        nu = max(nu, 2 * np.abs(y_new).max())
        merit0 = float(J) + barrier(z) + nu * np.abs(c).sum()
        slope = g_bar @ d - nu * np.abs(c).sum()
        for attempt in range(30):
            trial = z + alpha * d
            c_trial = np.asarray(problem.constraints(jnp.asarray(trial)))
            merit = _merit(problem, trial, c_trial, barrier, nu)
            if attempt == 0 and not merit <= merit0 + 1e-4 * alpha * min(slope, 0.0):
                # second-order corrections (IPOPT's): the constraints' curvature rejected the step (Maratos)
                for _ in range(3):
                    correction = lu.solve(np.concatenate([np.zeros(len(z)), -c_trial]))[:len(z)]
                    corrected = trial + correction
                    g_lo_c, g_hi_c = gaps(corrected)
                    if np.any(g_lo_c[has_lo] <= (1 - FRACTION) * g_lo[has_lo]) or np.any(
                            g_hi_c[has_hi] <= (1 - FRACTION) * g_hi[has_hi]):
                        break
                    c_corrected = np.asarray(problem.constraints(jnp.asarray(corrected)))
                    merit_corrected = _merit(problem, corrected, c_corrected, barrier, nu)
                    if merit_corrected <= merit0 + 1e-4 * alpha * min(slope, 0.0):
                        trial, merit = corrected, merit_corrected
                        break
                    trial, c_trial = corrected, c_corrected
                else:
                    trial = z + alpha * d
                if merit <= merit0 + 1e-4 * alpha * min(slope, 0.0):
                    break
                trial = z + alpha * d
            if np.isfinite(merit) and merit <= merit0 + 1e-4 * alpha * min(slope, 0.0):
                break
            alpha *= 0.5
        z, y = trial, y_new
        # the proximal weight as a trust region (Levenberg-Marquardt): more after a cut step, less after a full one
        proximal = min(1e4, proximal * 10) if alpha < 0.1 else max(PROXIMAL, proximal / 3) if alpha == 1 else proximal
        zl, zu = zl + alpha_dual * dzl, zu + alpha_dual * dzu
        J, c, C = problem.evaluate(z)
        log(f"iteration {iteration:3d}: objective {float(J):.6f}, max |defect| {np.abs(np.asarray(c)).max():.2e}, "
            f"step {alpha:.3g}, barrier {mu:.0e}, stationarity {stationarity:.2e}, proximal {proximal:.0e}")
    return dict(z=z, iterations=iteration, violation=violation, objective=float(J), stationarity=stationarity,
                complementarity=complementarity, barrier=mu, solve_s=time.perf_counter() - t0,
                compile_s=compile_s, history=history)
