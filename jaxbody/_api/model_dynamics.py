"""Model methods for the tree's dynamics: forward and inverse dynamics, the mass matrix, the N operators,
system mass properties, momentum and energy, and force accumulation helpers (Simbody's
SimbodyMatterSubsystem operators, snake_case).

Each method declares the stage it needs with ``@stage_operator`` (jaxbody._api.stage_operator); costs are O(n)
tree sweeps unless a docstring says otherwise. Spatial vectors are (nbodies, 2, 3), (angular, linear),
at body origins, in Ground.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._api.mobilized_body_mass import MassPropertiesArrays
from jaxbody._api.stage_operator import stage_operator
from jaxbody._dynamics import articulated, inverse_dynamics, kinematics, mass_matrix, prescribed, tendon_armature
from jaxbody._dynamics import system_properties as sp
from jaxbody._dynamics.force_elements.gravity import Gravity, UniformGravity
from jaxbody._dynamics.state import State
from jaxbody._kernels import backend
from jaxbody._kernels import tree as kernel_tree
from jaxbody._math import spatial
from jaxbody._realize import with_tendon_armature
from jaxbody._topology import mobilizer_groups
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument


class ModelDynamics:
    """Tree dynamics operators of Model (mixed into jaxbody._api.model.Model)."""

    # -- helpers ------------------------------------------------------------------

    def _articulated_inertias(self, state: State) -> articulated.ArticulatedInertias:
        """The articulated-body inertias of a State realized to Position, as Simbody's operators get them.

        Simbody realizes them lazily at Position stage (realizeArticulatedBodyInertias) for multiplyByMInv,
        calcMInv and friends. jaxbody has no lazy caches: it reads them from the Dynamics cache when the State
        is realized that far, and otherwise computes them here (one inward scan, the cost each caller's
        docstring states). Realize to Dynamics once to share them between several such operators.
        """
        if state.get_system_stage() >= Stage.Dynamics:
            return state.dynamics.articulated
        known = prescribed.calc_udot_known_bodies(self, state)
        return articulated.aba_inertias_inward(self, state.position, known)

    def _known_bodies(self, state: State, dtype):
        """(nbodies,) 1.0 where a body's udots are known (locks, Motions), as the kernels take them."""
        known = state.dynamics.articulated.udot_known if state.get_system_stage() >= Stage.Dynamics else \
            prescribed.calc_udot_known_bodies(self, state)
        return known.astype(dtype)

    def _vec(self, x, n, what, trailing=()):
        x = jnp.asarray(x)
        if x.shape != (n,) + tuple(trailing):
            raise InvalidArgument(f"{what} must have shape {(n,) + tuple(trailing)}, got {x.shape}")
        return x

    def _mobility(self, f, what="mobility_forces"):
        return self._vec(f, self.topology.nu, what)

    def _bodyforces(self, F, what="body_forces"):
        return self._vec(F, self.topology.nbodies, what, (2, 3))

    # -- dynamics ---------------------------------------------------------------------

    @stage_operator(Stage.Velocity, jit=True)
    def calc_acceleration_ignoring_constraints(self, state: State, mobility_forces, body_forces):
        """Forward dynamics of the tree: udot from ``M udot + motion_forces = f + J^T F - c`` (articulated-body, O(n)).

        Args: mobility_forces (nu,), body_forces (nbodies, 2, 3) at Bo in G
        (these are all the forces: gravity is not added). Known udots (locks, Motions) are
        honoured; tendon armature is included (M + J^T A J, jaxbody._dynamics.tendon_armature). Returns
        (udot (nu,), A_GB (nbodies, 2, 3)).
        """
        tree = self._tree_accelerations(state, mobility_forces, body_forces)
        return tree.udot, tree.A_GB

    def _tree_accelerations(self, state: State, mobility_forces, body_forces) -> articulated.TreeAccelerations:
        """The ABA for given forces at a State realized to Velocity; known udots from the Dynamics cache if
        realized, else evaluated now (as the articulated inertias, see _articulated_inertias)."""
        known_udot = state.dynamics.udot_prescribed if state.get_system_stage() >= Stage.Dynamics else prescribed.calc_known_udot(self, state)
        abi = self._articulated_inertias(state)
        tree = articulated.calc_tree_accelerations(
            self, state.position, state.velocity, abi,
            self._mobility(mobility_forces), self._bodyforces(body_forces), known_udot,
        )
        return with_tendon_armature(self, state, abi, tree)

    @stage_operator(Stage.Velocity, jit=True)
    def calc_residual_force_ignoring_constraints(self, state: State, mobility_forces, body_forces, udot):
        """Inverse dynamics ``M udot + c - f - J^T F`` (nu,), with tendon armature ``+ J^T A (J udot + b)``
        (jaxbody._dynamics.tendon_armature). Cost: O(n)."""
        residual = inverse_dynamics.calc_residual_force_ignoring_constraints(
            self, state.position, state.velocity, self._mobility(mobility_forces),
            self._bodyforces(body_forces), self._mobility(udot, "udot"),
        )
        if not self.tendon_armatures:
            return residual
        J, b = tendon_armature.calc_tendon_rows(self, state.position, state.velocity, state.q, state.u)
        return residual + J.T @ (tendon_armature.armatures(self) * (J @ udot + b))

    @stage_operator(Stage.Velocity, jit=True)
    def calc_tree_equivalent_mobility_forces(self, state: State, body_forces):
        """``J^T F - c`` (nu,): body forces plus velocity-induced inertial forces in u space."""
        return inverse_dynamics.calc_tree_equivalent_mobility_forces(
            self, state.position, state.velocity, self._bodyforces(body_forces)
        )

    @stage_operator(Stage.Velocity, jit=True)
    def calc_body_acceleration_from_udot(self, state: State, udot):
        """``A_GB = J udot + Jdot u`` (nbodies, 2, 3)."""
        return inverse_dynamics.calc_body_acceleration_from_udot(
            self, state.position, state.velocity, self._mobility(udot, "udot")
        )

    # -- mass matrix ---------------------------------------------------------------

    @stage_operator(Stage.Position, jit=True)
    def multiply_by_m(self, state: State, a):
        """``M a`` (nu,) in O(n) without forming M; M includes tendon armature (``+ J^T A J a``, nt more rows)."""
        a = self._mobility(a, "a")
        Ma = mass_matrix.multiply_by_m(self, state.position, a)
        if not self.tendon_armatures:
            return Ma
        return Ma + tendon_armature.multiply_by_m_term(self, state.position, state.q, a)

    @stage_operator(Stage.Position, jit=True)
    def multiply_by_m_inv(self, state: State, f):
        """``M^-1 f`` (nu,) in O(n) without forming M (articulated-body operator). With known udots (locks, Motions) this is Simbody's ``[M_rr^-1 f_r; 0]``: f on known mobilities is ignored.
        On the compiled kernels when they apply (jb.get_backend()), else the JAX path's articulated solve.
        Tendon armature included (Woodbury on this operator, nt more solves).
        """
        f = self._mobility(f, "f")
        if self.tendon_armatures:
            return tendon_armature.correct_m_inv(self, state.position, state.q, self._tree_m_inv(state, f),
                                                 lambda g: self._tree_m_inv(state, g))
        return self._tree_m_inv(state, f)

    def _tree_m_inv(self, state: State, f):
        """The tree's ``M^-1 f`` (no tendon armature): compiled kernels or the JAX articulated solve."""
        if backend.runs_compiled(self.topology, state.q.dtype):
            return kernel_tree.multiply_by_m_inverse(self.topology, self.parameters, state.q,
                                                     self._known_bodies(state, state.q.dtype), f)
        return articulated.multiply_by_m_inv(self, state.position, self._articulated_inertias(state), f)

    @stage_operator(Stage.Position, jit=True)
    def calc_m(self, state: State):
        """Mass matrix (nu, nu) by composite-body inertias, tendon armature ``J^T A J`` included. Cost O(n * depth)."""
        M = mass_matrix.calc_m(self, state.position)
        if not self.tendon_armatures:
            return M
        return M + tendon_armature.mass_matrix_term(self, state.position, state.q)

    @stage_operator(Stage.Position, jit=True)
    def calc_m_inv(self, state: State):
        """M^-1 (nu, nu) by nu applications of the O(n) operator. With known udots, rows and columns of known mobilities are zero and the rest is M_rr^-1 (Simbody's calcMInv).
        On the compiled kernels (one call, nu columns) when they apply, else nu JAX articulated solves; tendon
        armature included (Woodbury, nt more solves).
        """
        if backend.runs_compiled(self.topology, state.q.dtype):
            M_inv = kernel_tree.m_inverse_matrix(self.topology, self.parameters, state.q,
                                                 self._known_bodies(state, state.q.dtype))
        else:
            M_inv = mass_matrix.calc_m_inv(self, state.position, self._articulated_inertias(state))
        if self.tendon_armatures:
            return tendon_armature.correct_m_inv(self, state.position, state.q, M_inv,
                                                 lambda g: self._tree_m_inv(state, g))
        return M_inv

    @stage_operator(Stage.Position, jit=True)
    def calc_composite_body_inertias(self, state: State):
        """Composite-body spatial inertias about Bo in G (nbodies, 6, 6)."""
        return mass_matrix.calc_composite_body_inertias(self, state.position)

    @stage_operator(Stage.Position, jit=True)
    def get_articulated_body_inertias(self, state: State):
        """Articulated-body inertias I_A about Bo in G (nbodies, 6, 6)."""
        return self._articulated_inertias(state).I_A

    # -- N operators -------------------------------------------------------------------

    @stage_operator(Stage.Position, jit=True)
    def calc_q_dot(self, state: State, u):
        """``qdot = N(q) u`` (nq,)."""
        return kinematics.calc_q_dot(self, state, self._mobility(u, "u"))

    @stage_operator(Stage.Velocity, jit=True)
    def calc_q_dot_dot(self, state: State, udot):
        """``qdotdot = N udot + NDot u`` (nq,) with the state's u."""
        return mobilizer_groups.calc_qdotdot(self.topology, self.parameters, state.q, state.u, self._mobility(udot, "udot"))

    @stage_operator(Stage.Position, jit=True)
    def multiply_by_n(self, state: State, v, transpose: bool = False):
        """``N v`` (v (nu,) -> (nq,)) or ``N^T v`` (v (nq,) -> (nu,))."""
        topo, prm = self.topology, self.parameters
        if transpose:
            return mobilizer_groups.multiply_by_n_transpose(topo, prm, state.q, self._vec(v, topo.nq, "v"))
        return mobilizer_groups.multiply_by_n(topo, prm, state.q, self._mobility(v, "v"))

    @stage_operator(Stage.Position, jit=True)
    def multiply_by_n_inv(self, state: State, v, transpose: bool = False):
        """``NInv v`` (v (nq,) -> (nu,)) or ``NInv^T v`` (v (nu,) -> (nq,))."""
        topo, prm = self.topology, self.parameters
        if transpose:
            return mobilizer_groups.multiply_by_n_inv_transpose(topo, prm, state.q, self._mobility(v, "v"))
        return mobilizer_groups.multiply_by_n_inv(topo, prm, state.q, self._vec(v, topo.nq, "v"))

    @stage_operator(Stage.Velocity, jit=True)
    def multiply_by_n_dot(self, state: State, v, transpose: bool = False):
        """``NDot v`` (v (nu,) -> (nq,)) or ``NDot^T v`` (v (nq,) -> (nu,)), NDot at the state's u."""
        topo, prm = self.topology, self.parameters
        if transpose:
            return mobilizer_groups.multiply_by_n_dot_transpose(topo, prm, state.q, state.u, self._vec(v, topo.nq, "v"))
        return mobilizer_groups.multiply_by_n_dot(topo, prm, state.q, state.u, self._mobility(v, "v"))

    # -- system properties ---------------------------------------------------------------

    @stage_operator(Stage.Velocity, jit=True)
    def calc_kinetic_energy(self, state: State):
        """Kinetic energy (J), the tendons' armature ``1/2 sum a Ldot^2`` included."""
        ke = sp.calc_kinetic_energy(self.parameters, state.position, state.velocity, state.u)
        if not self.tendon_armatures:
            return ke
        Ldot = tendon_armature.tendon_speeds(self, state.position, state.q, state.u)
        return ke + 0.5 * jnp.sum(tendon_armature.armatures(self) * Ldot**2)

    @stage_operator(Stage.Dynamics, jit=True)
    def calc_potential_energy(self, state: State):
        """Potential energy of the force elements (J)."""
        return state.dynamics.potential_energy

    @stage_operator(Stage.Dynamics, jit=True)
    def calc_energy(self, state: State):
        """Kinetic plus potential energy (MultibodySystem::calcEnergy)."""
        return self.calc_kinetic_energy(state) + self.calc_potential_energy(state)

    @stage_operator()
    def calc_system_mass(self, state: State | None = None):
        return sp.calc_system_mass(self.parameters)

    @stage_operator(Stage.Position, jit=True)
    def calc_system_mass_center_location_in_ground(self, state: State):
        """"""
        return sp.calc_mass_center_location(self.parameters, state.position)

    @stage_operator(Stage.Velocity, jit=True)
    def calc_system_mass_center_velocity_in_ground(self, state: State):
        """"""
        return sp.calc_mass_center_velocity(self.parameters, state.position, state.velocity)

    @stage_operator(Stage.Acceleration, jit=True)
    def calc_system_mass_center_acceleration_in_ground(self, state: State):
        """"""
        return sp.calc_mass_center_acceleration(self.parameters, state.position, state.velocity, state.acceleration.A_GB)

    @stage_operator(Stage.Velocity, jit=True)
    def calc_system_momentum_about_ground_origin(self, state: State):
        """(angular momentum about the Ground origin, linear momentum) (2, 3)."""
        return sp.calc_momentum_about_ground_origin(state.position, state.velocity)

    @stage_operator(Stage.Velocity, jit=True)
    def calc_system_central_momentum(self, state: State):
        """Momentum with the angular part about the system mass center (2, 3)."""
        return sp.calc_central_momentum(self.parameters, state.position, state.velocity)

    @stage_operator(Stage.Position, jit=True)
    def calc_system_central_inertia_in_ground(self, state: State):
        """System inertia about its mass center, in G (3, 3)."""
        return sp.calc_central_inertia_in_ground(self.parameters, state.position)

    @stage_operator(Stage.Position, jit=True)
    def calc_system_mass_properties_in_ground(self, state: State):
        """Simbody's calcSystemMassPropertiesInGround: MassPropertiesArrays(mass (), com (3,) from the Ground origin
        in G, inertia (3, 3) about the Ground origin in G) of the whole system."""
        return MassPropertiesArrays(*sp.calc_mass_properties_in_ground(self.parameters, state.position))

    # -- force accumulation helpers (return new arrays) ---------------------------------------

    @stage_operator(Stage.Position, jit=True)
    def add_in_station_force(self, state: State, mobod, station_B, force_G, body_forces):
        """body_forces plus a force applied at a station (in B) of ``mobod``."""
        pos = state.position
        r = spatial.matvec(pos.R_GB[mobod.index], jnp.asarray(station_B))
        force_G = jnp.asarray(force_G)
        return self._bodyforces(body_forces).at[mobod.index].add(jnp.stack([jnp.cross(r, force_G), force_G]))

    @stage_operator(jit=True)
    def add_in_body_torque(self, state: State, mobod, torque_G, body_forces):
        """body_forces plus a torque (in G) on ``mobod``."""
        return self._bodyforces(body_forces).at[mobod.index, 0].add(jnp.asarray(torque_G))

    @stage_operator(jit=True)
    def add_in_mobility_force(self, state: State, mobod, which_u: int, f, mobility_forces):
        """mobility_forces plus ``f`` on mobility ``which_u`` of ``mobod``."""
        mobod._check_u_index(which_u)
        return self._mobility(mobility_forces).at[mobod.u_start + which_u].add(f)

    @stage_operator(Stage.Position, jit=True)
    def get_gravity_body_forces(self, state: State):
        """Body forces (nbodies, 2, 3) of the model's enabled gravity elements alone."""
        F = jnp.zeros((self.topology.nbodies, 2, 3), state.q.dtype)
        for i, element in enumerate(self.forces):
            if isinstance(element, (Gravity, UniformGravity)):
                F = F + jnp.where(state.force_enabled[i], element.calc(self, state)[0], 0.0)
        return F
