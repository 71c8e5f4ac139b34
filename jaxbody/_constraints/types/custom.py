"""``Constraint.Custom``: user equations as pure JAX functions; derivatives and forces by autodiff.

The user writes the errors of ONE constraint from its constrained bodies'
kinematics in the Ancestor frame and its constrained q's and u's (a
``ConstrainedKinematics`` without the leading k axis: R (nb, 3, 3), p (nb, 3),
w, v, alpha, a (nb, 3), q, qdot, qdotdot (nq,), u, udot (nu,), t, params):

* ``position_error(k) -> (mp,)`` holonomic: velocity and acceleration levels are its exact time
  derivatives;
* ``velocity_error(k) -> (mv,)`` nonholonomic (reads velocities): the acceleration level is its
  exact time derivative;
* ``acceleration_error(k) -> (ma,)`` acceleration-only (reads accelerations, affine in them).

Constraint forces are the transpose of the resulting G (reverse mode), so G and
G^T agree by construction (Simbody asks the user to keep them consistent by
hand). Constraints sharing the same functions are evaluated together (vmap).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import jax
import jax.numpy as jnp

from jaxbody._constraints.types.base import (
    ConstrainedKinematics,
    ConstraintType,
    time_derivative,
)

_FIELDS = ("R", "p", "q", "w", "v", "qdot", "u", "alpha", "a", "qdotdot", "udot", "params")


def _vmapped(fn, k: ConstrainedKinematics):
    """Apply a one-constraint user function to each of the k constraints."""
    present = [f for f in _FIELDS if getattr(k, f) is not None]

    def one(*values):
        return fn(ConstrainedKinematics(t=k.t, **dict(zip(present, values))))

    out = jax.vmap(one)(*[getattr(k, f) for f in present])
    return out.reshape(out.shape[0], -1)


@dataclasses.dataclass(frozen=True)
class Custom(ConstraintType):
    """User-defined constraint (see module docstring). Sizes are fixed at construction."""

    simbody_name = "Custom"
    position_error: Callable | None = None
    velocity_error: Callable | None = None
    acceleration_error: Callable | None = None
    num_bodies: int = 0
    num_coordinates: int = 0
    num_speeds: int = 0
    num_params: int = 0
    num_position: int = 0
    num_velocity: int = 0
    num_acceleration: int = 0

    @property
    def n_bodies(self):
        return self.num_bodies

    @property
    def n_q(self):
        return self.num_coordinates

    @property
    def n_u(self):
        return self.num_speeds

    @property
    def n_params(self):
        return self.num_params

    @property
    def mp(self):
        return self.num_position

    @property
    def mv(self):
        return self.num_velocity

    @property
    def ma(self):
        return self.num_acceleration

    def _perr(self, k):
        return _vmapped(self.position_error, k) if self.mp else jnp.zeros((k.params.shape[0], 0), k.params.dtype)

    def _verr(self, k):
        return _vmapped(self.velocity_error, k) if self.mv else jnp.zeros((k.params.shape[0], 0), k.params.dtype)

    def position_errors(self, k):
        return self._perr(k)

    def velocity_errors(self, k):
        return jnp.concatenate([time_derivative(self._perr, k, 0), self._verr(k)], -1)

    def acceleration_errors(self, k):
        pverr = lambda kk: time_derivative(self._perr, kk, 0)  # noqa: E731
        rows = [time_derivative(pverr, k, 1), time_derivative(self._verr, k, 1)]
        if self.ma:
            rows.append(_vmapped(self.acceleration_error, k))
        return jnp.concatenate(rows, -1)
