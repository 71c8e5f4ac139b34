"""One step of Simbody's SemiExplicitEulerTimeStepper: velocity-level stepping with unilateral impulses.

Simbody's ``SemiExplicitEulerTimeStepper::stepTo`` (catalogue 2.20, 6.5), per lane, with step h:

1. Position kinematics; contacts with separation ``perr <= consTol`` are *proximal*; the others get zero
   rows (they take no part). ``verr0 = G u``; effective friction ``mu = mu_v |slip| + (|slip| <=
   transition ? mu_s : mu_d)`` is fixed from the slip at the start of the step.
2. Impact (Simbody's default Simultaneous model; Sequential and Mixed in induced_impacts): *impacters* are proximal contacts with ``verr_n < -consTol/10``.
   Coefficients of restitution come from ConditionalConstraint::calcEffectiveCOR (0 at or below the
   capture speed, ``min_cor`` at or above the min-COR speed, ``1 - (1 - min_cor) v / v_minCOR`` between).
   Newton: one round solving ``verr_n + e verr_n + (A pi)_n = 0``, so the rebound is ``-e verr_n``.
   Poisson: a compression round, then an expansion round that applies the known normal impulse
   ``e pi_n`` at the impacters (their friction still participates), then a correction round if that
   expansion made another contact impact. Friction participates in every round.
3. ``u+ = u + M^-1 G^T pi``; dynamics with u+: ``udot`` (forces, gravity, gyroscopic terms), then every
   proximal contact and every speed row (StateLimitedFriction, Unilateral/BoundedSpeedConstraint: always
   proximal, impulse bounded by h times their force bounds) solves ``G (u+ + h udot) - speed + A pi = 0``
   (unilateral, Coulomb, bounds) and ``u_new = u+ + h udot + M^-1 G^T pi``.
4. Position projection: Bilateral (Simbody's default) makes every proximal contact that is active or
   penetrating an equation ``perr + h G du = 0``; Unilateral keeps ``pi_n >= 0`` on all proximal normals;
   None skips it. ``q_new = q + h N(q) (u_new + du)`` (u itself keeps u_new), ``z_new = z + h zdot`` (zdot at
   u+, as Simbody's step), t += h, quaternions renormalized. Controls are held (zero-order hold).

Bilateral constraints are not part of the impulse problem (Simbody's own stepper leaves them as a TODO;
jb.SemiExplicitEulerTimeStepper refuses models that have them). Prescribed motion and locks (also a TODO in
Simbody's stepper) are honoured: the state is prescribed (``model.prescribe``) before the step and after it,
udot comes from the prescribed forward dynamics, and the mobilities with known udot do not respond to impulses
(their Motion or lock supplies the reaction): the compliance is ``A = G M_ff^-1 G^T`` over the free block of
the mass matrix. The impulse solver is PLUS (jaxbody._integrators.plus_impulse_solver) or PGS
(jaxbody._integrators.impulse_solvers).
Every branch is arithmetic on masks, so a batch of lanes (``vmap``) may have different proximal and
active sets and compiles once; a Poisson step always evaluates its three rounds (a round that does not
apply is masked out). Gradients exist between active-set changes and are discontinuous at impacts,
at stick/slip transitions and where a contact becomes proximal; for gradients through contact use the
smooth compliant contact forces instead.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxbody._constraints.unilateral.contact_set import calc_contact_kinematics
from jaxbody._dynamics import kinematics, mass_matrix, prescribed
from jaxbody._dynamics.state import State
from jaxbody._integrators.impulse_solvers import solve_pgs
from jaxbody._integrators.induced_impacts import induced_impacts
from jaxbody._integrators.plus_impulse_solver import solve_plus
from jaxbody._math import spatial
from jaxbody._math.linalg import SIGNIFICANT_REAL, small_spd_solve
from jaxbody._realize import realize
from jaxbody._typing import Stage



class StepperOptions(NamedTuple):
    """Static settings (hashable). restitution: "poisson" | "newton" | "none"; projection: "bilateral" |
    "unilateral" | "none"; velocities in m/s (or rad/s) as Simbody's *InUse values; tol, max_iters,
    early_exit: PGS (see solve_pgs); solver: "plus" | "pgs"; induced: "simultaneous" | "sequential" | "mixed" with at most
    max_induced_impacts rounds (jaxbody._integrators.induced_impacts)."""

    restitution: str = "poisson"
    projection: str = "bilateral"
    cons_tol: float = 1e-3
    capture_velocity: float = 2e-3
    min_cor_velocity: float = 2e-3
    transition_velocity: float = 0.0
    tol: float = 1e-6
    max_iters: int = 100
    early_exit: bool = False
    induced: str = "simultaneous"
    max_induced_impacts: int = 5
    solver: str = "plus"

    def solve(self, A, verr, participating, mu, known_normal=None, lower=None, upper=None, *, unilateral=True):
        """The chosen impulse solver (solve_plus or solve_pgs) on one impulse problem (an ImpulseSolution)."""
        if self.solver == "plus":
            return solve_plus(A, verr, participating, mu, known_normal, lower, upper, unilateral=unilateral,
                              roll_speed=max(self.transition_velocity, 2 * self.cons_tol))
        return solve_pgs(A, verr, participating, mu, known_normal, lower, upper, unilateral=unilateral,
                         tol=self.tol, max_iters=self.max_iters, early_exit=self.early_exit)


class StepReport(NamedTuple):
    """What a step did, per lane, per contact (UnilateralContactIndex order) then per speed row:
    ``proximal`` (n,) bool; ``impacters`` (n,) bool; ``impulse`` (n, 3) total constraint impulses
    (N s or N m s; normal, friction 1, friction 2) over the step;
    ``num_impact_rounds`` (int); ``converged`` (bool, every solve that ran converged); ``iterations``
    (int, PGS sweeps or PLUS Newton iterations, summed over the solves)."""

    proximal: jnp.ndarray
    impacters: jnp.ndarray
    impulse: jnp.ndarray
    num_impact_rounds: jnp.ndarray
    converged: jnp.ndarray
    iterations: jnp.ndarray


def calc_effective_cor(min_cor, capture_speed, min_cor_speed, impact_speed):
    """Simbody's ConditionalConstraint::calcEffectiveCOR (all speeds >= 0), elementwise."""
    between = 1 - (1 - min_cor) / min_cor_speed * impact_speed
    return jnp.where(impact_speed <= capture_speed, 0.0, jnp.where(impact_speed >= min_cor_speed, min_cor, between))


