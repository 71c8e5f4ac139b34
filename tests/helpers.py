"""Shared test helpers: one tolerance check, one central-difference gradient check, the count of traces
of jaxbody's compiled entry points, and the primitives of a jaxpr."""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np


def assert_close(actual, expected, tol=1e-12, what="", *, per_entry=False):
    """Assert ``actual`` matches ``expected`` (same shape) within a relative-plus-absolute tolerance.

    Default: ``max|actual - expected| <= tol * max(1, max|expected|)``, i.e. an absolute
    tolerance ``tol`` for expected values up to 1 and relative to the largest expected
    entry beyond that. ``per_entry=True``: every entry on its own,
    ``max(|actual - expected| / (1 + |expected|)) <= tol``. Empty arrays pass.
    ``tol=0`` demands exact equality. The failure message names ``what`` and the error.
    """
    a, b = np.asarray(actual), np.asarray(expected)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    if per_entry:
        err = float(np.max(np.abs(a - b) / (1.0 + np.abs(b)), initial=0.0))
        assert err <= tol, f"{what}: max relative error {err:.3e} > {tol:.1e} (per entry, |a - b| / (1 + |b|))"
        return
    err = float(np.max(np.abs(a - b), initial=0.0))
    scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
    assert err <= tol * scale, f"{what}: max error {err:.3e} > {tol:.1e} * {scale:.3g}"


def central_difference(f, x, eps, direction=None):
    """Central differences ``(f(x + eps e) - f(x - eps e)) / (2 eps)``.

    With ``direction``: the directional derivative along ``e = direction``; ``x`` and
    ``direction`` may be matching pytrees (``f`` takes ``x`` as one argument) and ``f`` may
    return a pytree; the result has the structure of ``f(x)``.
    Without: the derivative along every entry of the array ``x`` (unit vectors ``e``), as a
    numpy array of shape ``f(x).shape + x.shape`` (``jax.jacfwd``'s layout; ``jax.grad``'s
    for a scalar ``f``).
    """
    if direction is not None:
        plus = jax.tree_util.tree_map(lambda a, d: a + eps * d, x, direction)
        minus = jax.tree_util.tree_map(lambda a, d: a - eps * d, x, direction)
        return jax.tree_util.tree_map(lambda p, m: (p - m) / (2 * eps), f(plus), f(minus))
    x = jnp.asarray(x)
    units = np.eye(x.size).reshape((x.size,) + x.shape)  # unit vectors along x's entries, in C order
    columns = [np.asarray(central_difference(f, x, eps, e)) for e in units]
    return np.stack(columns, -1).reshape(columns[0].shape + x.shape)


def assert_grad_matches_fd(f, x, eps, tol, what="", *, grad=None, direction=None, per_entry=False):
    """Compare the derivative of ``f`` at ``x`` with central differences; returns (derivative, fd).

    ``grad``: the derivative already computed (e.g. by one jitted ``jax.grad`` over several
    arguments); default ``jax.grad(f)(x)`` for a scalar ``f``, else ``jax.jacfwd(f)(x)``.
    With ``direction``: compares the directional derivative ``<grad, direction>`` (scalar
    ``f``) with ``central_difference(f, x, eps, direction)``; without: the whole gradient
    with the derivative along every entry of ``x``. The check is ``assert_close(derivative,
    fd, tol)`` (the finite differences are the expected value and set the scale).
    """
    if grad is None:
        scalar = jax.eval_shape(f, x).shape == ()
        grad = (jax.grad if scalar else jax.jacfwd)(f)(x)
    grad = np.asarray(grad)
    if direction is None:
        ad, fd = grad, central_difference(f, x, eps)
    else:
        ad = np.dot(grad.reshape(-1), np.asarray(direction).reshape(-1))
        fd = central_difference(f, x, eps, direction)
    assert_close(ad, fd, tol, what, per_entry=per_entry)
    return ad, fd


_TRACES: collections.Counter = collections.Counter()


def count_trace(name: str) -> None:
    """The trace hook conftest.py installs (jaxbody._api.stage_operator.set_trace_hook): one more trace of
    ``name``."""
    _TRACES[name] += 1


def trace_count(name: str) -> int:
    """How many times the entry point ``name`` (its ``__qualname__``: the defining class, e.g.
    ``"Model.realize"``, ``"ModelDynamics.calc_m"``) was traced in this test session."""
    return _TRACES[name]


def jaxpr_primitives(closed_jaxpr) -> set:
    """Names of the primitives of a closed jaxpr (``jax.make_jaxpr(f)(...)``), nested jaxprs included."""
    names = set()
    for eqn in closed_jaxpr.jaxpr.eqns:
        names.add(eqn.primitive.name)
        for v in eqn.params.values():
            for sub in (v if isinstance(v, (tuple, list)) else [v]):
                if hasattr(sub, "jaxpr") and hasattr(sub, "consts"):
                    names |= jaxpr_primitives(sub)
    return names
