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

from jaxbody import _realize
from jaxbody._api.model_constraints import ModelConstraints
from jaxbody._api.model_dynamics import ModelDynamics
from jaxbody._api.model_forces import ModelForces
from jaxbody._api.model_jacobians import ModelJacobians
from jaxbody._api.model_motion import ModelMotion
from jaxbody._api.stage_operator import stage_operator
from jaxbody._constraints.layout import ConstraintSet
from jaxbody._dynamics import kinematics
from jaxbody._dynamics.parameters import Parameters
from jaxbody._dynamics.state import State, SystemSignature
from jaxbody._dynamics.state_checks import check_state
from jaxbody._topology.topology import Topology
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument


class Model(ModelDynamics, ModelForces, ModelJacobians, ModelConstraints, ModelMotion, eqx.Module):
    """A frozen multibody system: ``topology`` (static), ``parameters``, ``forces`` and ``motions`` (array leaves).

    constraints: the static ConstraintSet (their parameters are in ``parameters.constraint_params``).

    motions: one jaxbody._dynamics.motion.BoundMotion per body with an adopted Motion.
    default_lock_level: static per-body lock levels of ``lock_by_default`` (empty: none).
    default_motion_enabled: static per-body Motion enabling (``set_motion_disabled_by_default``; empty: all on).
    control_names: the name of each ``State.controls`` entry (static), the actuators' controls in force-element
    order (a MuJoCo actuator's name, an OpenSim actuator's name).
    tendon_armatures: one jaxbody._dynamics.tendon_armature.TendonArmature per tendon with armature (its path and
    armature are leaves; MuJoCo's J^T a J in M, added by forward dynamics and the mass-matrix operators).
    signature: the system's SystemSignature (static; by structure, so identical systems share compiled code).
    Every State this model makes carries it, and every operator checks a State's signature, shapes, dtype
    and mode against the model's before tracing (InvalidArgument; free at run time).
    """

    topology: Topology = eqx.field(static=True)
    parameters: Parameters
    forces: tuple
    default_q: jnp.ndarray
    motions: tuple = ()
    default_lock_level: tuple = eqx.field(static=True, default=())
    default_motion_enabled: tuple = eqx.field(static=True, default=())
    constraints: ConstraintSet = eqx.field(static=True, default=ConstraintSet())
    signature: SystemSignature | None = eqx.field(static=True, default=None)
    control_names: tuple = eqx.field(static=True, default=())
    tendon_armatures: tuple = ()

    # -- identity: ``jax.jit(model.realize)`` hashes the bound method, hence the Model ----------------------

    def __hash__(self):
        """By identity (a Model is immutable): bound methods are then valid ``jax.jit`` targets, with the
        Model's arrays as compile-time constants (pass the Model as an argument to trace them instead)."""
        return id(self)

    def __eq__(self, other):
        return self is other

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

    @property
    def nz(self) -> int:
        """Length of z: the force elements' state variables (Simbody's auxiliary continuous state)."""
        return sum(element.num_z() for element in self.forces)

    def get_num_z(self) -> int:
        return self.nz

    @property
    def num_controls(self) -> int:
        """Length of ``State.controls``: the controls every actuator reads, in element order."""
        return len(self.control_names)

    def get_num_controls(self) -> int:
        return self.num_controls

    def get_control_index(self, name: str) -> int:
        """Index in ``State.controls`` of the control named ``name`` (InvalidArgument if none or several)."""
        found = [i for i, n in enumerate(self.control_names) if n == name]
        if len(found) != 1:
            listed = ", ".join(self.control_names[:20]) + (", ..." if self.num_controls > 20 else "")
            why = f"{len(found)} controls are named {name!r}" if found else f"no control is named {name!r}"
            raise InvalidArgument(f"get_control_index: {why}; the model's {self.num_controls} controls: [{listed}]")
        return found[0]

    @property
    def default_z(self) -> jnp.ndarray:
        """Initial z (nz,): each force element's ``default_z``, in element order."""
        dtype = self.default_q.dtype
        parts = [element.default_z(dtype) for element in self.forces]
        return jnp.concatenate(parts) if parts else jnp.zeros((0,), dtype)

    @stage_operator()
    def get_num_quaternions_in_use(self, state: State | None = None) -> int:
        """Mobilizers whose q holds a quaternion (none in Euler-angle mode). ``state`` must be in this model's mode."""
        return len(self.topology.quaternion_bodies)

    @stage_operator()
    def is_using_quaternion(self, state: State | None, mobod) -> bool:
        """Whether ``mobod``'s mobilizer keeps a quaternion in its first four q slots in this model's mode."""
        return self.get_quaternion_pool_index(state, mobod) >= 0

    @stage_operator()
    def get_quaternion_pool_index(self, state: State | None, mobod) -> int:
        """Index of ``mobod``'s quaternion among the quaternions in use, or -1 if it uses none.

        Simbody's QuaternionPoolIndex: pool order is tree level, then body index (the order of the
        quaternion entries of qErr, ``position.quaternion_errors``); Simbody's invalid index is -1 here.
        """
        index = mobod.get_mobilized_body_index()
        if not 0 <= index < self.topology.nbodies:
            raise InvalidArgument(f"{mobod.name}: not a body of this model")
        return int(self.topology.quaternion_pool_index[index])

    def get_use_euler_angles(self) -> bool:
        return self.topology.use_euler_angles

    # -- states -----------------------------------------------------------------

    def default_state(self) -> State:
        """State at t = 0 with Simbody's default q (zero angles, identity quaternions), u = 0, no forces, controls 0.

        Locks are the ``lock_by_default`` ones, with values recorded from the default q and u (= 0).
        """
        dtype = self.default_q.dtype
        nb = self.topology.nbodies
        return State(
            t=jnp.zeros((), dtype),
            q=self.default_q,
            u=jnp.zeros(self.topology.nu, dtype),
            z=self.default_z,
            controls=jnp.zeros(self.num_controls, dtype),
            mobility_forces=jnp.zeros(self.topology.nu, dtype),
            body_forces=jnp.zeros((nb, 2, 3), dtype),
            lock_level=jnp.asarray(self.default_lock_level or (-1,) * nb, jnp.int32),
            lock_q=self.default_q,
            lock_u=jnp.zeros(self.topology.nu, dtype),
            motion_enabled=jnp.asarray(self.default_motion_enabled or (True,) * nb, bool),
            force_enabled=jnp.ones(len(self.forces), bool),
            constraint_enabled=jnp.asarray(self.constraints.default_enabled, bool).reshape(self.constraints.num_constraints),
            use_euler_angles=self.topology.use_euler_angles,
            system=self.signature,
        )

    get_default_state = default_state

    @stage_operator(jit=True)
    def realize(self, state: State, stage: Stage = Stage.Acceleration) -> State:
        """Realize ``state`` through ``stage``; see jaxbody._realize."""
        if not isinstance(state, State):
            raise InvalidArgument(f"realize: expected a jb.State (model.default_state()), got {type(state).__name__}")
        if not isinstance(stage, Stage):
            raise InvalidArgument(f"realize: stage must be a jb.Stage (e.g. jb.Stage.Position), got {stage!r}")
        return _realize.realize(self, state, stage)

    # -- ownership checks (host-side; see jaxbody._api.stage_operator.check_operands) ---------------------

    def _system_signature(self) -> SystemSignature | None:
        return self.signature

    def _label(self) -> str:
        return "the model"

    def _check_state(self, state: State, operation: str) -> None:
        """Raise one InvalidArgument listing every way ``state`` does not fit this model (see state_checks)."""
        check_state(self, state, operation)

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
        q = kinematics.convert_orientations(self.topology, state.q, to_euler)
        return dataclasses.replace(state.set_q(q), use_euler_angles=to_euler)

    @stage_operator(jit=True)
    def convert_to_euler_angles(self, state: State) -> State:
        """q of ``state`` (this model's mode) re-expressed for ``self.with_use_euler_angles(True)``; u unchanged.

        A no-op when this model is already in Euler mode.
        """
        return self._convert_orientations(state, True)

    @stage_operator(jit=True)
    def convert_to_quaternions(self, state: State) -> State:
        """q re-expressed for ``self.with_use_euler_angles(False)`` (canonical w >= 0); u unchanged."""
        return self._convert_orientations(state, False)

    @stage_operator(jit=True)
    def normalize_quaternions(self, state: State) -> State:
        """Every quaternion in use scaled to unit norm (other q unchanged)."""
        return kinematics.normalize_quaternions(self, state)
