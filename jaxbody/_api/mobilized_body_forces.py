"""Forces on and through a MobilizedBody: its mobilizer's reaction forces, the ``apply_*`` helpers that add
forces to force arrays, and q-space to u-space force conversion, as a mixin of MobilizedBody.

Conventions (Simbody's): B is this body, P its parent, G Ground; Mo and Fo are the origins of the mobilizer
frames M (on B) and F (on P). A spatial force is a (2, 3) array (torque N m, force N); ``body_forces`` is
(nbodies, 2, 3) in G with each torque about its body's origin, ``mobility_forces`` (nu_total,). Simbody's
helpers add into an argument; these return a new array, so all work under ``jit``, ``vmap`` and ``grad``.
``@stage_operator(stage)`` states the stage each needs (StageViolation while tracing otherwise). The reactions depend
on a Model's numbers and take it as a required argument, ``method(state, model)`` (the package's convention).
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._api.stage_operator import stage_operator
from jaxbody._dynamics.state import State
from jaxbody._math import spatial
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument


class MobilizedBodyForces:
    """Mixin with mobilizer reactions and force helpers.

    Uses ``self.index``, ``self.q_start``, ``self.u_start``, ``self.name``, ``self._check_u_index``,
    ``self.mobilizer_in`` and ``self.express_vector_in_ground_frame`` of MobilizedBody.
    """

    # -- mobilizer reaction forces --------------------------------------------------------

    @stage_operator(Stage.Acceleration)
    def find_mobilizer_reaction_on_body_at_m_in_ground(self, state: State, model):
        """Spatial force (2, 3) this body's mobilizer applies to it, at Mo, in G. ``model`` is the Model the state was realized with (the reaction needs its parameters).
        """
        return model.calc_mobilizer_reaction_forces(state)[self.index]

    @stage_operator(Stage.Acceleration)
    def find_mobilizer_reaction_on_body_at_origin_in_ground(self, state: State, model):
        """The same reaction moved to the body origin Bo: ``[t_M + p_BM_G x f ; f]``."""
        F = self.find_mobilizer_reaction_on_body_at_m_in_ground(state, model)
        p_BM_G = spatial.matvec(state.position.R_GB[self.index], model.parameters.p_BM[self.index])
        return jnp.stack([F[0] + jnp.cross(p_BM_G, F[1]), F[1]])

    @stage_operator(Stage.Acceleration)
    def find_mobilizer_reaction_on_parent_at_f_in_ground(self, state: State, model):
        """Equal and opposite reaction on the parent, moved to the inboard frame origin Fo, in G."""
        return self._reaction_on_parent_at(state, model, at_frame_F=True)

    @stage_operator(Stage.Acceleration)
    def find_mobilizer_reaction_on_parent_at_origin_in_ground(self, state: State, model):
        """Equal and opposite reaction on the parent, moved to the parent's origin Po, in G."""
        return self._reaction_on_parent_at(state, model, at_frame_F=False)

    def _reaction_on_parent_at(self, state, model, at_frame_F):
        pos = state.position
        F = self.find_mobilizer_reaction_on_body_at_m_in_ground(state, model)
        i, parent = self.index, max(model.topology.parent[self.index], 0)
        p_GM = pos.p_GB[i] + spatial.matvec(pos.R_GB[i], model.parameters.p_BM[i])
        p_GP = pos.p_GB[parent]
        point = p_GP + spatial.matvec(pos.R_GB[parent], model.parameters.p_PF[i]) if at_frame_F else p_GP
        # Force -f at Mo; its moment about the new point adds (p_M - point) x (-f).
        return jnp.stack([-F[0] - jnp.cross(p_GM - point, F[1]), -F[1]])

    # ------------------------------------------------------------------------------------
    # Force helpers (Simbody adds into an argument; here a new array is returned)

    def _check_body_forces(self, state, body_forces):
        body_forces = jnp.asarray(body_forces)
        if body_forces.shape != state.body_forces.shape:
            raise InvalidArgument(f"{self.name}: body_forces must have shape {state.body_forces.shape}, got {body_forces.shape}")
        return body_forces

    @stage_operator()
    def apply_body_force(self, state: State, spatial_force_G, body_forces):
        """body_forces (nbodies, 2, 3) plus ``spatial_force_G`` (torque, force at Bo) in G on this body."""
        F = jnp.asarray(spatial_force_G)
        if F.shape != (2, 3):
            raise InvalidArgument(f"{self.name}: spatial_force_G must have shape (2, 3), got {F.shape}")
        return self._check_body_forces(state, body_forces).at[self.index].add(F)

    @stage_operator()
    def apply_body_torque(self, state: State, torque_G, body_forces):
        """body_forces plus a pure torque (3,) in G on this body."""
        return self._check_body_forces(state, body_forces).at[self.index, 0].add(jnp.asarray(torque_G))

    @stage_operator(Stage.Position)
    def apply_force_to_body_point(self, state: State, station_B, force_G, body_forces):
        """body_forces plus force ``force_G`` (in G) applied at station ``station_B`` (in B)."""
        r = self.express_vector_in_ground_frame(state, station_B)
        f = jnp.asarray(force_G)
        return self._check_body_forces(state, body_forces).at[self.index].add(jnp.stack([jnp.cross(r, f), f]))

    @stage_operator()
    def apply_one_mobility_force(self, state: State, which: int, f, mobility_forces):
        """mobility_forces (nu_total,) plus ``f`` on this mobilizer's u ``which``."""
        self._check_u_index(which)
        mobility_forces = jnp.asarray(mobility_forces)
        if mobility_forces.shape != state.u.shape:
            raise InvalidArgument(f"{self.name}: mobility_forces must have shape {state.u.shape}, got {mobility_forces.shape}")
        return mobility_forces.at[self.u_start + which].add(f)

    @stage_operator(Stage.Position)
    def convert_q_force_to_u_force(self, state: State, f_q):
        """u-space force ``N^T f_q`` (nu,) for a q-space force ``f_q`` (nq in use,) of this mobilizer.

        Power is preserved: ``f_q . qdot = f_u . u``. N depends on q and the State's Euler/quaternion mode
        only (no Model numbers), so no Model is needed."""
        mob = self.mobilizer_in(state)
        f_q = jnp.asarray(f_q, state.q.dtype)
        if f_q.shape != (mob.nq_in_use,):
            raise InvalidArgument(f"{self.name}: f_q must have length {mob.nq_in_use}, got shape {f_q.shape}")
        if mob.nu == 0:
            return jnp.zeros((0,), state.q.dtype)
        q = state.q[self.q_start : self.q_start + mob.nq_alloc]
        f_pad = jnp.zeros(mob.nq_alloc, state.q.dtype).at[: mob.nq_in_use].set(f_q)
        return mob.multiply_by_n_transpose(q[None], f_pad[None])[0]
