"""Simbody's PLUS impulse solver (PLUSImpulseSolver: Poisson-Lankarani-Uchida-Sherman), vectorized.

Same problem and sign convention as ``solve_pgs`` (jaxbody._integrators.impulse_solvers): contacts k own rows
(normal, friction 1, friction 2) of ``A = G M^-1 G^T`` (m = 3 nc); find ``pi`` with ``verr + A pi = 0`` on the
enforced rows, normals within ``[lower, upper]`` (contacts: ``[0, inf)``), friction inside the Coulomb cone
``|pi_t| <= mu N`` with ``N = max(pi_n, 0) + pi_n_known``. ``verr`` already contains the effect of the known
(Poisson expansion) normal impulses, as for solve_pgs.

Simbody's algorithm (facts from PLUSImpulseSolver.cpp), per lane:

* **Sliding intervals.** At the start of an interval each frictional contact whose slip speed (the velocity
  error before the rest of the expansion impulse) exceeds the roll-to-slip transition speed is *Sliding*, with
  its direction ``d`` frozen; the others are *Rolling*. A solution of the interval's equations is accepted for a
  fraction ``s`` of the interval: 1 unless a sliding contact's slip would slow below the transition speed (stop
  where it comes closest to zero) or turn by more than 30 degrees (stop at 30); ``s > 1 - sqrt(eps)`` counts as 1.
  Then ``s pi`` and ``s`` of the expansion are applied and a new interval starts, until ``s = 1``.
* **Successive pruning** (the active-set loop) within an interval: every participating row starts active.
  Equations: active normal and rolling rows ``(verr + A pi)_i = 0``; sliding and impending-slip rows
  ``|d| pi_t + mu d N = 0`` (d: frozen slip for Sliding, the interval's velocity change ``(A pi)_t`` for
  Impending). They are solved by Newton's method (Jacobian of the errors; ``max(., 0)`` differentiated as
  Simbody's softmax with eps = sqrt(machine eps); the Newton step by pseudo-inverse, Simbody's FactorQTZ, so
  that redundant contacts get the minimum-norm impulse; backtracking line search halving down to 1/128; stop at
  ``|err| <= tol``, after ``max_newton`` iterations, or when 3+ iterations improve by less than 5%). Then the
  worst violation (a normal outside its bounds, or a Rolling friction outside its cone) is pruned: a normal is
  released (fixed at the bound it violated; a released contact's friction is off), unless it is Rolling, in which
  case (as for the worst friction) the friction switches from Rolling to Impending. Nothing re-enters within an
  interval, so at most ``2 nc + 1`` passes; the loop ends when no violation exceeds SignificantReal.

jaxbody's additions, stated: bounded rows (Simbody's BoundedRT, StateLimitedFriction, UnilateralSpeed) are pruned
to their violated bound (Simbody's PLUS leaves them as TODO); friction rows with mu = 0 or no compliance are off
(Simbody's frictionless contacts have none); the loops are bounded (``max_intervals``, 12 by default: the last
interval takes s = 1 and reports non-convergence if it needed less). The intervals are a ``lax.scan`` (a finished
lane skips the rest), the passes and Newton iterations ``lax.while_loop``s whose lanes keep their own active sets,
friction states and counters under ``vmap`` (one compilation). The search runs on
``stop_gradient`` inputs; each interval's answer then takes one Newton step outside the loops (its value
unchanged at a converged solve), which carries derivatives by the implicit function theorem: gradients are exact
for a fixed active set and friction state and discontinuous where they change. ``converged`` is per lane: every
Newton solve reached ``tol`` and the loops ended within their bounds.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._integrators.impulse_solvers import ImpulseSolution
from jaxbody._math import spatial
from jaxbody._math.lapack import pinv
from jaxbody._math.linalg import SIGNIFICANT_REAL

PLUS_DEFAULT_TOL = 1e-10  # Simbody's default PLUS convergence tolerance (norm of the equation errors)
PLUS_DEFAULT_MAX_NEWTON = 20  # Simbody's default Newton iteration limit
PLUS_DEFAULT_MAX_INTERVALS = 12  # jaxbody's bound (Simbody has none); a box landing on an edge takes 7
SQRT_EPS = float(np.sqrt(np.finfo(np.float64).eps))
COS_MAX_SLIDING_DIR_CHANGE = float(np.cos(np.pi / 6))  # 30 degrees
#: Simbody's Newton iteration stops for poor progress after this many iterations ...
NEWTON_MIN_ITERATIONS = 3
#: ... when an iteration keeps more than this fraction of the error norm.
NEWTON_POOR_PROGRESS = 0.95
_BACKTRACK = 0.5 ** np.arange(8)  # Simbody's line search: halve from 1 while > 0.01
OFF, ROLLING, SLIDING, IMPENDING = 0, 1, 2, 3  # friction conditions
_FREE, _AT_LOWER, _AT_UPPER = 0, 1, 2  # a row that is not active is fixed at 0, its lower or its upper bound


@jax.custom_jvp
def _max0_smooth(z):
    """max(z, 0) whose derivative is that of Simbody's softmax0(z, sqrt(eps)) (used only for Newton steps)."""
    return jnp.maximum(z, 0.0)


