"""OpenSim's smooth segmented functions (``SmoothSegmentedFunction``, ``SegmentedQuinticBezierToolkit``): a curve
y(x) made of quintic Bézier sections, each a pair (x(u), y(u)), u in [0, 1], joined with matching slopes, and
straight lines beyond the first and last sections.

``corner_control_points`` builds a section from two end points, their slopes and a curviness, as OpenSim does;
``BezierCurve`` holds a curve's control points (n, 6) and its end values and slopes as array leaves, so a curve
built from a muscle's parameters differentiates with respect to them. ``BezierCurve.value(x)`` finds the section
containing x (OpenSim's calcIndex), solves x(u) = x for u (16 bisection steps, then 6 Newton steps: |x(u) - x|
reaches rounding, well below OpenSim's own tolerance of 100 machine epsilons), and returns y(u). The derivatives
come from one last Newton step taken with gradients on (u* - (x(u*) - x)/x'(u*) with u* held fixed), which gives
the implicit function theorem's du = (dx - dX(u*))/x'(u*) exactly: first derivatives in x and in every control
point are exact; higher derivatives of the solve are not. Cost: 22 quintic evaluations per call.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

_ROOT_EPS = 1.4901161193847656e-08  # sqrt(machine epsilon)
_BISECTIONS = 16
_NEWTON_STEPS = 6

# Bernstein coefficients: B(u) = sum_k p_k C(5,k) u^k (1-u)^(5-k)
_BINOMIAL = (1.0, 5.0, 10.0, 10.0, 5.0, 1.0)


def quintic(u, p):
    """The quintic Bézier polynomial with control values p (..., 6) at u."""
    t = 1.0 - u
    terms = [c * u**k * t ** (5 - k) for k, c in enumerate(_BINOMIAL)]
    return sum(p[..., k] * terms[k] for k in range(6))


def quintic_du(u, p):
    """d/du of ``quintic``: 5 times the quartic on the control-value differences."""
    d = p[..., 1:] - p[..., :-1]
    t = 1.0 - u
    coefficients = (1.0, 4.0, 6.0, 4.0, 1.0)
    return 5.0 * sum(d[..., k] * c * u**k * t ** (4 - k) for k, c in enumerate(coefficients))


def corner_control_points(x0, y0, dydx0, x1, y1, dydx1, curviness):
    """(x (6,), y (6,)): the section from (x0, y0) with slope dydx0 to (x1, y1) with slope dydx1 bending through
    the corner where the two tangent lines meet; curviness in [0, 1] (OpenSim's scaled value 0.1 + 0.8 c)."""
    parallel = jnp.abs(dydx0 - dydx1) <= _ROOT_EPS
    denominator = jnp.where(parallel, 1.0, dydx0 - dydx1)
    xc = jnp.where(parallel, 0.5 * (x1 + x0), (y1 - y0 - x1 * dydx1 + x0 * dydx0) / denominator)
    yc = (xc - x1) * dydx1 + y1
    x0_mid, y0_mid = x0 + curviness * (xc - x0), y0 + curviness * (yc - y0)
    x1_mid, y1_mid = x1 + curviness * (xc - x1), y1 + curviness * (yc - y1)
    return jnp.stack([x0, x0_mid, x0_mid, x1_mid, x1_mid, x1]), jnp.stack([y0, y0_mid, y0_mid, y1_mid, y1_mid, y1])


def is_c_shaped_corner(x0, y0, dydx0, x1, y1, dydx1):
    """OpenSim's check that the tangent lines meet between the end points (host-side, for builders)."""
    parallel = abs(dydx0 - dydx1) <= _ROOT_EPS
    xc = 0.5 * (x1 + x0) if parallel else (y1 - y0 - x1 * dydx1 + x0 * dydx0) / (dydx0 - dydx1)
    yc = (xc - x1) * dydx1 + y1
    a = (xc - x0) ** 2 + (yc - y0) ** 2
    b = (xc - x1) ** 2 + (yc - y1) ** 2
    c = (x1 - x0) ** 2 + (y1 - y0) ** 2
    return c > a and c > b


def scale_curviness(curviness):
    """OpenSim's SmoothSegmentedFunctionFactory::scaleCurviness: 0.1 + 0.8 c."""
    return 0.1 + 0.8 * curviness


class BezierCurve(eqx.Module):
    """A smooth segmented function: sections' control points ctrl_x, ctrl_y (n, 6), and the straight-line
    extensions y0 + dydx0 (x - x0) below x0 and y1 + dydx1 (x - x1) above x1."""

    ctrl_x: jax.Array
    ctrl_y: jax.Array
    x0: jax.Array
    x1: jax.Array
    y0: jax.Array
    y1: jax.Array
    dydx0: jax.Array
    dydx1: jax.Array

    @staticmethod
    def from_corners(corners, x0, x1, y0, y1, dydx0, dydx1) -> "BezierCurve":
        """A curve from a sequence of ``corner_control_points`` results."""
        return BezierCurve(jnp.stack([c[0] for c in corners]), jnp.stack([c[1] for c in corners]),
                           x0, x1, y0, y1, dydx0, dydx1)

    def _section_parameter(self, x):
        """(section index, u) with x(u) = x in the section containing x (x within [x0, x1])."""
        starts = self.ctrl_x[1:, 0]
        index = jnp.sum(x >= starts)
        px, py = self.ctrl_x[index], self.ctrl_y[index]
        pxs = jax.lax.stop_gradient(px)
        xs = jax.lax.stop_gradient(x)

        def bisect(_, bounds):
            lo, hi = bounds
            mid = 0.5 * (lo + hi)
            right = quintic(mid, pxs) < xs
            return jnp.where(right, mid, lo), jnp.where(right, hi, mid)

        lo, hi = jax.lax.fori_loop(0, _BISECTIONS, bisect, (jnp.zeros_like(xs), jnp.ones_like(xs)))

        def newton(_, u):
            slope = quintic_du(u, pxs)
            step = jnp.where(slope != 0, (quintic(u, pxs) - xs) / jnp.where(slope != 0, slope, 1.0), 0.0)
            return jnp.clip(u - step, 0.0, 1.0)

        u_star = jax.lax.fori_loop(0, _NEWTON_STEPS, newton, 0.5 * (lo + hi))
        u_star = jax.lax.stop_gradient(u_star)
        u = u_star - (quintic(u_star, px) - x) / quintic_du(u_star, px)
        return py, u

    def value(self, x):
        """y(x) (scalar x; batch with ``jax.vmap``)."""
        inside = jnp.where(x < self.x0, self.x0, jnp.where(x > self.x1, self.x1, x))  # (clip's slope is 1/2 at ties)
        py, u = self._section_parameter(inside)
        y = quintic(u, py)
        below = self.y0 + self.dydx0 * (x - self.x0)
        above = self.y1 + self.dydx1 * (x - self.x1)
        return jnp.where(x < self.x0, below, jnp.where(x > self.x1, above, y))
