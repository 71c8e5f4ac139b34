"""One step attempt of each of Simbody's integrators (catalogue 6.3): ``y1`` and its error estimate.

The state vector is Simbody's ``y = [q; u; z]`` (flat, (ny,)); ``f = ydot = [N(q) u; udot; zdot]``.
Every stage evaluation sets (t, q, u, z), prescribes q and u (Motions, locks) and realizes Acceleration
(catalogue 6.1). The explicit Runge-Kutta methods share one tableau-driven step whose stages run in a
``lax.scan`` (the dynamics are traced once, not once per stage). Attempts return the unprojected ``y1``;
projection, the error norm and the step-size rule are the stepper's (jaxbody._integrators.control).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics import prescribed
from jaxbody._dynamics.kinematics import calc_q_dot
from jaxbody._dynamics.state import State
from jaxbody._realize import realize
from jaxbody._typing import Stage


def split_y(state: State, y):
    """(q, u, z) views of y for this state's sizes."""
    nq, nu = state.q.shape[0], state.u.shape[0]
    return y[:nq], y[nq:nq + nu], y[nq + nu:]


def join_y(state: State):
    return jnp.concatenate([state.q, state.u, state.z])


def with_y(state: State, t, y) -> State:
    """``state`` at time t with y's q, u, z (caches dropped)."""
    q, u, z = split_y(state, y)
    return state.set_time(t).set_q(q).set_u(u).set_z(z)


def realize_ydot(model, state: State):
    """(ydot, state prescribed and realized to Acceleration) at the state's (t, q, u, z)."""
    s = realize(model, prescribed.prescribe(model, state), Stage.Acceleration)
    return jnp.concatenate([s.velocity.qdot, s.acceleration.udot, s.dynamics.zdot]), s


def calc_ydot(model, base: State, t, y):
    """ydot at (t, y) with ``base``'s forces, locks and enabled constraints (one stage evaluation)."""
    return realize_ydot(model, with_y(base, t, y))[0]


@dataclasses.dataclass(frozen=True)
class Tableau:
    """Explicit Runge-Kutta: stage i at ``t0 + c_i h``, ``y0 + h sum_j a_ij f_j``; ``y1 = y0 + h sum b_i f_i``;
    error estimate ``h sum e_i f_i`` (None: no estimate)."""

    a: tuple
    b: tuple
    c: tuple
    e: tuple | None = None
    error_scale: float = 1.0


def _t(rows):
    return tuple(tuple(float(x) for x in r) for r in rows)


RUNGE_KUTTA_2 = Tableau(a=_t([[0, 0], [1, 0]]), b=(0.5, 0.5), c=(0.0, 1.0), e=(0.5, -0.5))
RUNGE_KUTTA_3 = Tableau(a=_t([[0, 0, 0], [0.5, 0, 0], [-1, 2, 0]]), b=(1 / 6, 4 / 6, 1 / 6), c=(0.0, 0.5, 1.0),
                        e=(1 / 6, -1 / 3, 1 / 6))
RUNGE_KUTTA_4 = Tableau(a=_t([[0, 0, 0, 0], [0.5, 0, 0, 0], [0, 0.5, 0, 0], [0, 0, 1, 0]]),
                        b=(1 / 6, 1 / 3, 1 / 3, 1 / 6), c=(0.0, 0.5, 0.5, 1.0))
# Merson: y* = y0 + h/2 (f0 - 3 f2 + 4 f3) is stage 4's argument; error 0.2 (y1 - y*).
RUNGE_KUTTA_MERSON = Tableau(
    a=_t([[0, 0, 0, 0, 0], [1 / 3, 0, 0, 0, 0], [1 / 6, 1 / 6, 0, 0, 0], [1 / 8, 0, 3 / 8, 0, 0],
          [1 / 2, 0, -3 / 2, 2, 0]]),
    b=(1 / 6, 0.0, 0.0, 4 / 6, 1 / 6), c=(0.0, 1 / 3, 1 / 3, 1 / 2, 1.0),
    e=(1 / 6 - 1 / 2, 0.0, 3 / 2, 4 / 6 - 2, 1 / 6), error_scale=0.2)
