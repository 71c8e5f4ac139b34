"""Prescribed motion (Simbody's Motion, catalogue 3.1): Sinusoid, Steady and Custom.

A Motion drives *every* mobility of one mobilized body at one level:

* ``Motion.Position``: q(t) is known (and so are u and udot, from its time derivatives);
* ``Motion.Velocity``: u(t, q) is known (and udot); q is integrated;
* ``Motion.Acceleration``: udot(t, q, u) is known; q and u are integrated.

Attach one with ``mobod.adopt_motion(motion)`` before ``system.realize_topology()``
(a topology-stage choice, as in Simbody). The Motion's numbers (amplitude,
rate, phase, steady rates, a Custom motion's ``params``) become array leaves
of the Model (``model.motions[i].motion``), so they can be swept with vmap or
differentiated. Every built-in Motion has method ``Motion.Prescribed``.

Time derivatives (q̇_p, q̈_p of a position-level Motion, du_p/dt of a
velocity-level one) are not hand-written: they are forward-mode derivatives
(``jax.jvp``) of the value, exact to round-off for any pure JAX function.
"""

from __future__ import annotations

from typing import Callable

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from jaxbody.errors import InvalidArgument


class Motion(eqx.Module):
    """Base class. ``level`` is static; subclasses implement ``calc_value``.

    Levels and methods carry Simbody's enum values (``Motion::Level``, ``Motion::Method``).
    """

    NoLevel = -1
    Acceleration = 0
    Velocity = 1
    Position = 2

    NoMethod = -1
    Zero = 0
    Discrete = 1
    Prescribed = 2
    Free = 3
    Fast = 4

    level: int = eqx.field(static=True)

    def calc_value(self, n: int, t, q, u):
        """The prescribed q (Position level, n = the body's q in use), u or udot (n = nu) as an (n,) array.

        ``t`` scalar (s); ``q`` (nq,) and ``u`` (nu,) are the whole system's
        (Position-level Motions must not read them, velocity-level ones must not read u).
        """
        raise NotImplementedError

    def _bind(self, mobod) -> "Motion":
        """This Motion checked against ``mobod`` (build time); returns the Motion to store."""
        return self


def check_level(level, what: str = "level") -> int:
    """``level`` as an int, one of Motion.Position / Velocity / Acceleration, else InvalidArgument."""
    if level not in (Motion.Position, Motion.Velocity, Motion.Acceleration):
        raise InvalidArgument(
            f"{what} must be jb.Motion.Position, jb.Motion.Velocity or jb.Motion.Acceleration, got {level!r}"
        )
    return int(level)


def _real_array(x, what):
    a = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(a)):
        raise InvalidArgument(f"{what} must be finite, got {x!r}")
    return jnp.asarray(a)


class Sinusoid(Motion):
    """Every prescribed quantity at ``level`` equals ``amplitude * sin(rate * t + phase)``.

    amplitude (rad or m at Position level, per s at Velocity, per s^2 at
    Acceleration), rate ω (rad/s), phase φ (rad): scalars (the same for every
    mobility, as in Simbody) or vectors of the body's length at that level.
    """

    amplitude: jnp.ndarray
    rate: jnp.ndarray
    phase: jnp.ndarray

    def __init__(self, level, amplitude, rate, phase):
        self.level = check_level(level)
        self.amplitude = _real_array(amplitude, "Motion.Sinusoid amplitude")
        self.rate = _real_array(rate, "Motion.Sinusoid rate")
        self.phase = _real_array(phase, "Motion.Sinusoid phase")

    def calc_value(self, n, t, q, u):
        return jnp.broadcast_to(self.amplitude * jnp.sin(self.rate * t + self.phase), (n,))

    def _bind(self, mobod):
        n = mobod.get_num_q() if self.level == Motion.Position else mobod.get_num_u()
        for name in ("amplitude", "rate", "phase"):
            shape = getattr(self, name).shape
            if shape not in ((), (n,)):
                raise InvalidArgument(f"{mobod.name}: Motion.Sinusoid {name} must be a scalar or have length {n}, got {shape}")
        return self


class Steady(Motion):
    """Velocity-level Motion with constant u (udot = 0; q free).

    ``u``: a scalar (every mobility gets it, Simbody's ``Steady(mobod, Real)``) or
    a vector of up to nu values (the rest are zero, Simbody's ``Vec<N>``), in u's units.
    """

    rates: jnp.ndarray

    def __init__(self, u):
        self.level = Motion.Velocity
        self.rates = _real_array(u, "Motion.Steady u")
        if self.rates.ndim > 1:
            raise InvalidArgument(f"Motion.Steady u must be a scalar or a vector, got shape {self.rates.shape}")

    def calc_value(self, n, t, q, u):
        return jnp.broadcast_to(self.rates, (n,))

    def _bind(self, mobod):
        nu = mobod.get_num_u()
        if self.rates.ndim == 0:
            return self
        if self.rates.shape[0] > nu:
            raise InvalidArgument(f"{mobod.name}: Motion.Steady got {self.rates.shape[0]} rates for {nu} mobilities")
        return Steady(jnp.concatenate([self.rates, jnp.zeros(nu - self.rates.shape[0])]))


class Custom(Motion):
    """A user Motion: one pure JAX function gives the prescribed value at ``level``.

    Position level: ``function(t) -> q_p`` (the body's q in use). Velocity level:
    ``function(t, q) -> u_p`` (nu,). Acceleration level: ``function(t, q, u) ->
    udot_p`` (nu,). ``q`` and ``u`` are the whole system's vectors (as Simbody's
    Custom::Implementation reads the State). With ``params`` (any pytree of
    arrays; model leaves, so differentiable) the function is called
    ``function(params, t, ...)``. Lower-level values (q̇, q̈, du/dt) come from
    forward-mode differentiation of ``function``.
    """

    function: Callable = eqx.field(static=True)
    params: object

    def __init__(self, level, function, params=None):
        self.level = check_level(level)
        if not callable(function):
            raise InvalidArgument(f"Motion.Custom needs a callable, got {type(function).__name__}")
        self.function = function
        self.params = params

    def calc_value(self, n, t, q, u):
        args = {Motion.Position: (t,), Motion.Velocity: (t, q), Motion.Acceleration: (t, q, u)}[self.level]
        if self.params is not None:
            args = (self.params,) + args
        value = jnp.asarray(self.function(*args))
        if value.shape != (n,):
            raise InvalidArgument(f"Motion.Custom function must return shape ({n},) at this level, got {value.shape}")
        return value


class BoundMotion(eqx.Module):
    """A Motion attached to the mobilized body with index ``body`` (static); the Motion holds array leaves."""

    body: int = eqx.field(static=True)
    motion: Motion


Motion.Sinusoid = Sinusoid
Motion.Steady = Steady
Motion.Custom = Custom

__all__ = ["Motion", "Sinusoid", "Steady", "Custom", "BoundMotion", "check_level"]
