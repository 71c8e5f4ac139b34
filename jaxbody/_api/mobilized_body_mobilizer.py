"""The mobilizer between a MobilizedBody and its parent, seen from a State, as a mixin of MobilizedBody.

Time derivatives of its q and u (qdot, udot, qdotdot), the transform, velocity and acceleration of its
outboard frame M in its inboard frame F (X_FM, V_FM, A_FM: measured and expressed in F, linear part at Mo;
m, m/s, m/s^2 and rad, rad/s, rad/s^2), the frames F (on the parent P) and M (on this body B), columns of
the hinge matrix, and the tree utilities that walk to the base body or copy a mobilizer onto a new parent.

State readers take a realized State first and read its caches; ``@stage_operator(stage)`` states the stage each
needs (StageViolation while tracing otherwise). A method whose result depends on a Model's numbers (the
Instance-stage frame getters, and A_FM, which needs a Screw's or Ellipsoid's parameters) takes that Model as a
required argument, ``method(state, ..., model)``, and reads ``model.parameters``: a Model from
``jb.replace_parameters`` or a vmapped batch is followed and differentiated, and nothing falls back to the
System's realized model. The construction frames are ``get_default_inboard_frame/outboard_frame()``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.stage_operator import stage_operator
from jaxbody._dynamics.state import State
from jaxbody._math import spatial
from jaxbody._math.spatial import Transform
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument


class MobilizedBodyMobilizer:
    """Mixin with the mobilizer's derivatives, frames and hinge matrix.

    Uses ``self.index``, ``self.q_start``, ``self.u_start``, ``self.X_PF``, ``self.X_BM``, ``self.params``,
    ``self.mobilizer``, ``self.mobilizer_prototype`` and ``self.parent`` of MobilizedBody.
    """

    def _mobilizer_for(self, model):
        """The mobilizer object in ``model``'s topology (its Euler/quaternion mode); raises unless ``model`` has
        this body (also for a Model built without a SystemSignature, which check_operands cannot compare)."""
        mobs = model.topology.mobilizers
        if self.index >= len(mobs) or mobs[self.index].with_euler(False) != self.mobilizer_prototype:
            raise InvalidArgument(f"{self.name}: the model given does not contain this mobilized body")
        return mobs[self.index]

    def _mobilizer_params(self, model):
        """This mobilizer's parameters (n_params,): ``model``'s leaves."""
        self._mobilizer_for(model)
        if self.mobilizer_prototype.n_params == 0:
            return jnp.zeros((0,), model.default_q.dtype)
        for i, g in enumerate(model.topology.groups):
            if self.index in g.bodies:
                return model.parameters.mobilizer_params[i][g.bodies.index(self.index)]
        raise InvalidArgument(f"{self.name}: the model given does not contain this mobilized body")

    # ------------------------------------------------------------------------------------
    # State access: derivatives of q and u

    @stage_operator(Stage.Velocity)
    def get_one_q_dot(self, state: State, which: int):
        """qdot of this mobilizer's q ``which`` (0..nq-1)."""
        self._check_q_index(which, state)
        return state.velocity.qdot[self.q_start + which]

    @stage_operator(Stage.Velocity)
    def get_q_dot_as_vector(self, state: State):
        """qdot of this mobilizer's q in use, (nq,)."""
        return state.velocity.qdot[self._q_slice(state)]

    @stage_operator(Stage.Acceleration)
    def get_one_u_dot(self, state: State, which: int):
        """udot of this mobilizer's u ``which`` (0..nu-1)."""
        self._check_u_index(which)
        return state.acceleration.udot[self.u_start + which]

    @stage_operator(Stage.Acceleration)
    def get_u_dot_as_vector(self, state: State):
        """udot of this mobilizer, (nu,)."""
        return state.acceleration.udot[self._u_slice()]

    @stage_operator(Stage.Acceleration)
    def get_one_q_dot_dot(self, state: State, which: int):
        """qdotdot of this mobilizer's q ``which``."""
        self._check_q_index(which, state)
        return state.acceleration.qdotdot[self.q_start + which]

    @stage_operator(Stage.Acceleration)
    def get_q_dot_dot_as_vector(self, state: State):
        """qdotdot of this mobilizer's q in use, (nq,)."""
        return state.acceleration.qdotdot[self._q_slice(state)]

    @stage_operator()
    def get_one_from_q_partition(self, state: State, which: int, qlike):
        """Element ``which`` of this mobilizer's slots of a q-like (nq_total,) vector."""
        self._check_q_index(which, state)
        return jnp.asarray(qlike)[self.q_start + which]

    @stage_operator()
    def get_one_from_u_partition(self, state: State, which: int, ulike):
        """Element ``which`` of this mobilizer's slots of a u-like (nu_total,) vector."""
        self._check_u_index(which)
        return jnp.asarray(ulike)[self.u_start + which]

    # ------------------------------------------------------------------------------------
    # State access: mobilizer, frames, hinge matrix

    @stage_operator(Stage.Position)
    def get_mobilizer_transform(self, state: State) -> Transform:
        """X_FM."""
        pos = state.position
        return Transform(pos.R_FM[self.index], pos.p_FM[self.index])

    @stage_operator(Stage.Velocity)
    def get_mobilizer_velocity(self, state: State):
        """V_FM = (w_FM, v_FMo) measured and expressed in F, shape (2, 3)."""
        return state.velocity.V_FM[self.index]

    @stage_operator(Stage.Acceleration)
    def get_mobilizer_acceleration(self, state: State, model):
        """A_FM (2, 3): acceleration of M in F, measured and expressed in F (Simbody's TODO).

        ``A_FM = d/dt V_FM = H_FM udot + HDot_FM u`` (linear part at Mo). H_FM comes from the
        Position cache; HDot_FM is recomputed by the mobilizer with ``model``'s parameters (Screw and
        Ellipsoid have some), so ``model`` is the Model the state was realized with."""
        mob = self._mobilizer_for(model)
        nu = mob.nu
        dtype = state.u.dtype
        if nu == 0:
            return jnp.zeros((2, 3), dtype)
        q = state.q[self.q_start : self.q_start + mob.nq_alloc]
        u = state.u[self.u_start : self.u_start + nu]
        udot = state.acceleration.udot[self.u_start : self.u_start + nu]
        H = state.position.H_FM[self.index][:, :nu]
        params = self._mobilizer_params(model).astype(dtype)
        HDot = mob.calc_HDot_FM(q[None], u[None], params[None])[0]
        return spatial.unflat(spatial.matvec(H, udot) + spatial.matvec(HDot, u))

    @stage_operator()
    def get_inboard_frame(self, state: State | None, model) -> Transform:
        """X_PF, frame F on the parent P, from ``model.parameters`` (``state`` may be None)."""
        self._mobilizer_for(model)
        return Transform(model.parameters.R_PF[self.index], model.parameters.p_PF[self.index])

    @stage_operator()
    def get_outboard_frame(self, state: State | None, model) -> Transform:
        """X_BM, frame M on this body B, from ``model.parameters`` (``state`` may be None)."""
        self._mobilizer_for(model)
        return Transform(model.parameters.R_BM[self.index], model.parameters.p_BM[self.index])

    @stage_operator(Stage.Position)
    def get_h_col(self, state: State, which: int):
        """Column ``which`` of H_PB_G as a (2, 3) spatial vector: V_PB_G = H u (in G, at Bo)."""
        self._check_u_index(which)
        return state.position.H_PB_G[self.index][:, which].reshape(2, 3)

    @stage_operator(Stage.Position)
    def get_h_fm_col(self, state: State, which: int):
        """Column ``which`` of H_FM as a (2, 3) spatial vector: V_FM = H_FM u (in F, at Mo)."""
        self._check_u_index(which)
        return state.position.H_FM[self.index][:, which].reshape(2, 3)

    # ------------------------------------------------------------------------------------
    # Topology utilities

    def get_base_mobilized_body(self):
        """The ancestor whose parent is Ground (this body if its parent is Ground; Ground for Ground)."""
        body = self
        while body.parent is not None and body.parent.parent is not None:
            body = body.parent
        return body

    def clone_for_new_parent(self, parent, *, name=None):
        """A new MobilizedBody of this type with the same X_PF, Body, X_BM and parameters, on ``parent``.

        It is added to ``parent``'s matter subsystem; raises TopologyFrozen if that system was
        already frozen by realize_topology(), UnknownParent if ``parent`` is not a MobilizedBody.
        """
        params = self.params if self.mobilizer_prototype.n_params else None
        clone = type(self)._factory(
            self.mobilizer_prototype, parent, Transform(*self.X_PF), self.body, Transform(*self.X_BM), params=params, name=name
        )
        # Keep the exact float64 frames (Transform may hold them in a lower precision).
        clone.X_PF = (np.array(self.X_PF[0]), np.array(self.X_PF[1]))
        clone.X_BM = (np.array(self.X_BM[0]), np.array(self.X_BM[1]))
        return clone
