"""Host-side construction in Simbody's style; mutable until ``realize_topology()`` freezes it.

    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0, -9.81, 0])
    b1 = jb.MobilizedBody.Pin(matter.Ground(), X_PF, jb.Body.Rigid(mass_props), X_BM)
    model = system.realize_topology()

Every argument is checked here, on concrete numbers, and a bad one raises an
error that names the body. Nothing in this module is traced.
"""

from __future__ import annotations

from jaxbody import _mobilizers as mob
from jaxbody._api.body import Body
from jaxbody._api.build_model import build_model, describe_matter, system_signature
from jaxbody._api.matter_bookkeeping import MatterBookkeeping
from jaxbody._api.matter_decorations import MatterDecorations
from jaxbody._api.mobilized_body import MobilizedBody
from jaxbody._api.system_bookkeeping import SystemBookkeeping
from jaxbody._api.system_conveniences import SystemConveniences
from jaxbody._api.system_events import SystemEvents
from jaxbody._api.unilateral import UnilateralMatter
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument, TopologyFrozen


class MultibodySystem(SystemBookkeeping, SystemConveniences, SystemEvents):
    """Owns one SimbodyMatterSubsystem and any number of GeneralForceSubsystems."""

    def __init__(self):
        self._matter: SimbodyMatterSubsystem | None = None
        self._force_subsystems: list[GeneralForceSubsystem] = []
        self._model = None
        SystemConveniences.__init__(self)
        SystemEvents.__init__(self)

    def get_matter_subsystem(self) -> SimbodyMatterSubsystem:
        if self._matter is None:
            raise InvalidArgument("this MultibodySystem has no SimbodyMatterSubsystem")
        return self._matter

    def is_topology_realized(self) -> bool:
        return self._model is not None

    def _check_not_frozen(self, what: str):
        if self._model is not None:
            raise TopologyFrozen(f"cannot {what}: realize_topology() already froze this system")

    def realize_topology(self):
        """Freeze the system into an immutable jaxbody Model (static topology + parameter leaves).

        Calling it again returns the same Model.
        """
        if self._model is None:
            self._model = build_model(self)
            self._count_stage(Stage.Topology)
        return self._model


class SimbodyMatterSubsystem(MatterDecorations, MatterBookkeeping, UnilateralMatter):
    """The tree of mobilized bodies. Ground is body 0."""

    def __init__(self, system: MultibodySystem):
        if not isinstance(system, MultibodySystem):
            raise InvalidArgument("SimbodyMatterSubsystem(system) needs a jb.MultibodySystem")
        system._check_not_frozen("add a matter subsystem")
        if system._matter is not None:
            raise InvalidArgument("this MultibodySystem already has a SimbodyMatterSubsystem")
        system._matter = self
        self.system = system
        self._use_euler_angles = False
        self._bodies: list[MobilizedBody] = []
        self._q_alloc = 0
        self._u_alloc = 0
        self._constraints: list = []
        self._tendon_armatures: list = []   # jaxbody._api.tendon_armature builders
        ground = MobilizedBody._create(self, None, None, Body.Massless(), None, mob.Weld, None, "Ground")
        self._ground = ground

    def _signature(self):
        """This matter's SystemSignature: the realized model's, or computed from the builder before realize."""
        model = self.system._model
        return model.signature if model is not None else system_signature(self)

    def _describe(self) -> str:
        """'the system of bodies [Ground, arm (Pin), ...]', as error messages name a system."""
        return describe_matter(self)

    def Ground(self) -> MobilizedBody:
        return self._ground

    def set_use_euler_angles(self, use: bool):
        """Model-stage choice for every quaternion-capable mobilizer (default False: quaternions)."""
        self.system._check_not_frozen("change use_euler_angles (use model.with_use_euler_angles)")
        self._use_euler_angles = bool(use)

    def get_use_euler_angles(self) -> bool:
        return self._use_euler_angles

    def get_num_bodies(self) -> int:
        """Number of mobilized bodies including Ground."""
        return len(self._bodies)

    def get_num_mobilities(self) -> int:
        return self._u_alloc

    def get_total_q_alloc(self) -> int:
        return self._q_alloc

    def get_mobilized_body(self, index: int) -> MobilizedBody:
        return self._bodies[index]

    def get_num_constraints(self) -> int:
        return len(self._constraints)

    def get_constraint(self, index: int):
        """The jb.Constraint handle with this ConstraintIndex."""
        return self._constraints[index]

    def _add_constraint(self, constraint) -> int:
        self.system._check_not_frozen(f"add constraint {constraint.ctype.simbody_name}")
        self._constraints.append(constraint)
        return len(self._constraints) - 1

    def _add(self, mobod: MobilizedBody, mobilizer) -> tuple[int, int, int]:
        self.system._check_not_frozen(f"add {mobod.name}")
        index = len(self._bodies)
        q_start, u_start = self._q_alloc, self._u_alloc
        self._bodies.append(mobod)
        self._q_alloc += mobilizer.nq_alloc
        self._u_alloc += mobilizer.nu
        return index, q_start, u_start


class GeneralForceSubsystem:
    """Holds force elements (``jb.Force.*``)."""

    def __init__(self, system: MultibodySystem):
        if not isinstance(system, MultibodySystem):
            raise InvalidArgument("GeneralForceSubsystem(system) needs a jb.MultibodySystem")
        system._check_not_frozen("add a force subsystem")
        system._force_subsystems.append(self)
        self.system = system
        self._elements: list = []

    def _add(self, element):
        self.system._check_not_frozen(f"add force {element.name}")
        self._elements.append(element)
        return len(self._elements) - 1

    def get_num_forces(self) -> int:
        return len(self._elements)

    def get_force(self, index: int):
        """The jb.Force handle with this ForceIndex (position in this subsystem)."""
        return self._elements[index]

    def _handle(self, force, what):
        if isinstance(force, int) and 0 <= force < len(self._elements):
            return self._elements[force]
        if force in self._elements:
            return force
        raise InvalidArgument(f"{what}: {force!r} is not a force handle or ForceIndex of this force subsystem")

    def set_force_is_disabled(self, state, force, disabled: bool):
        """A new State with ``force`` (handle or ForceIndex) disabled or enabled; drops Dynamics. No recompiling:
        the switch is the State array ``force_enabled`` (``disabled`` may be traced)."""
        return self._handle(force, "set_force_is_disabled").set_disabled(state, disabled)

    def is_force_disabled(self, state, force):
        return self._handle(force, "is_force_disabled").is_disabled(state)
