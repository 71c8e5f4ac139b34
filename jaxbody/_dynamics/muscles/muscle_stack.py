"""Muscles of one class on wrap-free GeometryPaths evaluated together (``PathMuscle.calc_stacked``): their paths
by one pass of jaxbody._dynamics.paths.stacked_paths, their mechanics by one ``jax.vmap`` of the class's
``calc_info`` over the muscles' stacked parameters, so k muscles trace and compile like one.

Two muscles stack when their class, their static switches and the shapes of their parameters agree and both
paths are stackable (``stacked_paths.stackable``). Shapes: k muscles, num_z state variables each. Stage: Velocity.
Cost: the stacked path pass plus k times the muscle model's few dozen flops.
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.paths import stacked_paths


def muscle_stack_key(muscle):
    """Equal keys stack together; None: the muscle is evaluated on its own."""
    if not stacked_paths.stackable(muscle.path):
        return None
    statics = tuple((f.name, getattr(muscle, f.name)) for f in dataclasses.fields(muscle)
                    if f.metadata.get("static", False) and f.name != "first_control")
    leaves, treedef = jax.tree_util.tree_flatten(muscle.parameters)
    shapes = tuple((jnp.shape(x), jnp.result_type(x)) for x in leaves)
    return type(muscle), statics, treedef, shapes, jnp.shape(muscle.default_state)


def calc_muscle_stack(model, state, muscles, Z):
    """k muscles of one stack key with state variables Z (k, num_z): forces ``(F (k, nbodies, 2, 3), f (k, nu),
    pe (k,))`` of their tendon forces along their paths and their dz/dt (k, num_z), from one evaluation."""
    pos, vel = state.position, state.velocity
    stack = stacked_paths.stack_paths([m.path for m in muscles])
    paths = stacked_paths.calc_current_paths(stack, pos.R_GB, pos.p_GB, state.q)
    lengths = stacked_paths.calc_lengths(paths)
    speeds = stacked_paths.calc_lengthening_speeds(stack, paths, pos, vel, state.q)
    excitations = state.controls[np.array([m.first_control for m in muscles])]
    parameters = jax.tree_util.tree_map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]),
                                        *[m.parameters for m in muscles])
    first = muscles[0]

    def one(p, length, speed, z, excitation):
        muscle = eqx.tree_at(lambda m: m.parameters, first, p)
        info = muscle.calc_info(length, speed, z, excitation)
        return info.tendon_force, muscle.z_dot_of(info)

    tensions, z_dot = jax.vmap(one)(parameters, lengths, speeds, Z, excitations)
    F, f = stacked_paths.calc_tension_forces(stack, paths, model, state, tensions)
    return F, f, jnp.zeros(tensions.shape, tensions.dtype), z_dot
