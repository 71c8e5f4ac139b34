"""Evaluate per-mobilizer math for every body at once, one vectorized call per mobilizer type.

This is the only place that loops over mobilizer *types* (a short static
Python loop); there is never a loop over bodies and never a switch on type.
Results come back either per body (padded to ``nu_max`` columns, Ground's row
identity/zero) or in the global q/u layout.
"""

from __future__ import annotations

import jax.numpy as jnp

from .topology import Topology


def _group_inputs(topo: Topology, params, q, u=None):
    for i, g in enumerate(topo.groups):
        qg = q[topo.group_q_index[i]]
        ug = None if u is None else u[topo.group_u_index[i]]
        yield g.mobilizer, qg, ug, params.mobilizer_params[i]


def _per_body(topo: Topology, ground_row, rows):
    """Concatenate [Ground, group0..., group1...] rows and reorder them by body index."""
    stacked = jnp.concatenate([ground_row[None]] + rows, 0)
    return stacked[topo.group_row_of_body]


def _pad_columns(H, nu_max):
    return jnp.pad(H, [(0, 0)] * (H.ndim - 1) + [(0, nu_max - H.shape[-1])])


def _to_layout(blocks, position, n, dtype):
    """Concatenate per-group (k, w) blocks and gather them into a length-n vector."""
    if n == 0:
        return jnp.zeros((0,), dtype)
    return jnp.concatenate([b.reshape(-1) for b in blocks])[position]


def calc_X_FM_and_H_FM(topo: Topology, params, q):
    """Per body: R_FM (nbodies, 3, 3), p_FM (nbodies, 3), H_FM (nbodies, 6, nu_max). Ground: identity, 0."""
    dtype = q.dtype
    Rs, ps, Hs = [], [], []
    for mob, qg, _, prm in _group_inputs(topo, params, q):
        R, p = mob.calc_X_FM(qg, prm)
        Rs.append(R)
        ps.append(p)
        Hs.append(_pad_columns(mob.calc_H_FM(qg, prm), topo.nu_max))
    R_FM = _per_body(topo, jnp.eye(3, dtype=dtype), Rs)
    p_FM = _per_body(topo, jnp.zeros(3, dtype), ps)
    H_FM = _per_body(topo, jnp.zeros((6, topo.nu_max), dtype), Hs)
    return R_FM, p_FM, H_FM


def calc_HDot_FM(topo: Topology, params, q, u):
    """Per body HDot_FM (nbodies, 6, nu_max), the time derivative of H_FM in F."""
    rows = [
        _pad_columns(mob.calc_HDot_FM(qg, ug, prm), topo.nu_max)
        for mob, qg, ug, prm in _group_inputs(topo, params, q, u)
    ]
    return _per_body(topo, jnp.zeros((6, topo.nu_max), q.dtype), rows)


def multiply_by_n(topo: Topology, params, q, u):
    """qdot = N(q) u, (nq,)."""
    blocks = [mob.multiply_by_n(qg, ug) for mob, qg, ug, _ in _group_inputs(topo, params, q, u)]
    return _to_layout(blocks, topo.q_group_position, topo.nq, q.dtype)


def multiply_by_n_inv(topo: Topology, params, q, qdot):
    """u = NInv(q) qdot, (nu,)."""
    blocks = []
    for i, (mob, qg, _, _) in enumerate(_group_inputs(topo, params, q)):
        blocks.append(mob.multiply_by_n_inv(qg, qdot[topo.group_q_index[i]]))
    return _to_layout(blocks, topo.u_group_position, topo.nu, q.dtype)


def multiply_by_n_dot(topo: Topology, params, q, u, v):
    """NDot(q, u) v, (nq,)."""
    blocks = []
    for i, (mob, qg, ug, _) in enumerate(_group_inputs(topo, params, q, u)):
        blocks.append(mob.multiply_by_n_dot(qg, ug, v[topo.group_u_index[i]]))
    return _to_layout(blocks, topo.q_group_position, topo.nq, q.dtype)


def multiply_by_n_transpose(topo: Topology, params, q, v):
    """N(q)^T v for v (nq,) -> (nu,)."""
    blocks = []
    for i, (mob, qg, _, _) in enumerate(_group_inputs(topo, params, q)):
        blocks.append(mob.multiply_by_n_transpose(qg, v[topo.group_q_index[i]]))
    return _to_layout(blocks, topo.u_group_position, topo.nu, q.dtype)


def multiply_by_n_inv_transpose(topo: Topology, params, q, v):
    """NInv(q)^T v for v (nu,) -> (nq,)."""
    blocks = []
    for i, (mob, qg, _, _) in enumerate(_group_inputs(topo, params, q)):
        blocks.append(mob.multiply_by_n_inv_transpose(qg, v[topo.group_u_index[i]]))
    return _to_layout(blocks, topo.q_group_position, topo.nq, q.dtype)


def multiply_by_n_dot_transpose(topo: Topology, params, q, u, v):
    """NDot(q, u)^T v for v (nq,) -> (nu,)."""
    blocks = []
    for i, (mob, qg, ug, _) in enumerate(_group_inputs(topo, params, q, u)):
        blocks.append(mob.multiply_by_n_dot_transpose(qg, ug, v[topo.group_q_index[i]]))
    return _to_layout(blocks, topo.u_group_position, topo.nu, q.dtype)


def calc_qdotdot(topo: Topology, params, q, u, udot):
    """qdotdot = N udot + NDot u, (nq,)."""
    blocks = []
    for i, (mob, qg, ug, _) in enumerate(_group_inputs(topo, params, q, u)):
        blocks.append(mob.calc_qdotdot(qg, ug, udot[topo.group_u_index[i]]))
    return _to_layout(blocks, topo.q_group_position, topo.nq, q.dtype)


def normalize_q(topo: Topology, params, q):
    """q with every quaternion in use normalized, (nq,)."""
    blocks = [mob.normalize_q(qg) for mob, qg, _, _ in _group_inputs(topo, params, q)]
    return _to_layout(blocks, topo.q_group_position, topo.nq, q.dtype)


def per_body_u(topo: Topology, u):
    """(nu,) -> (nbodies, nu_max) padded with zeros."""
    return jnp.concatenate([u, jnp.zeros((1,), u.dtype)])[topo.body_u_index]


def from_per_body_u(topo: Topology, f):
    """(nbodies, nu_max) -> (nu,), dropping padding."""
    return f.reshape(-1)[topo.u_flat_position]
