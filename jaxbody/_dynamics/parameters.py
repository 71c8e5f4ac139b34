"""Parameters: every number of a realized system that a user might sweep or differentiate.

``system.realize_topology()`` builds them (jaxbody._api.build_model). Every number a user might sweep or
differentiate is an array leaf here, so ``jax.vmap`` over a batch of models
and ``jax.grad`` with respect to a model work without recompiling; only a
change of topology retraces.
"""

from __future__ import annotations

import dataclasses
import warnings

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.parameter_checks import raise_if_invalid


class Parameters(eqx.Module):
    """Per-body constants (rows: bodies, Ground first).

    mass (nbodies,) kg; com_B (nbodies, 3) mass center in B; inertia_Bo_B
    (nbodies, 3, 3) inertia about Bo in B; R_PF, p_PF the inboard frames X_PF;
    R_BM, p_BM the outboard frames X_BM; armature (nu,) per-mobility rotor inertia added to the mass
    matrix's diagonal, ``M = J^T Mk J + diag(armature)`` (kg m^2 on a rotational mobility, kg on a
    translational one; MuJoCo's and Pinocchio's ``armature``; zero unless set, Simbody has none); mobilizer_params: per mobilizer
    group (Topology.groups), (k, n_params) arrays (screw pitch, ellipsoid radii);
    constraint_params: per constraint group (Model.constraints.groups), (k, n_params) arrays
    (stations, directions, lengths, ...; see each constraint type).
    """

    mass: jnp.ndarray
    com_B: jnp.ndarray
    inertia_Bo_B: jnp.ndarray
    R_PF: jnp.ndarray
    p_PF: jnp.ndarray
    R_BM: jnp.ndarray
    p_BM: jnp.ndarray
    armature: jnp.ndarray
    mobilizer_params: tuple
    constraint_params: tuple = ()


def replace_parameters(model, **changes):
    """A copy of ``model`` with some Parameters fields replaced (same topology: no recompilation).

    Concrete values get the builders' checks (negative mass, an unphysical inertia about Bo or the mass center,
    a non-rotation R_PF or R_BM, non-finite vectors) and raise their errors naming the body; traced values
    (under jit, vmap, grad) are not checked here: ``jb.check_parameters(model)`` checks them on request.

    Values keep the Model's floating dtype (the dtype of the field they replace): a float64 array given to a
    float32 Model is cast to float32 with a warning naming the field, so every backend and a ``jb.simulate``
    carry see one dtype."""
    changes = {key: _in_model_dtype(getattr(model.parameters, key, None), value, key) for key, value in changes.items()}
    new = dataclasses.replace(model, parameters=dataclasses.replace(model.parameters, **changes))
    raise_if_invalid(new, "replace_parameters")
    return new


def _in_model_dtype(old, value, key):
    """``value`` as an array of the dtype of the floating array ``old`` it replaces (tuples element by element),
    warning when precision is dropped; unchanged where the shapes of the structure differ (the builders' checks
    then name the problem)."""
    if isinstance(old, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(old):
            return value
        return tuple(_in_model_dtype(o, v, key) for o, v in zip(old, value))
    if not hasattr(old, "dtype") or not jnp.issubdtype(old.dtype, jnp.floating):
        return value
    given = value.dtype if hasattr(value, "dtype") else None
    value = jnp.asarray(value)
    if value.dtype == old.dtype:
        return value
    if given is not None and jnp.issubdtype(given, jnp.floating) and jnp.finfo(given).bits > jnp.finfo(old.dtype).bits:
        warnings.warn(f"replace_parameters: {key} given as {given} was cast to the Model's {old.dtype}", stacklevel=3)
    return value.astype(old.dtype)


__all__ = ["Parameters", "replace_parameters"]
