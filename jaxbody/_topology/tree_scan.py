"""Level-by-level recursions over the static tree: the only module that knows levels and padding.

Bodies of one tree level are processed together, one ``lax.scan`` step per
level, so the traced program holds one step body per *segment* of levels
regardless of the number of bodies, and XLA fusion depth stays bounded by
one level's work. ``Topology.segments`` groups consecutive levels into at
most two segments (each one more compiled loop), each one scan padded to its own width W and mobility
width nu (a Free root does not make every Pin below it carry six columns);
the values carried between levels are padded to the segment's carry width.
Padding slots are a dummy body that gets Ground's benign inputs; their
results are discarded and their contributions masked out.

Algorithms supply a ``step`` working on whole levels (leading axis W) and
never see the padding. Per-body inputs and step outputs are arrays, tuples of
arrays, or NamedTuples; a NamedTuple whose fields have mobility axes (padded
to the model's nu_max per body) declares them once, in a class attribute
``MOBILITY_AXES = {"field": (axis, ...)}`` (body-local axes), so each segment
can narrow them to its own width. For example (jaxbody._dynamics.articulated)::

    class InertiaPassInputs(NamedTuple):
        Mk: jnp.ndarray        # (nbodies, 6, 6)
        H: jnp.ndarray         # (nbodies, 6, nu_max)
        ...
        MOBILITY_AXES = {"H": (1,), ...}
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._math import spatial
from jaxbody._topology.topology import LevelSegment, Topology

tree_map = jax.tree_util.tree_map


def mobility_axes(tree):
    """Per-leaf body-local mobility axes of ``tree``: a NamedTuple's ``MOBILITY_AXES`` for its fields (nested
    pytrees inherit their field's axes), () for everything else."""
    declared = getattr(type(tree), "MOBILITY_AXES", None)
    if declared is not None:
        unknown = set(declared) - set(tree._fields)
        assert not unknown, f"{type(tree).__name__}.MOBILITY_AXES names no field {sorted(unknown)}"
        return type(tree)(*(tree_map(lambda _, ax=declared.get(name, ()): ax, getattr(tree, name))
                            for name in tree._fields))
    if type(tree) is tuple:
        return tuple(mobility_axes(t) for t in tree)
    return tree_map(lambda _: (), tree)


def _gather(seg: LevelSegment, per_body):
    """(nbodies, ...) leaves -> (n_levels, W, ...) for one segment, mobility axes narrowed to seg.nu."""

    def gather(a, axes):
        g = jnp.concatenate([a, a[:1]], 0)[seg.level_bodies]
        for ax in axes:
            g = jax.lax.slice_in_dim(g, 0, seg.nu, axis=2 + ax)
        return g

    return tree_map(gather, per_body, mobility_axes(per_body))


def _pad_u(y, axes, nu_max, lead):
    """Pad narrowed mobility axes of an output back to nu_max (``lead`` leading axes before a body's dims)."""
    widths = [(0, 0)] * y.ndim
    for ax in axes:
        widths[lead + ax] = (0, nu_max - y.shape[lead + ax])
    return jnp.pad(y, widths)


def _assemble(topo: Topology, per_segment, ground_row):
    """Concatenate per-segment (n, W, ...) outputs and reorder them to (nbodies, ...) with Ground's row."""
    axes = mobility_axes(ground_row)

    def assemble(g, ax, *ys):
        flats = [_pad_u(y, ax, topo.nu_max, 2).reshape((-1,) + g.shape) for y in ys]
        flat = jnp.concatenate(flats + [g[None].astype(flats[0].dtype)], 0)
        return flat[topo.scan_flat_position]

    return tree_map(assemble, ground_row, axes, *per_segment)


def _fit_width(tree, width):
    """Slice or zero-pad the leading (slot) axis of every leaf to ``width``."""

    def fit(a):
        if a.shape[0] >= width:
            return a[:width]
        return jnp.pad(a, [(0, width - a.shape[0])] + [(0, 0)] * (a.ndim - 1))

    return tree_map(fit, tree)


