"""Position and velocity kinematics (Simbody's realizePosition / realizeVelocity, catalogue 1.0).

Everything that does not need the parent (X_FM, H_FM, X_PB, inertias in G,
HDot) is computed for all bodies at once; only the compositions down the
tree (X_GB, V_GB, Jdot u) run as level scans.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._dynamics.state import PositionCache, VelocityCache
from jaxbody._math import spatial
from jaxbody._topology import mobilizer_groups, tree_scan


def _rows(H):
    """Split a (..., 6, n) hinge matrix into angular and linear (..., 3, n) blocks."""
    return H[..., :3, :], H[..., 3:, :]


def _cross_columns(a, M):
    """a x (each column of M): a (..., 3), M (..., 3, n)."""
    return jnp.cross(a[..., :, None], M, axis=-2)


def realize_position(model, q) -> PositionCache:
    """Position kinematics for every body.

    Cost: one vectorized call per mobilizer type and one outward level scan.
    """
    topo, prm = model.topology, model.parameters
    with jax.named_scope("position_kinematics"):
        R_FM, p_FM, H_FM = mobilizer_groups.calc_X_FM_and_H_FM(topo, prm, q)
        # X_PB = X_PF X_FM X_MB with X_MB = X_BM^-1.
        R_MB, p_MB = spatial.invert(prm.R_BM, prm.p_BM)
        R_FB, p_FB = spatial.compose(R_FM, p_FM, R_MB, p_MB)
        R_PB, p_PB = spatial.compose(prm.R_PF, prm.p_PF, R_FB, p_FB)

        def compose_with_parent(X_GP, X_PB):
            R, p = spatial.compose(X_GP[0], X_GP[1], X_PB[0], X_PB[1])
            return (R, p)

        root = (jnp.eye(3, dtype=q.dtype), jnp.zeros(3, q.dtype))
        R_GB, p_GB = tree_scan.outward(topo, compose_with_parent, root, (R_PB, p_PB))

        parent = jnp.asarray(topo.parent_or_ground)
        R_GP, p_GP = R_GB[parent], p_GB[parent]
        p_PB_G = p_GB - p_GP
        R_GF = spatial.matmul(R_GP, prm.R_PF)
        r_MB_F = spatial.matvec(R_FM, p_MB)  # from Mo to Bo, in F

        # H_PB_G = R_GF [H_w ; H_v + H_w x r]
        Hw, Hv = _rows(H_FM)
        Hv_B = Hv + _cross_columns(-r_MB_F, Hw)  # H_w x r == -(r x H_w)
        H_PB_G = jnp.concatenate([spatial.matmul(R_GF, Hw), spatial.matmul(R_GF, Hv_B)], -2)

        c_G = spatial.matvec(R_GB, prm.com_B)
        I_o_G = spatial.matmul_t(spatial.matmul(R_GB, prm.inertia_Bo_B), R_GB)
        Mk_G = spatial.spatial_inertia_matrix(prm.mass, c_G, I_o_G)

        quat = q[topo.quaternion_q_index]
        quaternion_errors = spatial.safe_norm(quat) - 1.0

    return PositionCache(
        R_FM=R_FM,
        p_FM=p_FM,
        R_GB=R_GB,
        p_GB=p_GB,
        p_PB_G=p_PB_G,
        H_FM=H_FM,
        H_PB_G=H_PB_G,
        r_MB_F=r_MB_F,
        R_GF=R_GF,
        Mk_G=Mk_G,
        p_GBc=p_GB + c_G,
        quaternion_errors=quaternion_errors,
    )


def realize_velocity(model, pos: PositionCache, q, u) -> VelocityCache:
    """Velocity kinematics: qdot, V_GB, HDot, Coriolis and gyroscopic terms.

    Cost: one vectorized call per mobilizer type and two outward level scans.
    """
    topo, prm = model.topology, model.parameters
    with jax.named_scope("velocity_kinematics"):
        qdot = mobilizer_groups.multiply_by_n(topo, prm, q, u)
        u_b = mobilizer_groups.per_body_u(topo, u)
        V_PB_G = spatial.unflat(spatial.matvec(pos.H_PB_G, u_b))
        V_FM = spatial.unflat(spatial.matvec(pos.H_FM, u_b))
        V_GB = tree_scan.shift_outward(topo, pos.p_PB_G, V_PB_G)

        parent = jnp.asarray(topo.parent_or_ground)
        V_GP = V_GB[parent]
        w_GP = V_GP[:, 0]

        # HDot_PB_G = R_GF (HDot_FM + HDot_MB) + [w_GF x Hw_G ; w_GF x Hv_G], w_GF = w_GP, where
        # HDot_MB has linear rows -r x HDot_FMw - (w_FM x r) x H_FMw (catalogue 1.0, velocity step 4).
        HDot_FM = mobilizer_groups.calc_HDot_FM(topo, prm, q, u)
        HDw, HDv = _rows(HDot_FM)
        Hw, _ = _rows(pos.H_FM)
        r = pos.r_MB_F
        w_FM_x_r = jnp.cross(V_FM[:, 0], r)
        HDv_B = HDv - _cross_columns(r, HDw) - _cross_columns(w_FM_x_r, Hw)
        Hw_G, Hv_G = _rows(pos.H_PB_G)
        HDot_PB_G = jnp.concatenate(
            [spatial.matmul(pos.R_GF, HDw) + _cross_columns(w_GP, Hw_G), spatial.matmul(pos.R_GF, HDv_B) + _cross_columns(w_GP, Hv_G)],
            -2,
        )

        VD = spatial.unflat(spatial.matvec(HDot_PB_G, u_b))
        v_rel = V_GB[:, 1] - V_GP[:, 1]
        A_b = jnp.stack([VD[:, 0], VD[:, 1] + jnp.cross(w_GP, v_rel)], -2)
        total_coriolis = tree_scan.shift_outward(topo, pos.p_PB_G, A_b)

        w = V_GB[:, 0]
        c_G = pos.p_GBc - pos.p_GB
        I_o = pos.Mk_G[:, :3, :3]
        gyro = jnp.stack(
            [jnp.cross(w, spatial.matvec(I_o, w)), prm.mass[:, None] * jnp.cross(w, jnp.cross(w, c_G))], -2
        )
        centrifugal = spatial.unflat(spatial.matvec(pos.Mk_G, spatial.flat(total_coriolis))) + gyro

    return VelocityCache(
        qdot=qdot,
        V_GB=V_GB,
        V_PB_G=V_PB_G,
        V_FM=V_FM,
        HDot_FM_u=spatial.unflat(spatial.matvec(HDot_FM, u_b)),
        HDot_PB_G=HDot_PB_G,
        mobilizer_coriolis=A_b,
        total_coriolis=total_coriolis,
        gyroscopic=gyro,
        centrifugal=centrifugal,
    )


def normalize_quaternions(model, state):
    """``state`` with every quaternion in use scaled to unit norm (other q unchanged); drops Position and later."""
    return state.set_q(mobilizer_groups.normalize_q(model.topology, model.parameters, state.q))


def convert_orientations(topo, q, to_euler: bool):
    """q (nq,) with every Ball/Free-type orientation re-expressed: quaternion (w, x, y, z) -> body-fixed XYZ
    angles (rad) when ``to_euler``, else angles -> quaternion (canonical w >= 0); translations kept, u slots
    unaffected. Mobilizers without the choice, or already in the target mode, are left alone. One vectorized
    conversion per mobilizer type."""
    for group, qi in zip(topo.groups, topo.group_q_index):
        m = group.mobilizer
        if not m.has_quaternion_mode or m.uses_quaternion != to_euler:  # no choice, or already converted
            continue
        qg = q[qi]
        if to_euler:
            angles = spatial.body_fixed_xyz_from_rotation(spatial.rotation_from_quaternion(qg[:, :4]))
            block = jnp.concatenate([angles, qg[:, 4:], jnp.zeros_like(qg[:, :1])], -1)
        else:
            quat = spatial.quaternion_from_rotation(spatial.rotation_from_body_fixed_xyz(qg[:, :3]))
            block = jnp.concatenate([quat, qg[:, 3 : m.nq_alloc - 1]], -1)
        q = q.at[qi].set(block)
    return q


def calc_q_dot(model, state, u):
    """``qdot = N(q) u`` (nq,) at the state's q, for u (nu,) (per mobilizer type; no realize needed)."""
    return mobilizer_groups.multiply_by_n(model.topology, model.parameters, state.q, u)
