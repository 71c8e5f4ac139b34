"""The builders' physical-validity checks on a Model's Parameters: per body, for concrete or traced values.

``jb.replace_parameters`` raises the builders' errors (naming the body) when the new values are concrete;
``jb.check_parameters(model)`` returns the same checks as boolean arrays, so a traced, vmapped or
differentiated model can be checked on request. Both run the one set of checks in jaxbody._math.validity.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._math.validity import (first_failure, inertia_failures, mass_failures, message, rotation_failures,
                                    vector_failures)
from jaxbody.errors import InvalidArgument, InvalidInertia


_BODY_FIELDS = ("mass", "com_B", "inertia_Bo_B", "R_PF", "p_PF", "R_BM", "p_BM")


def _checked_values(params, xp):
    """(what, checks, (..., nbodies, ...) values) in the builders' order."""
    m, c, inertia = params.mass, params.com_B, params.inertia_Bo_B
    point = m[..., None, None] * (xp.sum(c * c, axis=-1)[..., None, None] * xp.eye(3, dtype=c.dtype)
                                  - c[..., :, None] * c[..., None, :])
    return (("mass", mass_failures, m), ("mass center", vector_failures, c), ("inertia", inertia_failures, inertia),
            ("inertia about the mass center", inertia_failures, inertia - point),
            ("X_PF", rotation_failures, params.R_PF), ("X_PF", vector_failures, params.p_PF),
            ("X_BM", rotation_failures, params.R_BM), ("X_BM", vector_failures, params.p_BM))


def _failures(params, xp):
    """{(what, check): ((..., nbodies) failures, values)}; Ground's row (never mobilized or used) is not checked."""
    movable = xp.arange(params.mass.shape[-1]) > 0
    return {(what, check): (fails & movable, value) for what, checks, value in _checked_values(params, xp)
            for check, fails in checks(value, xp).items()}


def _armature_failures(model, xp):
    """(..., nbodies) True where a body's mobilities carry a negative or non-finite armature."""
    armature = model.parameters.armature
    bad = ~xp.isfinite(armature) | (armature < 0)
    owner = np.asarray(model.topology.u_body)
    return xp.stack([xp.any(bad[..., owner == b], axis=-1) for b in range(model.topology.nbodies)], axis=-1)


def check_parameters(model) -> dict:
    """The builders' checks of ``model.parameters``, per body: ``{check: bool array (..., nbodies)}``, True where
    the body fails (all False: valid). Keys read "<what>: <check>", e.g. "mass: mass", "inertia about the mass
    center: triangle", "X_PF: rotation", "armature: armature" (a negative or non-finite armature on one of the
    body's mobilities). Pure jax.numpy: works on traced, vmapped (leading batch axes) and differentiated models,
    and never raises; ``jb.replace_parameters`` raises for concrete values instead."""
    checks = {f"{what}: {check}": fails for (what, check), (fails, _) in _failures(model.parameters, jnp).items()}
    checks["armature: armature"] = _armature_failures(model, jnp)
    return checks


def raise_if_invalid(model, operation: str) -> None:
    """The builders' error for the first failing check of concrete parameters, naming the body; traced: nothing."""
    p = model.parameters
    leaves = tuple(getattr(p, name) for name in _BODY_FIELDS)
    if any(isinstance(x, jax.core.Tracer) for x in leaves + (p.armature,)):
        return
    if not all(hasattr(x, "dtype") and np.issubdtype(x.dtype, np.floating) and np.ndim(x) >= 1 for x in leaves):
        return  # not numbers: a tree of vmap in_axes or shardings shaped like a Model
    concrete = dataclasses.replace(p, **{name: np.asarray(getattr(p, name)) for name in _BODY_FIELDS})
    failures = _failures(concrete, np)
    failed = first_failure({key: fails for key, (fails, _) in failures.items()})
    if failed:
        (what, check), index = failed
        error = InvalidArgument if what.startswith("X_") else InvalidInertia
        raise error(f"{operation}: body {model.topology.body_names[index[-1]]!r}: "
                    + message(check, what, failures[what, check][1][index]))
    if not (hasattr(p.armature, "dtype") and np.issubdtype(p.armature.dtype, np.floating)):
        return
    armature = np.asarray(p.armature)
    bad = np.flatnonzero(~np.isfinite(armature) | (armature < 0))
    if bad.size:
        body = model.topology.body_names[model.topology.u_body[bad[0]]]
        raise InvalidInertia(f"{operation}: body {body!r}: the armature of mobility u[{bad[0]}] must be finite and "
                             f">= 0, got {armature[bad[0]]}")


__all__ = ["check_parameters", "raise_if_invalid"]
