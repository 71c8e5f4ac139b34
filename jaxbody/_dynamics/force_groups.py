"""The Dynamics-stage sum of force elements, vectorized by type.

Elements of one groupable class (``ForceElement.groupable``) whose static fields agree except for their body
or coordinate indices (``index_fields``) and whose array fields have the same shapes are evaluated together:
their arrays are stacked, their indices become an int array, and one ``jax.vmap`` of the class's ``calc``
gives every element's contribution (so ten springs compile like one). Elements with state variables and equal
``stack_key`` (muscles of one class on wrap-free paths, or on paths of one structure) are evaluated together by their class's
``calc_stacked``, forces and state derivatives in one evaluation (``calc_forces_and_z_dot``). Every other element
(Custom, DiscreteForces, ...) is evaluated on its own. A disabled element (``State.force_enabled``)
contributes zeros, selected rather than multiplied so that a NaN in it cannot leak.
"""

from __future__ import annotations

import dataclasses
import warnings

import jax
import jax.numpy as jnp

from jaxbody._dynamics.forces import force_z_slices


def _fields(element, static: bool) -> list[str]:
    return [f.name for f in dataclasses.fields(element) if bool(f.metadata.get("static", False)) == static]


def _group_key(element):
    """Elements with equal keys are evaluated by one vmap; None: on its own."""
    cls = type(element)
    if element.num_z():
        key = element.stack_key()
        return None if key is None else ("stacked", key)
    if not cls.groupable:
        return None
    statics = tuple((n, getattr(element, n)) for n in _fields(element, True) if n not in cls.index_fields)
    arrays = tuple((n, jnp.shape(getattr(element, n)), jnp.result_type(getattr(element, n))) for n in _fields(element, False))
    return cls, statics, arrays


def group_positions(elements, positions) -> list[tuple[int, ...]]:
    """``positions`` (into ``elements``, duplicates kept) split into groups evaluated together, first-seen order."""
    groups: dict = {}
    for i in positions:
        key = _group_key(elements[i])
        groups.setdefault(("alone", len(groups)) if key is None else key, []).append(i)
    return [tuple(g) for g in groups.values()]


def _calc_stacked(model, state, elements):
    """Per-element (F (k, nbodies, 2, 3), f (k, nu), pe (k,)) of elements of one group, by one vmap."""
    first = elements[0]
    values = {n: jnp.stack([jnp.asarray(getattr(e, n)) for e in elements]) for n in _fields(first, False)}
    values.update({n: jnp.asarray([getattr(e, n) for e in elements], jnp.int32) for n in type(first).index_fields})

    def one(element_values):
        # Traced arrays and indices through the dataclass constructor: groupable classes have no __init__ of
        # their own (ForceElement.groupable), so replace() rebuilds the element field by field. The index fields
        # are static (they key the groups) but traced here by design: equinox's warning about it is expected.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "A JAX array is being set as static", UserWarning)
            element = dataclasses.replace(first, **element_values)
        return element.calc(model, state)

    return jax.vmap(one)(values)


def _stacked_z(state, slices, group):
    """(k, num_z): the state variables of the k elements at ``group``."""
    return jnp.stack([state.z[slices[i]] for i in group])


def _masked_sums(on, Fs, fs, pes):
    """Per-element contributions (k leading) summed over the enabled ones (``on`` (k,)), selected not multiplied."""
    return (jnp.sum(jnp.where(on[:, None, None, None], Fs, 0.0), 0), jnp.sum(jnp.where(on[:, None], fs, 0.0), 0),
            jnp.sum(jnp.where(on, pes, 0.0)))


def _group_contributions(model, state, slices, group, on, z_dot: bool):
    """``(F (nbodies, 2, 3), f (nu,), pe (), z_dot (k, num_z) or None)`` of one group: forces summed over its
    enabled elements (``on`` (k,)), every element's z_dot."""
    forces = model.forces
    first = forces[group[0]]
    if first.num_z() and len(group) > 1:
        return type(first).calc_stacked(model, state, [forces[i] for i in group], _stacked_z(state, slices, group),
                                        on)
    if len(group) > 1:
        return (*_masked_sums(on, *_calc_stacked(model, state, [forces[i] for i in group])), None)
    z = state.z[slices[group[0]]]
    if first.num_z() and z_dot:
        *Fs, rows = jax.tree_util.tree_map(lambda x: x[None], first.calc_with_z_and_z_dot(model, state, z))
        return (*_masked_sums(on, *Fs), rows)
    return (*_masked_sums(on, *jax.tree_util.tree_map(lambda x: x[None], first.calc_with_z(model, state, z))), None)


def calc_forces_and_z_dot(model, state, positions) -> tuple:
    """``calc_force_contributions`` plus dz/dt (nz_p,) of the elements at ``positions`` that have state variables,
    in element order (so all of ``State.z`` when ``positions`` holds every such element), zero for a disabled
    element (its z stays put); each element's forces and dz/dt come from one evaluation. Requires Velocity."""
    return _sum_contributions(model, state, positions, z_dot=True)


def calc_force_contributions(model, state, positions) -> tuple:
    """Sum over the force elements at ``positions`` (static, into ``model.forces``) that the State enables.

    Returns body_forces (nbodies, 2, 3) at Bo in G, mobility_forces (nu,), potential_energy. Requires Velocity.
    """
    return _sum_contributions(model, state, positions, z_dot=False)[:3]


def _sum_contributions(model, state, positions, z_dot: bool) -> tuple:
    forces = model.forces
    F = jnp.zeros((model.topology.nbodies, 2, 3), state.q.dtype)
    f = jnp.zeros(model.topology.nu, state.q.dtype)
    pe = jnp.zeros((), state.q.dtype)
    slices = force_z_slices(forces)
    z_dots = {}
    for group in group_positions(forces, positions):  # a loop over element types, not elements
        on = state.force_enabled[jnp.asarray(group, jnp.int32)]
        F_group, f_group, pe_group, rows = _group_contributions(model, state, slices, group, on, z_dot)
        F, f, pe = F + F_group, f + f_group, pe + pe_group
        if z_dot and rows is not None:
            z_dots.update({i: jnp.where(on[k], row, 0.0) for k, (i, row) in enumerate(zip(group, rows))})
    ordered = [z_dots[i] for i in sorted(z_dots)]
    return F, f, pe, (jnp.concatenate(ordered) if ordered else jnp.zeros((0,), state.q.dtype))
