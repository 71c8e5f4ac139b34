"""Projection onto the constraint manifolds (catalogue 4.7): ``project_q``, ``project_u``, ``project``.

Positions: weighted least squares onto ``perr(q) = 0`` over the free q's
(Simbody's unit weights; prescribed and locked q's do not move): Simbody's
Gauss-Newton ``q -= Pq^+ perr`` with its limits (at most 20 iterations,
overshoot target ``max(0.1 accuracy, SignificantReal)``, rank tolerance
``mp sqrt(eps)``), then up to 20 refinement steps with one solve each: from a
point on the manifold (error within the target) a step anchored at the entry q
(``q = q_in - Pq^+ (perr(q_k) - Pq (q_k - q_in))``), from a point the last step
left it (a curved manifold) a Gauss-Newton step back, until an anchored step no
longer moves; the last point on the manifold is kept. Finally every quaternion
is normalized. The anchored steps move along the manifold to the exact
minimum-norm change (a second-order correction to Simbody's answer): the closest-point conditions
``perr(q) = 0``, ``q - q_in = -Pq(q)^T mu``. Those
conditions define the gradient: ``project_q`` has a custom VJP from the
implicit-function theorem (one linear solve of the KKT system, with the
constraint curvature ``d(Pq^T mu)/dq``), never differentiating the iterations.

Speeds: ``[P; V] u + c = 0`` is affine in u, so the weighted minimum-norm
correction (Simbody's relative scaling ``max(|u_i|, 1)``) is one linear solve,
repeated once as Simbody's modified Newton does; its gradient is that of the
solve (pseudo-inverse derivative), i.e. again the implicit-function one.

Failure never raises under ``jit``/``vmap``: ``ProjectResults.success`` (per lane)
says whether the requested accuracy was reached; on failure the state whose
error norm is smaller (entry or result) is returned, as Simbody restores it.
"""

from __future__ import annotations

import dataclasses
import functools

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbody._constraints import equations
from jaxbody._constraints.multipliers import VelocityConstraintOperators
from jaxbody._dynamics import kinematics, prescribed
from jaxbody._math.lapack import pinv
from jaxbody._topology import mobilizer_groups
from jaxbody._typing import Stage

MAX_Q_ITERATIONS = 20
MAX_REFINE_ITERATIONS = 20  # anchored (or Gauss-Newton back) steps from the manifold to the closest point
MAX_U_ITERATIONS = 2  # exact after one solve (affine in u); the second removes round-off


@dataclasses.dataclass(frozen=True)
class ProjectOptions:
    """Simbody's ProjectOptions. ``accuracy``: required error norm (RMS unless use_infinity_norm).

    overshoot_factor: aim for ``max(overshoot_factor * accuracy, SignificantReal)``; projection_limit: give up
    (report failure) when the entry norm exceeds it; local_only: stop when an iteration increases the norm;
    force_projection: iterate even if already accurate. ``dont_throw`` and ``force_full_newton`` are accepted
    for Simbody's signature: nothing ever throws here, and q iterations always refactor (full Newton).
    """

    accuracy: float = 1e-4
    overshoot_factor: float = 0.1
    projection_limit: float = float("inf")
    local_only: bool = False
    use_infinity_norm: bool = False
    force_projection: bool = False
    force_full_newton: bool = True
    dont_throw: bool = True


class ProjectResults(eqx.Module):
    """Outcome of a projection (arrays, so they batch under vmap).

    success: bool, accuracy reached for every projected level. q_iterations, u_iterations: int.
    q_entry_norm, q_final_norm, u_entry_norm, u_final_norm: error norms before and after.
    q_err_estimate, u_err_estimate: the projected integrator error estimates (None if none was given).
    """

    success: jnp.ndarray
    q_iterations: jnp.ndarray
    u_iterations: jnp.ndarray
    q_entry_norm: jnp.ndarray
    q_final_norm: jnp.ndarray
    u_entry_norm: jnp.ndarray
    u_final_norm: jnp.ndarray
    q_err_estimate: jnp.ndarray | None = None
    u_err_estimate: jnp.ndarray | None = None


def _significant_real(dtype):
    return jnp.finfo(dtype).eps ** (7 / 8)


