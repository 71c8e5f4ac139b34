"""The articulated-body algorithm in one function, RBDA Table 7.1 read top to bottom.

``aba`` is the reference the rest of the package splits and fuses: the staged realize (jaxbody._realize)
runs the same passes as Position, Velocity, Dynamics and Acceleration stages with caches in between, and
the compiled kernel (jaxbody/_kernels/tree_lane.h) runs them fused per lane. Symbols as in
jaxbody._dynamics.articulated (its table maps them to Featherstone's and to Jain's and Simbody's).
No constraints, Motions or locks here: those enter through the staged path.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._dynamics import articulated, kinematics
from jaxbody._topology import mobilizer_groups


def aba(model, q, u, mobility_forces, body_forces):
    """udot (nu,) of a tree: ``M udot = f + J^T F - c``.

    Args:
        model: reads ``model.topology`` (static) and ``model.parameters``.
        q (nq,), u (nu,); mobility_forces f (nu,); body_forces F (nbodies, 2, 3) at Bo in G, gravity included
            (for a realized State: ``state.dynamics.body_forces``).

    Cost: O(n): four level scans (one outward for kinematics and velocities, two inward, one outward).
    """
    topo = model.topology
    # Kinematics: X_GB, hinge matrices S_i (H_PB_G), spatial inertias I_i (Mk_G).
    pos = kinematics.realize_position(model, q)
    # Pass 1 (outward): v_i (V_GB), c_i (A_b, mobilizer_coriolis), p_i = v_i x* I_i v_i (gyroscopic).
    vel = kinematics.realize_velocity(model, pos, q, u)
    # Pass 2, inertias (inward): I^A_i, U_i, D_i, and I^a_i passed to the parent.
    abi = articulated.aba_inertias_inward(model, pos, jnp.zeros(topo.nbodies, bool))
    # Pass 2, forces (inward): p^A_i before the children, then u_i = f_i - S_i^T p^A_i and p^a_i.
    local_bias = articulated.articulated_bias(model, pos, abi.I_A, vel, body_forces, jnp.zeros_like(u))
    eps, _ = articulated.aba_forces_inward(model, pos, abi.UDinv, mobility_forces, local_bias)
    # Pass 3 (outward): a'_i = X a_parent, qdd_i = D_i^-1 (u_i - U_i^T a'_i), a_i = a'_i + S_i qdd_i + c_i.
    udot_per_body, _ = articulated.aba_accelerations_outward(model, pos, abi, eps, vel.mobilizer_coriolis)
    return mobilizer_groups.from_per_body_u(topo, udot_per_body)