@_max0_smooth.defjvp
def _max0_smooth_jvp(primals, tangents):
    (z,), (dz,) = primals, tangents
    return jnp.maximum(z, 0.0), dz * (1 + z / jnp.sqrt(z * z + SQRT_EPS)) / 2


class _Problem:
    """One interval's data (flat rows m = 3 nc): A, start velocity error ``v`` (without the expansion left),
    ``vE = A e`` of the expansion left, ``known`` (nc,) expansion left, mu, bounds, frozen slip (nc, 2)."""

    def __init__(self, A, v, vE, known, mu, lo, hi, slip):
        self.A, self.v, self.vE, self.known, self.mu, self.lo, self.hi, self.slip = A, v, vE, known, mu, lo, hi, slip

    def fixed_values(self, fixed):
        """(m,) values of the rows that are not active: 0, or the normal's lower/upper bound."""
        nc = self.known.shape[0]
        lo = jnp.zeros((nc, 3), self.v.dtype).at[:, 0].set(jnp.where(jnp.isinf(self.lo), 0.0, self.lo)).reshape(-1)
        hi = jnp.zeros((nc, 3), self.v.dtype).at[:, 0].set(jnp.where(jnp.isinf(self.hi), 0.0, self.hi)).reshape(-1)
        return jnp.where(fixed == _AT_LOWER, lo, jnp.where(fixed == _AT_UPPER, hi, 0.0))

    def residual(self, pi, active, fixed, cond, smooth):
        """Equation errors (m,) at the active rows' impulses ``pi`` (0 on rows that are not active)."""
        nc = self.known.shape[0]
        full = jnp.where(active, pi, self.fixed_values(fixed))
        change = (self.vE + self.A @ full).reshape(nc, 3)
        r = self.v.reshape(nc, 3) + change
        p = full.reshape(nc, 3)
        pos = _max0_smooth(p[:, 0]) if smooth else jnp.maximum(p[:, 0], 0.0)
        normal = self.known + jnp.where(active.reshape(nc, 3)[:, 0], pos, 0.0)
        d = jnp.where((cond == SLIDING)[:, None], self.slip, change[:, 1:])
        slipping = (self.mu[:, None] * d * normal[:, None]) + spatial.safe_norm(d)[:, None] * p[:, 1:]
        tangent = jnp.where(((cond == SLIDING) | (cond == IMPENDING))[:, None], slipping, r[:, 1:])
        err = jnp.concatenate([r[:, :1], tangent], 1).reshape(-1)
        return jnp.where(active, err, 0.0)

    def newton_step(self, pi, active, fixed, cond, smooth):
        """(Newton step dpi (m,), errors (m,)): minimum-norm solution of ``J dpi = err`` on the active rows."""
        err = self.residual(pi, active, fixed, cond, smooth)
        J = jax.jacfwd(lambda p: self.residual(p, active, fixed, cond, smooth))(pi)
        both = active[:, None] & active[None, :]
        J = jnp.where(both, J, jnp.eye(pi.shape[0], dtype=pi.dtype))
        return pinv(J) @ err, err