def _norm(err, mask, infinity: bool):
    """RMS over the active rows (Simbody's default) or the infinity norm."""
    if infinity:
        return jnp.max(jnp.abs(err), initial=0.0)
    n = jnp.maximum(jnp.sum(mask), 1.0)
    return jnp.sqrt(jnp.sum(err**2) / n)


def _min_norm_solve(A, b, rank_tol):
    return pinv(A, rtol=rank_tol) @ b


# -- positions -----------------------------------------------------------------------------------------


def _perr(model, t, q, enabled):
    pos = kinematics.realize_position(model, q)
    mask = equations.row_mask(model, enabled)[: model.constraints.mp]
    return equations.position_errors(model, t, q, pos) * mask


def _pq(model, t, q, enabled, free_q):
    """``Pq = dperr/dq`` (mp, nq) with prescribed/unused q columns zeroed: mp reverse sweeps (mp <= nq)."""
    return jax.jacrev(lambda qq: _perr(model, t, qq, enabled))(q) * free_q


def _project_q_solve(model, t, q_in, enabled, free_q, options: ProjectOptions):
    """Simbody's Gauss-Newton onto the manifold, then anchored steps to the closest point.

    Returns (q, iterations, entry norm, final norm).
    """
    mp = model.constraints.mp
    mask = equations.row_mask(model, enabled)[:mp]
    infinity = options.use_infinity_norm
    rank_tol = max(mp, 1) * jnp.finfo(q_in.dtype).eps ** 0.5
    target = jnp.maximum(options.overshoot_factor * options.accuracy, _significant_real(q_in.dtype))
    err_in = _perr(model, t, q_in, enabled)
    entry = _norm(err_in, mask, infinity)
    start = ((entry > options.accuracy) | options.force_projection) & (entry <= options.projection_limit)

    # Two phases in one loop, so Pq and perr are traced once: Gauss-Newton onto the manifold, then (refining)
    # the closest point. On the manifold, q = q_in - Pq^+ (perr(q_k) - Pq (q_k - q_in)); that step
    # leaves a curved manifold to second order in its move (a 20-link chain 4.5 cm off its tether: by 7e-11,
    # above the target), and then the next step is Gauss-Newton's back onto it. One solve per iteration either
    # way; refining stops when an anchored step no longer moves, and the last iterate on the manifold is the
    # result. perr(q) is carried from one iteration to the next (each position realize is done once).
    step_tol = 100 * jnp.finfo(q_in.dtype).eps

    def newton_active(it, norm, stop):
        return (~stop) & (it < MAX_Q_ITERATIONS) & ((norm > target) | (it == 0))

    def refine_active(k, norm, moved, best_norm):
        return start & (best_norm <= target) & (moved | (norm > target)) & (k < MAX_REFINE_ITERATIONS)

    def cond(c):
        q, err, norm, refining, it, stop, k, moved, best, best_norm = c
        return jnp.where(refining, refine_active(k, norm, moved, best_norm), newton_active(it, norm, stop))

    def body(c):
        q, err, norm, refining, it, stop, k, moved, best, best_norm = c
        A = _pq(model, t, q, enabled, free_q)
        anchored = refining & (norm <= target)
        base = jnp.where(anchored, q_in, q)
        q_new = base - _min_norm_solve(A, jnp.where(anchored, err - A @ (q - q_in), err), rank_tol)
        err_new = _perr(model, t, q_new, enabled)
        n_new = _norm(err_new, mask, infinity)
        # Gauss-Newton (Simbody: q -= Pq^+ perr(q)); a local-only projection stops when it diverges
        diverged = options.local_only & (it >= 1) & (n_new > norm)
        q0, err0, n0 = (jnp.where(diverged, old, new) for old, new in ((q, q_new), (err, err_new), (norm, n_new)))
        it0 = it + 1
        newton_done = ~newton_active(it0, n0, diverged)
        # refining: only an anchored step that stays put ends it (a Gauss-Newton step back may be tiny)
        moved1 = ~anchored | (jnp.max(jnp.abs(q_new - q)) > step_tol * (1 + jnp.max(jnp.abs(q))))
        ok = n_new <= target
        best1, best_norm1 = jnp.where(ok, q_new, best), jnp.where(ok, n_new, best_norm)
        pick = lambda a0, a1: jnp.where(refining, a1, a0)  # noqa: E731
        return (pick(q0, q_new), pick(err0, err_new), pick(n0, n_new),
                refining | newton_done, pick(it0, it), pick(diverged, stop),
                pick(jnp.zeros_like(k), k + 1), pick(jnp.ones_like(moved), moved1), pick(q0, best1),
                pick(n0, best_norm1))

    zero = jnp.zeros((), jnp.int32)
    init = (q_in, err_in, entry, jnp.zeros((), bool), zero, ~start, zero, jnp.ones((), bool), q_in, entry)
    _, _, _, _, it, _, _, _, q, final = jax.lax.while_loop(cond, body, init)
    worse = final > entry
    q = jnp.where(worse, q_in, q)
    return q, it, entry, jnp.minimum(final, entry)


