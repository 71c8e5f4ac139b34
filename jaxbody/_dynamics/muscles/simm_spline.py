"""OpenSim's ``SimmSpline`` (SIMM's interpolating cubic spline) with its knots as array leaves, so a curve's
knots and values can be swept or differentiated (a muscle's force-length and force-velocity curves, a
ligament's force-length curve).

The coefficients follow OpenSim's ``SimmSpline::calcCoefficients`` (end third derivatives from divided
differences, then a tridiagonal solve), recomputed in JAX from the leaves on every evaluation; outside
``[x_0, x_{n-1}]`` the spline continues linearly with its end slopes (``SimmSpline::calcValue``). The host-side
float64 twin is ``jaxbody.io.opensim_functions.simm_spline_coefficients``. Cost: O(n) scalar flops per call
(n knots, static), plus one ``searchsorted``.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

#: OpenSim's SimmMacros.h TINY_NUMBER: the smallest knot spacing SimmSpline divides by.
TINY_NUMBER = 1e-7


def _coefficients(x, y):
    """(b, c, d), each (n,), of the SimmSpline through knots x (n,) and values y (n,) (n >= 2, static)."""
    n = x.shape[0]
    xs, ys = [x[i] for i in range(n)], [y[i] for i in range(n)]

    def gap(i, j):
        return jnp.maximum(TINY_NUMBER, xs[i] - xs[j])

    zero = jnp.zeros_like(ys[0])
    if n == 2:
        slope = (ys[1] - ys[0]) / gap(1, 0)
        return jnp.stack([slope, slope]), jnp.stack([zero, zero]), jnp.stack([zero, zero])
    nm1, nm2 = n - 1, n - 2
    b, c, d = [zero] * n, [zero] * n, [zero] * n
    d[0] = gap(1, 0)
    c[1] = (ys[1] - ys[0]) / d[0]
    for i in range(1, nm1):
        d[i] = gap(i + 1, i)
        b[i] = 2.0 * (d[i - 1] + d[i])
        c[i + 1] = (ys[i + 1] - ys[i]) / d[i]
        c[i] = c[i + 1] - c[i]
    b[0], b[nm1] = -d[0], -d[nm2]
    c[0] = c[nm1] = zero
    if n > 3:
        c0 = c[2] / gap(3, 1) - c[1] / gap(2, 0)
        cn = c[nm2] / gap(nm1, n - 3) - c[n - 3] / gap(nm2, n - 4)
        c[0] = c0 * d[0] * d[0] / gap(3, 0)
        c[nm1] = -cn * d[nm2] * d[nm2] / gap(nm1, n - 4)
    for i in range(1, n):  # forward elimination
        t = d[i - 1] / b[i - 1]
        b[i] = b[i] - t * d[i - 1]
        c[i] = c[i] - t * c[i - 1]
    c[nm1] = c[nm1] / b[nm1]  # back substitution
    for i in range(nm2, -1, -1):
        c[i] = (c[i] - d[i] * c[i + 1]) / b[i]
    b[nm1] = (ys[nm1] - ys[nm2]) / d[nm2] + d[nm2] * (c[nm2] + 2.0 * c[nm1])
    for i in range(nm1):
        b[i] = (ys[i + 1] - ys[i]) / d[i] - d[i] * (c[i + 1] + 2.0 * c[i])
        d[i] = (c[i + 1] - c[i]) / d[i]
        c[i] = 3.0 * c[i]
    c[nm1] = 3.0 * c[nm1]
    d[nm1] = d[nm2]
    return jnp.stack(b), jnp.stack(c), jnp.stack(d)


class SimmSplineCurve(eqx.Module):
    """A SimmSpline through knots ``x`` (n,), strictly increasing, and values ``y`` (n,): ``curve(t)`` for a
    scalar t (batch with ``jax.vmap``)."""

    x: jax.Array
    y: jax.Array

    def __call__(self, t):
        b, c, d = _coefficients(self.x, self.y)
        n = self.x.shape[0]
        k = jnp.clip(jnp.searchsorted(self.x, t, side="right") - 1, 0, n - 2)
        dx = t - self.x[k]
        inside = self.y[k] + dx * (b[k] + dx * (c[k] + dx * d[k]))
        below = self.y[0] + (t - self.x[0]) * b[0]
        above = self.y[-1] + (t - self.x[-1]) * b[-1]
        return jnp.where(t < self.x[0], below, jnp.where(t > self.x[-1], above, inside))