def _newton(prob: _Problem, pi0, active, fixed, cond, tol, max_newton):
    """Simbody's damped Newton iteration: (pi, |err|, iterations)."""
    def norm_of(p):
        return jnp.linalg.norm(prob.residual(p, active, fixed, cond, True))

    def body(c):
        pi, n, _, it, _ = c
        dpi, _ = prob.newton_step(pi, active, fixed, cond, True)
        trials = pi[None, :] - jnp.asarray(_BACKTRACK, pi.dtype)[:, None] * dpi[None, :]
        norms = jax.vmap(norm_of)(trials)
        better = norms < n
        k = jnp.where(jnp.any(better), jnp.argmax(better), len(_BACKTRACK) - 1)
        it = it + 1
        poor = (it >= NEWTON_MIN_ITERATIONS) & (norms[k] > NEWTON_POOR_PROGRESS * n)
        return trials[k], norms[k], n, it, poor

    def cond_fn(c):
        _, n, _, it, poor = c
        return (n > tol) & (it < max_newton) & ~poor

    n0 = norm_of(pi0)
    pi, n, _, its, _ = jax.lax.while_loop(cond_fn, body, (pi0, n0, n0, jnp.asarray(0), jnp.asarray(False)))
    return pi, n, its


def _prune(prob: _Problem, pi, active, fixed, cond):
    """Simbody's check after a Newton solve: (done, active, fixed, cond, guess) with the worst violation pruned."""
    nc = prob.known.shape[0]
    full = jnp.where(active, pi, prob.fixed_values(fixed)).reshape(nc, 3)
    normal_on = active.reshape(nc, 3)[:, 0]
    pn = full[:, 0]
    clamped = jnp.clip(pn, prob.lo, prob.hi)
    viol_n = jnp.where(normal_on, jnp.abs(pn - clamped), 0.0)
    guess_n = jnp.where(normal_on, clamped, pn)
    limit = prob.mu * jnp.abs(jnp.maximum(guess_n, 0.0) + prob.known)
    tmag = spatial.safe_norm(full[:, 1:])
    rolling = cond == ROLLING
    over = rolling & (tmag > limit)
    viol_f = jnp.where(over, tmag - limit, 0.0)
    scale = jnp.where(over, limit / jnp.where(over, tmag, 1.0), 1.0)
    guess = jnp.concatenate([guess_n[:, None], scale[:, None] * full[:, 1:]], 1).reshape(-1)
    worst_n, worst_f = jnp.argmax(viol_n), jnp.argmax(viol_f)
    vn, vf = viol_n[worst_n], viol_f[worst_f]
    done = (vn <= SIGNIFICANT_REAL) & (vf <= SIGNIFICANT_REAL)
    normal_first = vn > vf
    release = ~done & normal_first & ~rolling[worst_n]
    impend = ~done & ~release
    k_impend = jnp.where(normal_first, worst_n, worst_f)
    rows = jnp.arange(3 * nc)
    released = release & (rows // 3 == worst_n)
    bound = jnp.where(pn[worst_n] < prob.lo[worst_n], _AT_LOWER, _AT_UPPER)
    fixed = jnp.where(released, jnp.where(rows % 3 == 0, bound, _FREE), fixed)
    active = active & ~released
    ks = jnp.arange(nc)
    cond = jnp.where(release & (ks == worst_n), OFF, cond)
    cond = jnp.where(impend & (ks == k_impend), IMPENDING, cond)
    return done, active, fixed, cond, guess


def _interval_search(prob: _Problem, part, cond0, tol, max_newton):
    """The active-set loop of one interval on stop_gradient data: (pi, active, fixed, cond, ok, newton its)."""
    nc = prob.known.shape[0]
    m = 3 * nc
    max_passes = 2 * nc + 1

    def body(c):
        active, fixed, cond, guess, _, passes, _, its = c
        r0 = prob.v + prob.vE + prob.A @ jnp.where(active, 0.0, prob.fixed_values(fixed))
        normal_row = jnp.arange(m) % 3 == 0
        pi0 = jnp.where(normal_row, 0.01 * jnp.sign(-r0), guess)  # Simbody: a small guess on the right branch
        pi, n, k = _newton(prob, jnp.where(active, pi0, 0.0), active, fixed, cond, tol, max_newton)
        done, new_active, new_fixed, new_cond, new_guess = _prune(prob, pi, active, fixed, cond)
        keep = lambda old, new: jnp.where(done, old, new)  # the final pass keeps its active set
        return (keep(active, new_active), keep(fixed, new_fixed), keep(cond, new_cond), keep(pi, new_guess), done,
                passes + 1, n <= tol, its + k)

    def cond_fn(c):
        return ~c[4] & (c[5] < max_passes)

    init = (part, jnp.full(m, _FREE), cond0, jnp.zeros(m, prob.v.dtype), jnp.asarray(False), jnp.asarray(0),
            jnp.asarray(True), jnp.asarray(0))
    active, fixed, cond, pi, done, _, ok, its = jax.lax.while_loop(cond_fn, body, init)
    return pi, active, fixed, cond, ok & done, its


def _sliding_fraction(slip, bend, cond, roll_speed):
    """Simbody's accepted fraction s of an interval from each Sliding contact's slip ``slip`` -> ``bend`` (nc, 2)."""
    ab = bend - slip
    ab2 = jnp.sum(ab * ab, -1)
    tiny = ab2 < SIGNIFICANT_REAL
    s_origin = jnp.clip(jnp.sum(-slip * ab, -1) / jnp.where(tiny, 1.0, ab2), 0.0, 1.0)
    s_origin = jnp.where(tiny, 1.0, s_origin)
    end = slip + s_origin[:, None] * ab
    a2, bm, sm = jnp.sum(slip * slip, -1), spatial.safe_norm(bend), spatial.safe_norm(slip)
    cos = jnp.clip(jnp.sum(slip * bend, -1) / jnp.where(bm * sm > 0, bm * sm, 1.0), -1.0, 1.0)
    # Angle of 30 degrees between slip and slip + a ab: (a2 + a q)^2 = c^2 a2 (a2 + 2 a q + a^2 ab2).
    c2, q = COS_MAX_SLIDING_DIR_CHANGE ** 2, jnp.sum(slip * ab, -1)
    qa, qb, qc = q * q - c2 * a2 * ab2, 2 * a2 * q * (1 - c2), a2 * a2 * (1 - c2)
    disc2 = qb * qb - 4 * qa * qc
    disc = jnp.where(disc2 > 0, jnp.sqrt(jnp.where(disc2 > 0, disc2, 1.0)), 0.0)
    safe_qa = jnp.where(jnp.abs(qa) > 0, qa, 1.0)
    roots = jnp.stack([(-qb - disc) / (2 * safe_qa), (-qb + disc) / (2 * safe_qa)], -1)
    valid = (roots >= 0) & ((a2[:, None] + roots * q[:, None]) > 0) & (jnp.abs(qa) > 0)[:, None]
    s_turn = jnp.clip(jnp.min(jnp.where(valid, roots, 1.0), -1), 0.0, 1.0)
    slowed = jnp.where(bm < SIGNIFICANT_REAL, 1.0, s_origin)
    turned = jnp.where(cos >= COS_MAX_SLIDING_DIR_CHANGE, 1.0,
                       jnp.where(jnp.sum(end * end, -1) <= roll_speed ** 2, s_origin, s_turn))
    s_k = jnp.where(bm <= roll_speed, slowed, turned)
    s = jnp.min(jnp.where(cond == SLIDING, s_k, 1.0), initial=1.0)
    return jnp.where(s > 1 - SQRT_EPS, 1.0, s)


def solve_plus(A, verr, participating, mu, known_normal=None, lower=None, upper=None, *, unilateral=True,
               roll_speed=2e-3, tol=PLUS_DEFAULT_TOL, max_newton=PLUS_DEFAULT_MAX_NEWTON,
               max_intervals=PLUS_DEFAULT_MAX_INTERVALS) -> ImpulseSolution:
    """PLUS on ``A pi = -verr`` (arguments as solve_pgs; ``roll_speed``: Simbody's roll-to-slip transition speed,
    the stepper's friction transition velocity in use, m/s). ``iterations`` counts Newton iterations."""
    if not unilateral:
        return solve_bilateral(A, verr, participating)
    nc = verr.shape[0]
    dtype = verr.dtype
    known = jnp.zeros(nc, dtype) if known_normal is None else known_normal
    lo = jnp.zeros(nc, dtype) if lower is None else lower
    hi = jnp.full(nc, jnp.inf, dtype) if upper is None else upper
    e_vec = jnp.zeros((nc, 3), dtype).at[:, 0].set(known).reshape(-1)
    part = participating.reshape(-1)
    part_f = participating[:, 1] & participating[:, 2]
    diag = jnp.diagonal(A).reshape(nc, 3)
    friction_on = part_f & (mu > 0) & (diag[:, 1] + diag[:, 2] > 0)
    part = part & ((jnp.arange(3 * nc) % 3 == 0) | jnp.repeat(friction_on, 3))
    sg = jax.lax.stop_gradient

    def interval(carry, i):
        return jax.lax.cond(carry[3], lambda c: c, lambda c: work(c, i), carry), None

    def work(carry, i):
        v, frac, total, done, ok, its, normal_active = carry
        slip = v.reshape(nc, 3)[:, 1:]
        cond0 = jnp.where(friction_on, jnp.where(spatial.safe_norm(slip) > roll_speed, SLIDING, ROLLING), OFF)
        prob = _Problem(A, v, frac * (A @ e_vec), frac * known, mu, lo, hi, slip)
        search = _Problem(*(sg(x) for x in (A, v, prob.vE, prob.known, mu, lo, hi, slip)))
        pi0, active, fixed, cond, ok_i, its_i = _interval_search(search, part & ~done, cond0, tol, max_newton)
        pi0 = sg(pi0)
        dpi, _ = prob.newton_step(pi0, active, fixed, cond, False)  # implicit-function step: carries derivatives
        full = jnp.where(active, pi0 - dpi, prob.fixed_values(fixed))
        change = prob.vE + A @ full
        bend = (v + change).reshape(nc, 3)[:, 1:]
        s = _sliding_fraction(slip, bend, cond, roll_speed)
        s = jnp.where(done, 0.0, s)
        last = i == max_intervals - 1
        short = ~done & last & (s < 1)
        s = jnp.where(short, 1.0, s)
        new_done = done | (s >= 1)
        return (v + s * change, frac * (1 - s), total + s * full, new_done, ok & (ok_i | done) & ~short,
                its + jnp.where(done, 0, its_i), jnp.where(done, normal_active, active.reshape(nc, 3)[:, 0]))

    init = (verr.reshape(-1) - A @ e_vec, jnp.ones((), dtype), jnp.zeros(3 * nc, dtype), jnp.asarray(False),
            jnp.asarray(True), jnp.asarray(0), jnp.zeros(nc, bool))
    (_, _, total, _, ok, its, normal_active), _ = jax.lax.scan(interval, init, jnp.arange(max_intervals))
    return ImpulseSolution(total.reshape(nc, 3), verr + (A @ total).reshape(nc, 3), ok, its, normal_active)


def solve_bilateral(A, verr, participating) -> ImpulseSolution:
    """Simbody's PLUS solveBilateral: the minimum-norm solution of ``A_pp pi_p = -verr_p`` on the participating
    rows (pseudo-inverse, as its FactorQTZ), zero elsewhere."""
    nc = verr.shape[0]
    part = participating.reshape(-1)
    both = part[:, None] & part[None, :]
    A_pp = jnp.where(both, A, jnp.eye(3 * nc, dtype=A.dtype))
    pi = jnp.where(part, pinv(A_pp) @ jnp.where(part, -verr.reshape(-1), 0.0), 0.0)
    return ImpulseSolution(pi.reshape(nc, 3), verr + (A @ pi).reshape(nc, 3), jnp.asarray(True), jnp.asarray(1),
                           participating[:, 0])


__all__ = ["solve_bilateral", "solve_plus"]