_B4 = (25 / 216, 0.0, 1408 / 2565, 2197 / 4104, -1 / 5, 0.0)
_B5 = (16 / 135, 0.0, 6656 / 12825, 28561 / 56430, -9 / 50, 2 / 55)
RUNGE_KUTTA_FELDBERG = Tableau(
    a=_t([[0, 0, 0, 0, 0, 0], [1 / 4, 0, 0, 0, 0, 0], [3 / 32, 9 / 32, 0, 0, 0, 0],
          [1932 / 2197, -7200 / 2197, 7296 / 2197, 0, 0, 0], [439 / 216, -8, 3680 / 513, -845 / 4104, 0, 0],
          [-8 / 27, 2, -3544 / 2565, 1859 / 4104, -11 / 40, 0]]),
    b=_B4, c=(0.0, 1 / 4, 3 / 8, 12 / 13, 1.0, 1 / 2), e=tuple(b5 - b4 for b4, b5 in zip(_B4, _B5)))


def rk_attempt(tableau: Tableau, model, base: State, t0, y0, f0, h):
    """One explicit RK step: (y1, error estimate (ny,), stage evaluations). f0 = f(t0, y0) is reused; with
    f0 None it is the scan's first stage (jb.step_rk4: the dynamics are traced once).

    The scan carries a window of the last ``w`` stage derivatives (w: how far back any row of ``a`` reaches;
    1 for RK2 and RK4, s - 1 for Merson) shifted by one each stage, and the running sums of b_i k_i and
    e_i k_i: no stacked buffer, no dynamic updates (those cost 15-20% of an RK4 step). Sums run in stage order.
    """
    s, dtype = len(tableau.c), y0.dtype
    w = _window(tableau)
    # band[i, d] = a[i][i - 1 - d]: the weight of the derivative d + 1 stages back (0 before the first stage).
    band = jnp.asarray([[tableau.a[i][i - 1 - d] if i - 1 - d >= 0 else 0.0 for d in range(w)] for i in range(s)],
                       dtype)
    b, c = jnp.asarray(tableau.b, dtype), jnp.asarray(tableau.c, dtype)
    e = jnp.asarray(tableau.e if tableau.e is not None else [0.0] * s, dtype)

    def stage(carry, i):
        window, sum_b, sum_e = carry
        combination = band[i, w - 1] * window[w - 1]
        for d in range(w - 2, -1, -1):  # oldest first: stage order
            combination = combination + band[i, d] * window[d]
        fi = calc_ydot(model, base, t0 + c[i] * h, y0 + h * combination)
        return ((fi,) + window[:-1], sum_b + b[i] * fi, sum_e + e[i] * fi), None

    zero = jnp.zeros_like(y0)
    window = tuple(zero for _ in range(w))
    start = (window, zero, zero) if f0 is None else ((f0,) + window[1:], b[0] * f0, e[0] * f0)
    (_, sum_b, sum_e), _ = jax.lax.scan(stage, start, jnp.arange(0 if f0 is None else 1, s))
    y1 = y0 + h * sum_b
    err = jnp.zeros_like(y0) if tableau.e is None else tableau.error_scale * h * sum_e
    return y1, err, s - 1


def _window(tableau: Tableau) -> int:
    """How many stages back any row of ``a`` reaches (at least 1)."""
    return max([i - j for i, row in enumerate(tableau.a) for j, x in enumerate(row) if j < i and x != 0.0] + [1])


def explicit_euler_attempt(model, base: State, t0, y0, f0, h):
    """y1 = y0 + h f0, no stage evaluation; the error estimate is the stepper's (it needs ydot at the projected
    y1: Method.error_from_projected_ydot)."""
    return y0 + h * f0, jnp.zeros_like(y0), 0


