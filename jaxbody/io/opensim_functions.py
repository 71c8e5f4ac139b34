"""OpenSim's scalar functions (``<Constant>``, ``<LinearFunction>``, ...) as pure JAX callables.

Each parsed function is ``f(x (m,)) -> scalar``, differentiable to any order by JAX and exact to OpenSim 4.6's
evaluation (the SimTK function its ``createSimTKFunction`` builds):

* ``Constant``: ``value`` (SimTK::Function::Constant), any number of arguments.
* ``LinearFunction``: ``coefficients`` ``(a_0 .. a_{m-1}, b)``, ``f = sum_i a_i x_i + b`` (SimTK::Function::Linear).
* ``PolynomialFunction``: ``coefficients`` from the highest power down, Horner's rule in x[0]
  (SimTK::Function::Polynomial).
* ``MultiplierFunction``: ``scale * function(x)``.
* ``PiecewiseLinearFunction``: linear interpolation through (x, y) in x[0], slopes ``(y_{i+1} - y_i) /
  max(1e-7, x_{i+1} - x_i)``, extrapolated with the end slopes (PiecewiseLinearFunction::calcValue).
* ``SimmSpline`` (and ``NaturalCubicSpline``, OpenSim's old name, which OpenSim 4 reads as a SimmSpline:
  RegisterTypes_osimCommon.cpp renames it): SIMM's interpolating cubic spline in x[0] whose end third
  derivatives come from divided differences (Forsythe, Malcolm and Moler's ``spline``; OpenSim's
  SimmSpline::calcCoefficients, ported literally in :func:`simm_spline_coefficients`), linear extrapolation
  with the end slopes outside ``[x_0, x_{n-1}]`` (SimmSpline::calcValue); it is not a natural spline.

Unsupported function types raise :class:`jaxbody.errors.InvalidArgument` naming the element and its line.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import jax.numpy as jnp
import numpy as np

from jaxbody.io.osim_xml import OsimDocument, element_error, numbers

#: OpenSim's SimmMacros.h TINY_NUMBER: the smallest knot spacing SimmSpline divides by.
TINY_NUMBER = 1e-7

SUPPORTED = ("Constant", "LinearFunction", "PolynomialFunction", "MultiplierFunction", "SimmSpline",
             "NaturalCubicSpline", "PiecewiseLinearFunction")


@dataclasses.dataclass(frozen=True, eq=False)
class OsimFunction:
    """A parsed OpenSim function: ``self(x)`` evaluates it in JAX (x: (m,) array, m >= ``min_args``)."""

    kind: str
    min_args: int
    evaluate: Callable

    def __call__(self, x):
        return self.evaluate(jnp.asarray(x))


def simm_spline_coefficients(x, y):
    """(b, c, d), each (n,), of OpenSim's SimmSpline through the knots (x, y) (SimmSpline::calcCoefficients).

    On ``[x_k, x_{k+1}]`` the spline is ``y_k + dx (b_k + dx (c_k + dx d_k))``, ``dx = t - x_k``. A literal
    float64 port of OpenSim's loop, so the coefficients are bit-for-bit OpenSim's.
    """
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    n = len(x)
    b, c, d = [0.0] * n, [0.0] * n, [0.0] * n
    if n == 2:
        t = max(TINY_NUMBER, x[1] - x[0])
        b[0] = b[1] = (y[1] - y[0]) / t
        return np.array(b), np.array(c), np.array(d)
    nm1, nm2 = n - 1, n - 2
    d[0] = max(TINY_NUMBER, x[1] - x[0])
    c[1] = (y[1] - y[0]) / d[0]
    for i in range(1, nm1):
        d[i] = max(TINY_NUMBER, x[i + 1] - x[i])
        b[i] = 2.0 * (d[i - 1] + d[i])
        c[i + 1] = (y[i + 1] - y[i]) / d[i]
        c[i] = c[i + 1] - c[i]
    b[0] = -d[0]
    b[nm1] = -d[nm2]
    c[0] = c[nm1] = 0.0
    if n > 3:
        d31 = max(TINY_NUMBER, x[3] - x[1])
        d20 = max(TINY_NUMBER, x[2] - x[0])
        d1 = max(TINY_NUMBER, x[nm1] - x[n - 3])
        d2 = max(TINY_NUMBER, x[nm2] - x[n - 4])
        d30 = max(TINY_NUMBER, x[3] - x[0])
        d3 = max(TINY_NUMBER, x[nm1] - x[n - 4])
        c[0] = c[2] / d31 - c[1] / d20
        c[nm1] = c[nm2] / d1 - c[n - 3] / d2
        c[0] = c[0] * d[0] * d[0] / d30
        c[nm1] = -c[nm1] * d[nm2] * d[nm2] / d3
    for i in range(1, n):  # forward elimination
        t = d[i - 1] / b[i - 1]
        b[i] -= t * d[i - 1]
        c[i] -= t * c[i - 1]
    c[nm1] /= b[nm1]  # back substitution
    for j in range(nm1):
        i = nm2 - j
        c[i] = (c[i] - d[i] * c[i + 1]) / b[i]
    b[nm1] = (y[nm1] - y[nm2]) / d[nm2] + d[nm2] * (c[nm2] + 2.0 * c[nm1])
    for i in range(nm1):
        b[i] = (y[i + 1] - y[i]) / d[i] - d[i] * (c[i + 1] + 2.0 * c[i])
        d[i] = (c[i + 1] - c[i]) / d[i]
        c[i] *= 3.0
    c[nm1] *= 3.0
    d[nm1] = d[nm2]
    return np.array(b), np.array(c), np.array(d)


def _interval(x, t):
    """k in [0, n - 2] with x_k <= t < x_{k+1} (the end intervals extended) for ascending knots x (n,): the
    count of interior knots <= t (a compare-and-sum, cheaper to trace and compile than a search loop)."""
    return jnp.sum(jnp.asarray(x[1:-1]) <= t, dtype=jnp.int32)


def simm_spline(x, y) -> Callable:
    """JAX evaluation of the SimmSpline through (x, y): ``f(args (m >= 1,)) -> scalar`` of args[0]."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    b, c, d = simm_spline_coefficients(x, y)
    table = np.stack([x, y, b, c, d], -1)  # one gather per evaluation

    def f(args):
        t = args[0]
        k = _interval(x, t)
        xk, yk, bk, ck, dk = jnp.moveaxis(jnp.asarray(table)[k], -1, 0)
        dx = t - xk
        inside = yk + dx * (bk + dx * (ck + dx * dk))
        below = y[0] + (t - x[0]) * b[0]
        above = y[-1] + (t - x[-1]) * b[-1]
        return jnp.where(t < x[0], below, jnp.where(t > x[-1], above, inside))

    return f


