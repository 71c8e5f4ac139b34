"""What an importer returns: the Simbody-style builders plus name maps, joint metadata and visual records.

Everything here is host-side and built before ``system.realize_topology()``: users may add constraints and
force elements to ``system``/``matter``/``forces`` first, then realize.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from jaxbody._api.constraint import Constraint
from jaxbody._api.force_handles import ForceHandle
from jaxbody._api.mobilized_body import MobilizedBody
from jaxbody._api.system import (
    GeneralForceSubsystem,
    MultibodySystem,
    SimbodyMatterSubsystem,
)
from jaxbody._math.spatial import Transform
from jaxbody.errors import InvalidArgument
from jaxbody.io.engine_coordinates import EngineJoint, from_jaxbody, to_jaxbody

#: The visual kinds an importer emits (``Visual.kind``).
VISUAL_KINDS = ("sphere", "box", "cylinder", "capsule", "mesh")


class Coordinate(NamedTuple):
    """Where a file's joint lives in jaxbody: its MobilizedBody and its q slots there.

    ``q_index``: first q of the joint within the mobilizer (``mobilized_body.get_one_q(state, q_index)``);
    ``nq``/``nu``: how many q and u slots the joint spans (1 for revolute/prismatic/hinge/slide, 3 for
    planar, 4/3 for ball, 7/6 for free and floating).
    """

    mobilized_body: MobilizedBody
    q_index: int
    nq: int
    nu: int


class CoordinateIndex:
    """``q_index(name)`` / ``u_index(name)``: where an imported coordinate's first q and u sit in the State
    (for records whose ``coordinates`` maps names to Coordinate; URDF, MJCF and OpenSim alike)."""

    coordinates: dict

    def q_index(self, name: str) -> int:
        """Index of coordinate ``name``'s first q in the State's q."""
        c = self.coordinates[name]
        return c.mobilized_body.q_start + c.q_index

    def u_index(self, name: str) -> int:
        """Index of coordinate ``name``'s first u in the State's u (after the u of the coordinates before it on
        the same mobilizer)."""
        c = self.coordinates[name]
        before = sum(o.nu for o in self.coordinates.values()
                     if o.mobilized_body is c.mobilized_body and o.q_index < c.q_index)
        return c.mobilized_body.u_start + before


class Frame(NamedTuple):
    """A file's link/body frame as a frame fixed on a jaxbody body: ``X_BF`` (F's pose in body B, metres)."""

    mobilized_body: MobilizedBody
    X_BF: Transform


@dataclasses.dataclass(frozen=True)
class Visual:
    """A drawable geometry primitive fixed on a body (plain data for ``jaxbody.viz``).

    body: name of the jaxbody body it is attached to (a key of ``ImportedModel.bodies``).
    X_BV: (4, 4) numpy homogeneous transform of the geometry frame V in the body frame B (metres).
    kind: one of ``VISUAL_KINDS``. size (metres, numpy): sphere (radius,); box (half-extents x, y, z);
    cylinder and capsule (radius, half-length along V's z); mesh (scale x, y, z).
    mesh: URDF: the mesh file name as written (e.g. "package://..."); MJCF: the mesh asset's name (MuJoCo
    re-centres mesh vertices at compile time, so X_BV is the compiled mesh frame); None for primitives.
    rgba: (4,) or None.
    """

    body: str
    X_BV: np.ndarray
    kind: str
    size: np.ndarray
    mesh: str | None = None
    rgba: np.ndarray | None = None


@dataclasses.dataclass
class ImportedModel(CoordinateIndex):
    """A model read from a URDF or MJCF file, not yet realized.

    bodies: name -> MobilizedBody (Ground included under the file's root/world name);
    frames: every link/body name -> Frame (a fused link keeps its frame on the body it was fused into);
    coordinates: joint name -> Coordinate (a URDF floating base is "root_joint", as in Pinocchio; ``q_index(name)``,
    ``u_index(name)`` give its slots in the State); constraints: name -> the Constraint made from a URDF mimic
    ("mimic <joint>") or an MJCF equality (its name, or "equality<i>"); joint_limits: joint name -> (lower, upper) in the joint's q units;
    damping: joint name -> coefficient (N m s/rad or N s/m; applied as the ``passive_forces`` dampers);
    friction: joint name -> its Coulomb friction from the file (N m or N; MJCF: its first dof's frictionloss),
    applied as the ``passive_forces`` MobilitySmoothCoulombFriction elements unless loaded with ``friction="ignore"``;
    armature: joint name -> coefficient as in the file (nonzero only; applied as the mobilizers' armature);
    gravity: (3,) the gravity added as ``Force.UniformGravity`` (m/s^2, in Ground); visuals: list of Visual;
    passive_forces: joint name (MJCF tendons: "tendon <name>"; MJCF fluid forces: "fluid <body>",
    jaxbody.io.mjcf_fluid) -> the springs, dampers, friction and fluid elements made from the file
    (switch them off per State with ``forces.set_force_is_disabled``); limit_stops: joint name -> its
    ``MobilityLinearStop``, and for MJCF ``"tendon <name>"`` -> its tendon's stop (jaxbody.io.mjcf_tendons)
    (empty when loaded with ``joint_limits=False``; see ``jaxbody.io._passive``);
    contact: the compliant contact made from the file's collision geometry (MJCF: jaxbody.io.mjcf_contact.MjcfContact,
    URDF: jaxbody.io.urdf_collision.UrdfContact), None when there is none;
    engine: "mujoco" (MJCF) or "pinocchio" (URDF): whose coordinates ``from_<engine>``/``to_<engine>`` convert;
    engine_joints: the file's joints in that engine's vectors (jaxbody.io.engine_coordinates); default_q: the
    file's default jaxbody q (MJCF: MuJoCo's qpos0; URDF: zero moved inside each joint's limits), None = the
    Model's; keyframes: MJCF ``<key>`` name (or "key<i>") -> Keyframe (MuJoCo's time, qpos, qvel);
    actuators: MJCF: the handle of the model's actuators (jaxbody.io.mjcf_actuators; None without any), whose
    controls are MuJoCo's ctrl.
    MJCF only (None/empty otherwise): timestep (s) and integrator (MuJoCo's name) of ``<option>``;
    mjcf_disabled: the ``<option><flag>`` names the file disables (jaxbody.io.mjcf_options).
    """

    system: MultibodySystem
    matter: SimbodyMatterSubsystem
    forces: GeneralForceSubsystem
    bodies: dict[str, MobilizedBody]
    frames: dict[str, Frame]
    coordinates: dict[str, Coordinate]
    constraints: dict[str, Constraint]
    joint_limits: dict[str, tuple[float, float]]
    damping: dict[str, float]
    armature: dict[str, float]
    gravity: np.ndarray
    visuals: list[Visual]
    friction: dict[str, float] = dataclasses.field(default_factory=dict)
    passive_forces: dict[str, list[ForceHandle]] = dataclasses.field(default_factory=dict)
    limit_stops: dict[str, ForceHandle] = dataclasses.field(default_factory=dict)
    contact: object = None
    engine: str = ""
    engine_joints: tuple[EngineJoint, ...] = ()
    default_q: np.ndarray | None = None
    keyframes: dict[str, "Keyframe"] = dataclasses.field(default_factory=dict)
    actuators: ForceHandle | None = None
    timestep: float | None = None
    integrator: str | None = None
    mjcf_disabled: frozenset[str] = frozenset()

    def _model(self, model):
        return self.system.realize_topology() if model is None else model

    def default_state(self, model=None):
        """``model.default_state()`` (model: this system's Model; None: ``system.realize_topology()``) with q at
        the file's default (``default_q``): MuJoCo's qpos0 for MJCF, zero moved inside the joint limits for URDF.
        Host-side; cost: one State."""
        state = self._model(model).default_state()
        return state if self.default_q is None else state.set_q(self.default_q)

    def keyframe(self, name: str, model=None):
        """The State of MJCF ``<key name=...>``: its time, qpos and qvel in jaxbody's t, q, u (model as in
        ``default_state``). Raises InvalidArgument naming the known keyframes for an unknown name."""
        if name not in self.keyframes:
            raise InvalidArgument(f"keyframe {name!r}: the file has {sorted(self.keyframes) or 'no keyframes'}")
        key = self.keyframes[name]
        q, u = self._convert_in("mujoco", key.qpos, key.qvel)
        return self.default_state(model).set_time(key.time).set_q(q).set_u(u)

    def _convert_in(self, engine, positions, velocities):
        if self.engine != engine:
            raise InvalidArgument(f"from_{engine}: this model was read for {self.engine or 'no engine'}; use "
                                  f"from_{self.engine}" if self.engine else f"from_{engine}: no engine coordinates")
        return to_jaxbody(self.coordinates, self.engine_joints, self.matter.get_total_q_alloc(),
                          self.matter.get_num_mobilities(), engine, positions, velocities)

    def _convert_out(self, engine, state):
        if self.engine != engine:
            raise InvalidArgument(f"to_{engine}: this model was read for {self.engine or 'no engine'}; use "
                                  f"to_{self.engine}" if self.engine else f"to_{engine}: no engine coordinates")
        return from_jaxbody(self.coordinates, self.engine_joints, self.matter.get_total_q_alloc(),
                            self.matter.get_num_mobilities(), engine, state.q, state.u)

    def from_mujoco(self, qpos, qvel=None):
        """(q, u) of jaxbody from MuJoCo's qpos (..., nq) and qvel (..., nv) (None: zero), for a model read by
        load_mjcf; batched, jit/vmap/grad-able; conventions: jaxbody.io.engine_coordinates. Set them with
        ``state.set_q(q).set_u(u)`` (or under ``jax.vmap`` for a batch)."""
        return self._convert_in("mujoco", qpos, qvel)

    def to_mujoco(self, state):
        """(qpos, qvel) of MuJoCo from a State (or a batch of States: leading dims of q and u kept)."""
        return self._convert_out("mujoco", state)

    def from_pinocchio(self, q, v=None):
        """(q, u) of jaxbody from Pinocchio's q (..., nq) and v (..., nv) (None: zero), for a model read by
        load_urdf; batched, jit/vmap/grad-able; conventions: jaxbody.io.engine_coordinates."""
        return self._convert_in("pinocchio", q, v)

    def to_pinocchio(self, state):
        """(q, v) of Pinocchio from a State (or a batch of States: leading dims of q and u kept)."""
        return self._convert_out("pinocchio", state)


class Keyframe(NamedTuple):
    """An MJCF ``<key>``: time (s), qpos (nq,) and qvel (nv,) in MuJoCo's coordinates (numpy)."""

    time: float
    qpos: np.ndarray
    qvel: np.ndarray


def homogeneous(R, p) -> np.ndarray:
    """(4, 4) numpy matrix of a rotation (3, 3) and a translation (3,)."""
    X = np.eye(4)
    X[:3, :3] = np.asarray(R, dtype=float)
    X[:3, 3] = np.asarray(p, dtype=float)
    return X
