"""OpenSim's ``SimmSpline`` (SIMM's interpolating cubic spline) with its knots as array leaves, so a curve's
knots and values can be swept or differentiated (a muscle's force-length and force-velocity curves, a
ligament's force-length curve).

The coefficients follow OpenSim's ``SimmSpline::calcCoefficients`` (end third derivatives from divided
differences, then a tridiagonal solve), recomputed in JAX from the leaves on every evaluation; outside
``[x_0, x_{n-1}]`` the spline continues linearly with its end slopes (``SimmSpline::calcValue``). The host-side
float64 twin is ``jaxbody.io.opensim_functions.simm_spline_coefficients``. Cost: O(n) flops per call (n knots,
static; two length-n scans), plus one ``searchsorted``.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

#: OpenSim's SimmMacros.h TINY_NUMBER: the smallest knot spacing SimmSpline divides by.
TINY_NUMBER = 1e-7


def _coefficients(x, y):
    """(b, c, d), each (n,), of the SimmSpline through knots x (n,) and values y (n,) (n >= 2, static): OpenSim's
    loop with its two sequential sweeps (the tridiagonal solve) as ``lax.scan``s, the rest vectorized."""
    n = x.shape[0]
    gaps = jnp.maximum(TINY_NUMBER, jnp.diff(x))  # d_0 .. d_{n-2}
    slopes = jnp.diff(y) / gaps
    if n == 2:
        return jnp.stack([slopes[0], slopes[0]]), jnp.zeros(2, y.dtype), jnp.zeros(2, y.dtype)
    second = slopes[1:] - slopes[:-1]  # c_1 .. c_{n-2} before the solve
    c_first = c_last = jnp.zeros((), y.dtype)
    if n > 3:
        def gap(i, j):
            return jnp.maximum(TINY_NUMBER, x[i] - x[j])
        c_first = (second[1] / gap(3, 1) - second[0] / gap(2, 0)) * gaps[0] * gaps[0] / gap(3, 0)
        c_last = -(second[-1] / gap(n - 1, n - 3) - second[-2] / gap(n - 2, n - 4)) * gaps[-1] * gaps[-1] / gap(
            n - 1, n - 4)
    b = jnp.concatenate([-gaps[:1], 2.0 * (gaps[:-1] + gaps[1:]), -gaps[-1:]])
    c = jnp.concatenate([c_first[None], second, c_last[None]])

    def eliminate(carry, inputs):  # forward elimination, i = 1 .. n-1
        b_prev, c_prev = carry
        d_prev, b_i, c_i = inputs
        t = d_prev / b_prev
        out = (b_i - t * d_prev, c_i - t * c_prev)
        return out, out

    _, (b_rest, c_rest) = jax.lax.scan(eliminate, (b[0], c[0]), (gaps, b[1:], c[1:]))
    b = jnp.concatenate([b[:1], b_rest])
    c = jnp.concatenate([c[:1], c_rest])
    c_end = c[-1] / b[-1]

    def substitute(c_next, inputs):  # back substitution, i = n-2 .. 0
        c_i, d_i, b_i = inputs
        value = (c_i - d_i * c_next) / b_i
        return value, value

    _, c_head = jax.lax.scan(substitute, c_end, (c[:-1], gaps, b[:-1]), reverse=True)
    c = jnp.concatenate([c_head, c_end[None]])
    b_out = jnp.concatenate([slopes - gaps * (c[1:] + 2.0 * c[:-1]),
                             (slopes[-1] + gaps[-1] * (c[-2] + 2.0 * c[-1]))[None]])
    d_head = (c[1:] - c[:-1]) / gaps
    return b_out, 3.0 * c, jnp.concatenate([d_head, d_head[-1:]])


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
