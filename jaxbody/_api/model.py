"""``Model``: the realized system and Simbody's SimbodyMatterSubsystem operators, snake_case.

Every method is a pure function of (model, state, arguments): results are
returned, nothing is written into arguments, and each works under ``jit``,
``vmap`` and ``grad``. Each docstring names the stage the state must be
realized to; a missing stage raises StageViolation while tracing. Spatial
vectors are (nbodies, 2, 3), (angular, linear), at body origins, in Ground.
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbody._dynamics import articulated
from jaxbody._dynamics import inverse_dynamics
from jaxbody._dynamics import mass_matrix
from jaxbody._topology import mobilizer_groups
from jaxbody._dynamics import prescribed
from jaxbody import _realize
from jaxbody._math import spatial
from jaxbody._dynamics import system_properties as sp
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument
from jaxbody._api.model_constraints import ConstraintOperatorsMixin
from jaxbody._constraints.layout import ConstraintSet
from jaxbody._api.model_jacobians import JacobianOperators
from jaxbody._dynamics.parameters import Parameters
from jaxbody._api.model_motion import MotionOperators
from jaxbody._dynamics.state import State, require
from jaxbody._topology.topology import Topology


class Model(JacobianOperators, ConstraintOperatorsMixin, MotionOperators, eqx.Module):
    """A frozen multibody system: ``topology`` (static), ``parameters``, ``forces`` and ``motions`` (array leaves).

    constraints: the static ConstraintSet (their parameters are in ``parameters.constraint_params``).

    motions: one jaxbody.motion.BoundMotion per body with an adopted Motion.
    default_lock_level: static per-body lock levels of ``lock_by_default`` (empty: none).
    """

    topology: Topology = eqx.field(static=True)
    parameters: Parameters
    forces: tuple
    default_q: jnp.ndarray
    motions: tuple = ()
    default_lock_level: tuple = eqx.field(static=True, default=())
    constraints: ConstraintSet = eqx.field(static=True, default=ConstraintSet())

    # -- sizes ---------------------------------------------------------------

    def get_num_bodies(self) -> int:
        """Mobilized bodies including Ground."""
        return self.topology.nbodies

    def get_num_mobilities(self) -> int:
        return self.topology.nu

    def get_num_q(self) -> int:
        """Length of q (Simbody's getTotalQAlloc)."""
        return self.topology.nq

    def get_num_u(self) -> int:
        return self.topology.nu

    def get_num_constraints(self) -> int:
        return self.constraints.num_constraints

    def get_num_quaternions_in_use(self, state: State | None = None) -> int:
        """Mobilizers whose q holds a quaternion (none in Euler-angle mode). ``state`` must be in this model's mode."""
        if state is not None:
            self._check_mode(state)
        return len(self.topology.quaternion_bodies)

    def is_using_quaternion(self, state: State | None, mobod) -> bool:
        """Whether ``mobod``'s mobilizer keeps a quaternion in its first four q slots in this model's mode."""
        return self.get_quaternion_pool_index(state, mobod) >= 0

    def get_quaternion_pool_index(self, state: State | None, mobod) -> int:
        """Index of ``mobod``'s quaternion among the quaternions in use, or -1 if it uses none.

        Simbody's QuaternionPoolIndex: pool order is tree level, then body index (the order of the
        quaternion entries of qErr, ``position.quaternion_errors``); Simbody's invalid index is -1 here.
        """
        if state is not None:
            self._check_mode(state)
        index = mobod.get_mobilized_body_index()
        if not 0 <= index < self.topology.nbodies:
            raise InvalidArgument(f"{mobod.name}: not a body of this model")
        return int(self.topology.quaternion_pool_index[index])

    def get_use_euler_angles(self) -> bool:
        return self.topology.use_euler_angles

    # -- states -----------------------------------------------------------------

    def default_state(self) -> State:
        """State at t = 0 with Simbody's default q (zero angles, identity quaternions), u = 0, no forces.

        Locks are the ``lock_by_default`` ones, with values recorded from the default q and u (= 0).
        """
        dtype = self.default_q.dtype
        nb = self.topology.nbodies
        return State(
            t=jnp.zeros((), dtype),
            q=self.default_q,
            u=jnp.zeros(self.topology.nu, dtype),
            z=jnp.zeros(0, dtype),
            mobility_forces=jnp.zeros(self.topology.nu, dtype),
            body_forces=jnp.zeros((nb, 2, 3), dtype),
            lock_level=jnp.asarray(self.default_lock_level or (-1,) * nb, jnp.int32),
            lock_q=self.default_q,
            lock_u=jnp.zeros(self.topology.nu, dtype),
            constraint_enabled=jnp.asarray(self.constraints.default_enabled, bool).reshape(self.constraints.num_constraints),
            use_euler_angles=self.topology.use_euler_angles,
        )

    get_default_state = default_state

    def realize(self, state: State, stage: Stage = Stage.Acceleration) -> State:
        """Realize ``state`` through ``stage``; see jaxbody.realize."""
        self._check_mode(state)
        return _realize.realize(self, state, stage)

    def _check_mode(self, state: State):
        if state.use_euler_angles != self.topology.use_euler_angles:
            mode = {True: "Euler-angle", False: "quaternion"}
            raise InvalidArgument(
                f"the state's q is in {mode[state.use_euler_angles]} mode but the model is in "
                f"{mode[self.topology.use_euler_angles]} mode: convert the state with the model it was made "
                "for (convert_to_euler_angles / convert_to_quaternions) and realize it with "
                "model.with_use_euler_angles(...)"
            )

    def astype(self, dtype) -> "Model":
        """The same model with every floating-point leaf cast to ``dtype`` (e.g. jnp.float32 for GPU throughput)."""

        def cast(x):
            return x.astype(dtype) if isinstance(x, jnp.ndarray) and jnp.issubdtype(x.dtype, jnp.floating) else x

        return jax.tree_util.tree_map(cast, self)

    def with_use_euler_angles(self, use: bool) -> "Model":
        """The same system with every quaternion-capable mobilizer in Euler (True) or quaternion mode.

        q keeps its length and layout; convert states with convert_to_euler_angles /
        convert_to_quaternions.
        """
        topo = dataclasses.replace(
            self.topology,
            use_euler_angles=bool(use),
            mobilizers=tuple(m.with_euler(bool(use)) for m in self.topology.mobilizers),
        )
        default_q = jnp.concatenate(
            [jnp.asarray(m.default_q(), self.default_q.dtype) for m in topo.mobilizers] + [jnp.zeros(0, self.default_q.dtype)]
        )
        return dataclasses.replace(self, topology=topo, default_q=default_q)

    def _convert_orientations(self, state: State, to_euler: bool) -> State:
        topo = self.topology
        self._check_mode(state)
        q = state.q
        for group, qi in zip(topo.groups, topo.group_q_index):  # a loop over mobilizer types, not bodies
            m = group.mobilizer
            if not m.has_quaternion_mode or m.uses_quaternion != to_euler:  # no choice, or already converted
                continue
            qg = q[qi]
            if to_euler:
                angles = spatial.body_fixed_xyz_from_rotation(spatial.rotation_from_quaternion(qg[:, :4]))
                block = jnp.concatenate([angles, qg[:, 4:], jnp.zeros_like(qg[:, :1])], -1)
            else:
                quat = spatial.quaternion_from_rotation(spatial.rotation_from_body_fixed_xyz(qg[:, :3]))
                block = jnp.concatenate([quat, qg[:, 3 : m.nq_alloc - 1]], -1)
            q = q.at[qi].set(block)
        return dataclasses.replace(state.set_q(q), use_euler_angles=to_euler)

    def convert_to_euler_angles(self, state: State) -> State:
        """q of ``state`` (this model's mode) re-expressed for ``self.with_use_euler_angles(True)``; u unchanged.

        A no-op when this model is already in Euler mode.
        """
        return self._convert_orientations(state, True)

    def convert_to_quaternions(self, state: State) -> State:
        """q re-expressed for ``self.with_use_euler_angles(False)`` (canonical w >= 0); u unchanged."""
        return self._convert_orientations(state, False)

    def normalize_quaternions(self, state: State) -> State:
        """Every quaternion in use scaled to unit norm (other q unchanged)."""
        return state.set_q(mobilizer_groups.normalize_q(self.topology, self.parameters, state.q))

    # -- helpers ------------------------------------------------------------------

    def _abi(self, state: State):
        """(P, D_inv, G, udot_known): from the Dynamics cache, else computed now (needs Position)."""
        if state.dynamics is not None:
            dyn = state.dynamics
            return dyn.P, dyn.D_inv, dyn.G, dyn.udot_known
        known = prescribed.calc_udot_known_bodies(self, state)
        return articulated.calc_articulated_body_inertias(self, state.position, known) + (known,)

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

    def calc_acceleration_ignoring_constraints(self, state: State, mobility_forces, body_forces):
        """Forward dynamics of the tree: udot from ``M udot + tau = f + J^T F - c`` (articulated-body, O(n)).

        Requires Velocity. Args: mobility_forces (nu,), body_forces (nbodies, 2, 3) at Bo in G
        (these are all the forces: gravity is not added). Known udots (locks, Motions) are
        honoured. Returns (udot (nu,), A_GB (nbodies, 2, 3)).
        """
        require(state, Stage.Velocity, "calc_acceleration_ignoring_constraints")
        udot_p = state.dynamics.udot_prescribed if state.dynamics is not None else prescribed.calc_known_udot(self, state)
        udot, A_GB, _ = articulated.calc_tree_accelerations(
            self, state.position, state.velocity, self._abi(state),
            self._mobility(mobility_forces), self._bodyforces(body_forces), udot_p,
        )
        return udot, A_GB

    def calc_residual_force_ignoring_constraints(self, state: State, mobility_forces, body_forces, udot):
        """Inverse dynamics ``M udot + c - f - J^T F`` (nu,). Requires Velocity. Cost: O(n)."""
        require(state, Stage.Velocity, "calc_residual_force_ignoring_constraints")
        return inverse_dynamics.calc_residual_force_ignoring_constraints(
            self, state.position, state.velocity, self._mobility(mobility_forces),
            self._bodyforces(body_forces), self._mobility(udot, "udot"),
        )

    def calc_tree_equivalent_mobility_forces(self, state: State, body_forces):
        """``J^T F - c`` (nu,): body forces plus velocity-induced inertial forces in u space. Requires Velocity."""
        require(state, Stage.Velocity, "calc_tree_equivalent_mobility_forces")
        return inverse_dynamics.calc_tree_equivalent_mobility_forces(
            self, state.position, state.velocity, self._bodyforces(body_forces)
        )

    def calc_body_acceleration_from_udot(self, state: State, udot):
        """``A_GB = J udot + Jdot u`` (nbodies, 2, 3). Requires Velocity."""
        require(state, Stage.Velocity, "calc_body_acceleration_from_udot")
        return inverse_dynamics.calc_body_acceleration_from_udot(
            self, state.position, state.velocity, self._mobility(udot, "udot")
        )

    # -- mass matrix ---------------------------------------------------------------

    def multiply_by_m(self, state: State, a):
        """``M a`` (nu,) in O(n) without forming M. Requires Position."""
        require(state, Stage.Position, "multiply_by_m")
        return mass_matrix.multiply_by_m(self, state.position, self._mobility(a, "a"))

    def multiply_by_m_inv(self, state: State, f):
        """``M^-1 f`` (nu,) in O(n) without forming M (articulated-body operator). Requires Position.

        With known udots (locks, Motions) this is Simbody's ``[M_rr^-1 f_r; 0]``: f on known mobilities is ignored.
        """
        require(state, Stage.Position, "multiply_by_m_inv")
        return articulated.multiply_by_m_inv(self, state.position, self._abi(state), self._mobility(f, "f"))

    def calc_m(self, state: State):
        """Mass matrix (nu, nu) by composite-body inertias. Requires Position. Cost O(n * depth)."""
        require(state, Stage.Position, "calc_m")
        return mass_matrix.calc_m(self, state.position)

    def calc_m_inv(self, state: State):
        """M^-1 (nu, nu) by nu applications of the O(n) operator. Requires Position.

        With known udots, rows and columns of known mobilities are zero and the rest is M_rr^-1 (Simbody's calcMInv).
        """
        require(state, Stage.Position, "calc_m_inv")
        return mass_matrix.calc_m_inv(self, state.position, self._abi(state))

    def calc_composite_body_inertias(self, state: State):
        """Composite-body spatial inertias about Bo in G (nbodies, 6, 6). Requires Position."""
        require(state, Stage.Position, "calc_composite_body_inertias")
        return mass_matrix.calc_composite_body_inertias(self, state.position)

    def get_articulated_body_inertias(self, state: State):
        """Articulated-body inertias P about Bo in G (nbodies, 6, 6). Requires Position."""
        require(state, Stage.Position, "get_articulated_body_inertias")
        return self._abi(state)[0]

    # -- N operators -------------------------------------------------------------------

    def calc_q_dot(self, state: State, u):
        """``qdot = N(q) u`` (nq,). Requires Position."""
        require(state, Stage.Position, "calc_q_dot")
        return mobilizer_groups.multiply_by_n(self.topology, self.parameters, state.q, self._mobility(u, "u"))

    def calc_q_dot_dot(self, state: State, udot):
        """``qdotdot = N udot + NDot u`` (nq,) with the state's u. Requires Velocity."""
        require(state, Stage.Velocity, "calc_q_dot_dot")
        return mobilizer_groups.calc_qdotdot(self.topology, self.parameters, state.q, state.u, self._mobility(udot, "udot"))

    def multiply_by_n(self, state: State, v, transpose: bool = False):
        """``N v`` (v (nu,) -> (nq,)) or ``N^T v`` (v (nq,) -> (nu,)). Requires Position."""
        require(state, Stage.Position, "multiply_by_n")
        topo, prm = self.topology, self.parameters
        if transpose:
            return mobilizer_groups.multiply_by_n_transpose(topo, prm, state.q, self._vec(v, topo.nq, "v"))
        return mobilizer_groups.multiply_by_n(topo, prm, state.q, self._mobility(v, "v"))

    def multiply_by_n_inv(self, state: State, v, transpose: bool = False):
        """``NInv v`` (v (nq,) -> (nu,)) or ``NInv^T v`` (v (nu,) -> (nq,)). Requires Position."""
        require(state, Stage.Position, "multiply_by_n_inv")
        topo, prm = self.topology, self.parameters
        if transpose:
            return mobilizer_groups.multiply_by_n_inv_transpose(topo, prm, state.q, self._mobility(v, "v"))
        return mobilizer_groups.multiply_by_n_inv(topo, prm, state.q, self._vec(v, topo.nq, "v"))

    def multiply_by_n_dot(self, state: State, v, transpose: bool = False):
        """``NDot v`` (v (nu,) -> (nq,)) or ``NDot^T v`` (v (nq,) -> (nu,)), NDot at the state's u. Requires Velocity."""
        require(state, Stage.Velocity, "multiply_by_n_dot")
        topo, prm = self.topology, self.parameters
        if transpose:
            return mobilizer_groups.multiply_by_n_dot_transpose(topo, prm, state.q, state.u, self._vec(v, topo.nq, "v"))
        return mobilizer_groups.multiply_by_n_dot(topo, prm, state.q, state.u, self._mobility(v, "v"))

    # -- system properties ---------------------------------------------------------------

    def calc_kinetic_energy(self, state: State):
        """Kinetic energy (J). Requires Velocity."""
        require(state, Stage.Velocity, "calc_kinetic_energy")
        return sp.calc_kinetic_energy(state.position, state.velocity)

    def calc_potential_energy(self, state: State):
        """Potential energy of the force elements (J). Requires Dynamics."""
        return require(state, Stage.Dynamics, "calc_potential_energy").dynamics.potential_energy

    def calc_energy(self, state: State):
        """Kinetic plus potential energy (MultibodySystem::calcEnergy). Requires Dynamics."""
        return self.calc_kinetic_energy(state) + self.calc_potential_energy(state)

    def calc_system_mass(self, state: State | None = None):
        return sp.calc_system_mass(self.parameters)

    def calc_system_mass_center_location_in_ground(self, state: State):
        """Requires Position."""
        require(state, Stage.Position, "calc_system_mass_center_location_in_ground")
        return sp.calc_mass_center_location(self.parameters, state.position)

    def calc_system_mass_center_velocity_in_ground(self, state: State):
        """Requires Velocity."""
        require(state, Stage.Velocity, "calc_system_mass_center_velocity_in_ground")
        return sp.calc_mass_center_velocity(self.parameters, state.position, state.velocity)

    def calc_system_mass_center_acceleration_in_ground(self, state: State):
        """Requires Acceleration."""
        require(state, Stage.Acceleration, "calc_system_mass_center_acceleration_in_ground")
        return sp.calc_mass_center_acceleration(self.parameters, state.position, state.velocity, state.acceleration.A_GB)

    def calc_system_momentum_about_ground_origin(self, state: State):
        """(angular momentum about the Ground origin, linear momentum) (2, 3). Requires Velocity."""
        require(state, Stage.Velocity, "calc_system_momentum_about_ground_origin")
        return sp.calc_momentum_about_ground_origin(state.position, state.velocity)

    def calc_system_central_momentum(self, state: State):
        """Momentum with the angular part about the system mass center (2, 3). Requires Velocity."""
        require(state, Stage.Velocity, "calc_system_central_momentum")
        return sp.calc_central_momentum(self.parameters, state.position, state.velocity)

    def calc_system_central_inertia_in_ground(self, state: State):
        """System inertia about its mass center, in G (3, 3). Requires Position."""
        require(state, Stage.Position, "calc_system_central_inertia_in_ground")
        return sp.calc_central_inertia_in_ground(self.parameters, state.position)

    # -- force accumulation helpers (return new arrays) ---------------------------------------

    def add_in_station_force(self, state: State, mobod, station_B, force_G, body_forces):
        """body_forces plus a force applied at a station (in B) of ``mobod``. Requires Position."""
        pos = require(state, Stage.Position, "add_in_station_force").position
        r = spatial.matvec(pos.R_GB[mobod.index], jnp.asarray(station_B))
        force_G = jnp.asarray(force_G)
        return self._bodyforces(body_forces).at[mobod.index].add(jnp.stack([jnp.cross(r, force_G), force_G]))

    def add_in_body_torque(self, state: State, mobod, torque_G, body_forces):
        """body_forces plus a torque (in G) on ``mobod``."""
        return self._bodyforces(body_forces).at[mobod.index, 0].add(jnp.asarray(torque_G))

    def add_in_mobility_force(self, state: State, mobod, which_u: int, f, mobility_forces):
        """mobility_forces plus ``f`` on mobility ``which_u`` of ``mobod``."""
        mobod._check_u_index(which_u)
        return self._mobility(mobility_forces).at[mobod.u_start + which_u].add(f)

    def get_gravity_body_forces(self, state: State):
        """Body forces (nbodies, 2, 3) of the model's gravity elements alone. Requires Position."""
        from jaxbody._dynamics.forces import Gravity, UniformGravity

        require(state, Stage.Position, "get_gravity_body_forces")
        F = jnp.zeros((self.topology.nbodies, 2, 3), state.q.dtype)
        for element in self.forces:
            if isinstance(element, (Gravity, UniformGravity)):
                F = F + element.calc(self, state)[0]
        return F


def _compile_public_operators():
    """Make each public operator its own ``eqx.filter_jit`` entry point.

    Called eagerly, an operator then compiles once per model topology and
    argument shapes instead of compiling its tree scans on every call; inside a
    user's ``jax.jit``/``vmap``/``grad`` the inner jit is simply inlined.
    MobilizedBody handles, task lists and flags are static arguments.
    """
    skip = {"get_num_bodies", "get_num_mobilities", "get_num_q", "get_num_u", "get_num_constraints",
            "get_num_quaternions_in_use", "get_quaternion_pool_index", "get_use_euler_angles", "default_state", "get_default_state",
            "with_use_euler_angles", "calc_system_mass"} | MotionOperators._HOST_METHODS
    for name in dir(Model):
        if name.startswith("_") or name in skip:
            continue
        if name.startswith(("calc_", "multiply_by_", "get_", "realize", "convert_", "normalize_", "add_in_",
                            "prescribe", "find_")):
            setattr(Model, name, eqx.filter_jit(getattr(Model, name)))




_compile_public_operators()