def outward(topo: Topology, step, root, per_body, carry_of=None):
    """Base-to-tip recursion ``value[b] = step(value[parent(b)], per_body[b])``.

    Args:
        topo: the static topology.
        step: ``step(parent_values, level_inputs) -> values``; all leaves have a
            leading level-width axis W.
        root: Ground's value (pytree of arrays without the W axis, of the type ``step`` returns), also
            Ground's output row.
        per_body: pytree of (nbodies, ...) inputs (Ground's row is ignored); a NamedTuple declares its
            mobility axes (``MOBILITY_AXES``, see the module docstring), as does ``step``'s output type.
        carry_of: optional function picking from a level's values what its
            children read (it must not have mobility axes); default: all of it,
            and ``root`` is then the carried Ground value too.

    Returns:
        pytree of (nbodies, ...) values, with Ground's row equal to ``root``.
    """
    carry_of = carry_of or (lambda values: values)
    carried = tree_map(lambda r: jnp.broadcast_to(r, (1,) + jnp.shape(r)), carry_of(root))
    outputs = []
    for seg in topo.segments:
        xs = _gather(seg, per_body)

        def scan_step(carry, inputs, seg=seg):
            x, parent_slot = inputs
            out = step(tree_map(lambda c: c[parent_slot], carry), x)
            return _fit_width(carry_of(out), seg.carry_width), out

        carried, ys = jax.lax.scan(scan_step, _fit_width(carried, seg.carry_width), (xs, jnp.asarray(seg.parent_slot)))
        outputs.append(ys)
    return _assemble(topo, outputs, root)


def inward(topo: Topology, step, per_body, zero_contribution):
    """Tip-to-base recursion with children summed into their parent.

    Args:
        topo: the static topology.
        step: ``step(level_inputs, children_sum) -> (outputs, contribution)``.
            ``children_sum`` is the sum of the contributions of each body's
            children (zero for leaves); ``contribution`` is what this body passes
            to its parent (already shifted to the parent if needed).
        per_body: pytree of (nbodies, ...) inputs; mobility axes as for ``outward``.
        zero_contribution: pytree with the shape of one body's contribution.

    Returns:
        (outputs as (nbodies, ...) pytree with Ground's row zero,
         Ground's children_sum: the total contribution reaching Ground).
    """
    children = tree_map(lambda z: jnp.zeros((1,) + jnp.shape(z), jnp.result_type(z)), zero_contribution)
    outputs = []
    for seg in reversed(topo.segments):
        xs = _gather(seg, per_body)

        def scan_step(children_sum, inputs, seg=seg):
            x, to_parent, is_body = inputs
            out, contribution = step(x, _fit_width(children_sum, seg.width))

            def move(c):
                # Padding slots contribute exactly zero, even if their (discarded) values are not finite.
                c = jnp.where(is_body.reshape((-1,) + (1,) * (c.ndim - 1)), c, 0)
                return jnp.tensordot(to_parent.astype(c.dtype), c, axes=([0], [0]))

            return tree_map(move, contribution), out

        children, ys = jax.lax.scan(
            scan_step,
            _fit_width(children, seg.carry_width),
            (xs, jnp.asarray(seg.to_parent), jnp.asarray(seg.valid)),
            reverse=True,
        )
        outputs.append(ys)
    ground_row = tree_map(lambda y: jnp.zeros(y.shape[2:], y.dtype), outputs[0])
    ground_row = tree_map(lambda g, ax: _pad_u(g, ax, topo.nu_max, 0), ground_row, mobility_axes(ground_row))
    outputs = _assemble(topo, list(reversed(outputs)), ground_row)
    return outputs, tree_map(lambda c: c[0], children)


def shift_outward(topo: Topology, p_PB_G, local):
    """``A[b] = shift_motion(A[parent], p_PB_G[b]) + local[b]``, Ground's A = 0.

    The common pattern of velocity, Jacobian, multiply-by-M and acceleration
    recursions. p_PB_G (nbodies, 3), local (nbodies, 2, 3) -> (nbodies, 2, 3).
    """

    def step(A_parent, x):
        l, loc = x
        return spatial.shift_motion(A_parent, l) + loc

    return outward(topo, step, jnp.zeros((2, 3), local.dtype), (p_PB_G, local))


def shift_inward(topo: Topology, p_PB_G, local):
    """``F[b] = local[b] + sum_children shift_force(F[c], p_PB_G[c])``.

    The common pattern of Jacobian-transpose, inverse-dynamics and composite
    force recursions. Returns (F (nbodies, 2, 3), total force reaching Ground at
    its origin (2, 3)).
    """

    def step(x, children):
        l, loc = x
        F = loc + children
        return F, spatial.shift_force(F, l)

    return inward(topo, step, (p_PB_G, local), jnp.zeros((2, 3), local.dtype))
