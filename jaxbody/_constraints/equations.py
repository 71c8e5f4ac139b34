"""Constraint equations in Simbody's row order: gathering the tree's kinematics, assembling perr, verr, aerr.

Every constraint type gives Simbody's error equations in its Ancestor frame A
(``jaxbody._constraints.types``). This module gathers what they read from the
tree (poses, velocities and accelerations of the constrained bodies relative to
A, the selected q, u and their derivatives), evaluates each type on all of its
constraints at once, and scatters the rows into Simbody's order (every P row,
then V, then A; ``jaxbody._constraints.layout``).

The errors are affine in the highest derivative: ``pverr, verr`` in u (through
``V_GB = J u``, ``qdot = N u``) and ``aerr`` in udot (through
``A_GB = J udot + Jdot u``, ``qdotdot = N udot + NDot u``). The constraint
matrices and forces are derived from that (jaxbody._constraints.multipliers).
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._constraints.types.base import ConstrainedKinematics
from jaxbody._dynamics import jacobians
from jaxbody._math.gather import set_rows, take_rows
from jaxbody._topology import mobilizer_groups

# -- gathering ------------------------------------------------------------------------------------


def _relative_pose(pos, group):
    """R_AB, p_AB (k, nb, 3, 3), (k, nb, 3) for a group's constrained bodies."""
    bodies, anc = group.array("bodies"), group.ancestors
    R_GA, p_GA = take_rows(pos.R_GB, anc), take_rows(pos.p_GB, anc)
    R_GB, p_GB = take_rows(pos.R_GB, bodies), take_rows(pos.p_GB, bodies)
    R_AB = jnp.einsum("kji,knjl->knil", R_GA, R_GB)
    p_AB = jnp.einsum("kji,knj->kni", R_GA, p_GB - p_GA[:, None])
    return R_AB, p_AB


def _relative_velocity(pos, V_GB, group):
    """w_AB, v_AB (k, nb, 3) in A from Ground velocities (Simbody's formulas for a moving Ancestor)."""
    bodies, anc = group.array("bodies"), group.ancestors
    R_GA, p_GA, V_GA, V_GBs = take_rows(pos.R_GB, anc), take_rows(pos.p_GB, anc), take_rows(V_GB, anc), take_rows(V_GB, bodies)
    w_GA, v_GA = V_GA[:, 0], V_GA[:, 1]
    r = take_rows(pos.p_GB, bodies) - p_GA[:, None]
    dw = V_GBs[..., 0, :] - w_GA[:, None]
    dv = V_GBs[..., 1, :] - v_GA[:, None] - jnp.cross(w_GA[:, None], r)
    to_A = lambda x: jnp.einsum("kji,knj->kni", R_GA, x)  # noqa: E731
    return to_A(dw), to_A(dv)


def _relative_acceleration(pos, V_GB, A_GB, group):
    """alpha_AB, a_AB (k, nb, 3) in A: ``R_AG(dalpha - w_GA x dw)``, ``R_AG(da - al x r - 2 w x dv + w x (w x r))``."""
    bodies, anc = group.array("bodies"), group.ancestors
    R_GA, p_GA = take_rows(pos.R_GB, anc), take_rows(pos.p_GB, anc)
    V_GA, A_GA, V_GBs, A_GBs = take_rows(V_GB, anc), take_rows(A_GB, anc), take_rows(V_GB, bodies), take_rows(A_GB, bodies)
    w, al = V_GA[:, None, 0], A_GA[:, None, 0]
    r = take_rows(pos.p_GB, bodies) - p_GA[:, None]
    dw = V_GBs[..., 0, :] - w
    dv = V_GBs[..., 1, :] - V_GA[:, None, 1]
    dal = A_GBs[..., 0, :] - al - jnp.cross(w, dw)
    da = A_GBs[..., 1, :] - A_GA[:, None, 1] - jnp.cross(al, r) - 2 * jnp.cross(w, dv) + jnp.cross(w, jnp.cross(w, r))
    to_A = lambda x: jnp.einsum("kji,knj->kni", R_GA, x)  # noqa: E731
    return to_A(dal), to_A(da)


@dataclasses.dataclass
class TreeMotion:
    """Everything the constraint equations read, for one State: t, q and the Position cache, then optionally
    u with V_GB and qdot (velocity level) and udot with A_GB and qdotdot (acceleration level)."""

    t: jnp.ndarray
    q: jnp.ndarray
    pos: object
    u: jnp.ndarray | None = None
    V_GB: jnp.ndarray | None = None
    qdot: jnp.ndarray | None = None
    udot: jnp.ndarray | None = None
    A_GB: jnp.ndarray | None = None
    qdotdot: jnp.ndarray | None = None


