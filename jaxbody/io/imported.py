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
    passive_forces: joint name (MJCF tendons: "tendon <name>") -> the springs, dampers and friction made from the file
    (switch them off per State with ``forces.set_force_is_disabled``); limit_stops: joint name -> its
    ``MobilityLinearStop`` (empty when loaded with ``joint_limits=False``; see ``jaxbody.io._passive``);
    actuators: MJCF: the handle of the model's actuators (jaxbody.io.mjcf_actuators; None without any), whose
    controls are MuJoCo's ctrl.
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
    actuators: ForceHandle | None = None


def homogeneous(R, p) -> np.ndarray:
    """(4, 4) numpy matrix of a rotation (3, 3) and a translation (3,)."""
    X = np.eye(4)
    X[:3, :3] = np.asarray(R, dtype=float)
    X[:3, 3] = np.asarray(p, dtype=float)
    return X
