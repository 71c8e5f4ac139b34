"""Model methods for constraints: Simbody's SimbodyMatterSubsystem constraint operators, snake_case.

Rows follow Simbody's order (all position equations, then velocity, then
acceleration-only; see ``jaxbody._constraints.layout``). Disabled
constraints keep their rows, which read as zero (errors, G rows, multipliers).
Each docstring names the stage the state must be realized to. Costs: every
``multiply_by_*`` is O(n) (one or two tree sweeps); explicit matrices are
O(m n); ``calc_projected_m_inv`` is m articulated-body solves.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from jaxbody._api.stage_operator import stage_operator
from jaxbody._constraints import equations, projection
from jaxbody._constraints.multipliers import (
    ConstraintOperators,
    VelocityConstraintOperators,
    solve_constrained_accelerations,
)
from jaxbody._constraints.projection import ProjectOptions
from jaxbody._realize import constraint_operators
from jaxbody._dynamics.kinematics import realize_position
from jaxbody._dynamics.state import State
from jaxbody._topology import mobilizer_groups
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument



class ModelConstraints:
    """Constraint operators of Model (mixed into jaxbody._api.model.Model)."""

    def _constraint_ops(self, state: State) -> ConstraintOperators:
        """Operators at a State realized to Velocity (M^-1 products: see ModelDynamics._articulated_inertias)."""
        return constraint_operators(self, state, self._articulated_inertias(state))

    def _pv_rows(self, state: State, rows):
        """Rows ``rows`` (static indices into pverr, verr) of [P; V], computed alone: one reverse sweep each
        (Constraint handle methods: a constraint's own rows, not the whole matrix). Needs Position."""
        return _velocity_ops(self, state).calc_pv(rows)

    def _g_rows(self, state: State, rows):
        """Rows ``rows`` (static indices into the m constraint rows) of G: sliced from the Acceleration cache
        when realized, else computed alone (one inward sweep each). Needs Velocity."""
        if state.get_system_stage() >= Stage.Acceleration and state.acceleration.constraint_matrix is not None:
            return state.acceleration.constraint_matrix[rows]
        return self._constraint_ops(state).calc_g(rows)

    def _row_mask(self, state: State):
        return equations.row_mask(self, state.constraint_enabled)

    def get_num_constraint_equations(self) -> tuple[int, int, int]:
        """(mp, mv, ma) over all constraints (enabled or not)."""
        c = self.constraints
        return c.mp, c.mv, c.ma

    # -- errors ------------------------------------------------------------------------------------

    @stage_operator(jit=True)
    def calc_constraint_position_errors(self, state: State):
        """perr (mp,) as a function of the State's (t, q), like Simbody's calcPositionErrorFromQ.

        Requires no stage by design (so it can be differentiated with respect to q through ``state.set_q``):
        it reads the Position cache when present and otherwise computes the position kinematics (one
        outward scan).
        """
        pos = state.position if state.get_system_stage() >= Stage.Position else realize_position(self, state.q)
        mask = self._row_mask(state)[: self.constraints.mp]
        return equations.position_errors(self, state.t, state.q, pos) * mask

    @stage_operator(Stage.Position, jit=True)
    def calc_constraint_velocity_errors(self, state: State, u):
        """(pverr, verr) (mp + mv,) for speeds u."""
        c = self.constraints
        mask = self._row_mask(state)[: c.mp + c.mv]
        return equations.velocity_errors(self, state.t, state.q, state.position, jnp.asarray(u)) * mask

    @stage_operator(Stage.Velocity, jit=True)
    def calc_constraint_acceleration_errors(self, state: State, udot):
        """``G udot + bias`` (m,) for any udot."""
        return self._constraint_ops(state).acceleration_errors(self._mobility(udot, "udot"))

    @stage_operator(Stage.Position, jit=True)
    def get_q_err(self, state: State):
        """Simbody's qErr: constraint position errors then quaternion norm errors."""
        pos = state.position
        perr = pos.position_errors if pos.position_errors is not None else jnp.zeros(0, state.q.dtype)
        return jnp.concatenate([perr, pos.quaternion_errors])

    @stage_operator(Stage.Velocity, jit=True)
    def get_u_err(self, state: State):
        """Simbody's uErr: (pverr, verr) (mp + mv,)."""
        vel = state.velocity
        return vel.velocity_errors if vel.velocity_errors is not None else jnp.zeros(0, state.q.dtype)

    @stage_operator(Stage.Acceleration, jit=True)
    def get_udot_err(self, state: State):
        """Simbody's udotErr: acceleration errors (m,) after forward dynamics."""
        acc = state.acceleration
        return acc.acceleration_errors if acc.acceleration_errors is not None else jnp.zeros(0, state.q.dtype)

    # -- G = [P; V; A] ---------------------------------------------------------------------------------

    @stage_operator(Stage.Velocity, jit=True)
    def multiply_by_g(self, state: State, ulike, bias=None):
        """``G ulike`` (m,). ``bias`` (from calc_bias_for_multiply_by_g) is accepted for
        Simbody's signature; the product is exact either way (a forward-mode derivative)."""
        return self._constraint_ops(state).multiply_by_g(self._mobility(ulike, "ulike"))

    @stage_operator(Stage.Velocity, jit=True)
    def calc_bias_for_multiply_by_g(self, state: State):
        """Simbody's bias for multiplyByG: pverr(u = 0) on holonomic rows, vaerr/aerr(udot = 0) on the rest."""
        return self._constraint_ops(state).bias_for_multiply_by_g()

    @stage_operator(Stage.Velocity, jit=True)
    def calc_bias_for_acceleration_constraints(self, state: State):
        """Acceleration errors at udot = 0 (m,), so ``G udot + bias = aerr``."""
        return self._constraint_ops(state).acceleration_bias

    @stage_operator(Stage.Velocity, jit=True)
    def calc_g(self, state: State):
        """G (m, nu). Read from the Acceleration cache when realized (forward dynamics forms
        it), else formed now: m inward sweeps, O(m n)."""
        if state.get_system_stage() >= Stage.Acceleration and state.acceleration.constraint_matrix is not None:
            return state.acceleration.constraint_matrix
        return self._constraint_ops(state).calc_g()

    @stage_operator(Stage.Velocity, jit=True)
    def multiply_by_g_transpose(self, state: State, lam):
        """``G^T lambda`` (nu,). O(n)."""
        return self._constraint_ops(state).multiply_by_g_transpose(self._vec(lam, self.constraints.m, "lambda"))

    @stage_operator(Stage.Velocity, jit=True)
    def calc_g_transpose(self, state: State):
        """G^T (nu, m), built from constraint forces."""
        return self.calc_g(state).T

    # -- P, Pq -----------------------------------------------------------------------------------------

    @stage_operator(Stage.Position, jit=True)
    def calc_pv(self, state: State):
        """[P; V] (mp + mv, nu): velocity-level constraint matrix."""
        return _velocity_ops(self, state).calc_pv()

    @stage_operator(Stage.Position, jit=True)
    def calc_pv_transpose(self, state: State):
        return self.calc_pv(state).T

    @stage_operator(Stage.Position, jit=True)
    def multiply_by_pv(self, state: State, ulike, bias=None):
        """``[P; V] ulike`` (mp + mv,): a forward-mode derivative of (pverr, verr), one
        outward sweep. ``bias`` is accepted for Simbody's signature; the product is exact either way."""
        ulike = self._mobility(ulike, "ulike")
        return jax.jvp(_velocity_ops(self, state).velocity_errors, (jnp.zeros_like(ulike),), (ulike,))[1]

    @stage_operator(Stage.Position, jit=True)
    def calc_bias_for_multiply_by_pv(self, state: State):
        """(pverr, verr) at u = 0 (mp + mv,): the explicit time dependence."""
        return _velocity_ops(self, state).velocity_bias

    @stage_operator(Stage.Position, jit=True)
    def multiply_by_pv_transpose(self, state: State, lam):
        """``[P; V]^T lambda`` for lambda (mp + mv,). O(n)."""
        c = self.constraints
        return _velocity_ops(self, state).multiply_by_pv_transpose(self._vec(lam, c.mp + c.mv, "lambda"))

    @stage_operator(Stage.Position, jit=True)
    def calc_p(self, state: State):
        """P (mp, nu): holonomic rows, ``pverr = P u + c(t)``."""
        return self.calc_pv(state)[: self.constraints.mp]

    @stage_operator(Stage.Position, jit=True)
    def calc_pt(self, state: State):
        return self.calc_p(state).T

    @stage_operator(Stage.Position, jit=True)
    def calc_pq(self, state: State):
        """``Pq = P N^-1`` (mp, nq), so ``Pq N = P``."""
        P = self.calc_p(state)
        n_inv_t = lambda row: mobilizer_groups.multiply_by_n_inv_transpose(self.topology, self.parameters, state.q, row)
        return jax.vmap(n_inv_t)(P)

    @stage_operator(Stage.Position, jit=True)
    def calc_pq_transpose(self, state: State):
        return self.calc_pq(state).T

    @stage_operator(Stage.Position, jit=True)
    def calc_bias_for_multiply_by_pq(self, state: State):
        """pverr at u = 0 (mp,): the explicit time dependence c(t)."""
        return _velocity_ops(self, state).velocity_bias[: self.constraints.mp]

    @stage_operator(Stage.Position, jit=True)
    def multiply_by_pq(self, state: State, qlike, bias=None):
        """``Pq qlike`` (mp,). ``bias`` accepted for Simbody's signature."""
        ulike = self.multiply_by_n_inv(state, self._vec(qlike, self.topology.nq, "qlike"))
        return self.calc_p(state) @ ulike

    @stage_operator(Stage.Position, jit=True)
    def multiply_by_pq_transpose(self, state: State, lam_p):
        """``Pq^T lambda_p`` (nq,)."""
        return self.calc_pq(state).T @ self._vec(lam_p, self.constraints.mp, "lambda_p")

    # -- dynamics ----------------------------------------------------------------------------------------

    @stage_operator(Stage.Velocity, jit=True)
    def calc_projected_m_inv(self, state: State):
        """``G M^-1 G^T`` (m, m). m articulated-body solves, no M formed."""
        return self._constraint_ops(state).calc_projected_m_inv()

    @stage_operator(Stage.Velocity)
    def solve_for_constraint_impulses(self, state: State, delta_v):
        """Impulses pi (m,) with ``G M^-1 G^T pi = delta_v`` (minimum-norm least squares)."""
        ops = self._constraint_ops(state)
        G = ops.calc_g()
        return ops.solve_projected(G, ops.multiply_by_m_inv_g_transpose(G).udot, self._vec(delta_v, self.constraints.m, "delta_v") * ops.mask)

    @stage_operator(Stage.Velocity, jit=True)
    def calc_acceleration(self, state: State, mobility_forces, body_forces):
        """Constrained forward dynamics for the given forces (gravity not added): (udot (nu,), A_GB).

        Solves ``M udot + G^T lambda = f + J^T F - c``, ``G udot + bias = 0``.
        """
        tree = self._tree_accelerations(state, mobility_forces, body_forces)
        if not self.constraints.m:
            return tree.udot, tree.A_GB
        solved = solve_constrained_accelerations(self._constraint_ops(state), tree)
        return solved.udot, solved.A_GB

    @stage_operator(Stage.Acceleration, jit=True)
    def get_constraint_multipliers(self, state: State):
        """lambda (m,) from forward dynamics."""
        acc = state.acceleration
        return acc.multipliers if acc.multipliers is not None else jnp.zeros(0, state.q.dtype)

    @stage_operator(Stage.Velocity, jit=True)
    def calc_constraint_forces_from_multipliers(self, state: State, lam):
        """(body forces (nbodies, 2, 3) at Bo in G, mobility forces (nu,)) with ``J^T F + f = G^T lambda``. These are the negative of the forces the constraints apply."""
        lam = self._vec(lam, self.constraints.m, "lambda") * self._row_mask(state)
        return self._constraint_ops(state).constraint_forces(lam)

    @stage_operator(Stage.Acceleration, jit=True)
    def find_constraint_forces(self, state: State):
        """Constraint forces of the realized multipliers: (body forces, mobility forces) as in
        calc_constraint_forces_from_multipliers."""
        acc = state.acceleration
        if acc.constraint_body_forces is None:
            return jnp.zeros((self.topology.nbodies, 2, 3), state.q.dtype), jnp.zeros(self.topology.nu, state.q.dtype)
        return acc.constraint_body_forces, acc.constraint_mobility_forces

    @stage_operator(Stage.Acceleration, jit=True)
    def calc_constraint_power(self, state: State):
        """Power of all constraints, Simbody's sign: ``-lambda . (G u)``."""
        lam = self.get_constraint_multipliers(state)
        if not self.constraints.m:
            return jnp.zeros((), state.q.dtype)
        return -jnp.dot(lam, self.calc_g(state) @ state.u)  # G from the Acceleration cache: no tree sweep

    @stage_operator(Stage.Velocity, jit=True)
    def calc_residual_force(self, state: State, mobility_forces, body_forces, udot, lam):
        """``M udot + c + G^T lambda - f - J^T F`` (nu,)."""
        r = self.calc_residual_force_ignoring_constraints(state, mobility_forces, body_forces, udot)
        if not self.constraints.m:
            return r
        return r + self.multiply_by_g_transpose(state, lam)

    # -- projection with this Model's parameters (differentiable with respect to them) ---------------

    @stage_operator(jit=True)
    def project_q(self, state: State, accuracy=None, options: ProjectOptions | None = None, q_err_estimate=None):
        """Project q onto ``perr(q) = 0`` with this Model's parameters. Returns (state, ProjectResults).

        Free q's only (locked and prescribed q's stay; quaternions normalized). ``accuracy`` overrides
        ``options.accuracy`` (default ProjectOptions(): 1e-4); ``q_err_estimate`` (nq,), if given, is projected
        too (Simbody's error-estimate projection). ``system.project_q`` is this plus Simbody's counters. A Model
        whose parameters were changed (``jb.replace_parameters``, a vmapped batch of models, a model being
        differentiated) projects with its own numbers: the implicit-function VJP gives gradients with respect
        to the Model's leaves.
        """
        return projection.project_q(self, state, project_options(accuracy, options), q_err_estimate)

    @stage_operator(jit=True)
    def project_u(self, state: State, accuracy=None, options: ProjectOptions | None = None, u_err_estimate=None):
        """Project u onto the velocity constraints with this Model's parameters (see project_q; ``u_err_estimate``
        (nu,) is projected too). Returns (state, ProjectResults)."""
        return projection.project_u(self, state, project_options(accuracy, options), u_err_estimate)

    @stage_operator(jit=True)
    def project(self, state: State, accuracy=None, options: ProjectOptions | None = None):
        """Simbody's System::project with this Model's parameters: prescribe q, project q, prescribe u, project u.
        Same arguments as ``system.project`` (which adds Simbody's counters). Returns (state, ProjectResults)."""
        return projection.project(self, state, project_options(accuracy, options))


def project_options(accuracy=None, options: ProjectOptions | None = None) -> ProjectOptions:
    """``options`` (default ProjectOptions()) with ``accuracy`` in place of its own when given."""
    if isinstance(accuracy, ProjectOptions):
        raise InvalidArgument("project: the second argument is the accuracy (a number); pass options=jb.ProjectOptions(...)")
    if options is None:
        options = ProjectOptions()
    if not isinstance(options, ProjectOptions):
        raise InvalidArgument(f"project: options must be a jb.ProjectOptions, got {type(options).__name__}")
    return options if accuracy is None else dataclasses.replace(options, accuracy=float(accuracy))


def _velocity_ops(model, state) -> VelocityConstraintOperators:
    return VelocityConstraintOperators(model, state.t, state.q, state.position, state.constraint_enabled)
