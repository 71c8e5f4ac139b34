"""The articulated-body algorithm (ABA), pass by pass beside Featherstone's RBDA Table 7.1.

Simbody's calcTreeAccelerations (Simbody catalogue 4.3-4.4, ``docs/simbody-catalogue.md``;
Jain, *Robot and Multibody Dynamics*, 2011, Alg. 6.1; Featherstone, *Rigid Body Dynamics
Algorithms*, 2008, Sec. 7.3 and Table 7.1). Everything is at body origins Bo and expressed in
Ground, so no coordinate transforms appear between bodies, only shifts by ``p_PB_G``.

Passes (RBDA Table 7.1 numbering):

1. outward, velocities and bias terms: jaxbody._dynamics.kinematics.realize_velocity
   (V_GB, A_b = c, b = v x* I v), Stage.Velocity;
2. inward, in two parts: ``aba_inertias_inward`` (I^A, U, D; depends on q only, realized at
   Stage.Dynamics and reused by every M^-1 product) and ``aba_forces_inward`` (u, p^a);
3. outward, accelerations: ``aba_accelerations_outward``.

Symbols (jaxbody / Simbody and Jain  ->  Featherstone):

    Mk_G          I_i        spatial inertia of body i about Bo, in G (6x6, (angular, linear))
    H = H_PB_G    S_i        hinge matrix: V_PB = H u (6 x nu_max, padded columns zero)
    P             I^A_i      articulated-body inertia
    PH = P H      U_i
    D = H^T P H + diag(armature)   D_i
    D_inv         D_i^-1
    G = P H D^-1  U_i D_i^-1  (Jain's Kalman gain)
    P+ = P - G (PH)^T        I^a_i, what body i passes to its parent
    A_b           c_i        mobilizer Coriolis acceleration (VelocityCache.mobilizer_coriolis)
    b             v_i x* I_i v_i   gyroscopic force (VelocityCache.gyroscopic)
    z             p^A_i + I^A_i c_i   articulated bias force (includes the applied forces -F)
    z+ = z + G eps            p^a_i (+ I^a_i c_i): what body i passes to its parent
    eps = f - H^T z           u_i - U_i^T c_i
    A+                        X a_parent (the parent's acceleration shifted to Bo; no c_i yet)
    udot = D^-1 eps - G^T A+  qdd_i
    A_GB = A+ + H udot + A_b  a_i
    motion_forces             tau_i on known-udot mobilities (Simbody's prescribed-motion forces)

Known udots (locks and Motions, Simbody catalogue 3.3): a body whose udots are known passes its
inertia through rigidly (``P+ = P``), gets ``D^-1 = I`` and ``G = 0``, and enters pass 3 with its
known udot in place of eps; its prescribed-motion force is ``motion_forces = eps - H^T P A+`` (zero on free
mobilities). Padded u columns have zero H and an identity D block, so they carry exact zeros.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxbody._math import spatial
from jaxbody._math.linalg import small_spd_inverse
from jaxbody._topology import mobilizer_groups, tree_scan
from jaxbody._typing import BodySpatialMats, BodySpatialVecs, Mobilities


class ArticulatedInertias(NamedTuple):
    """Result of ``aba_inertias_inward`` (a function of q and of which udots are known).

    P: (nbodies, 6, 6) articulated-body inertias I^A about Bo in G.
    D_inv: (nbodies, nu_max, nu_max) ``(H^T P H)^-1``; identity for known-udot bodies (padded entries meaningless).
    G: (nbodies, 6, nu_max) ``P H D^-1``; zero for known-udot bodies.
    udot_known: (nbodies,) bool, the bodies whose udots are known.
    """

    P: jnp.ndarray
    D_inv: jnp.ndarray
    G: jnp.ndarray
    udot_known: jnp.ndarray


class TreeAccelerations(NamedTuple):
    """Result of an articulated solve.

    udot: (nu,) generalized accelerations. A_GB: (nbodies, 2, 3) body spatial accelerations at Bo in G.
    motion_forces: (nu,) Simbody's prescribed-motion forces on known-udot mobilities (zero on free ones); they sit on
    the left of ``M udot + motion_forces = f - c``.
    """

    udot: jnp.ndarray
    A_GB: jnp.ndarray
    motion_forces: jnp.ndarray


def aba_inertias_inward(model, pos, udot_known) -> ArticulatedInertias:
    """RBDA pass 2, inertia part: ``I^A_i = I_i + sum_children I^a_j``, ``U``, ``D``, ``I^a = I^A - U D^-1 U^T``.

    Args:
        pos: PositionCache (Mk_G, H_PB_G, p_PB_G).
        udot_known: (nbodies,) bool, bodies whose udots are known: ``P+ = P``.

    Cost: one inward level scan, O(nb) 6x6 products.
    """
    topo = model.topology
    u_mask = jnp.asarray(topo.body_u_mask, pos.Mk_G.dtype)
    armature = mobilizer_groups.per_body_u(topo, jnp.asarray(model.parameters.armature, pos.Mk_G.dtype))

    def step(x, children_P):
        Mk, H, mask, known, l, arm = x
        eye = jnp.eye(mask.shape[-1], dtype=Mk.dtype)
        P = Mk + children_P
        PH = spatial.matmul(P, H)
        # Identity on padded columns (mask 0, also for tree_scan's all-zero dummy slots) and for known bodies;
        # the armature on the diagonal (M = J^T Mk J + diag(armature)).
        D = spatial.tmatmul(H, PH) + eye * (1.0 - mask[..., None, :]) + eye * (arm * mask)[..., None, :]
        D_inv = small_spd_inverse(jnp.where(known[..., None, None], eye, D))
        G = jnp.where(known[..., None, None], 0.0, spatial.matmul(PH, D_inv))
        P_plus = P - spatial.matmul_t(G, PH)
        P_plus = jnp.where(known[..., None, None], P, 0.5 * (P_plus + jnp.swapaxes(P_plus, -1, -2)))
        return (P, D_inv, G), spatial.shift_inertia(P_plus, l)

    with jax.named_scope("aba_inertias_inward"):
        (P, D_inv, G), _ = tree_scan.inward(
            topo, step, (pos.Mk_G, pos.H_PB_G, u_mask, udot_known, pos.p_PB_G, armature),
            jnp.zeros((6, 6), pos.Mk_G.dtype), u_axes=((), (1,), (0,), (), (), (0,)), u_axes_out=((), (0, 1), (1,)),
        )
    return ArticulatedInertias(P, D_inv, G, udot_known)


def aba_forces_inward(model, pos, G, f, z_local):
    """RBDA pass 2, force part: ``eps = f - H^T z``, ``z+ = z + G eps``, ``z = z_local + sum_children z+``.

    Args:
        G: ``P H D^-1`` (nbodies, 6, nu_max), zero for known-udot bodies (so their ``z+ = z``).
        f: mobility forces (nu,).
        z_local: per-body ``P (A_b + H udot_p) + b - F_applied`` (nbodies, 2, 3) (``articulated_bias``);
            zeros for the pure M^-1 operator.

    Returns:
        eps (nbodies, nu_max); z_plus (nbodies, 6), at Bo in G.

    Cost: one inward level scan.
    """
    topo = model.topology
    f_b = mobilizer_groups.per_body_u(topo, f)

    def step(x, children_z):
        H_b, G_b, f_bb, z_loc, l = x
        z = spatial.flat(z_loc) + children_z
        eps = f_bb - spatial.mattvec(H_b, z)
        z_plus = z + spatial.matvec(G_b, eps)
        return (eps, z_plus), spatial.flat(spatial.shift_force(spatial.unflat(z_plus), l))

    with jax.named_scope("aba_forces_inward"):
        (eps, z_plus), _ = tree_scan.inward(
            topo, step, (pos.H_PB_G, G, f_b, z_local, pos.p_PB_G), jnp.zeros(6, pos.Mk_G.dtype),
            u_axes=((1,), (1,), (0,), (), ()), u_axes_out=((0,), ()),
        )
    return eps, z_plus


def aba_accelerations_outward(model, pos, abi: ArticulatedInertias, eps_or_known, A_b):
    """RBDA pass 3: ``A+ = shift(A_parent)``, ``udot = D^-1 eps - G^T A+``, ``A = A+ + H udot + A_b``.

    Args:
        eps_or_known: (nbodies, nu_max) eps of pass 2 on free bodies, the known udot on known-udot bodies
            (their ``D^-1 = I`` and ``G = 0`` return it unchanged).
        A_b: (nbodies, 2, 3) mobilizer Coriolis accelerations, or zeros.

    Returns:
        udot per body (nbodies, nu_max), A_GB (nbodies, 2, 3).

    Cost: one outward level scan.
    """
    topo = model.topology

    def step(A_parent, x):
        DI, G_b, H_b, eps_b, Ab, l = x
        A_plus = spatial.flat(spatial.shift_motion(A_parent, l))
        udot = spatial.matvec(DI, eps_b) - spatial.mattvec(G_b, A_plus)
        A = spatial.unflat(A_plus + spatial.matvec(H_b, udot)) + Ab
        return A, udot

    dtype = pos.Mk_G.dtype
    with jax.named_scope("aba_accelerations_outward"):
        root = (jnp.zeros((2, 3), dtype), jnp.zeros(topo.nu_max, dtype))
        A_GB, udot_b = tree_scan.outward(
            topo, step, root, (abi.D_inv, abi.G, pos.H_PB_G, eps_or_known, A_b, pos.p_PB_G),
            u_axes=((0, 1), (1,), (1,), (0,), (), ()), u_axes_out=((), (0,)), carry_of=lambda values: values[0],
        )
    return udot_b, A_GB


def articulated_bias(
    model, pos, P: BodySpatialMats, vel, body_forces: BodySpatialVecs, udot_prescribed: Mobilities
) -> BodySpatialVecs:
    """``z_local = P (A_b + H udot_p) + b - F_applied`` (nbodies, 2, 3): each body's bias before its children.

    udot_prescribed (nu,) is zero on free mobilities, so the ``H udot_p`` term only acts on known bodies.
    """
    A = spatial.flat(vel.mobilizer_coriolis) + spatial.matvec(
        pos.H_PB_G, mobilizer_groups.per_body_u(model.topology, udot_prescribed)
    )
    return spatial.unflat(spatial.matvec(P, A)) + vel.gyroscopic - body_forces


def articulated_solve(model, pos, abi: ArticulatedInertias, f, z_local, A_b, udot_prescribed) -> TreeAccelerations:
    """Passes 2 (forces) and 3 for given inputs; ``abi`` from ``aba_inertias_inward``.

    Args:
        f: mobility forces (nu,); z_local: see aba_forces_inward; A_b: Coriolis accelerations or zeros;
        udot_prescribed: (nu,) known udots (read only for known bodies).

    Returns TreeAccelerations (udot, A_GB, motion_forces). Cost: one inward and one outward level scan, O(nb).
    """
    topo = model.topology
    eps, _ = aba_forces_inward(model, pos, abi.G, f, z_local)
    known = abi.udot_known[:, None]
    eps_or_known = jnp.where(known, mobilizer_groups.per_body_u(topo, udot_prescribed), eps)
    udot_b, A_GB = aba_accelerations_outward(model, pos, abi, eps_or_known, A_b)
    A_plus = spatial.flat(spatial.shift_motion(A_GB[jnp.asarray(topo.parent_or_ground)], pos.p_PB_G))
    tau_b = jnp.where(known, eps - spatial.mattvec(pos.H_PB_G, spatial.matvec(abi.P, A_plus)), 0.0)
    return TreeAccelerations(
        mobilizer_groups.from_per_body_u(topo, udot_b), A_GB, mobilizer_groups.from_per_body_u(topo, tau_b)
    )


def calc_tree_accelerations(model, pos, vel, abi: ArticulatedInertias, mobility_forces: Mobilities,
                            body_forces: BodySpatialVecs, udot_prescribed: Mobilities) -> TreeAccelerations:
    """Forward dynamics ignoring constraints: ``M udot + motion_forces = f + J^T F - c`` with the known udots given.

    Args:
        mobility_forces (nu,), body_forces (nbodies, 2, 3) at Bo in G: all applied forces.
        udot_prescribed: (nu,) the known udots, zero on free mobilities.

    Cost: passes 2 (forces) and 3, O(nb); pass 1 is the Velocity stage, pass 2's inertias the Dynamics stage.
    """
    z_local = articulated_bias(model, pos, abi.P, vel, body_forces, udot_prescribed)
    return articulated_solve(model, pos, abi, mobility_forces, z_local, vel.mobilizer_coriolis, udot_prescribed)


def multiply_by_m_inv_with_accelerations(model, pos, abi: ArticulatedInertias, f: Mobilities) -> TreeAccelerations:
    """``M^-1 f`` with its body accelerations ``J M^-1 f`` and prescribed forces (no velocity terms).

    With known udots this is Simbody's ``[M_rr^-1 f_r; 0]``: f on known mobilities only enters motion_forces. Linear
    in f. Cost: one inward and one outward level scan.
    """
    zeros = jnp.zeros((model.topology.nbodies, 2, 3), pos.Mk_G.dtype)
    return articulated_solve(model, pos, abi, f, zeros, zeros, jnp.zeros_like(f))


def multiply_by_m_inv(model, pos, abi: ArticulatedInertias, f: Mobilities) -> Mobilities:
    """``M^-1 f`` (nu,) in O(n) without forming M; with known udots, Simbody's ``[M_rr^-1 f_r; 0]``."""
    return multiply_by_m_inv_with_accelerations(model, pos, abi, f).udot