def semi_explicit_euler_step(model, base: State, t0, y0, f0, h):
    """u1 = u0 + h udot0, z1 = z0 + h zdot0, q1 = q0 + h N(q0) u1 (udot0 from f0): no new stage evaluation."""
    q0, u0, z0 = split_y(base, y0)
    _, udot0, zdot0 = split_y(base, f0)
    u1 = u0 + h * udot0
    s = prescribed.prescribe(model, with_y(base, t0, y0))
    qdot = calc_q_dot(model, s, u1)
    return jnp.concatenate([q0 + h * qdot, u1, z0 + h * zdot0])


def semi_explicit_euler_attempt(model, base: State, t0, y0, f0, h):
    """Symplectic Euler, fixed step (no error estimate)."""
    return semi_explicit_euler_step(model, base, t0, y0, f0, h), jnp.zeros_like(y0), 0


def semi_explicit_euler2_attempt(model, base: State, t0, y0, f0, h):
    """Step doubling: two half steps (the result) vs one full step; error y_two - y_big (p = 2)."""
    big = semi_explicit_euler_step(model, base, t0, y0, f0, h)
    mid = semi_explicit_euler_step(model, base, t0, y0, f0, h / 2)
    f_mid = calc_ydot(model, base, t0 + h / 2, mid)
    two = semi_explicit_euler_step(model, base, t0 + h / 2, mid, f_mid, h / 2)
    return two, two - big, 1


VERLET_ITERATIONS = 10


def verlet_attempt(model, base: State, t0, y0, f0, h, accuracy):
    """Simbody's Verlet: q1 = q0 + h qdot0 + h^2/2 qdotdot0; u1 by functional iteration of the trapezoid rule
    (at most 10 iterations, tolerance min(1e-4, 0.1 accuracy); a fori_loop, so reverse mode works); errors:
    q trapezoid vs Verlet, u explicit Euler vs trapezoid (p = 3). The stepper projects q and u afterwards as
    for the other methods."""
    q0, u0, z0 = split_y(base, y0)
    qdot0, udot0, zdot0 = split_y(base, f0)
    s0 = realize(model, prescribed.prescribe(model, with_y(base, t0, y0)), Stage.Acceleration)
    q1 = q0 + h * qdot0 + h * h / 2 * s0.acceleration.qdotdot
    tol = min(1e-4, 0.1 * accuracy)

    def body(c):
        u1, z1, it, _ = c
        f1 = calc_ydot(model, base, t0 + h, jnp.concatenate([q1, u1, z1]))
        _, udot1, zdot1 = split_y(base, f1)
        u_new, z_new = u0 + h / 2 * (udot0 + udot1), z0 + h / 2 * (zdot0 + zdot1)
        scale = jnp.maximum(jnp.abs(u_new), 1.0)
        change = jnp.max(jnp.abs(u_new - u1) / scale, initial=0.0)
        return u_new, z_new, it + 1, change

    def bounded(_, c):  # a fixed trip count (reverse-differentiable); converged iterations are skipped
        return jax.lax.cond(c[3] > tol, body, lambda c: c, c)

    init = (u0 + h * udot0, z0 + h * zdot0, jnp.zeros((), jnp.int32), jnp.asarray(jnp.inf, y0.dtype))
    u1, z1, iterations, _ = jax.lax.fori_loop(0, VERLET_ITERATIONS, bounded, init)
    y1 = jnp.concatenate([q1, u1, z1])
    f1 = calc_ydot(model, base, t0 + h, y1)
    qdot1 = split_y(base, f1)[0]
    err_q = q1 - (q0 + h / 2 * (qdot0 + qdot1))
    err_uz = jnp.concatenate([u1 - (u0 + h * udot0), z1 - (z0 + h * zdot0)])
    return y1, jnp.concatenate([err_q, err_uz]), iterations + 2


__all__ = [
    "RUNGE_KUTTA_2",
    "RUNGE_KUTTA_3",
    "RUNGE_KUTTA_4",
    "RUNGE_KUTTA_FELDBERG",
    "RUNGE_KUTTA_MERSON",
    "Tableau",
    "calc_ydot",
    "explicit_euler_attempt",
    "join_y",
    "realize_ydot",
    "rk_attempt",
    "semi_explicit_euler2_attempt",
    "semi_explicit_euler_attempt",
    "split_y",
    "verlet_attempt",
    "with_y",
]
