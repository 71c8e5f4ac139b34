"""Muscles of one class evaluated together (``PathMuscle.calc_stacked``), so k muscles trace and compile like one:

* on wrap-free GeometryPaths: their paths by one pass of jaxbody._dynamics.paths.stacked_paths, their mechanics
  by one ``jax.vmap`` of the class's ``calc_info`` over the muscles' stacked parameters;
* on other paths of one structure (e.g. wrapped over the same wrap objects): one ``jax.vmap`` of the path's
  ``calc_forces_of_tension`` and the mechanics over the stacked paths and parameters.

Two muscles stack when their class, their static switches and the shapes of their parameters agree and both
paths are stackable (``stacked_paths.stackable``) or have one structure. Shapes: k muscles, num_z state
variables each. Stage: Velocity. Cost: the stacked path pass plus k times the muscle model's few dozen flops.
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.paths import stacked_paths


def _structure(tree):
    """A pytree's static structure and its leaves' shapes and dtypes (equal for trees that stack)."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return treedef, tuple((jnp.shape(x), jnp.result_type(x)) for x in leaves)


def muscle_stack_key(muscle):
    """Equal keys stack together; None: the muscle is evaluated on its own. Wrap-free GeometryPaths stack whatever
    their points; other paths (wrapped) only with paths of the same structure (same point bodies, wrap objects,
    ranges and shapes: e.g. arm26's TRIlat and TRImed over the TRI cylinder)."""
    if stacked_paths.stackable(muscle.path):
        path_key = "wrap-free"
    else:
        path_key = _structure(muscle.path)
    statics = tuple((f.name, getattr(muscle, f.name)) for f in dataclasses.fields(muscle)
                    if f.metadata.get("static", False) and f.name != "first_control")
    return (type(muscle), statics, *_structure(muscle.parameters), jnp.shape(muscle.default_state), path_key)


def _stack(trees):
    return jax.tree_util.tree_map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]), *trees)


def calc_muscle_stack(model, state, muscles, Z, enabled):
    """k muscles of one stack key with state variables Z (k, num_z), ``enabled`` (k,) bool: forces ``(F (nbodies,
    2, 3), f (nu,), pe ())`` of the enabled muscles' tendon forces along their paths (a disabled muscle's
    selected away) and every muscle's dz/dt (k, num_z), from one evaluation."""
    if not stacked_paths.stackable(muscles[0].path):
        return _calc_same_paths(model, state, muscles, Z, enabled)
    pos, vel = state.position, state.velocity
    stack = stacked_paths.stack_paths([m.path for m in muscles])
    entries = stacked_paths.calc_entries(stack, pos.R_GB, pos.p_GB, state.q)
    lengths = stacked_paths.calc_lengths(entries)
    speeds = stacked_paths.calc_lengthening_speeds(stack, entries, pos, vel, state.q)
    excitations = state.controls[np.array([m.first_control for m in muscles])]
    parameters = _stack([m.parameters for m in muscles])
    first = muscles[0]

    def one(p, length, speed, z, excitation):
        muscle = eqx.tree_at(lambda m: m.parameters, first, p)
        info = muscle.calc_info(length, speed, z, excitation)
        return info.tendon_force, muscle.z_dot_of(info)

    tensions, z_dot = jax.vmap(one)(parameters, lengths, speeds, Z, excitations)
    F, f = stacked_paths.calc_tension_forces(stack, entries, model, state, tensions, enabled)
    return F, f, jnp.zeros((), tensions.dtype), z_dot


def _calc_same_paths(model, state, muscles, Z, enabled):
    """:func:`calc_muscle_stack` for muscles on paths of one structure: one ``jax.vmap`` over the stacked paths
    and parameters of the path's own ``calc_forces_of_tension`` (so a wrapped path's geometry is traced once)."""
    first = muscles[0]
    excitations = state.controls[np.array([m.first_control for m in muscles])]

    def one(path, p, z, excitation):
        muscle = eqx.tree_at(lambda m: m.parameters, first, p)

        def tension_of(length, speed):
            info = muscle.calc_info(length, speed, z, excitation)
            return info.tendon_force, info

        F, f, info = path.calc_forces_of_tension(model, state, tension_of)
        return F, f, muscle.z_dot_of(info)

    F, f, z_dot = jax.vmap(one)(_stack([m.path for m in muscles]), _stack([m.parameters for m in muscles]), Z,
                                excitations)
    F = jnp.sum(jnp.where(enabled[:, None, None, None], F, 0.0), 0)
    return F, jnp.sum(jnp.where(enabled[:, None], f, 0.0), 0), jnp.zeros((), F.dtype), z_dot
