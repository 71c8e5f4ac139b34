"""OpenSim's FunctionBasedPath (OpenSim 4.5+, as Moco's polynomial path fits use): the length is a function of
a few coordinates, ``L = f(q[c_0], ..., q[c_{d-1}])``.

The speed is ``sum_i df/dx_i qdot[c_i]``, the moment arms ``-df/dx_i`` and a tension T gives generalized
forces ``-T df/dx_i`` (no body forces), exactly OpenSim's FunctionBasedPath without moment-arm or speed
functions; all three come from the Path interface by differentiating f. The length function is a
:class:`MultivariatePolynomial` (OpenSim's MultivariatePolynomialFunction) or any static callable of
``x (d,)``.

With OpenSim's ``moment_arm_functions`` (d functions of x) the moment arms are their values r_i, the
generalized force of a tension T is ``T r_i`` on coordinate i and the speed ``-sum_i r_i qdot[c_i]``; with its
``lengthening_speed_function`` (a function of (x, the coordinates' speeds) (2d,)) the speed is that function's
value. Either needs the coordinates' u indices (``speeds``). Cost: d + 1 function evaluations.
"""

from __future__ import annotations

import itertools
from typing import Callable

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.paths.base import Path
from jaxbody.errors import InvalidArgument


def monomial_exponents(dimension: int, order: int) -> tuple:
    """OpenSim's monomial order (MultivariatePolynomial::generateCombinations): exponent tuples (e_0 .. e_{d-1})
    with sum <= order, e_0 varying slowest."""
    return tuple(e for e in itertools.product(range(order + 1), repeat=dimension) if sum(e) <= order)


class MultivariatePolynomial(eqx.Module):
    """``f(x) = sum_k c_k prod_j x_j^e_kj``: OpenSim's MultivariatePolynomialFunction of ``dimension`` and ``order``
    with ``coefficients`` (C(dimension + order, order),) in OpenSim's monomial order (an array leaf)."""

    coefficients: jnp.ndarray
    exponents: tuple = eqx.field(static=True)

    @classmethod
    def of(cls, dimension: int, order: int, coefficients) -> "MultivariatePolynomial":
        exponents = monomial_exponents(dimension, order)
        coefficients = jnp.asarray(coefficients)
        if coefficients.shape != (len(exponents),):
            raise InvalidArgument(f"MultivariatePolynomial of dimension {dimension} and order {order} needs "
                                  f"{len(exponents)} coefficients, got {coefficients.shape}")
        return cls(coefficients, exponents)

    def __call__(self, x):
        e = np.asarray(self.exponents)  # (K, d)
        order = int(e.max(initial=0))
        # powers[j, p] = x_j ** p by repeated products (exact for negative x, smooth everywhere)
        powers = jnp.cumprod(jnp.concatenate([jnp.ones((x.shape[0], 1), x.dtype),
                                              jnp.repeat(x[:, None], order, axis=1)], axis=1), axis=1)
        monomials = jnp.prod(powers[np.arange(e.shape[1])[None, :], e], axis=1)
        return jnp.dot(self.coefficients, monomials)


class FunctionBasedPath(Path):
    """A path whose length is ``length_function(q[coordinates])``: ``coordinates`` static q indices (d,);
    optionally OpenSim's ``moment_arm_functions`` (d callables of x (d,)) and ``speed_function`` (a callable of
    (x, u[speeds]) (2d,)), with ``speeds`` the coordinates' static u indices (d,)."""

    length_function: Callable
    coordinates: tuple = eqx.field(static=True)
    moment_arm_functions: tuple | None = None
    speed_function: Callable | None = None
    speeds: tuple = eqx.field(static=True, default=())

    def __check_init__(self):
        if (self.moment_arm_functions is not None or self.speed_function is not None) and \
                len(self.speeds) != len(self.coordinates):
            raise InvalidArgument("a FunctionBasedPath with moment-arm or speed functions needs the u index of each "
                                  f"of its {len(self.coordinates)} coordinates (speeds), got {self.speeds}")
        if self.moment_arm_functions is not None and len(self.moment_arm_functions) != len(self.coordinates):
            raise InvalidArgument(f"a FunctionBasedPath of {len(self.coordinates)} coordinates needs as many moment "
                                  f"arm functions, got {len(self.moment_arm_functions)}")

    def calc_length_from_poses(self, R_GB, p_GB, q) -> jnp.ndarray:
        return self.length_function(q[np.asarray(self.coordinates)])

    def _given_moment_arms(self, q):
        x = q[np.asarray(self.coordinates)]
        return jnp.stack([f(x) for f in self.moment_arm_functions])

    def calc_lengthening_speed(self, model, state) -> jnp.ndarray:
        if self.speed_function is not None:
            return self.speed_function(jnp.concatenate([state.q[np.asarray(self.coordinates)],
                                                        state.u[np.asarray(self.speeds)]]))
        if self.moment_arm_functions is not None:
            qdot = state.velocity.qdot[np.asarray(self.coordinates)]
            return -jnp.dot(qdot, self._given_moment_arms(state.q))
        return super().calc_lengthening_speed(model, state)

    def calc_tension_forces(self, model, state, tension):
        if self.moment_arm_functions is None:
            return super().calc_tension_forces(model, state, tension)
        arms = self._given_moment_arms(state.q)
        f = jnp.zeros(state.u.shape, arms.dtype).at[np.asarray(self.speeds)].add(tension * arms)
        return jnp.zeros(state.position.p_GB.shape[:1] + (2, 3), arms.dtype), f

    def calc_moment_arms(self, model, state) -> jnp.ndarray:
        if self.moment_arm_functions is None:
            return super().calc_moment_arms(model, state)
        arms = self._given_moment_arms(state.q)
        return jnp.zeros(state.u.shape, arms.dtype).at[np.asarray(self.speeds)].set(arms)