def calc_effective_cof(mu_s, mu_d, mu_v, transition_speed, slip_speed):
    """Simbody's ConditionalConstraint::calcEffectiveCOF, elementwise."""
    return mu_v * slip_speed + jnp.where(slip_speed <= transition_speed, mu_s, mu_d)


def _impact(A, verr, proximal, mu, cor, opt: StepperOptions):
    """Simbody's performSimultaneousImpact: (total impulse (nc, 3), impacters, rounds, converged, iterations)."""
    nc = verr.shape[0]
    part = jnp.broadcast_to(proximal[:, None], (nc, 3))
    impacters = proximal & (verr[:, 0] < -0.1 * opt.cons_tol)
    any_impact = jnp.any(impacters)
    if opt.restitution == "newton":
        newton = jnp.zeros_like(verr).at[:, 0].set(cor * verr[:, 0])
        sol = opt.solve(A, verr + newton, part, mu)
        impulse = jnp.where(any_impact, sol.impulse, 0.0)
        return impulse, impacters, any_impact.astype(int), sol.converged | ~any_impact, sol.iterations
    normal_row = jnp.arange(3) == 0

    def apply(v, impulse):
        return v + (A @ impulse.reshape(-1)).reshape(nc, 3)

    def round_(carry, r):
        """Round r: 0 compression, 1 Poisson expansion (known e pi_n at the impacters), 2 correction. The rounds
        share one traced solver (a scan); a round that does not apply is masked out."""
        v, total, compression, any_expansion, rounds, ok, its = carry
        expansion_n = jnp.where((r == 1) & impacters & (jnp.abs(compression[:, 0]) >= SIGNIFICANT_REAL),
                                cor * compression[:, 0], 0.0)
        expanding = expansion_n != 0
        expansion = jnp.zeros_like(verr).at[:, 0].set(expansion_n)
        v = apply(v, expansion)
        on = jnp.where(r == 0, any_impact, jnp.where(r == 1, jnp.any(expanding),
                       any_expansion & jnp.any(proximal & (v[:, 0] < -0.1 * opt.cons_tol))))
        sol = opt.solve(A, v, part & ~(expanding[:, None] & normal_row), mu, expansion_n)
        impulse = jnp.where(on, sol.impulse, 0.0)
        return (apply(v, impulse), total + expansion + impulse, jnp.where(r == 0, impulse, compression),
                jnp.where(r == 1, on, any_expansion), rounds + on, ok & (sol.converged | ~on),
                its + jnp.where(on, sol.iterations, 0)), None

    zero = jnp.zeros_like(verr)
    init = (verr, zero, zero, jnp.asarray(False), jnp.asarray(0), jnp.asarray(True), jnp.asarray(0))
    (_, total, _, _, rounds, converged, iterations), _ = jax.lax.scan(round_, init, jnp.arange(3))
    return total, impacters, rounds, converged, iterations


def _position_correction(A, perr, proximal, normal_active, h, opt: StepperOptions):
    """Impulses (nc, 3) whose ``h M^-1 G^T pi`` removes the normal position errors (Simbody's
    doPositionCorrectionPhase); returns (impulse, converged, iterations)."""
    nc = perr.shape[0]
    verr = jnp.zeros((nc, 3), perr.dtype).at[:, 0].set(perr / h)
    normal_row = jnp.arange(3) == 0
    if opt.projection == "unilateral":
        part = proximal[:, None] & normal_row
        sol = opt.solve(A, verr, part, jnp.zeros_like(perr))
    else:
        part = (proximal & (normal_active | (perr < 0)))[:, None] & normal_row
        sol = opt.solve(A, verr, part, jnp.zeros_like(perr), unilateral=False)
    return sol.impulse, sol.converged, sol.iterations