def _kkt(model, t, q, q_in, mu, enabled, free_q):
    """Closest-point conditions F = (q - q_in + free * (Pq(q)^T mu), perr(q))."""
    def perr(qq):
        return _perr(model, t, qq, enabled)

    _, vjp = jax.vjp(perr, q)
    return jnp.concatenate([q - q_in + free_q * vjp(mu)[0], perr(q)])


@functools.partial(jax.custom_vjp, nondiff_argnums=(4,))
def _projected_q(model, t, q_in, enabled_free, options):
    enabled, free_q = enabled_free
    return _project_q_solve(model, t, q_in, enabled, free_q, options)


def _projected_q_fwd(model, t, q_in, enabled_free, options):
    out = _projected_q(model, t, q_in, enabled_free, options)
    return out, (model, t, q_in, enabled_free, out[0])


def _projected_q_bwd(options, res, cotangents):
    model, t, q_in, enabled_free, q = res
    enabled, free_q = enabled_free
    g = cotangents[0]
    nq, mp = q.shape[0], model.constraints.mp
    A = _pq(model, t, q, enabled, free_q)
    mu = -pinv(A.T) @ (q - q_in)

    def F(x):
        return _kkt(model, t, x[:nq], q_in, x[nq:], enabled, free_q)

    x = jnp.concatenate([q, mu])
    Fx = jax.jacfwd(F)(x)
    ab = pinv(Fx.T) @ jnp.concatenate([g, jnp.zeros(mp, g.dtype)])

    def F_params(model_, t_, q_in_):
        return _kkt(model_, t_, q, q_in_, mu, enabled, free_q)

    _, vjp = jax.vjp(F_params, model, t, q_in)
    g_model, g_t, g_q_in = vjp(-ab)
    return g_model, g_t, g_q_in, (None, None)


_projected_q.defvjp(_projected_q_fwd, _projected_q_bwd)


def project_q(model, state, options: ProjectOptions = ProjectOptions(), q_err_estimate=None):
    """Project q onto ``perr(q) = 0`` (free q's only), then normalize quaternions. Returns (state, results).

    Differentiable (implicit function theorem). ``q_err_estimate`` (nq,), if given, loses its component
    normal to the manifold (Simbody's error-estimate projection) and is returned in the results.
    """
    mp = model.constraints.mp
    free_q = prescribed.calc_slot_masks(model, state).free_q.astype(state.q.dtype)
    zero = jnp.zeros((), state.q.dtype)
    if mp == 0:
        q, it, entry, final = state.q, jnp.zeros((), jnp.int32), zero, zero
    else:
        q, it, entry, final = _projected_q(model, state.t, state.q, (state.constraint_enabled, free_q), options)
    q = mobilizer_groups.normalize_q(model.topology, model.parameters, q)
    success = final <= options.accuracy
    est = None
    if q_err_estimate is not None:
        est = jnp.asarray(q_err_estimate, state.q.dtype)
        if mp:
            A = _pq(model, state.t, q, state.constraint_enabled, free_q)
            est = est - A.T @ (pinv(A @ A.T) @ (A @ (est * free_q)))
        est = _remove_quaternion_radial(model, q, est)
    new_state = state.set_q(q)
    results = ProjectResults(success=success, q_iterations=it, u_iterations=jnp.zeros((), jnp.int32),
                             q_entry_norm=entry, q_final_norm=final, u_entry_norm=zero, u_final_norm=zero,
                             q_err_estimate=est)
    return new_state, results


