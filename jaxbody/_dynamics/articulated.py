"""Articulated-body algorithm (Simbody's calcTreeAccelerations, catalogue 4.3-4.4; Jain 2011 Alg. 6.1).

Pass names follow the catalogue: the articulated-body inertias P are built
tip to base, then pass 1 (tip to base) accumulates the articulated force
residuals z and mobility residuals epsilon, and pass 2 (base to tip) produces
udot and the body accelerations A_GB. Mobilities are padded to ``nu_max``
columns; padded columns have zero H and an identity D block, so they carry
exact zeros.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._math import spatial
from jaxbody._topology import mobilizer_groups, tree_scan


def small_spd_inverse(D):
    """Inverse of a batch of small symmetric positive-definite matrices (..., n, n).

    Unrolled Gauss-Jordan without pivoting (valid for SPD), so it vectorizes
    over any batch and differentiates like ordinary arithmetic. Singular D
    (a massless body at the end of a chain) gives inf/NaN, as Simbody throws.
    """
    n = D.shape[-1]
    A = D
    X = jnp.broadcast_to(jnp.eye(n, dtype=D.dtype), D.shape)
    for k in range(n):
        inv_pivot = 1.0 / A[..., k, k]
        row_A = A[..., k, :] * inv_pivot[..., None]
        row_X = X[..., k, :] * inv_pivot[..., None]
        col = A[..., :, k]
        A = (A - col[..., :, None] * row_A[..., None, :]).at[..., k, :].set(row_A)
        X = (X - col[..., :, None] * row_X[..., None, :]).at[..., k, :].set(row_X)
    return X


def calc_articulated_body_inertias(model, pos, udot_known):
    """Articulated-body inertias tip to base.

    Args:
        udot_known: (nbodies,) bool, bodies whose udots are known (locked or
            prescribed): their inertia passes to the parent rigidly (``P+ = P``).

    Returns:
        P (nbodies, 6, 6) about Bo in G; D_inv (nbodies, nu_max, nu_max) with
        ``D = H^T P H`` (identity for known bodies; entries of padded columns
        carry no meaning); G = P H D^-1 (nbodies, 6, nu_max), zero for known bodies.

    Cost: one inward level scan, O(nb).
    """
    topo = model.topology
    u_mask = jnp.asarray(topo.body_u_mask, pos.Mk_G.dtype)

    def step(x, children_P):
        Mk, H, mask, known, l = x
        eye = jnp.eye(mask.shape[-1], dtype=Mk.dtype)
        P = Mk + children_P
        PH = spatial.matmul(P, H)
        # Identity on padded columns (mask 0, also for tree_scan's all-zero dummy slots) and for known bodies.
        D = spatial.tmatmul(H, PH) + eye * (1.0 - mask[..., None, :])
        D_inv = small_spd_inverse(jnp.where(known[..., None, None], eye, D))
        G = jnp.where(known[..., None, None], 0.0, spatial.matmul(PH, D_inv))
        P_plus = P - spatial.matmul_t(G, PH)
        P_plus = jnp.where(known[..., None, None], P, 0.5 * (P_plus + jnp.swapaxes(P_plus, -1, -2)))
        return (P, D_inv, G), spatial.shift_inertia(P_plus, l)

    with jax.named_scope("articulated_body_inertias"):
        (P, D_inv, G), _ = tree_scan.inward(
            topo, step, (pos.Mk_G, pos.H_PB_G, u_mask, udot_known, pos.p_PB_G), jnp.zeros((6, 6), pos.Mk_G.dtype),
            u_axes=((), (1,), (0,), (), ()), u_axes_out=((), (0, 1), (1,)),
        )
    return P, D_inv, G


def articulated_force_pass(model, pos, G, f, z_local):
    """ABA pass 1 (tip to base): articulated forces and mobility residuals.

    Args:
        G: ``P H D^-1`` (nbodies, 6, nu_max), zero for known-udot bodies (so their ``z+ = z``).
        f: mobility forces (nu,).
        z_local: per-body ``P (A_b + H udot_p) + b - F_applied`` (nbodies, 2, 3), see articulated_z_local;
            zeros for the pure M^-1 operator.

    Returns:
        eps (nbodies, nu_max) = ``f - H^T z``; z_plus (nbodies, 6) = ``z + G eps``, at Bo in G.
    """
    topo = model.topology
    f_b = mobilizer_groups.per_body_u(topo, f)

    def pass1(x, children_z):
        H_b, G_b, f_bb, z_loc, l = x
        z = spatial.flat(z_loc) + children_z
        eps = f_bb - spatial.mattvec(H_b, z)
        z_plus = z + spatial.matvec(G_b, eps)
        return (eps, z_plus), spatial.flat(spatial.shift_force(spatial.unflat(z_plus), l))

    with jax.named_scope("aba_pass1"):
        (eps, z_plus), _ = tree_scan.inward(
            topo, pass1, (pos.H_PB_G, G, f_b, z_local, pos.p_PB_G), jnp.zeros(6, pos.Mk_G.dtype),
            u_axes=((1,), (1,), (0,), (), ()), u_axes_out=((0,), ()),
        )
    return eps, z_plus


def articulated_solve(model, pos, abi, f, z_local, A_b, udot_prescribed):
    """The two ABA passes for given inputs.

    Args:
        abi: (P, D_inv, G, udot_known) from calc_articulated_body_inertias and its mask.
        f: mobility forces (nu,).
        z_local: see articulated_force_pass.
        A_b: mobilizer Coriolis accelerations (nbodies, 2, 3), or zeros.
        udot_prescribed: (nu,) known udots (read only for known bodies).

    Returns:
        udot (nu,), A_GB (nbodies, 2, 3), eps (nbodies, nu_max) of pass 1.

    A known body enters pass 2 with ``D^-1 = I`` and ``G = 0``, so feeding it
    its known udot in place of eps makes pass 2 return that udot unchanged.

    Cost: one inward and one outward level scan, O(nb).
    """
    topo = model.topology
    _, D_inv, G, udot_known = abi
    eps, _ = articulated_force_pass(model, pos, G, f, z_local)
    eps_or_known = jnp.where(udot_known[:, None], mobilizer_groups.per_body_u(topo, udot_prescribed), eps)

    def pass2(A_parent, x):
        DI, G_b, H_b, eps_b, Ab, l = x
        A_plus = spatial.flat(spatial.shift_motion(A_parent, l))
        udot = spatial.matvec(DI, eps_b) - spatial.mattvec(G_b, A_plus)
        A = spatial.unflat(A_plus + spatial.matvec(H_b, udot)) + Ab
        return A, udot

    dtype = pos.Mk_G.dtype
    with jax.named_scope("aba_pass2"):
        root = (jnp.zeros((2, 3), dtype), jnp.zeros(topo.nu_max, dtype))
        A_GB, udot_b = tree_scan.outward(
            topo, pass2, root, (D_inv, G, pos.H_PB_G, eps_or_known, A_b, pos.p_PB_G),
            u_axes=((0, 1), (1,), (1,), (0,), (), ()), u_axes_out=((), (0,)), carry_of=lambda values: values[0],
        )
    return mobilizer_groups.from_per_body_u(topo, udot_b), A_GB, eps


def articulated_z_local(model, pos, P, vel, body_forces, udot_prescribed):
    """``P (A_b + H udot_p) + b - F_applied`` (nbodies, 2, 3): each body's articulated bias before its children.

    udot_prescribed (nu,) is zero on free mobilities, so the ``H udot_p`` term only acts on known bodies.
    """
    A = spatial.flat(vel.mobilizer_coriolis) + spatial.matvec(
        pos.H_PB_G, mobilizer_groups.per_body_u(model.topology, udot_prescribed)
    )
    return spatial.unflat(spatial.matvec(P, A)) + vel.gyroscopic - body_forces


def calc_tree_accelerations(model, pos, vel, abi, mobility_forces, body_forces, udot_prescribed):
    """Forward dynamics ignoring constraints: ``M udot + tau = f + J^T F - c`` with known udots given.

    Args:
        abi: (P, D_inv, G, udot_known (nbodies,) bool).
        udot_prescribed: (nu,) the known udots, zero on free mobilities.

    Returns:
        udot (nu,), A_GB (nbodies, 2, 3), tau (nu,): Simbody's prescribed-motion
        forces ``eps - H^T (P A+)`` on known mobilities, zero on free ones.
    """
    P, _, _, udot_known = abi
    z_local = articulated_z_local(model, pos, P, vel, body_forces, udot_prescribed)
    udot, A_GB, eps = articulated_solve(model, pos, abi, mobility_forces, z_local, vel.mobilizer_coriolis, udot_prescribed)
    parent = jnp.asarray([max(p, 0) for p in model.topology.parent])
    A_plus = spatial.flat(spatial.shift_motion(A_GB[parent], pos.p_PB_G))
    tau_b = eps - spatial.mattvec(pos.H_PB_G, spatial.matvec(P, A_plus))
    tau = mobilizer_groups.from_per_body_u(model.topology, jnp.where(udot_known[:, None], tau_b, 0.0))
    return udot, A_GB, tau


def multiply_by_m_inv(model, pos, abi, f):
    """``M^-1 f`` in O(n) without forming M; with known udots, Simbody's ``[M_rr^-1 f_r; 0]``. f (nu,) -> (nu,)."""
    zeros = jnp.zeros((model.topology.nbodies, 2, 3), pos.Mk_G.dtype)
    zero_u = jnp.zeros_like(f)
    return articulated_solve(model, pos, abi, f, zeros, zeros, zero_u)[0]
