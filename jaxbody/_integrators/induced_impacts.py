"""Simbody's Sequential and Mixed induced-impact models (SemiExplicitEulerTimeStepper::stepTo, catalogue 2.20).

Rounds r = 1 .. max_rounds (Simbody's maxInducedImpactsPerStep, default 5), each on the current velocity
errors: COR from the current impact speed; contacts with a known expansion impulse are *expanders* (normal
known, friction participates), proximal contacts with ``verr_n >= -consTol/10`` *observers* (they take no
part, except in Mixed's last round where everyone participates), the others *impacters* (normal and
friction participate). A round with neither impacters nor expanders ends the impact. Newton restitution
adds ``e verr_n`` to the impacters' targets; Poisson makes the next round's expansion impulse ``e pi_n``. If
the last round leaves an expansion, one more round applies it: Sequential with only the expanders' friction
participating (penetration left for the next step), Mixed with every proximal contact participating.
The rounds are a fixed-length ``lax.fori_loop``; a finished lane's later rounds are masked out.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._math.linalg import SIGNIFICANT_REAL



def induced_impacts(A, verr, proximal, mu, cor_of, opt, max_rounds: int):
    """(total impulse (nc, 3), impacters of the first round, rounds, converged, iterations).

    ``cor_of(verr) -> (nc,)`` gives the effective COR for the current velocity errors."""
    nc = verr.shape[0]
    normal_row = jnp.arange(3) == 0
    poisson, newton, mixed = opt.restitution == "poisson", opt.restitution == "newton", opt.induced == "mixed"

    def apply(v, impulse):
        return v + (A @ impulse.reshape(-1)).reshape(nc, 3)

    def solve(v, normals, frictions, known):
        part = (normals[:, None] & normal_row) | (frictions[:, None] & ~normal_row)
        expansion = jnp.zeros_like(v).at[:, 0].set(known)
        return opt.solve(A, apply(v, expansion), part & proximal[:, None], mu, known), expansion

    def round_(r, carry):
        v, total, known, done, rounds, ok, its, first = carry
        cor = cor_of(v)
        is_last = r == max_rounds - 1
        expanders = proximal & (known != 0)
        observers = proximal & ~expanders & (v[:, 0] >= -0.1 * opt.cons_tol)
        impacters = proximal & ~expanders & ~observers
        everyone = mixed & is_last
        active = ~done & (jnp.any(impacters) | jnp.any(expanders))
        target = v.at[:, 0].add(cor * v[:, 0]) if newton else v
        sol, expansion = solve(target, impacters | (observers & everyone), impacters | expanders | (observers & everyone),
                               known)
        impulse = jnp.where(active, sol.impulse + expansion, 0.0)
        next_known = jnp.where(active & poisson & impacters & (jnp.abs(sol.impulse[:, 0]) >= SIGNIFICANT_REAL),
                               cor * sol.impulse[:, 0], 0.0)
        first = jnp.where(r == 0, impacters, first)
        return (apply(v, impulse), total + impulse, next_known, done | ~active | is_last, rounds + active,
                ok & (sol.converged | ~active), its + jnp.where(active, sol.iterations, 0), first)

    zero = jnp.zeros(nc, verr.dtype)
    init = (verr, jnp.zeros_like(verr), zero, jnp.asarray(False), jnp.asarray(0), jnp.asarray(True),
            jnp.asarray(0), jnp.zeros(nc, bool))
    v, total, known, _, rounds, ok, its, first = jax.lax.fori_loop(0, max_rounds, round_, init)
    # Leftover expansion after the last round: Sequential applies it with only the expanders' friction
    # participating; Mixed with everyone participating (CORs effectively 0).
    final = jnp.any(known != 0)
    expanders = proximal & (known != 0)
    others = proximal & ~expanders & mixed
    sol, expansion = solve(v, others, others | expanders, known)
    total = total + jnp.where(final, sol.impulse + expansion, 0.0)
    return (total, first, rounds + final, ok & (sol.converged | ~final),
            its + jnp.where(final, sol.iterations, 0))
