"""Constraints on generalized coordinates and speeds (catalogue 2.9-2.14).

These act on selected q's (q-space forces, mapped to u-space by N^T) or u's
(mobility forces). User functions are pure JAX functions of one constraint's
arguments; they are vmapped over the constraints that share them and
differentiated exactly for the velocity and acceleration levels.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import jax

from jaxbody._constraints.types.base import ConstraintType


@dataclasses.dataclass(frozen=True)
class ConstantCoordinate(ConstraintType):
    """q stays at a value. One selected q; param: the value. perr = q - p, pverr = qdot, paerr = qdotdot."""

    simbody_name = "ConstantCoordinate"
    n_q = 1
    n_params = 1
    mp = 1

    def position_errors(self, k):
        return k.q - k.params

    def velocity_errors(self, k):
        return k.qdot

    def acceleration_errors(self, k):
        return k.qdotdot


@dataclasses.dataclass(frozen=True)
class ConstantSpeed(ConstraintType):
    """u stays at a value. One selected u; param: the speed. verr = u - s, vaerr = udot."""

    simbody_name = "ConstantSpeed"
    n_u = 1
    n_params = 1
    mv = 1

    def velocity_errors(self, k):
        return k.u - k.params

    def acceleration_errors(self, k):
        return k.udot


@dataclasses.dataclass(frozen=True)
class ConstantAcceleration(ConstraintType):
    """udot is prescribed. One selected u; param: the acceleration. aerr = udot - a."""

    simbody_name = "ConstantAcceleration"
    n_u = 1
    n_params = 1
    ma = 1

    def acceleration_errors(self, k):
        return k.udot - k.params


def _second_directional(f, x, xdot, xddot):
    """(f(x), df.xdot, d2f[xdot, xdot] + df.xddot) for scalar f of a vector x."""
    df = lambda y: jax.jvp(f, (y,), (xdot,))[1]  # noqa: E731
    fdot, fddot_curv = jax.jvp(df, (x,), (xdot,))
    return fdot, fddot_curv + jax.jvp(f, (x,), (xddot,))[1]


@dataclasses.dataclass(frozen=True)
class CoordinateCoupler(ConstraintType):
    """f(q_sel) = 0 for a user function f of the selected q's (Simbody's CoordinateCoupler).

    ``function(x, params) -> scalar`` with x (n_q,). perr = f; pverr = grad f . qdot;
    paerr = qdot^T Hess f qdot + grad f . qdotdot. q-forces lambda * grad f.
    """

    simbody_name = "CoordinateCoupler"
    mp = 1
    function: Callable = None
    num_coordinates: int = 1
    num_function_params: int = 0

    @property
    def n_q(self):
        return self.num_coordinates

    @property
    def n_params(self):
        return self.num_function_params

    def position_errors(self, k):
        return jax.vmap(self.function)(k.q, k.params)[:, None]

    def velocity_errors(self, k):
        f = lambda q, qd, prm: jax.jvp(lambda x: self.function(x, prm), (q,), (qd,))[1]  # noqa: E731
        return jax.vmap(f)(k.q, k.qdot, k.params)[:, None]

    def acceleration_errors(self, k):
        def one(q, qd, qdd, prm):
            return _second_directional(lambda x: self.function(x, prm), q, qd, qdd)[1]

        return jax.vmap(one)(k.q, k.qdot, k.qdotdot, k.params)[:, None]


@dataclasses.dataclass(frozen=True)
class SpeedCoupler(ConstraintType):
    """f(u_sel, q_sel) = 0 for a user function (Simbody's SpeedCoupler): the u's are constrained, q's only read.

    ``function(u, q, params) -> scalar``. verr = f; vaerr = df/du . udot + df/dq . qdot.
    """

    simbody_name = "SpeedCoupler"
    mv = 1
    q_constrained = False
    function: Callable = None
    num_speeds: int = 1
    num_coordinates: int = 0
    num_function_params: int = 0

    @property
    def n_u(self):
        return self.num_speeds

    @property
    def n_q(self):
        return self.num_coordinates

    @property
    def n_params(self):
        return self.num_function_params

    def velocity_errors(self, k):
        return jax.vmap(self.function)(k.u, k.q, k.params)[:, None]

    def acceleration_errors(self, k):
        def one(u, q, udot, qdot, prm):
            return jax.jvp(lambda uu, qq: self.function(uu, qq, prm), (u, q), (udot, qdot))[1]

        return jax.vmap(one)(k.u, k.q, k.udot, k.qdot, k.params)[:, None]


@dataclasses.dataclass(frozen=True)
class PrescribedMotion(ConstraintType):
    """q = f(t) enforced by a multiplier (Simbody's Constraint::PrescribedMotion; compare jb.Motion).

    ``function(t, params) -> scalar``. perr = q - f(t), pverr = qdot - f'(t), paerr = qdotdot - f''(t).
    """

    simbody_name = "PrescribedMotion"
    n_q = 1
    mp = 1
    function: Callable = None
    num_function_params: int = 0

    @property
    def n_params(self):
        return self.num_function_params

    def _f(self, k, order):
        def one(prm):
            g = lambda t: self.function(t, prm)  # noqa: E731
            for _ in range(order):
                g = jax.grad(g)
            return g(k.t)

        return jax.vmap(one)(k.params)[:, None]

    def position_errors(self, k):
        return k.q - self._f(k, 0)

    def velocity_errors(self, k):
        return k.qdot - self._f(k, 1)

    def acceleration_errors(self, k):
        return k.qdotdot - self._f(k, 2)


__all__ = ["ConstantAcceleration", "ConstantCoordinate", "ConstantSpeed", "CoordinateCoupler", "PrescribedMotion", "SpeedCoupler"]
