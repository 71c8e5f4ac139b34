"""Constraint errors, the constraint matrices G = [P; V; A], constraint forces and multipliers (catalogue 4.5).

Every constraint type gives Simbody's error equations in its Ancestor frame
(``jaxbody.constraints``). This module gathers the kinematics they need from
the tree, assembles the equations in Simbody's row order
(``jaxbody.constraint_topology``), and derives the operators:

* acceleration errors ``aerr(udot) = G udot + bias`` are affine in udot
  (body accelerations ``A_GB = J udot + Jdot u``, ``qdotdot = N udot + NDot u``),
  so ``G x`` is a forward-mode derivative and ``G^T lambda`` a reverse-mode one;
  each costs one O(n) tree sweep and nothing forms G unless asked;
* velocity errors (pverr, verr) are affine in u the same way: ``P``, ``V``;
* constraint body forces are the reverse-mode derivative with respect to the
  constrained bodies' accelerations in A, rotated to Ground (Simbody's
  ``calcConstraintForcesFromMultipliers``).

Multipliers solve ``(G M^-1 G^T) lambda = G udot_tree + bias`` with ``M^-1``
applied by the O(n) articulated-body operator (m applications) and a
minimum-norm least-squares solve (pseudo-inverse, relative cutoff 1e-12 of
the largest singular value; disabled constraints have zero rows and get
lambda = 0), so redundant constraints give Simbody's least-squares answer and
the result stays finite and differentiable.

Sign convention (Simbody): ``M udot + c + G^T lambda = f + J^T F``.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp

from jaxbody._constraints.types.base import ConstrainedKinematics
from jaxbody._dynamics import articulated, inverse_dynamics, jacobians, prescribed
from jaxbody._topology import mobilizer_groups

PINV_RTOL = 1e-12


# -- gathering ------------------------------------------------------------------------------------


def _relative_pose(pos, group):
    """R_AB, p_AB (k, nb, 3, 3), (k, nb, 3) for a group's constrained bodies."""
    bodies, anc = group.array("bodies"), jnp.asarray(group.ancestors, dtype=jnp.int32)
    R_GA, p_GA = pos.R_GB[anc], pos.p_GB[anc]
    R_GB, p_GB = pos.R_GB[bodies], pos.p_GB[bodies]
    R_AB = jnp.einsum("kji,knjl->knil", R_GA, R_GB)
    p_AB = jnp.einsum("kji,knj->kni", R_GA, p_GB - p_GA[:, None])
    return R_AB, p_AB


def _relative_velocity(pos, V_GB, group):
    """w_AB, v_AB (k, nb, 3) in A from Ground velocities (Simbody's formulas for a moving Ancestor)."""
    bodies, anc = group.array("bodies"), jnp.asarray(group.ancestors, dtype=jnp.int32)
    R_GA, p_GA, w_GA, v_GA = pos.R_GB[anc], pos.p_GB[anc], V_GB[anc, 0], V_GB[anc, 1]
    r = pos.p_GB[bodies] - p_GA[:, None]
    dw = V_GB[bodies, 0] - w_GA[:, None]
    dv = V_GB[bodies, 1] - v_GA[:, None] - jnp.cross(w_GA[:, None], r)
    to_A = lambda x: jnp.einsum("kji,knj->kni", R_GA, x)  # noqa: E731
    return to_A(dw), to_A(dv)


def _relative_acceleration(pos, V_GB, A_GB, group):
    """alpha_AB, a_AB (k, nb, 3) in A: ``R_AG(dalpha - w_GA x dw)``, ``R_AG(da - al x r - 2 w x dv + w x (w x r))``."""
    bodies, anc = group.array("bodies"), jnp.asarray(group.ancestors, dtype=jnp.int32)
    R_GA, p_GA = pos.R_GB[anc], pos.p_GB[anc]
    w, al = V_GB[anc, 0][:, None], A_GB[anc, 0][:, None]
    r = pos.p_GB[bodies] - p_GA[:, None]
    dw = V_GB[bodies, 0] - w
    dv = V_GB[bodies, 1] - V_GB[anc, 1][:, None]
    dal = A_GB[bodies, 0] - al - jnp.cross(w, dw)
    da = A_GB[bodies, 1] - A_GB[anc, 1][:, None] - jnp.cross(al, r) - 2 * jnp.cross(w, dv) + jnp.cross(w, jnp.cross(w, r))
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


