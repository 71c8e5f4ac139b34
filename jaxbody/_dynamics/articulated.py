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

Symbols (jaxbody  ->  Featherstone (RBDA)  /  Jain and Simbody):

    Mk_G              I_i            spatial inertia of body i about Bo, in G (6x6, (angular, linear))
    H = H_PB_G        S_i            hinge matrix: V_PB = H u (6 x nu_max, padded columns zero)
    I_A               I^A_i  / P     articulated-body inertia
    U = I_A H         U_i
    D = H^T I_A H + diag(armature)   D_i
    D_inv             D_i^-1
    UDinv = U D^-1    U_i D_i^-1 / G (Jain's Kalman gain)
    I_a = I_A - UDinv U^T   I^a_i  / P+   what body i passes to its parent
    A_b               c_i            mobilizer Coriolis acceleration (VelocityCache.mobilizer_coriolis)
    b                 v_i x* I_i v_i   gyroscopic force (VelocityCache.gyroscopic)
    bias_force        p^A_i + I^A_i c_i / z   articulated bias force (includes the applied forces -F)
    bias_to_parent = bias_force + UDinv eps   p^a_i (+ I^a_i c_i) / z+   what body i passes to its parent
    eps = f - H^T bias_force   u_i - U_i^T c_i
    A+                             X a_parent (the parent's acceleration shifted to Bo; no c_i yet)
    udot = D^-1 eps - UDinv^T A+   qdd_i
    A_GB = A+ + H udot + A_b       a_i
    motion_forces                  tau_i on known-udot mobilities (Simbody's prescribed-motion forces)

The compiled kernel (jaxbody/_kernels/tree_lane.h) runs the same passes with Jain's and Simbody's short
names (P, G, z).

Known udots (locks and Motions, Simbody catalogue 3.3): a body whose udots are known passes its
inertia through rigidly (``I_a = I_A``), gets ``D^-1 = I`` and ``UDinv = 0``, and enters pass 3 with its
known udot in place of eps; its prescribed-motion force is ``motion_forces = eps - H^T I_A A+`` (zero on free
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

    I_A: (nbodies, 6, 6) articulated-body inertias about Bo in G.
    D_inv: (nbodies, nu_max, nu_max) ``(H^T I_A H + diag(armature))^-1``; identity for known-udot bodies (padded
        entries meaningless).
    UDinv: (nbodies, 6, nu_max) ``I_A H D^-1``; zero for known-udot bodies.
    udot_known: (nbodies,) bool, the bodies whose udots are known.
    """

    I_A: jnp.ndarray
    D_inv: jnp.ndarray
    UDinv: jnp.ndarray
    udot_known: jnp.ndarray


class InertiaPassInputs(NamedTuple):
    """Per body (nbodies rows), pass 2's inertia part: Mk (6, 6), H (6, nu_max), u_mask (nu_max,) 1 on the
    body's own mobilities, known () bool, p_PB_G (3,), armature (nu_max,)."""

    Mk: jnp.ndarray
    H: jnp.ndarray
    u_mask: jnp.ndarray
    known: jnp.ndarray
    p_PB_G: jnp.ndarray
    armature: jnp.ndarray
    MOBILITY_AXES = {"H": (1,), "u_mask": (0,), "armature": (0,)}


class InertiaPassOutputs(NamedTuple):
    """Per body: I_A (6, 6), D_inv (nu_max, nu_max), UDinv (6, nu_max)."""

    I_A: jnp.ndarray
    D_inv: jnp.ndarray
    UDinv: jnp.ndarray
    MOBILITY_AXES = {"D_inv": (0, 1), "UDinv": (1,)}


class ForcePassInputs(NamedTuple):
    """Per body, pass 2's force part: H (6, nu_max), UDinv (6, nu_max), f (nu_max,), local_bias (2, 3),
    p_PB_G (3,)."""

    H: jnp.ndarray
    UDinv: jnp.ndarray
    f: jnp.ndarray
    local_bias: jnp.ndarray
    p_PB_G: jnp.ndarray
    MOBILITY_AXES = {"H": (1,), "UDinv": (1,), "f": (0,)}


class ForcePassOutputs(NamedTuple):
    """Per body: eps (nu_max,), bias_to_parent (6,)."""

    eps: jnp.ndarray
    bias_to_parent: jnp.ndarray
    MOBILITY_AXES = {"eps": (0,)}


class AccelerationPassInputs(NamedTuple):
    """Per body, pass 3: D_inv (nu_max, nu_max), UDinv (6, nu_max), H (6, nu_max), eps_or_known (nu_max,),
    A_b (2, 3), p_PB_G (3,)."""

    D_inv: jnp.ndarray
    UDinv: jnp.ndarray
    H: jnp.ndarray
    eps_or_known: jnp.ndarray
    A_b: jnp.ndarray
    p_PB_G: jnp.ndarray
    MOBILITY_AXES = {"D_inv": (0, 1), "UDinv": (1,), "H": (1,), "eps_or_known": (0,)}


class AccelerationPassOutputs(NamedTuple):
    """Per body: A_GB (2, 3), udot (nu_max,)."""

    A_GB: jnp.ndarray
    udot: jnp.ndarray
    MOBILITY_AXES = {"udot": (0,)}


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
    """RBDA pass 2, inertia part: ``I_A = Mk + sum_children I_a``, ``U``, ``D``, ``I_a = I_A - U D^-1 U^T``.

    Args:
        pos: PositionCache (Mk_G, H_PB_G, p_PB_G).
        udot_known: (nbodies,) bool, bodies whose udots are known: ``I_a = I_A``.

    Cost: one inward level scan, O(nb) 6x6 products.
    """
    topo = model.topology
    u_mask = jnp.asarray(topo.body_u_mask, pos.Mk_G.dtype)
    armature = mobilizer_groups.per_body_u(topo, jnp.asarray(model.parameters.armature, pos.Mk_G.dtype))

    def step(x: InertiaPassInputs, children_I_a):
        H, mask, known, arm = x.H, x.u_mask, x.known, x.armature
        eye = jnp.eye(mask.shape[-1], dtype=H.dtype)
        I_A = x.Mk + children_I_a
        U = spatial.matmul(I_A, H)
        # Identity on padded columns (mask 0, also for tree_scan's all-zero dummy slots) and for known bodies;
        # the armature on the diagonal (M = J^T Mk J + diag(armature)).
        D = spatial.tmatmul(H, U) + eye * (1.0 - mask[..., None, :]) + eye * (arm * mask)[..., None, :]
        D_inv = small_spd_inverse(jnp.where(known[..., None, None], eye, D))
        UDinv = jnp.where(known[..., None, None], 0.0, spatial.matmul(U, D_inv))
        I_a = I_A - spatial.matmul_t(UDinv, U)
        I_a = jnp.where(known[..., None, None], I_A, 0.5 * (I_a + jnp.swapaxes(I_a, -1, -2)))
        return InertiaPassOutputs(I_A, D_inv, UDinv), spatial.shift_inertia(I_a, x.p_PB_G)

    with jax.named_scope("aba_inertias_inward"):
        out, _ = tree_scan.inward(
            topo, step, InertiaPassInputs(pos.Mk_G, pos.H_PB_G, u_mask, udot_known, pos.p_PB_G, armature),
            jnp.zeros((6, 6), pos.Mk_G.dtype),
        )
    return ArticulatedInertias(out.I_A, out.D_inv, out.UDinv, udot_known)


def aba_forces_inward(model, pos, UDinv, f, local_bias):
    """RBDA pass 2, force part: ``bias_force = local_bias + sum_children bias_to_parent``,
    ``eps = f - H^T bias_force``, ``bias_to_parent = bias_force + UDinv eps``.

    Args:
        UDinv: ``I_A H D^-1`` (nbodies, 6, nu_max), zero for known-udot bodies (so they pass their bias
            force on unchanged).
        f: mobility forces (nu,).
        local_bias: per-body ``I_A (A_b + H udot_p) + b - F_applied`` (nbodies, 2, 3) (``articulated_bias``);
            zeros for the pure M^-1 operator.

    Returns:
        eps (nbodies, nu_max); bias_to_parent (nbodies, 6), at Bo in G.

    Cost: one inward level scan.
    """
    topo = model.topology
    f_b = mobilizer_groups.per_body_u(topo, f)

    def step(x: ForcePassInputs, children_bias):
        bias_force = spatial.flat(x.local_bias) + children_bias
        eps = x.f - spatial.mattvec(x.H, bias_force)
        bias_to_parent = bias_force + spatial.matvec(x.UDinv, eps)
        to_parent = spatial.flat(spatial.shift_force(spatial.unflat(bias_to_parent), x.p_PB_G))
        return ForcePassOutputs(eps, bias_to_parent), to_parent

    with jax.named_scope("aba_forces_inward"):
        out, _ = tree_scan.inward(
            topo, step, ForcePassInputs(pos.H_PB_G, UDinv, f_b, local_bias, pos.p_PB_G), jnp.zeros(6, pos.Mk_G.dtype)
        )
    return out.eps, out.bias_to_parent


def aba_accelerations_outward(model, pos, abi: ArticulatedInertias, eps_or_known, A_b):
    """RBDA pass 3: ``A+ = shift(A_parent)``, ``udot = D^-1 eps - UDinv^T A+``, ``A = A+ + H udot + A_b``.

    Args:
        eps_or_known: (nbodies, nu_max) eps of pass 2 on free bodies, the known udot on known-udot bodies
            (their ``D^-1 = I`` and ``UDinv = 0`` return it unchanged).
        A_b: (nbodies, 2, 3) mobilizer Coriolis accelerations, or zeros.

    Returns:
        udot per body (nbodies, nu_max), A_GB (nbodies, 2, 3).

    Cost: one outward level scan.
    """
    topo = model.topology

    def step(A_parent, x: AccelerationPassInputs):
        A_plus = spatial.flat(spatial.shift_motion(A_parent, x.p_PB_G))
        udot = spatial.matvec(x.D_inv, x.eps_or_known) - spatial.mattvec(x.UDinv, A_plus)
        A = spatial.unflat(A_plus + spatial.matvec(x.H, udot)) + x.A_b
        return AccelerationPassOutputs(A, udot)

    dtype = pos.Mk_G.dtype
    with jax.named_scope("aba_accelerations_outward"):
        root = AccelerationPassOutputs(jnp.zeros((2, 3), dtype), jnp.zeros(topo.nu_max, dtype))
        out = tree_scan.outward(
            topo, step, root, AccelerationPassInputs(abi.D_inv, abi.UDinv, pos.H_PB_G, eps_or_known, A_b, pos.p_PB_G),
            carry_of=lambda values: values.A_GB,
        )
    return out.udot, out.A_GB


def articulated_bias(
    model, pos, I_A: BodySpatialMats, vel, body_forces: BodySpatialVecs, udot_prescribed: Mobilities
) -> BodySpatialVecs:
    """``local_bias = I_A (A_b + H udot_p) + b - F_applied`` (nbodies, 2, 3): each body's bias force before its
    children's.

    udot_prescribed (nu,) is zero on free mobilities, so the ``H udot_p`` term only acts on known bodies.
    """
    A = spatial.flat(vel.mobilizer_coriolis) + spatial.matvec(
        pos.H_PB_G, mobilizer_groups.per_body_u(model.topology, udot_prescribed)
    )
    return spatial.unflat(spatial.matvec(I_A, A)) + vel.gyroscopic - body_forces


def articulated_solve(model, pos, abi: ArticulatedInertias, f, local_bias, A_b, udot_prescribed) -> TreeAccelerations:
    """Passes 2 (forces) and 3 for given inputs; ``abi`` from ``aba_inertias_inward``.

    Args:
        f: mobility forces (nu,); local_bias: see aba_forces_inward; A_b: Coriolis accelerations or zeros;
        udot_prescribed: (nu,) known udots (read only for known bodies).

    Returns TreeAccelerations (udot, A_GB, motion_forces). Cost: one inward and one outward level scan, O(nb).
    """
    topo = model.topology
    eps, _ = aba_forces_inward(model, pos, abi.UDinv, f, local_bias)
    known = abi.udot_known[:, None]
    eps_or_known = jnp.where(known, mobilizer_groups.per_body_u(topo, udot_prescribed), eps)
    udot_b, A_GB = aba_accelerations_outward(model, pos, abi, eps_or_known, A_b)
    A_plus = spatial.flat(spatial.shift_motion(A_GB[jnp.asarray(topo.parent_or_ground)], pos.p_PB_G))
    tau_b = jnp.where(known, eps - spatial.mattvec(pos.H_PB_G, spatial.matvec(abi.I_A, A_plus)), 0.0)
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
    local_bias = articulated_bias(model, pos, abi.I_A, vel, body_forces, udot_prescribed)
    return articulated_solve(model, pos, abi, mobility_forces, local_bias, vel.mobilizer_coriolis, udot_prescribed)


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
