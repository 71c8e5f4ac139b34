"""OpenSim's FunctionBasedPath (OpenSim 4.5+, as Moco's polynomial path fits use): the length is a function of
a few coordinates, ``L = f(q[c_0], ..., q[c_{d-1}])``.

The speed is ``sum_i df/dx_i qdot[c_i]``, the moment arms ``-df/dx_i`` and a tension T gives generalized
forces ``-T df/dx_i`` (no body forces), exactly OpenSim's FunctionBasedPath without moment-arm or speed
functions; all three come from the Path interface by differentiating f. The length function is a
:class:`MultivariatePolynomial` (OpenSim's MultivariatePolynomialFunction) or any static callable of
``x (d,)``.
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
    """A path whose length is ``length_function(q[coordinates])``: ``coordinates`` static q indices (d,)."""

    length_function: Callable
    coordinates: tuple = eqx.field(static=True)

    def calc_length_from_poses(self, R_GB, p_GB, q) -> jnp.ndarray:
        return self.length_function(q[np.asarray(self.coordinates)])