def _kinematics(model, group, params, motion: TreeMotion) -> ConstrainedKinematics:
    R, p = _relative_pose(motion.pos, group)
    qi, ui = group.array("q_index"), group.array("u_index")
    k = ConstrainedKinematics(t=motion.t, params=params, R=R, p=p, q=motion.q[qi])
    if motion.u is not None:
        k.w, k.v = _relative_velocity(motion.pos, motion.V_GB, group)
        k.qdot, k.u = motion.qdot[qi], motion.u[ui]
    if motion.udot is not None:
        k.alpha, k.a = _relative_acceleration(motion.pos, motion.V_GB, motion.A_GB, group)
        k.qdotdot, k.udot = motion.qdotdot[qi], motion.udot[ui]
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
        k = _kinematics(model, group, params, motion)
        values = getattr(group.ctype, method)(k)
        ncols = values.shape[-1]
        out = out.at[group.array("rows")[:, :ncols]].set(values)
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


# -- operators --------------------------------------------------------------------------------------


class VelocityConstraintOperators:
    """Velocity-level constraint matrix ``[P; V]`` and its bias for one configuration (needs Position only).

    ``pverr, verr`` are affine in u: ``[P; V] u + bias``. Disabled constraints are masked (zero rows).
    """

    def __init__(self, model, t, q, pos, enabled):
        self.model, self.t, self.q, self.pos = model, t, q, pos
        self.mask = row_mask(model, enabled)
        cset = model.constraints
        self.m, self.mp, self.mv = cset.m, cset.mp, cset.mv

    @functools.cached_property
    def _velocity_linearization(self):
        """(pverr, verr at u = 0, their reverse-mode map): traced only when a velocity-level product is asked for."""
        return jax.vjp(self.velocity_errors, jnp.zeros(self.model.topology.nu, self.q.dtype))

    @property
    def velocity_bias(self):
        """pverr, verr at u = 0 (mp + mv,): the explicit time dependence."""
        return self._velocity_linearization[0]

    def velocity_errors(self, u):
        return velocity_errors(self.model, self.t, self.q, self.pos, u) * self.mask[: self.mp + self.mv]

    def multiply_by_pv_transpose(self, lam):
        """``[P; V]^T lambda`` for lambda (mp + mv,)."""
        return self._velocity_linearization[1](lam)[0]

    def calc_pv(self):
        """[P; V] (mp + mv, nu)."""
        eye = jnp.eye(self.mp + self.mv, dtype=self.q.dtype)
        return jax.vmap(self.multiply_by_pv_transpose)(eye)


class ConstraintOperators(VelocityConstraintOperators):
    """G, G^T, their biases and the projected inverse mass matrix for one realized State (Velocity).

    Every product is O(n) (one tree sweep); explicit matrices are O(m n). Disabled constraints are
    masked out (zero rows).
    """

    def __init__(self, model, t, q, u, pos, vel, abi, enabled):
        super().__init__(model, t, q, pos, enabled)
        self.u, self.vel, self.abi = u, vel, abi

    @functools.cached_property
    def _acceleration_linearization(self):
        """(aerr at udot = 0, its reverse-mode map): one outward sweep to build, one inward sweep per use."""
        return jax.vjp(self.acceleration_errors, jnp.zeros(self.model.topology.nu, self.q.dtype))

    @property
    def acceleration_bias(self):
        """Acceleration errors at udot = 0 (m,): Simbody's calcBiasForAccelerationConstraints."""
        return self._acceleration_linearization[0]

    def acceleration_errors(self, udot):
        return acceleration_errors(self.model, self.t, self.q, self.u, self.pos, self.vel, udot) * self.mask

    def multiply_by_g(self, ulike):
        """``G ulike`` (m,)."""
        return jax.jvp(self.acceleration_errors, (jnp.zeros_like(ulike),), (ulike,))[1]

    def multiply_by_g_transpose(self, lam):
        """``G^T lambda`` (nu,) (one inward sweep)."""
        return self._acceleration_linearization[1](lam)[0]

    def calc_g(self):
        """G (m, nu), row by row through the transpose operator."""
        eye = jnp.eye(self.m, dtype=self.q.dtype)
        return jax.vmap(self.multiply_by_g_transpose)(eye)

    def bias_for_multiply_by_g(self):
        """Simbody's calcBiasForMultiplyByG: pverr(u=0) for holonomic rows, vaerr/aerr(udot=0) for the rest."""
        return jnp.concatenate([self.velocity_bias[: self.mp], self.acceleration_bias[self.mp :]])

    # M^-1 and the projected inverse mass matrix
    def multiply_by_m_inv(self, f):
        return articulated.multiply_by_m_inv(self.model, self.pos, self.abi, f)

    def calc_m_inv_g_transpose(self, G):
        """``M^-1 G^T`` as rows (m, nu): one O(n) articulated solve per constraint equation."""
        return jax.vmap(self.multiply_by_m_inv)(G)

    def calc_projected_m_inv(self):
        """``G M^-1 G^T`` (m, m)."""
        G = self.calc_g()
        return G @ self.calc_m_inv_g_transpose(G).T

    def solve_projected(self, G, MinvGt, rhs):
        """Minimum-norm least-squares solution of ``(G M^-1 G^T) x = rhs`` (pseudo-inverse)."""
        W = G @ MinvGt.T
        W = 0.5 * (W + W.T)
        return self.mask * (jnp.linalg.pinv(W, rtol=PINV_RTOL, hermitian=True) @ rhs)