def piecewise_linear(x, y) -> Callable:
    """JAX evaluation of OpenSim's PiecewiseLinearFunction through (x, y): ``f(args (m >= 1,))`` of args[0]."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    b = np.diff(y) / np.maximum(TINY_NUMBER, np.diff(x))
    b = np.append(b, b[-1])

    table = np.stack([x, y, b], -1)

    def f(args):
        t = args[0]
        k = jnp.sum(jnp.asarray(x[1:]) <= t, dtype=jnp.int32)  # in [0, n - 1]: the interval, or past the end
        xk, yk, bk = jnp.moveaxis(jnp.asarray(table)[k], -1, 0)
        return yk + (t - xk) * bk

    return f


def _linear(coefficients):
    a, intercept = np.asarray(coefficients[:-1]), float(coefficients[-1])
    return lambda x: jnp.dot(x[: a.size], a) + intercept


def _polynomial(coefficients):
    coefficients = [float(v) for v in coefficients]

    def f(x):
        value = jnp.zeros((), x.dtype)
        for coefficient in coefficients:
            value = value * x[0] + coefficient
        return value

    return f


def parse_function(doc: OsimDocument, element, owner: str) -> OsimFunction:
    """The OpenSim function of XML ``element`` (e.g. a ``<SimmSpline>``); ``owner`` names its user in errors."""
    kind = element.tag
    if kind == "Constant":
        value = numbers(doc, element, "value", owner, 1, default=[0.0])[0]
        return OsimFunction(kind, 0, lambda x: jnp.asarray(value, x.dtype))
    if kind == "LinearFunction":
        coefficients = numbers(doc, element, "coefficients", owner, default=[1.0, 0.0])
        if len(coefficients) < 2:
            raise element_error(doc, element, owner, f"LinearFunction needs >= 2 coefficients, got {coefficients}")
        return OsimFunction(kind, len(coefficients) - 1, _linear(coefficients))
    if kind == "PolynomialFunction":
        coefficients = numbers(doc, element, "coefficients", owner, default=[0.0])
        if not coefficients:
            raise element_error(doc, element, owner, "PolynomialFunction needs at least one coefficient")
        return OsimFunction(kind, 1, _polynomial(coefficients))
    if kind == "MultiplierFunction":
        holder = element.find("function")
        inner_elements = [] if holder is None else list(holder)
        if len(inner_elements) != 1:
            raise element_error(doc, element, owner, "MultiplierFunction needs one function inside <function>")
        inner = parse_function(doc, inner_elements[0], owner)
        scale = numbers(doc, element, "scale", owner, 1, default=[1.0])[0]
        return OsimFunction(kind, inner.min_args, lambda x: scale * inner.evaluate(x))
    if kind in ("SimmSpline", "NaturalCubicSpline"):
        x = numbers(doc, element, "x", owner)
        y = numbers(doc, element, "y", owner)
        if len(x) != len(y) or len(x) < 2:
            raise element_error(doc, element, owner, f"{kind} needs matching x and y with >= 2 points, got {len(x)} and {len(y)}")
        if np.any(np.diff(x) <= 0):
            raise element_error(doc, element, owner, f"{kind} x must be strictly increasing, got {x}")
        return OsimFunction("SimmSpline", 1, simm_spline(x, y))
    if kind == "PiecewiseLinearFunction":
        x = numbers(doc, element, "x", owner)
        y = numbers(doc, element, "y", owner)
        if len(x) != len(y) or len(x) < 2 or np.any(np.diff(x) <= 0):
            raise element_error(doc, element, owner, f"{kind} needs matching, strictly increasing x and y with >= 2 points")
        return OsimFunction(kind, 1, piecewise_linear(x, y))
    raise element_error(doc, element, owner, f"unsupported function type <{kind}> (supported: {', '.join(SUPPORTED)})")


def parse_function_holder(doc: OsimDocument, holder, owner: str) -> OsimFunction:
    """The one function inside a holder element (``<function>``, ``<coupled_coordinates_function>``)."""
    children = list(holder)
    if len(children) != 1:
        raise element_error(doc, holder, owner, f"<{holder.tag}> must hold exactly one function, got {len(children)}")
    return parse_function(doc, children[0], owner)
