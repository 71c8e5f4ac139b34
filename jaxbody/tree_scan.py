"""Level-by-level recursions over the static tree: the only module that knows levels and padding.

Bodies of one tree level are processed together in one ``lax.scan`` step, so
the traced program has one step body regardless of the number of bodies, and
XLA fusion depth stays bounded by one level's work. Levels are padded to a
common width W with a dummy body (index ``nbodies``) that gets Ground's
inputs; its results are discarded and its contributions are masked out.

Algorithms supply a ``step`` working on whole levels (leading axis W) and
never see the padding.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .topology import Topology


def _gather_levels(topo: Topology, per_body):
    """(nbodies, ...) leaves -> (L, W, ...) in level order.

    Padding slots get Ground's row: Ground's inputs are always benign (identity
    rotations, zero mass, no mobilities), so padded work stays finite in values
    and gradients, and its results are dropped.
    """

    def gather(a):
        padded = jnp.concatenate([a, a[:1]], 0)
        return padded[topo.level_bodies]

    return jax.tree_util.tree_map(gather, per_body)


def outward(topo: Topology, step, root, per_body):
    """Base-to-tip recursion ``value[b] = step(value[parent(b)], per_body[b])``.

    Args:
        topo: the static topology.
        step: ``step(parent_values, level_inputs) -> values``; all leaves have a
            leading level-width axis W.
        root: Ground's value (pytree of arrays without the W axis).
        per_body: pytree of (nbodies, ...) inputs (Ground's row is ignored).

    Returns:
        pytree of (nbodies, ...) values, with Ground's row equal to ``root``.
    """
    xs = _gather_levels(topo, per_body)
    W = topo.level_bodies.shape[1]
    carry0 = jax.tree_util.tree_map(lambda r: jnp.broadcast_to(r, (W,) + jnp.shape(r)), root)

    def scan_step(carry, inputs):
        x, parent_slot = inputs
        parent = jax.tree_util.tree_map(lambda c: c[parent_slot], carry)
        out = step(parent, x)
        return out, out

    _, ys = jax.lax.scan(scan_step, carry0, (xs, jnp.asarray(topo.level_parent_slot)))

    def scatter_back(y, r):
        flat = y.reshape((-1,) + y.shape[2:])
        flat = jnp.concatenate([flat, jnp.broadcast_to(r, (1,) + flat.shape[1:]).astype(flat.dtype)], 0)
        return flat[topo.scan_flat_position]

    return jax.tree_util.tree_map(scatter_back, ys, root)


def inward(topo: Topology, step, per_body, zero_contribution):
    """Tip-to-base recursion with children summed into their parent.

    Args:
        topo: the static topology.
        step: ``step(level_inputs, children_sum) -> (outputs, contribution)``.
            ``children_sum`` is the sum of the contributions of each body's
            children (zero for leaves); ``contribution`` is what this body passes
            to its parent (already shifted to the parent if needed).
        per_body: pytree of (nbodies, ...) inputs.
        zero_contribution: pytree with the shape of one body's contribution.

    Returns:
        (outputs as (nbodies, ...) pytree with Ground's row zero,
         Ground's children_sum: the total contribution reaching Ground).
    """
    xs = _gather_levels(topo, per_body)
    W = topo.level_bodies.shape[1]
    carry0 = jax.tree_util.tree_map(lambda z: jnp.zeros((W,) + jnp.shape(z), jnp.result_type(z)), zero_contribution)
    onehot = jnp.asarray(topo.level_to_parent_onehot)
    valid = jnp.asarray(topo.level_bodies < topo.nbodies)

    def scan_step(children_sum, inputs):
        x, to_parent, is_body = inputs
        out, contribution = step(x, children_sum)

        def to_parents(c):
            # Padding slots contribute exactly zero, even if their (discarded) values are not finite.
            c = jnp.where(is_body.reshape((-1,) + (1,) * (c.ndim - 1)), c, 0)
            return jnp.tensordot(to_parent.astype(c.dtype), c, axes=([0], [0]))

        return jax.tree_util.tree_map(to_parents, contribution), out

    ground_sum, ys = jax.lax.scan(scan_step, carry0, (xs, onehot, valid), reverse=True)

    def scatter_back(y):
        flat = y.reshape((-1,) + y.shape[2:])
        flat = jnp.concatenate([flat, jnp.zeros((1,) + flat.shape[1:], flat.dtype)], 0)
        return flat[topo.scan_flat_position]

    outputs = jax.tree_util.tree_map(scatter_back, ys)
    return outputs, jax.tree_util.tree_map(lambda g: g[0], ground_sum)


def shift_outward(topo: Topology, p_PB_G, local):
    """``A[b] = shift_motion(A[parent], p_PB_G[b]) + local[b]``, Ground's A = 0.

    The common pattern of velocity, Jacobian, multiply-by-M and acceleration
    recursions. p_PB_G (nbodies, 3), local (nbodies, 2, 3) -> (nbodies, 2, 3).
    """

    def step(A_parent, x):
        l, loc = x
        w, v = A_parent[..., 0, :], A_parent[..., 1, :]
        return jnp.stack([w + loc[..., 0, :], v + jnp.cross(w, l) + loc[..., 1, :]], -2)

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
        shifted = jnp.stack([F[..., 0, :] + jnp.cross(l, F[..., 1, :]), F[..., 1, :]], -2)
        return F, shifted

    return inward(topo, step, (p_PB_G, local), jnp.zeros((2, 3), local.dtype))
