"""``jb.Constraint``: the handle to one constraint of a matter subsystem and the per-constraint API.

Construction (``jb.Constraint.Rod(...)`` and the other Simbody types) lives in
ConstraintFactories (constraint_factories.py), index bookkeeping and the forces on
the constraint's own bodies and mobilities in ConstraintIndexing
(constraint_indexing.py); Constraint inherits both. The
handle holds the constraint's type, bodies, selected q/u and parameters.

Topology queries (constrained bodies and mobilizers, Ancestor, subtree,
equation counts) are host-side. Enabling is an Instance-stage State variable:
``enable``/``disable`` return new States. Handle methods read a realized State
(``get_*``: position errors need Position, velocity errors Velocity, errors of
acceleration, multipliers and forces Acceleration) or compute from it
(``calc_*``). A method that computes from a Model's numbers (constraint
parameters, frames, masses) takes that Model as a required argument after Simbody's,
``method(state, ..., model)`` (positional or ``model=``; the package's convention, nothing
falls back to the System's realized model), so a Model from ``jb.replace_parameters`` or a
vmapped batch is followed and differentiated; the State must fit it. Methods that read a
realized State's caches (errors, multipliers, ``calc_power``) need no Model: the State carries
the numbers of the Model it was realized with. Row indices are structure (the same in every
Model of the system) and are read from the realized topology. Forces are at each constrained
body's origin (N, N m), in G (in the Ancestor frame from
calc_constraint_forces_from_multipliers, as Simbody's), with the sign of G^T lambda.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._api.constraint_factories import ConstraintFactories
from jaxbody._api.constraint_indexing import ConstraintIndexing
from jaxbody._api.handle_membership import HandleMembership
from jaxbody._api.mobilized_body import MobilizedBody
from jaxbody._api.stage_operator import stage_operator
from jaxbody._api.unilateral import ConditionalFlag
from jaxbody._dynamics.state import State
from jaxbody._topology import mobilizer_groups
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument


class Constraint(ConstraintIndexing, HandleMembership, ConstraintFactories, ConditionalFlag):
    """A constraint handle (Simbody's Constraint). Construct with the factories of ConstraintFactories."""

    # -- construction --------------------------------------------------------------------------

    @classmethod
    def _create(cls, ctype, bodies, params, *, q_select=(), u_select=(), name=None, distinct_bodies=True):
        """Register a constraint. Its bodies and mobilizers must share one matter subsystem; with
        ``distinct_bodies`` no constrained body may appear twice (a body constrained to itself gives equations
        that involve no mobility: always satisfied, or never)."""
        bodies = list(bodies)
        mobods = bodies + [m for m, _ in q_select] + [m for m, _ in u_select]
        kind = name or ctype.simbody_name
        if not mobods:
            raise InvalidArgument(f"{kind}: a constraint needs at least one body or mobilizer")
        label = f"{kind}({', '.join(dict.fromkeys(m.name for m in mobods))})"
        matter = mobods[0].matter
        for m in mobods:
            if m.matter is not matter:
                raise InvalidArgument(
                    f"{label}: body {m.name!r} belongs to {m.matter._describe()} but body {mobods[0].name!r} to "
                    f"{matter._describe()}; a constraint's bodies must belong to one system"
                )
        if distinct_bodies:
            for i, b in enumerate(bodies):
                if any(b is c for c in bodies[:i]):
                    raise InvalidArgument(
                        f"{label}: constrains body {b.name!r} to itself; a {ctype.simbody_name} constraint needs "
                        "two different bodies (relative to itself a body cannot move, so the equations would involve "
                        "no mobility)"
                    )
        self = cls.__new__(cls)
        self.ctype = ctype
        self.matter = matter
        self.bodies = tuple(bodies)
        self.q_select = tuple(q_select)
        self.u_select = tuple(u_select)
        params = np.asarray(params, dtype=float).reshape(-1)
        if params.shape != (ctype.n_params,) or not np.all(np.isfinite(params)):
            raise InvalidArgument(f"{label}: expected {ctype.n_params} finite parameters")
        self.params = params
        self.disabled_by_default = False
        self.index = matter._add_constraint(self)
        self.name = name or f"{ctype.simbody_name}{self.index}"
        return self

    # -- topology queries ------------------------------------------------------------------------

    def get_constraint_index(self) -> int:
        return self.index

    def get_num_constrained_bodies(self) -> int:
        return len(self.bodies)

    def get_mobilized_body_from_constrained_body(self, i: int) -> MobilizedBody:
        return self.bodies[i]

    def get_constrained_mobilizers(self) -> tuple[MobilizedBody, ...]:
        """Mobilized bodies whose q or u this constraint acts on directly (unique, in order); a SpeedCoupler's
        coordinates are only read, so their mobilizers are not among them (as in Simbody)."""
        out = []
        for m, _ in (self.q_select if self.ctype.q_constrained else ()) + self.u_select:
            if m not in out:
                out.append(m)
        return tuple(out)

    def get_num_constrained_mobilizers(self) -> int:
        return len(self.get_constrained_mobilizers())

    def get_mobilized_body_from_constrained_mobilizer(self, i: int) -> MobilizedBody:
        return self.get_constrained_mobilizers()[i]

    def _ancestor_basis(self):
        return [b.index for b in self.bodies] or [m.index for m in self.get_constrained_mobilizers()]

    def get_ancestor_mobilized_body(self) -> MobilizedBody:
        """The Ancestor A: outmost common ancestor of the constrained bodies (their equations are in A)."""
        from jaxbody._constraints.layout import common_ancestor

        parent = [-1 if b.parent is None else b.parent.index for b in self.matter._bodies]
        return self.matter._bodies[common_ancestor(self._ancestor_basis(), parent)]

    def get_subtree(self) -> tuple[MobilizedBody, ...]:
        """The bodies on the paths from the Ancestor to each constrained body (Simbody's SimbodyMatterSubtree)."""
        anc = self.get_ancestor_mobilized_body()
        out = [anc]
        for b in [self.matter._bodies[i] for i in self._ancestor_basis()]:
            path = []
            while b is not anc and b is not None:
                path.append(b)
                b = b.parent
            for p in reversed(path):
                if p not in out:
                    out.append(p)
        return tuple(out)

    def get_num_constraint_equations(self) -> tuple[int, int, int]:
        """(mp, mv, ma) of this constraint when enabled."""
        return self.ctype.num_equations

    @stage_operator()
    def get_num_constraint_equations_in_use(self, state: State):
        """(mp, mv, ma) as arrays: the counts when enabled in ``state``, zeros when disabled."""
        on = self.is_enabled(state).astype(jnp.int32)
        return tuple(on * n for n in self.ctype.num_equations)

    # -- enabling ----------------------------------------------------------------------------------

    def set_disabled_by_default(self, disabled: bool = True):
        """Topology default (before realize_topology)."""
        self.matter.system._check_not_frozen(f"change {self.name}'s default")
        self.disabled_by_default = bool(disabled)

    def is_disabled_by_default(self) -> bool:
        return self.disabled_by_default

    @stage_operator()
    def disable(self, state: State) -> State:
        """A new State with this constraint off (drops every cache; no recompilation)."""
        return state.set_constraint_enabled(state.constraint_enabled.at[self.index].set(False))

    @stage_operator()
    def enable(self, state: State) -> State:
        return state.set_constraint_enabled(state.constraint_enabled.at[self.index].set(True))

    @stage_operator()
    def is_disabled(self, state: State):
        return ~state.constraint_enabled[self.index]

    @stage_operator()
    def is_enabled(self, state: State):
        return state.constraint_enabled[self.index]

    # -- realized results ----------------------------------------------------------------------------

    def _layout(self):
        """The system's ConstraintSet: rows and their order are structure (static, the same in every Model of this
        system, which its SystemSignature fixes), never numbers, so the realized topology's is the one."""
        model = self.matter.system._model
        if model is None:
            raise InvalidArgument(f"{self._label()}: call realize_topology() first")
        return model.constraints

    def _rows(self):
        """(position, velocity, acceleration) rows of this constraint in constraint-space vectors (static)."""
        return self._layout().rows_of(self.index)

    @stage_operator(Stage.Position)
    def get_position_errors_as_vector(self, state: State):
        """perr (mp,) of this constraint."""
        p, _, _ = self._rows()
        return state.position.position_errors[p]

    @stage_operator(Stage.Velocity)
    def get_velocity_errors_as_vector(self, state: State):
        """(pverr, verr) (mp + mv,)."""
        p, v, _ = self._rows()
        return state.velocity.velocity_errors[np.concatenate([p, v])]

    @stage_operator(Stage.Acceleration)
    def get_acceleration_errors_as_vector(self, state: State):
        """(paerr, vaerr, aerr) (mp + mv + ma,)."""
        rows = np.concatenate(self._rows())
        return state.acceleration.acceleration_errors[rows]

    @stage_operator(Stage.Acceleration)
    def get_multipliers_as_vector(self, state: State):
        """lambda (mp + mv + ma,); vector equations' multipliers are in A."""
        rows = np.concatenate(self._rows())
        return state.acceleration.multipliers[rows]

    @stage_operator(Stage.Acceleration)
    def calc_power(self, state: State):
        """Power of this constraint's forces, Simbody's sign: ``-lambda . (G u)`` over its rows, from the
        Acceleration cache (its multipliers and G, of the Model the State was realized with)."""
        rows = np.concatenate(self._rows())
        acc = state.acceleration
        return -jnp.dot(acc.multipliers[rows], acc.constraint_matrix[rows] @ state.u)

    @stage_operator()
    def calc_position_error_from_q(self, state: State, q, model):
        """perr (mp,) for coordinates q (the State supplies t)."""
        p, _, _ = self._rows()
        return model.calc_constraint_position_errors(state.set_q(q))[p]

    @stage_operator(Stage.Position)
    def calc_velocity_error_from_u(self, state: State, u, model):
        """(pverr, verr) for speeds u."""
        p, v, _ = self._rows()
        return model.calc_constraint_velocity_errors(state, u)[np.concatenate([p, v])]

    @stage_operator(Stage.Velocity)
    def calc_acceleration_error_from_udot(self, state: State, udot, model):
        """(paerr, vaerr, aerr) for udot."""
        return model.calc_constraint_acceleration_errors(state, udot)[np.concatenate(self._rows())]

    @stage_operator(Stage.Position)
    def calc_position_constraint_matrix_p(self, state: State, model):
        """This constraint's rows of P (mp, nu), computed alone (one reverse sweep per row)."""
        return model._pv_rows(state, self._rows()[0])

    @stage_operator(Stage.Position)
    def calc_position_constraint_matrix_pt(self, state: State, model):
        return self.calc_position_constraint_matrix_p(state, model).T

    @stage_operator(Stage.Position)
    def calc_position_constraint_matrix_pn_inv(self, state: State, model):
        """``P N^-1`` (mp, nq): this constraint's rows of Pq."""
        n_inv_t = lambda row: mobilizer_groups.multiply_by_n_inv_transpose(model.topology, model.parameters,  # noqa: E731
                                                                           state.q, row)
        return jax.vmap(n_inv_t)(self.calc_position_constraint_matrix_p(state, model))

    @stage_operator(Stage.Position)
    def calc_velocity_constraint_matrix_v(self, state: State, model):
        """This constraint's rows of V (mv, nu), computed alone."""
        return model._pv_rows(state, self._rows()[1])

    @stage_operator(Stage.Position)
    def calc_velocity_constraint_matrix_vt(self, state: State, model):
        return self.calc_velocity_constraint_matrix_v(state, model).T

    @stage_operator(Stage.Velocity)
    def calc_acceleration_constraint_matrix_a(self, state: State, model):
        """This constraint's rows of A (ma, nu): sliced from the Acceleration cache's G when realized, else
        computed alone."""
        return model._g_rows(state, self._rows()[2])

    @stage_operator(Stage.Velocity)
    def calc_acceleration_constraint_matrix_at(self, state: State, model):
        return self.calc_acceleration_constraint_matrix_a(state, model).T

    def _system_signature(self):
        """Its system's SystemSignature (for jaxbody._api.stage_operator.check_operands)."""
        return self.matter._signature()

    def _label(self) -> str:
        on = ", ".join(m.name for m in self.bodies + self.get_constrained_mobilizers())
        return f"constraint {self.name!r} ({self.ctype.simbody_name} on {on})"

    def __repr__(self):
        return f"Constraint.{self.ctype.simbody_name}({self.name}, index={self.index})"


# Simbody's synonyms.
Constraint.ConstantDistance = Constraint.Rod
Constraint.CoincidentPoints = Constraint.Ball
Constraint.Spherical = Constraint.Ball
Constraint.CoincidentFrames = Constraint.Weld