def _impulse_bounds(kin, mu, h):
    """Bounds (n,) of the first rows' impulses over a step: h * force bounds, times mu where scale_by_mu
    (infinite bounds stay infinite, with no NaN in their derivatives)."""
    factor = h * jnp.where(kin.scale_by_mu, mu, 1.0)

    def scaled(bound):
        infinite = jnp.isinf(bound)
        return jnp.where(infinite, bound, factor * jnp.where(infinite, 0.0, bound))

    return scaled(kin.lower), scaled(kin.upper)


def _free_mobility_response(model, s, G_flat):
    """``M^-1 G^T`` (nu, 3 n) with the known-udot mobilities (Motions, locks) held: their rows are zero and the
    free ones use the free block of M, so impulses move only free u (the known u's reactions absorb the rest)."""
    free = ~prescribed.calc_slot_masks(model, s).known_udot
    both = free[:, None] & free[None, :]
    M = jnp.where(both, mass_matrix.calc_m(model, s.position), jnp.eye(free.shape[0], dtype=G_flat.dtype))
    rhs = jnp.where(free[:, None], G_flat.T, 0.0)
    return jnp.where(free[:, None], small_spd_solve(M, rhs), 0.0)


def step(model, contacts, opt: StepperOptions, state: State, h):
    """One step of size h (s); returns (new unrealized State, StepReport)."""
    if contacts is None or contacts.num_rows == 0:
        raise ValueError("step needs at least one unilateral contact or speed row (use step_semi_explicit_euler)")
    s = realize(model, prescribed.prescribe(model, state), Stage.Position)
    kin = calc_contact_kinematics(model, s.position, s.q, contacts)
    n = kin.perr.shape[0]
    proximal = jnp.where(kin.is_contact, kin.perr <= opt.cons_tol, True)
    G = jnp.where(proximal[:, None, None], kin.G, 0.0)
    G_flat = G.reshape(3 * n, -1)
    MinvGt = _free_mobility_response(model, s, G_flat)  # (nu, 3 n)
    A = G_flat @ MinvGt
    target = jnp.zeros((n, 3), kin.perr.dtype).at[:, 0].set(kin.speed)

    def velocity_errors(u):
        return (G_flat @ u).reshape(n, 3) - target

    verr0 = velocity_errors(s.u)
    slip = jnp.where(kin.is_contact, spatial.safe_norm(verr0[:, 1:]), jnp.abs(verr0[:, 0]))
    mu = calc_effective_cof(kin.mu_s, kin.mu_d, kin.mu_v, opt.transition_velocity, slip)

    def cor_of(verr):  # Simbody's calcCoefficientsOfRestitution for the current impact speeds
        speed = -verr[:, 0]
        cor = calc_effective_cor(kin.min_cor, opt.capture_velocity, opt.min_cor_velocity, jnp.maximum(speed, 0.0))
        return jnp.where(speed > opt.cons_tol, cor, 0.0) if opt.restitution != "none" else jnp.zeros_like(cor)

    contact_proximal = proximal & kin.is_contact
    if opt.induced == "simultaneous":
        impact, impacters, rounds, impact_ok, impact_its = _impact(A, verr0, contact_proximal, mu, cor_of(verr0), opt)
    else:
        impact, impacters, rounds, impact_ok, impact_its = induced_impacts(
            A, verr0, contact_proximal, mu, cor_of, opt, max(opt.max_induced_impacts, 1))
    u_plus = s.u + MinvGt @ impact.reshape(-1)
    dyn = realize(model, s.set_u(u_plus), Stage.Acceleration)
    du = h * dyn.acceleration.udot
    part = jnp.broadcast_to(proximal[:, None], (n, 3))
    lower, upper = _impulse_bounds(kin, mu, h)
    sol = opt.solve(A, velocity_errors(u_plus + du), part, mu, None, lower, upper)
    u_new = u_plus + du + MinvGt @ sol.impulse.reshape(-1)
    converged, iterations = impact_ok & sol.converged, impact_its + sol.iterations
    u_q = u_new
    if opt.projection != "none":
        pos_impulse, pos_ok, pos_its = _position_correction(A, kin.perr, contact_proximal, sol.normal_active, h, opt)
        u_q = u_new + MinvGt @ pos_impulse.reshape(-1)
        converged, iterations = converged & pos_ok, iterations + pos_its
    qdot = kinematics.calc_q_dot(model, s, u_q)
    # z by explicit Euler with zdot at the post-impact state, as Simbody's step ("Update auxiliary states z")
    new = state.set_time(state.t + h).set_q(s.q + h * qdot).set_u(u_new).set_z(s.z + h * dyn.dynamics.zdot)
    new = prescribed.prescribe(model, kinematics.normalize_quaternions(model, new))
    report = StepReport(proximal, impacters, impact + sol.impulse, rounds, converged, iterations)
    return new, report


__all__ = ["StepReport", "StepperOptions", "calc_effective_cof", "calc_effective_cor", "step"]
