"""Fixed-step integrators over ``lax.scan``: classic RK4 and semi-explicit Euler.

The continuous system is ``qdot = N(q) u``, ``udot = M^-1 (f + J^T F - c)``,
``zdot`` from the force elements' state variables, with the State's applied
forces held constant over a step. Prescribed motion and locks are honoured as Simbody's
integrators do (catalogue 6.1): every stage evaluation sets t, q, u, then
``prescribed.prescribe`` (prescribeQ, prescribeU) and realizes; the known udots
enter the dynamics; the state after a step is prescribed again, so prescribed
q and u follow their functions exactly. Quaternions are renormalized after
every step (Simbody does this in projection). Everything is pure, so
simulations vmap over states (including mixed locked / free batches) or
models and differentiate by reverse mode through the scan.

When to use which: ``jb.simulate`` is the fast path (a fixed number of steps, no error control, no
constraint projection, no events: constraint drift grows unless you project yourself); Simbody's
integrators driven by ``jb.TimeStepper`` control the local error, project onto the constraint manifold
after every step, land on report and event times and handle events, at the cost of a data-dependent
number of steps per lane (jaxbody._integrators.stepper).
"""

from __future__ import annotations

import operator

import jax
import numpy as np

from jaxbody._dynamics import kinematics, prescribed
from jaxbody._dynamics.state import State
from jaxbody._dynamics.state_checks import check_state
from jaxbody._integrators.methods import (
    RUNGE_KUTTA_4,
    calc_ydot,
    join_y,
    rk_attempt,
    semi_explicit_euler_step,
    with_y,
)
from jaxbody.errors import InvalidArgument


def _finish_step(model, state: State) -> State:
    return prescribed.prescribe(model, kinematics.normalize_quaternions(model, state))


def step_rk4(model, state: State, dt) -> State:
    """One classic 4th-order Runge-Kutta step of size dt (s); returns the unrealized new state.

    Simbody's RungeKutta tableau through the same stage engine as the TimeStepper's integrators
    (jaxbody._integrators.methods.rk_attempt: the four stages run as a ``lax.scan``, so the dynamics are
    traced and compiled once, not four times).
    """
    check_state(model, state, "jb.step_rk4")
    y0 = join_y(state)
    y1, _, _ = rk_attempt(RUNGE_KUTTA_4, model, state, state.t, y0, None, dt)
    return _finish_step(model, with_y(state, state.t + dt, y1))


def step_semi_explicit_euler(model, state: State, dt) -> State:
    """Symplectic (semi-explicit) Euler: ``u += dt udot(q, u)``, then ``q += dt N(q) u_new`` (state prescribed first);
    the SemiExplicitEuler integrator's step (jaxbody._integrators.methods)."""
    check_state(model, state, "jb.step_semi_explicit_euler")
    s = prescribed.prescribe(model, state)
    y0 = join_y(s)
    f0 = calc_ydot(model, s, s.t, y0)
    y1 = semi_explicit_euler_step(model, s, s.t, y0, f0, dt)
    return _finish_step(model, with_y(s, s.t + dt, y1))


def step_counts(n_steps, save_every) -> tuple[int, int]:
    """(n_steps, save_every) of a fixed-step simulation as ints: n_steps >= 0 a multiple of save_every >= 1."""
    try:
        n, k = operator.index(n_steps), operator.index(save_every)
    except TypeError:
        raise InvalidArgument(f"n_steps and save_every must be integers, got {n_steps!r} and {save_every!r}") from None
    if k < 1:
        raise InvalidArgument(f"save_every must be a positive integer (save every k-th step), got {k}")
    if n < 0:
        raise InvalidArgument(f"n_steps must be a nonnegative integer, got {n}")
    if n % k:
        raise InvalidArgument(f"n_steps ({n}) must be a multiple of save_every ({k})")
    return n, k


def check_step(dt):
    """InvalidArgument unless a concrete ``dt`` is one finite positive number (a traced one is not checked)."""
    try:
        value = np.asarray(dt, dtype=float)
    except (TypeError, jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError):
        return
    if value.shape != () or not (np.isfinite(value) and value > 0):
        raise InvalidArgument(f"jb.simulate: dt must be one finite step size > 0 (s), got {dt!r}")


_STEPPERS = {"rk4": step_rk4, "semi_explicit_euler": step_semi_explicit_euler}


def simulate(model, state: State, dt, n_steps: int, method: str = "rk4", save_every: int = 1):
    """Integrate ``n_steps`` fixed steps.

    Args:
        model, state: the system and initial state (caches are ignored).
        dt: step (s), finite and > 0 (checked when concrete, as the integrator classes check theirs). n_steps, save_every: static ints; n_steps must be a multiple of save_every.
        method: "rk4" or "semi_explicit_euler".

    Returns:
        (final State, trajectory) where trajectory is a State pytree whose leaves
        have a leading axis of n_steps // save_every (unrealized, t/q/u/z/forces).
    """
    if method not in _STEPPERS:
        raise ValueError(f"method must be one of {sorted(_STEPPERS)}, got {method!r}")
    n_steps, save_every = step_counts(n_steps, save_every)
    check_step(dt)
    check_state(model, state, "jb.simulate")
    step = _STEPPERS[method]
    state = state.drop_caches()  # the carry has a fixed structure

    def inner(s, _):
        return step(model, s, dt), None

    def outer(s, _):
        s, _ = jax.lax.scan(inner, s, None, length=save_every)
        return s, s

    final, traj = jax.lax.scan(outer, state, None, length=n_steps // save_every)
    return final, traj


__all__ = ["simulate", "step_rk4", "step_semi_explicit_euler"]
