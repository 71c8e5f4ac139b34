"""The constraint matrices G = [P; V; A], constraint forces and Lagrange multipliers (Simbody catalogue 4.5).

The equations (jaxbody._constraints.equations) are affine in their highest
derivative, so the operators are derivatives of them:

* ``G x`` is a forward-mode derivative of ``aerr(udot)`` (one outward sweep);
* the constraint forces are the reverse-mode derivative of ``aerr`` with respect
  to the constrained bodies' accelerations in A (rotated to G) and to the
  selected qdotdot and udot (Simbody's ``calcConstraintForcesFromMultipliers``),
  and ``G^T lambda = J^T F_c + f_c`` follows with one inward sweep.

Both come from one linearization at udot = 0 per State (``ConstraintOperators``),
so forward dynamics builds it once: the bias, G, the multipliers and the
constraint forces all read it.

Multipliers solve ``(G M^-1 G^T) lambda = G udot_tree + bias`` with ``M^-1`` applied by
the articulated-body operator (m O(n) solves, no M formed) and a minimum-norm
least-squares solve (pseudo-inverse, relative cutoff 1e-12 of the largest
singular value; disabled constraints have zero rows and get lambda = 0), so
redundant constraints give Simbody's least-squares answer and the result stays
finite and differentiable. The same m solves give the body accelerations and
prescribed-motion forces of each ``M^-1 G_i^T``, so the constrained A_GB and motion_forces
are corrections of the tree solution (no further tree sweep, no inverse dynamics).

Sign convention (Simbody): ``M udot + motion_forces + c + G^T lambda = f + J^T F``.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxbody._constraints import equations
from jaxbody._dynamics import articulated, jacobians
from jaxbody._math.gather import set_rows, take_rows
from jaxbody._math.lapack import pinv
from jaxbody._topology import mobilizer_groups

PINV_RTOL = 1e-12


class VelocityConstraintOperators:
    """Velocity-level constraint matrix ``[P; V]`` and its bias for one configuration (needs Position only).

    ``pverr, verr`` are affine in u: ``[P; V] u + bias``. Disabled constraints are masked (zero rows).
    """

    def __init__(self, model, t, q, pos, enabled):
        self.model, self.t, self.q, self.pos = model, t, q, pos
        self.mask = equations.row_mask(model, enabled)
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
        return equations.velocity_errors(self.model, self.t, self.q, self.pos, u) * self.mask[: self.mp + self.mv]

    def multiply_by_pv_transpose(self, lam):
        """``[P; V]^T lambda`` for lambda (mp + mv,)."""
        return self._velocity_linearization[1](lam)[0]

    def calc_pv(self, rows=None):
        """[P; V] (mp + mv, nu), or only its rows ``rows`` (a static index array): one reverse sweep per row."""
        eye = jnp.eye(self.mp + self.mv, dtype=self.q.dtype)
        return jax.vmap(self.multiply_by_pv_transpose)(eye if rows is None else eye[rows])


class AccelerationLinearization(NamedTuple):
    """aerr at udot = 0 and the reverse map from lambda to each group's acceleration-level cotangents.

    motion: the TreeMotion at udot = 0 (A_GB = Jdot u from the Velocity cache, qdotdot = NDot u).
    bias: (m,) acceleration errors at udot = 0, masked (Simbody's calcBiasForAccelerationConstraints).
    cotangents: lambda (m,) -> per group (torque_A, force_A, f_q, f_u) with the sign of G^T lambda.
    """

    motion: equations.TreeMotion
    bias: jnp.ndarray
    cotangents: object


class ConstraintOperators(VelocityConstraintOperators):
    """G, G^T, their biases, constraint forces and the projected inverse mass matrix for one State (Velocity).

    Every product is O(n) (one tree sweep); explicit matrices are O(m n). Disabled constraints are
    masked out (zero rows).
    """

    def __init__(self, model, t, q, u, pos, vel, abi, enabled, solve_rows=None):
        """``solve_rows(G) -> TreeAccelerations`` (rows (m, nu) in): M^-1 G^T with each row's body
        accelerations and prescribed forces, when the caller has a faster route than the JAX path's
        articulated solves with ``abi`` (jaxbody._realize.constraint_operators: the compiled kernel)."""
        super().__init__(model, t, q, pos, enabled)
        self.u, self.vel, self.abi = u, vel, abi
        self._solve_rows = solve_rows

    @functools.cached_property
    def linearization(self) -> AccelerationLinearization:
        """The one linearization at udot = 0 (built on first use; no tree sweep: A_GB is the cached Jdot u)."""
        model, cset = self.model, self.model.constraints
        motion = equations.acceleration_motion(model, self.t, self.q, self.u, self.pos, self.vel)
        kinematics = [
            equations.constrained_kinematics(group, params, motion)
            for group, params in zip(cset.groups, model.parameters.constraint_params)
        ]

        def aerr(accelerations):
            out = jnp.zeros(cset.m, self.q.dtype)
            for group, k, (alpha, a, qdotdot, udot) in zip(cset.groups, kinematics, accelerations):
                k = dataclasses.replace(k, alpha=alpha, a=a, qdotdot=qdotdot, udot=udot)
                values = group.ctype.acceleration_errors(k)
                out = set_rows(out, group.array("rows")[:, : values.shape[-1]], values)
            return out * self.mask

        bias, vjp = jax.vjp(aerr, tuple((k.alpha, k.a, k.qdotdot, k.udot) for k in kinematics))
        return AccelerationLinearization(motion, bias, lambda lam: vjp(lam)[0])

    @property
    def acceleration_bias(self):
        """Acceleration errors at udot = 0 (m,): Simbody's calcBiasForAccelerationConstraints."""
        return self.linearization.bias

    def acceleration_errors(self, udot):
        """(paerr, vaerr, aerr) (m,) = ``G udot + bias`` for any udot (one outward sweep)."""
        return equations.acceleration_errors(self.model, self.t, self.q, self.u, self.pos, self.vel, udot) * self.mask

    def multiply_by_g(self, ulike):
        """``G ulike`` (m,): forward mode through ``A_GB = J udot``, ``qdotdot = N udot`` (one outward sweep)."""
        return jax.jvp(self.acceleration_errors, (jnp.zeros_like(ulike),), (ulike,))[1]

    def constraint_forces(self, lam):
        """(body forces (nbodies, 2, 3) at Bo in G, mobility forces (nu,)) with ``J^T F + f = G^T lambda``.

        Simbody's calcConstraintForcesFromMultipliers: the negative of what the constraints apply. Each
        constraint acts on its constrained bodies (its equations' dependence on their accelerations in A,
        rotated to G) and on its constrained q's (mapped by N^T) and u's. No tree sweep.
        """
        model, topo = self.model, self.model.topology
        F = jnp.zeros((topo.nbodies, 2, 3), self.q.dtype)
        f_u = jnp.zeros(topo.nu, self.q.dtype)
        f_q = jnp.zeros(topo.nq, self.q.dtype)
        for group, (torque_A, force_A, fq, fu) in zip(model.constraints.groups, self.linearization.cotangents(lam)):
            R_GA = take_rows(self.pos.R_GB, group.ancestors)
            to_G = lambda x: jnp.einsum("kij,knj->kni", R_GA, x)  # noqa: E731
            F = F.at[group.array("bodies")].add(jnp.stack([to_G(torque_A), to_G(force_A)], -2))
            f_q = f_q.at[group.array("q_index")].add(fq)
            f_u = f_u.at[group.array("u_index")].add(fu)
        return F, f_u + mobilizer_groups.multiply_by_n_transpose(topo, model.parameters, self.q, f_q)

    def multiply_by_g_transpose(self, lam):
        """``G^T lambda = J^T F_c + f_c`` (nu,) (one inward sweep; none when no constraint acts on a body, e.g.
        only coordinate couplers: then F_c = 0 and ``G^T lambda = f_c``)."""
        F, f = self.constraint_forces(lam)
        if not any(group.array("bodies").size for group in self.model.constraints.groups):
            return f
        return jacobians.multiply_by_system_jacobian_transpose(self.model, self.pos, F) + f

    def calc_g(self, rows=None):
        """G (m, nu), or only its rows ``rows`` (a static index array), row by row through the transpose
        operator (one inward sweep per row)."""
        eye = jnp.eye(self.m, dtype=self.q.dtype)
        return jax.vmap(self.multiply_by_g_transpose)(eye if rows is None else eye[rows])

    def bias_for_multiply_by_g(self):
        """Simbody's calcBiasForMultiplyByG: pverr(u=0) for holonomic rows, vaerr/aerr(udot=0) for the rest."""
        return jnp.concatenate([self.velocity_bias[: self.mp], self.acceleration_bias[self.mp :]])

    def multiply_by_m_inv_g_transpose(self, G) -> articulated.TreeAccelerations:
        """``M^-1 G^T`` row by row with each row's body accelerations and prescribed-motion forces.

        Returns TreeAccelerations with udot (m, nu), A_GB (m, nbodies, 2, 3), motion_forces (m, nu): m articulated solves.
        """
        if self._solve_rows is not None:
            return self._solve_rows(G)
        solve = lambda g: articulated.multiply_by_m_inv_with_accelerations(self.model, self.pos, self.abi, g)  # noqa: E731
        return jax.vmap(solve)(G)

    def calc_projected_m_inv(self):
        """``G M^-1 G^T`` (m, m)."""
        G = self.calc_g()
        return G @ self.multiply_by_m_inv_g_transpose(G).udot.T

    def solve_projected(self, G, MinvGt, rhs):
        """Minimum-norm least-squares solution of ``(G M^-1 G^T) x = rhs`` (pseudo-inverse); MinvGt rows (m, nu)."""
        W = G @ MinvGt.T
        W = 0.5 * (W + W.T)
        return self.mask * (pinv(W, rtol=PINV_RTOL, hermitian=True) @ rhs)


class ConstrainedAccelerations(NamedTuple):
    """Forward dynamics with constraints: the tree solution corrected by the multipliers.

    udot (nu,), A_GB (nbodies, 2, 3), motion_forces (nu,) as in TreeAccelerations; constraint_matrix G (m, nu);
    multipliers (m,); acceleration_errors (m,) = G udot + bias; constraint_body_forces (nbodies, 2, 3) and
    constraint_mobility_forces (nu,) with the sign of G^T lambda.
    """

    udot: jnp.ndarray
    A_GB: jnp.ndarray
    motion_forces: jnp.ndarray
    constraint_matrix: jnp.ndarray
    multipliers: jnp.ndarray
    acceleration_errors: jnp.ndarray
    constraint_body_forces: jnp.ndarray
    constraint_mobility_forces: jnp.ndarray


def solve_constrained_accelerations(ops: ConstraintOperators, tree: articulated.TreeAccelerations):
    """lambda and the constrained motion for ``M udot + motion_forces + G^T lambda = f_tree``, ``G udot + bias = 0``.

    G is formed once (m inward sweeps) and ``M^-1 G^T`` by m articulated solves, which also give
    ``J M^-1 G^T`` and the prescribed forces of each row; everything else is dense algebra on those:
    ``udot = udot_tree - (M^-1 G^T) lambda``, ``A_GB = A_tree - (J M^-1 G^T) lambda``,
    ``motion_forces = motion_forces_tree - motion_forces(M^-1 G^T) lambda`` (exact: all are linear in the applied mobility forces).
    """
    G = ops.calc_g()
    rows = ops.multiply_by_m_inv_g_transpose(G)
    bias = ops.acceleration_bias
    lam = ops.solve_projected(G, rows.udot, G @ tree.udot + bias)
    udot = tree.udot - rows.udot.T @ lam
    F_c, f_c = ops.constraint_forces(lam)
    return ConstrainedAccelerations(
        udot=udot,
        A_GB=tree.A_GB - jnp.tensordot(lam, rows.A_GB, 1),
        motion_forces=tree.motion_forces - rows.motion_forces.T @ lam,
        constraint_matrix=G,
        multipliers=lam,
        acceleration_errors=G @ udot + bias,
        constraint_body_forces=F_c,
        constraint_mobility_forces=f_c,
    )
