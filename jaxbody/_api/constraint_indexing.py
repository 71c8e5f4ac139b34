"""Constraint mixin: Simbody's per-constraint index bookkeeping and forces on its own bodies and mobilities.

Simbody's Constraint numbers what it acts on locally:

* **constrained bodies** (ConstrainedBodyIndex): ``get_mobilized_body_from_constrained_body(i)``;
* **constrained mobilizers** (ConstrainedMobilizerIndex): the bodies whose q or u the constraint acts on
  directly, ``get_constrained_mobilizers()``; *every* q and u of such a mobilizer is "constrainable", so
* **constrained q's / u's** (ConstrainedQIndex / ConstrainedUIndex) are the q's (u's) of the constrained
  mobilizers, concatenated in constrained-mobilizer order; their count is ``get_num_constrained_q/u``.
  The number of q's depends on the State's Euler/quaternion mode (a Ball has 4 q's or 3), so these methods
  take the State, as Simbody's do.
* **multipliers** (MultiplierIndex): the constraint's rows in the system's constraint-space vectors
  (lambda, acceleration errors), one block per equation level: all holonomic rows of all constraints, then
  all nonholonomic, then all acceleration-only (``jaxbody._constraints.layout``). jaxbody keeps the rows of
  a disabled constraint (they read as zero), so, unlike Simbody, indices do not move when a constraint is
  disabled; they are static Python ints.

Every answer here is host-side (static); the force methods are traced operators (jit, vmap, grad). Index
maps and constraint-space vectors depend on the system's structure only (the same in every Model of it), so
they take no Model; the force methods compute with a Model's numbers and take it as a required argument after
Simbody's, ``method(state, ..., model)`` (the package's convention: no fallback to the System's realized model).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.arguments import integer
from jaxbody._api.stage_operator import stage_operator
from jaxbody._dynamics.state import State
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument


class ConstraintIndexing:
    """Index maps, constraint-space vectors and per-constraint forces of Constraint (Simbody names)."""

    # -- constrained q and u -------------------------------------------------------------------------

    def _constrained_mobilizer(self, i):
        mobilizers = self.get_constrained_mobilizers()
        i = integer(i, f"{self.name}: constrained mobilizer index")
        if not 0 <= i < len(mobilizers):
            raise InvalidArgument(f"{self.name}: constrained mobilizer index {i} out of range 0..{len(mobilizers) - 1}")
        return mobilizers[i]

    def _constrained_slots(self, state: State | None, which: str) -> np.ndarray:
        """Global q (or u) index of each constrained q (u), in ConstrainedQIndex (ConstrainedUIndex) order."""
        slots = []
        for m in self.get_constrained_mobilizers():
            start, n = (m.q_start, m.get_num_q(state)) if which == "q" else (m.u_start, m.get_num_u())
            slots.extend(range(start, start + n))
        return np.asarray(slots, dtype=np.int32)

    @stage_operator()
    def get_num_constrained_q(self, state: State | None = None, constrained_mobilizer: int | None = None) -> int:
        """Number of constrainable q's: all q's of every constrained mobilizer, or of the one given
        (ConstrainedMobilizerIndex). Depends on the State's Euler/quaternion mode (the matter's without one)."""
        if constrained_mobilizer is not None:
            return self._constrained_mobilizer(constrained_mobilizer).get_num_q(state)
        return int(self._constrained_slots(state, "q").size)

    @stage_operator()
    def get_num_constrained_u(self, state: State | None = None, constrained_mobilizer: int | None = None) -> int:
        """Number of constrainable u's (the length of this constraint's mobility-force vector), or of one
        constrained mobilizer."""
        if constrained_mobilizer is not None:
            return self._constrained_mobilizer(constrained_mobilizer).get_num_u()
        return int(self._constrained_slots(state, "u").size)

    @stage_operator()
    def get_constrained_q_index(self, state: State | None, constrained_mobilizer: int, which: int) -> int:
        """ConstrainedQIndex of q number ``which`` (MobilizerQIndex) of the given constrained mobilizer."""
        m = self._constrained_mobilizer(constrained_mobilizer)
        m._check_q_index(which, state)
        before = self.get_constrained_mobilizers()[: integer(constrained_mobilizer, "constrained mobilizer index")]
        return sum(b.get_num_q(state) for b in before) + int(which)

    @stage_operator()
    def get_constrained_u_index(self, state: State | None, constrained_mobilizer: int, which: int) -> int:
        """ConstrainedUIndex of u number ``which`` (MobilizerUIndex) of the given constrained mobilizer."""
        m = self._constrained_mobilizer(constrained_mobilizer)
        m._check_u_index(which)
        before = self.get_constrained_mobilizers()[: integer(constrained_mobilizer, "constrained mobilizer index")]
        return sum(b.get_num_u() for b in before) + int(which)

    @stage_operator()
    def get_q_index_of_constrained_q(self, state: State | None, constrained_q: int) -> int:
        """The system QIndex of this constraint's constrained q number ``constrained_q``."""
        return int(self._slot(state, "q", constrained_q))

    @stage_operator()
    def get_u_index_of_constrained_u(self, state: State | None, constrained_u: int) -> int:
        """The system UIndex of this constraint's constrained u number ``constrained_u``."""
        return int(self._slot(state, "u", constrained_u))

    def _slot(self, state, which, i):
        slots = self._constrained_slots(state, which)
        i = integer(i, f"{self.name}: constrained {which} index")
        if not 0 <= i < slots.size:
            raise InvalidArgument(f"{self.name}: constrained {which} index {i} out of range 0..{slots.size - 1}")
        return slots[i]

    # -- constraint-space vectors -------------------------------------------------------------------

    @stage_operator()
    def get_index_of_multipliers_in_use(self, state: State | None = None) -> tuple:
        """(px0, vx0, ax0): the first row of this constraint's holonomic, nonholonomic and acceleration-only
        block in the system's multiplier (and acceleration-error) vector; None where the block is empty
        (Simbody's invalid MultiplierIndex). Static: disabled constraints keep their rows; structure only, so no
        Model is needed."""
        return tuple(int(r[0]) if r.size else None for r in self._rows())

    @stage_operator()
    def get_my_part_from_constraint_space_vector(self, state: State, constraint_space):
        """This constraint's entries (mp + mv + ma,) of a constraint-space vector (m,), in the order position,
        velocity, acceleration (Simbody's getMyPartFromConstraintSpaceVector). Structure only: no Model."""
        whole = _constraint_space(constraint_space, self._layout().m, self.name)
        return whole[np.concatenate(self._rows())]

    @stage_operator()
    def set_my_part_in_constraint_space_vector(self, state: State, my_part, constraint_space=None):
        """A copy of ``constraint_space`` (m,) (zeros if None or empty) with this constraint's entries replaced
        by ``my_part`` (mp + mv + ma,); functional form of Simbody's setMyPartInConstraintSpaceVector. Structure
        only: no Model."""
        m = self._layout().m
        rows = np.concatenate(self._rows())
        part = jnp.asarray(my_part)
        if part.shape != (rows.size,):
            raise InvalidArgument(f"{self.name}: my_part must have length {rows.size} (mp + mv + ma), got shape {part.shape}")
        if constraint_space is None or jnp.shape(constraint_space) == (0,):
            constraint_space = jnp.zeros(m, part.dtype)
        whole = _constraint_space(constraint_space, m, self.name)
        return whole.at[rows].set(part.astype(whole.dtype))

    # -- forces on this constraint's own bodies and mobilities ------------------------------------------

    def _body_index(self) -> np.ndarray:
        return np.asarray([b.index for b in self.bodies], dtype=np.int32).reshape(-1)

    @stage_operator(Stage.Velocity)
    def calc_constraint_forces_from_multipliers(self, state: State, lambda_, model):
        """(body forces (ncb, 2, 3) in the Ancestor frame A, at each constrained body's origin; mobility forces
        (ncu,) on the constrained u's) for this constraint's multipliers ``lambda_`` (mp + mv + ma,).

        Simbody's Constraint::calcConstraintForcesFromMultipliers: the sign of G^T lambda (opposite to applied
        forces); q-level forces are mapped to u by N^T. ncb = get_num_constrained_bodies(),
        ncu = get_num_constrained_u(state).
        """
        whole = self.set_my_part_in_constraint_space_vector(state, lambda_)
        F_G, f = model.calc_constraint_forces_from_multipliers(state, whole)
        R_GA = state.position.R_GB[self.get_ancestor_mobilized_body().index]
        F_A = jnp.einsum("ji,bkj->bki", R_GA, F_G[self._body_index()])
        return F_A, f[self._constrained_slots(state, "u")]

    @stage_operator(Stage.Acceleration)
    def get_constraint_forces_as_vectors(self, state: State, model):
        """(body forces (ncb, 2, 3) in G at each constrained body's origin, mobility forces (ncu,) on the
        constrained u's) from this constraint's realized multipliers, with the sign of G^T lambda."""
        lam = self.get_multipliers_as_vector(state)
        whole = self.set_my_part_in_constraint_space_vector(state, lam)
        F, f = model.calc_constraint_forces_from_multipliers(state, whole)
        return F[self._body_index()], f[self._constrained_slots(state, "u")]

    @stage_operator(Stage.Acceleration)
    def get_constrained_body_forces_as_vector(self, state: State, model):
        """Body forces (ncb, 2, 3) in G of get_constraint_forces_as_vectors."""
        return self.get_constraint_forces_as_vectors(state, model)[0]

    @stage_operator(Stage.Acceleration)
    def get_constrained_mobility_forces_as_vector(self, state: State, model):
        """Mobility forces (ncu,) of get_constraint_forces_as_vectors."""
        return self.get_constraint_forces_as_vectors(state, model)[1]


def _constraint_space(x, m, name):
    x = jnp.asarray(x)
    if x.shape != (m,):
        raise InvalidArgument(f"{name}: a constraint-space vector must have length m = {m}, got shape {x.shape}")
    return x


__all__ = ["ConstraintIndexing"]
