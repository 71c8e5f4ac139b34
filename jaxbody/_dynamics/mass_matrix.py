"""Mass-matrix operators: M a in O(n), M by composite-body inertias, and M^-1 by columns (catalogue 4.2, 4.6)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._dynamics import articulated, jacobians
from jaxbody._math import spatial
from jaxbody._topology import tree_scan
from jaxbody._typing import BodySpatialMats, Mobilities


def multiply_by_m(model, pos, a: Mobilities) -> Mobilities:
    """``M a = J^T (Mk (J a)) + armature * a`` in O(n) without forming M (one outward and one inward scan).

    a (nu,) -> (nu,).
    """
    A = jacobians.multiply_by_system_jacobian(model, pos, a)
    return jacobians.multiply_by_system_jacobian_transpose(
        model, pos, spatial.unflat(spatial.matvec(pos.Mk_G, spatial.flat(A)))
    ) + model.parameters.armature * a


def calc_composite_body_inertias(model, pos) -> BodySpatialMats:
    """Composite-body inertias R_B about Bo in G (nbodies, 6, 6): ``R_B = Mk_B + sum_c Phi_c R_c Phi_c^T``.

    Cost: one inward level scan.
    """

    def step(x, children):
        Mk, l = x
        R = Mk + children
        return R, spatial.shift_inertia(R, l)

    R, _ = tree_scan.inward(model.topology, step, (pos.Mk_G, pos.p_PB_G), jnp.zeros((6, 6), pos.Mk_G.dtype))
    return R


def calc_m(model, pos):
    """Mass matrix M (nu, nu) by the composite-body method, plus ``diag(armature)``.

    For each body i and each ancestor-or-self j, the block
    ``M[u_j, u_i] = H_j^T Phi(p_j -> p_i) R_i H_i`` is computed in one
    vectorized batch over all such pairs and gathered into M.

    Cost: O(nb * depth) blocks of nu_max^2 each.
    """
    topo = model.topology
    R = calc_composite_body_inertias(model, pos)
    H = pos.H_PB_G
    F = spatial.matmul(R, H)  # (nbodies, 6, nu_max): force at Bo_i per unit motion of each mobility of i
    anc, desc = topo.ancestor_pairs
    F_i = F[desc]
    l = pos.p_GB[desc] - pos.p_GB[anc]  # from Bo_j to Bo_i
    columns = jnp.moveaxis(F_i, -1, 1).reshape(F_i.shape[0], -1, 2, 3)  # one spatial force per mobility column
    shifted = jnp.moveaxis(spatial.shift_force(columns, l[:, None, :]).reshape(columns.shape[:2] + (6,)), 1, -1)
    blocks = spatial.tmatmul(H[anc], shifted)
    flat = jnp.concatenate([blocks.reshape(-1), jnp.zeros((1,), blocks.dtype)])
    return flat[topo.mass_matrix_gather] + jnp.diag(jnp.asarray(model.parameters.armature, blocks.dtype))


def calc_m_inv(model, pos, abi):
    """M^-1 (nu, nu) by applying the O(n) operator to each unit vector (O(n^2))."""
    eye = jnp.eye(model.topology.nu, dtype=pos.Mk_G.dtype)
    return jax.vmap(lambda e: articulated.multiply_by_m_inv(model, pos, abi, e), out_axes=1)(eye)