def solve_multipliers(ops: ConstraintOperators, udot_tree):
    """lambda and udot for ``M udot + G^T lambda = f_tree``, ``G udot + bias = 0`` given the tree solution.

    G is formed once (m inward sweeps); the errors of the tree and final udot are then ``G udot + bias``
    (aerr is affine in udot), so no further tree sweeps are needed.
    Returns (udot (nu,), multipliers (m,), acceleration errors of udot (m,), G (m, nu)).
    """
    G = ops.calc_g()
    MinvGt = ops.calc_m_inv_g_transpose(G)
    bias = ops.acceleration_bias
    lam = ops.solve_projected(G, MinvGt, G @ udot_tree + bias)
    udot = udot_tree - MinvGt.T @ lam
    return udot, lam, G @ udot + bias, G


# -- forces -----------------------------------------------------------------------------------------


def constraint_forces_from_multipliers(model, t, q, u, pos, vel, lam):
    """Simbody's calcConstraintForcesFromMultipliers: (body forces (nbodies, 2, 3) at Bo in G, mobility forces (nu,)).

    ``J^T F + f = G^T lambda``: forces with the sign of G^T lambda (the negative of what the constraints apply).
    Each constraint's forces act on its constrained bodies (from its equations' dependence on their
    accelerations in A, rotated to G) and on its constrained q's (mapped by N^T) and u's.
    """
    topo = model.topology
    dtype = q.dtype
    F = jnp.zeros((topo.nbodies, 2, 3), dtype)
    f_u = jnp.zeros(topo.nu, dtype)
    f_q = jnp.zeros(topo.nq, dtype)
    motion = acceleration_motion(model, t, q, u, pos, vel)  # the linearization point; aerr is affine
    for group, params in zip(model.constraints.groups, model.parameters.constraint_params):
        k = _kinematics(model, group, params, motion)
        rows = group.array("rows")
        lam_g = lam[rows]

        def aerr(alpha, a, qdotdot, udot, k=k, group=group):
            return group.ctype.acceleration_errors(dataclasses.replace(k, alpha=alpha, a=a, qdotdot=qdotdot, udot=udot))

        _, vjp = jax.vjp(aerr, k.alpha, k.a, k.qdotdot, k.udot)
        torque_A, force_A, fq, fu = vjp(lam_g)
        R_GA = pos.R_GB[jnp.asarray(group.ancestors, dtype=jnp.int32)]
        to_G = lambda x: jnp.einsum("kij,knj->kni", R_GA, x)  # noqa: E731
        F = F.at[group.array("bodies")].add(jnp.stack([to_G(torque_A), to_G(force_A)], -2))
        f_q = f_q.at[group.array("q_index")].add(fq)
        f_u = f_u.at[group.array("u_index")].add(fu)
    f_u = f_u + mobilizer_groups.multiply_by_n_transpose(topo, model.parameters, q, f_q)
    return F, f_u


def prescribed_motion_forces(model, pos, vel, dyn, udot, gt_lambda):
    """tau (nu,) on known-udot mobilities with constraints present: ``M udot + tau + G^T lambda = f - c`` there,
    zero on free mobilities (catalogue 3.3)."""
    residual = inverse_dynamics.calc_residual_force_ignoring_constraints(
        model, pos, vel, dyn.mobility_forces, dyn.body_forces, udot
    )
    known_u = dyn.udot_known[jnp.asarray(prescribed.slot_maps(model.topology)[2])]
    return jnp.where(known_u, -(residual + gt_lambda), 0.0)
