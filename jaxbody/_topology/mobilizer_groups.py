"""Evaluate per-mobilizer math for every body at once, one vectorized call per mobilizer type.

This is the only place that loops over mobilizer *types* (a short static
Python loop); there is never a loop over bodies and never a switch on type.
Results come back either per body (padded to ``nu_max`` columns, Ground's row
identity/zero) or in the global q/u layout.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._topology.topology import Topology


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
        R, p, H = mob.calc_X_FM_and_H_FM(qg, prm)
        Rs.append(R)
        ps.append(p)
        Hs.append(_pad_columns(H, topo.nu_max))
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


def calc_singularity_distance(topo: Topology, params, q):
    """Per body (nbodies,) distance from the mobilizer's singular configuration; +inf for Ground and types without one."""
    rows = [mob.singularity_distance(qg, prm) for mob, qg, _, prm in _group_inputs(topo, params, q)]
    return _per_body(topo, jnp.full((), jnp.inf, q.dtype), rows)


def _map_to_layout(topo: Topology, params, q, u, v, v_in: str, out: str, fn):
    """Apply ``fn(mobilizer, q_g, u_g, v_g)`` per group; v (if any) is gathered from the q or u layout
    (``v_in``) and the results are laid out as q or u (``out``)."""
    index = {"q": topo.group_q_index, "u": topo.group_u_index}
    blocks = [
        fn(mob, qg, ug, None if v is None else v[index[v_in][i]])
        for i, (mob, qg, ug, _) in enumerate(_group_inputs(topo, params, q, u))
    ]
    if out == "q":
        return _to_layout(blocks, topo.q_group_position, topo.nq, q.dtype)
    return _to_layout(blocks, topo.u_group_position, topo.nu, q.dtype)


def multiply_by_n(topo: Topology, params, q, u):
    """qdot = N(q) u, (nq,)."""
    return _map_to_layout(topo, params, q, u, None, "u", "q", lambda m, qg, ug, _: m.multiply_by_n(qg, ug))


def multiply_by_n_inv(topo: Topology, params, q, qdot):
    """u = NInv(q) qdot, (nu,)."""
    return _map_to_layout(topo, params, q, None, qdot, "q", "u", lambda m, qg, _, v: m.multiply_by_n_inv(qg, v))


def multiply_by_n_dot(topo: Topology, params, q, u, v):
    """NDot(q, u) v, (nq,)."""
    return _map_to_layout(topo, params, q, u, v, "u", "q", lambda m, qg, ug, vg: m.multiply_by_n_dot(qg, ug, vg))


def multiply_by_n_transpose(topo: Topology, params, q, v):
    """N(q)^T v for v (nq,) -> (nu,)."""
    return _map_to_layout(topo, params, q, None, v, "q", "u", lambda m, qg, _, vg: m.multiply_by_n_transpose(qg, vg))


def multiply_by_n_inv_transpose(topo: Topology, params, q, v):
    """NInv(q)^T v for v (nu,) -> (nq,)."""
    return _map_to_layout(
        topo, params, q, None, v, "u", "q", lambda m, qg, _, vg: m.multiply_by_n_inv_transpose(qg, vg)
    )


def multiply_by_n_dot_transpose(topo: Topology, params, q, u, v):
    """NDot(q, u)^T v for v (nq,) -> (nu,)."""
    return _map_to_layout(
        topo, params, q, u, v, "q", "u", lambda m, qg, ug, vg: m.multiply_by_n_dot_transpose(qg, ug, vg)
    )


def calc_qdotdot(topo: Topology, params, q, u, udot):
    """qdotdot = N udot + NDot u, (nq,)."""
    return _map_to_layout(topo, params, q, u, udot, "u", "q", lambda m, qg, ug, vg: m.calc_qdotdot(qg, ug, vg))


def normalize_q(topo: Topology, params, q):
    """q with every quaternion in use normalized, (nq,)."""
    return _map_to_layout(topo, params, q, None, None, "q", "q", lambda m, qg, _, __: m.normalize_q(qg))


def per_body_u(topo: Topology, u):
    """(nu,) -> (nbodies, nu_max) padded with zeros."""
    return jnp.concatenate([u, jnp.zeros((1,), u.dtype)])[topo.body_u_index]


def from_per_body_u(topo: Topology, f):
    """(nbodies, nu_max) -> (nu,), dropping padding."""
    return f.reshape(-1)[topo.u_flat_position]