def _remove_quaternion_radial(model, q, est):
    """qErrest_quat -= (qErrest_quat . qhat) qhat for every quaternion in use (q already normalized)."""
    idx = model.topology.quaternion_q_index
    if len(idx) == 0:
        return est
    idx = jnp.asarray(idx)
    qh, e = q[idx], est[idx]
    return est.at[idx].set(e - jnp.sum(e * qh, -1, keepdims=True) * qh)


# -- speeds --------------------------------------------------------------------------------------------------


def project_u(model, state, options: ProjectOptions = ProjectOptions(), u_err_estimate=None):
    """Project u onto ``[P; V] u + c = 0`` (free u's only, Simbody's relative weights). Returns (state, results).

    Requires nothing beyond q (realizes Position itself). Differentiable (the solve's exact derivative).
    """
    c = model.constraints
    nv = c.mp + c.mv
    zero = jnp.zeros((), state.q.dtype)
    if nv == 0:
        results = ProjectResults(success=jnp.ones((), bool), q_iterations=jnp.zeros((), jnp.int32),
                                 u_iterations=jnp.zeros((), jnp.int32), q_entry_norm=zero, q_final_norm=zero,
                                 u_entry_norm=zero, u_final_norm=zero, u_err_estimate=u_err_estimate)
        return state, results
    st = state if state.get_system_stage() >= Stage.Position else \
        dataclasses.replace(state, position=kinematics.realize_position(model, state.q))
    ops = VelocityConstraintOperators(model, st.t, st.q, st.position, st.constraint_enabled)
    mask = ops.mask[:nv]
    free_u = prescribed.calc_slot_masks(model, st).free_u.astype(st.q.dtype)
    B = ops.calc_pv() * free_u
    E = jnp.maximum(jnp.abs(st.u), 1.0)  # Simbody's Eu^-1: relative changes for large |u|
    rank_tol = max(nv, 1) * jnp.finfo(st.q.dtype).eps ** 0.5
    BE_pinv = pinv(B * E, rtol=rank_tol)
    infinity = options.use_infinity_norm
    err = ops.velocity_errors(st.u)
    entry = _norm(err, mask, infinity)
    start = ((entry > options.accuracy) | options.force_projection) & (entry <= options.projection_limit)

    def iteration(_, c):  # a loop, so the velocity errors are traced once
        u, err = c
        u = jnp.where(start, u - E * (BE_pinv @ err), u)
        return u, ops.velocity_errors(u)

    u, err = jax.lax.fori_loop(0, MAX_U_ITERATIONS, iteration, (st.u, err))
    final = jnp.where(start, _norm(err, mask, infinity), entry)
    worse = final > entry
    u = jnp.where(worse, st.u, u)
    final = jnp.minimum(final, entry)
    est = None
    if u_err_estimate is not None:
        est = jnp.asarray(u_err_estimate, st.q.dtype)
        est = est - E * (BE_pinv @ (B @ (est * free_u)))
    results = ProjectResults(success=final <= options.accuracy, q_iterations=jnp.zeros((), jnp.int32),
                             u_iterations=jnp.where(start, MAX_U_ITERATIONS, 0).astype(jnp.int32), q_entry_norm=zero,
                             q_final_norm=zero, u_entry_norm=entry, u_final_norm=final, u_err_estimate=est)
    return state.set_u(u), results


def project(model, state, options: ProjectOptions = ProjectOptions(), q_err_estimate=None, u_err_estimate=None):
    """Simbody's System::project: prescribe q, project q, prescribe u, project u. Returns (state, results).

    With error estimates (the integrators' projection, Simbody's attemptDAEStep), each is projected with its
    level and comes back in ``results.q_err_estimate`` / ``u_err_estimate``.
    """
    state = prescribed.prescribe_q(model, state)
    state, rq = project_q(model, state, options, q_err_estimate)
    state = prescribed.prescribe_u(model, state)
    state, ru = project_u(model, state, options, u_err_estimate)
    results = dataclasses.replace(
        ru, success=rq.success & ru.success, q_iterations=rq.q_iterations, q_entry_norm=rq.q_entry_norm,
        q_final_norm=rq.q_final_norm, q_err_estimate=rq.q_err_estimate,
    )
    return state, results