def constrained_kinematics(group, params, motion: TreeMotion) -> ConstrainedKinematics:
    R, p = _relative_pose(motion.pos, group)
    qi, ui = group.array("q_index"), group.array("u_index")
    k = ConstrainedKinematics(t=motion.t, params=params, R=R, p=p, q=take_rows(motion.q, qi))
    if motion.u is not None:
        k.w, k.v = _relative_velocity(motion.pos, motion.V_GB, group)
        k.qdot, k.u = take_rows(motion.qdot, qi), take_rows(motion.u, ui)
    if motion.udot is not None:
        k.alpha, k.a = _relative_acceleration(motion.pos, motion.V_GB, motion.A_GB, group)
        k.qdotdot, k.udot = take_rows(motion.qdotdot, qi), take_rows(motion.udot, ui)
    return k


def velocity_motion(model, t, q, pos, u) -> TreeMotion:
    """TreeMotion at velocity level for speeds u (any u: V_GB = J u, qdot = N u)."""
    V_GB = jacobians.multiply_by_system_jacobian(model, pos, u)
    qdot = mobilizer_groups.multiply_by_n(model.topology, model.parameters, q, u)
    return TreeMotion(t=t, q=q, pos=pos, u=u, V_GB=V_GB, qdot=qdot)


def acceleration_motion(model, t, q, u, pos, vel, udot=None) -> TreeMotion:
    """TreeMotion at acceleration level for any udot: ``A_GB = J udot + Jdot u``, ``qdotdot = N udot + NDot u``.

    ``udot=None`` means udot = 0: A_GB is then the cached total Coriolis acceleration (no tree sweep).
    """
    if udot is None:
        udot = jnp.zeros(model.topology.nu, q.dtype)
        A_GB = vel.total_coriolis
    else:
        A_GB = jacobians.multiply_by_system_jacobian(model, pos, udot) + vel.total_coriolis
    qdotdot = mobilizer_groups.calc_qdotdot(model.topology, model.parameters, q, u, udot)
    return TreeMotion(t=t, q=q, pos=pos, u=u, V_GB=vel.V_GB, qdot=vel.qdot, udot=udot, A_GB=A_GB, qdotdot=qdotdot)


# -- errors in Simbody's row order -----------------------------------------------------------


def _assemble(model, motion: TreeMotion, method: str, num_rows: int):
    cset = model.constraints
    out = jnp.zeros(num_rows, motion.q.dtype)
    for group, params in zip(cset.groups, model.parameters.constraint_params):
        k = constrained_kinematics(group, params, motion)
        values = getattr(group.ctype, method)(k)
        ncols = values.shape[-1]
        out = set_rows(out, group.array("rows")[:, :ncols], values)
    return out


def position_errors(model, t, q, pos):
    """perr (mp,) in Simbody's order. Needs the Position cache of q."""
    return _assemble(model, TreeMotion(t=t, q=q, pos=pos), "position_errors", model.constraints.mp)


def velocity_errors(model, t, q, pos, u):
    """(pverr, verr) (mp + mv,). Affine in u."""
    cset = model.constraints
    return _assemble(model, velocity_motion(model, t, q, pos, u), "velocity_errors", cset.mp + cset.mv)


def velocity_errors_from_cache(model, t, q, u, pos, vel):
    """(pverr, verr) (mp + mv,) at the State's own u, reading V_GB and qdot from the Velocity cache."""
    cset = model.constraints
    motion = TreeMotion(t=t, q=q, pos=pos, u=u, V_GB=vel.V_GB, qdot=vel.qdot)
    return _assemble(model, motion, "velocity_errors", cset.mp + cset.mv)


def acceleration_errors(model, t, q, u, pos, vel, udot):
    """(paerr, vaerr, aerr) (m,) = G udot + bias. Affine in udot."""
    return _assemble(model, acceleration_motion(model, t, q, u, pos, vel, udot), "acceleration_errors", model.constraints.m)


def row_mask(model, enabled):
    """(m,) 1.0 for rows of enabled constraints, 0.0 for disabled ones."""
    cset = model.constraints
    if cset.m == 0:
        return jnp.zeros(0)
    return jnp.asarray(enabled)[cset.row_constraint_array].astype(jnp.result_type(float))
