"""Simbody's ContactTrackerSubsystem and CompliantContactSubsystem (host-side builders) and the pair selection.

``tracker = jb.ContactTrackerSubsystem(system)`` collects, at ``realize_topology()``, the contact surfaces on
every mobilized body's Body (``body.add_contact_surface``) in body order, and picks the pairs as Simbody's
tracker does: surfaces on different mobilized bodies, sharing no clique; plus jaxbody's per-pair rules for
importers (MJCF ``<exclude>``, ``<pair>``, contype/conaffinity):

* ``tracker.exclude_pair(surface_a, surface_b)``: never track this pair;
* ``tracker.include_pair(surface_a, surface_b)``: track it even if the surfaces share a clique or the pair
  was excluded (never on one mobilized body: its force would be internal).

Surfaces are named by the ``jb.ContactSurface`` objects attached (a surface object attached to several bodies
names all its attachments). The pair list is static (fixed at ``realize_topology()``), grouped by pair kind;
a pair of kinds no tracker covers raises InvalidArgument naming both surfaces and bodies (Simbody skips it).

``jb.CompliantContactSubsystem(system, tracker)`` is a force subsystem holding one force element (Simbody's
CompliantContactSubsystem): every tracked pair's forces at Dynamics; ``get_contact_forces(state, model)`` is
Simbody's per-pair ContactForce report. ``set_force_model("smooth_hertz" | "exponential_spring", parameters)``
puts OpenSim's smooth sphere/half-space law or Simbody's exponential spring on every tracked pair instead of the
pair table's models (``_dynamics/contact/compliant_smooth_models.py``; a pair they cannot act on raises at
``realize_topology()`` naming both surfaces).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.contact_surface import ContactSurface, stack_records
from jaxbody._api.exponential_spring_force import ExponentialSpringParameters
from jaxbody._api.force_handles import ForceHandle
from jaxbody._api.system import GeneralForceSubsystem, MultibodySystem
from jaxbody._dynamics.contact import compliant_smooth_models as smooth
from jaxbody._dynamics.contact.compliant import CompliantContactForce, ContactForces, PairGroup
from jaxbody._dynamics.contact.trackers.table import find_rule
from jaxbody._dynamics.state import State, require
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument


class ContactTrackerSubsystem:
    """Finds the contact surfaces of a system and decides which pairs are tracked (see the module docstring)."""

    def __init__(self, system: MultibodySystem):
        if not isinstance(system, MultibodySystem):
            raise InvalidArgument("ContactTrackerSubsystem(system) needs a jb.MultibodySystem")
        system._check_not_frozen("add a ContactTrackerSubsystem")
        self.system = system
        self._excluded: set = set()
        self._included: set = set()

    def _key(self, a, b, what):
        for s in (a, b):
            if not isinstance(s, ContactSurface):
                raise InvalidArgument(f"ContactTrackerSubsystem.{what} needs two jb.ContactSurface, got {type(s).__name__}")
        self.system._check_not_frozen(f"change the tracked pairs ({what})")
        return frozenset((id(a), id(b)))

    def exclude_pair(self, surface_a: ContactSurface, surface_b: ContactSurface) -> None:
        """Never track the pair (surface_a, surface_b) (MJCF ``<exclude>``, contype/conaffinity masks)."""
        key = self._key(surface_a, surface_b, "exclude_pair")
        self._excluded.add(key)
        self._included.discard(key)

    def include_pair(self, surface_a: ContactSurface, surface_b: ContactSurface) -> None:
        """Track the pair even if the surfaces share a clique or it was excluded (MJCF ``<pair>``)."""
        key = self._key(surface_a, surface_b, "include_pair")
        self._included.add(key)
        self._excluded.discard(key)

    def get_surfaces(self) -> list:
        """[(mobilized body, index on its body, X_BS (R, p), ContactSurface)] in ContactSurfaceIndex order."""
        matter = self.system.get_matter_subsystem()
        return [(mobod, i, (R, p), surface) for mobod in matter._bodies
                for i, (R, p, surface) in enumerate(mobod.body.contact_surfaces)]

    def _describe(self, entry) -> str:
        mobod, i, _, surface = entry
        return f"{surface.geometry.kind} (surface {i} on body {mobod.name!r})"

    def select_pairs(self) -> list[tuple[int, int, bool]]:
        """Tracked pairs as (surface a, surface b, swapped) with a < b in ContactSurfaceIndex order;
        ``swapped``: the table's surface 1 is b. InvalidArgument for an untracked pair of kinds."""
        surfaces = self.get_surfaces()
        pairs = []
        for a in range(len(surfaces)):
            for b in range(a + 1, len(surfaces)):
                (ma, _, _, sa), (mb, _, _, sb) = surfaces[a], surfaces[b]
                key = frozenset((id(sa), id(sb)))
                if ma is mb:
                    if key in self._included:
                        raise InvalidArgument(f"ContactTrackerSubsystem.include_pair: {self._describe(surfaces[a])} and "
                                              f"{self._describe(surfaces[b])} are on the same mobilized body")
                    continue
                if key not in self._included and (key in self._excluded or sa.is_in_same_clique(sb)):
                    continue
                found = find_rule(sa.geometry.kind, sb.geometry.kind)
                if found is None:
                    raise InvalidArgument(f"ContactTrackerSubsystem: no tracker for the pair {self._describe(surfaces[a])} "
                                          f"and {self._describe(surfaces[b])}; exclude the pair (exclude_pair) or put "
                                          f"the surfaces in one clique")
                pairs.append((a, b, found[1]))
        return pairs


#: OpenSim's SmoothSphereHalfSpaceForce defaults of the "smooth_hertz" model's parameters.
SMOOTH_HERTZ_DEFAULTS = {"constant_contact_force": 1e-5, "hertz_smoothing": 300.0, "hunt_crossley_smoothing": 50.0}


def _check_force_model(tracker, force_model, surfaces, a, b, kinds) -> None:
    """InvalidArgument naming both surfaces when the subsystem's force model cannot act on pair (a, b)."""
    if force_model == "smooth_hertz" and find_rule(*kinds)[0].force_model not in smooth.SMOOTH_HERTZ_PAIRS:
        need = "a pair the table gives a Hertz model (one point with an effective radius)"
    elif force_model == "exponential_spring" and kinds not in smooth.EXPONENTIAL_POINTS:
        need = "a HalfSpace with a Sphere, Capsule, Ellipsoid or Brick"
    else:
        return
    raise InvalidArgument(f"CompliantContactSubsystem force model {force_model!r} needs {need}; the pair "
                          f"{tracker._describe(surfaces[a])} and {tracker._describe(surfaces[b])} is not one "
                          f"(exclude the pair or use the pair table's model)")


#: ``set_broad_phase("auto")``: on (capacity ``AUTO_BROAD_PHASE_CAPACITY`` per pair kind) when more than
#: ``AUTO_BROAD_PHASE_PAIRS`` pairs are tracked, off otherwise (benchmarks/README.md, "Broad phase": measured).
AUTO_BROAD_PHASE_PAIRS = 256
AUTO_BROAD_PHASE_CAPACITY = 64


def _build_element(tracker: ContactTrackerSubsystem, transition_velocity: float, force_model=None,
                   parameters=(), capacity: int | str = 0) -> CompliantContactForce:
    surfaces = tracker.get_surfaces()
    if capacity == "auto":
        capacity = AUTO_BROAD_PHASE_CAPACITY if len(tracker.select_pairs()) > AUTO_BROAD_PHASE_PAIRS else 0
    for mobod in tracker.system.get_matter_subsystem()._bodies:  # the Model's pair indices count on these lists
        mobod.body._surfaces_read_by = (tracker.system, mobod.name)
    record_keys, members, where = [], [], []
    for _, _, _, surface in surfaces:
        key = (surface.geometry.kind, surface.geometry.static_key())
        if key not in record_keys:
            record_keys.append(key)
            members.append([])
        r = record_keys.index(key)
        where.append((r, len(members[r])))
        members[r].append(surface.geometry)
    grouped: dict = {}
    for a, b, swapped in tracker.select_pairs():
        one, two = (b, a) if swapped else (a, b)
        (r1, k1), (r2, k2) = where[one], where[two]
        kinds = (surfaces[one][3].geometry.kind, surfaces[two][3].geometry.kind)
        _check_force_model(tracker, force_model, surfaces, one, two, kinds)
        grouped.setdefault((kinds, r1, r2), []).append((k1, k2, one, two))
    groups = tuple(
        PairGroup(kinds, (r1, r2), tuple(tuple(x[i] for x in rows) for i in (0, 1)),
                  tuple(tuple(x[i] for x in rows) for i in (2, 3)))
        for (kinds, r1, r2), rows in grouped.items())
    f = lambda rows: jnp.asarray(np.asarray(rows, dtype=float))  # noqa: E731
    empty = not surfaces
    return CompliantContactForce(
        surface_body=tuple(m.index for m, _, _, _ in surfaces), groups=groups, force_model=force_model,
        shapes=tuple(stack_records(g) for g in members),
        R_BS=f(np.zeros((0, 3, 3)) if empty else [X[0] for _, _, X, _ in surfaces]),
        p_BS=f(np.zeros((0, 3)) if empty else [X[1] for _, _, X, _ in surfaces]),
        material=f(np.zeros((0, 5)) if empty else [s.material.as_row() for _, _, _, s in surfaces]),
        thickness=f([s.thickness for _, _, _, s in surfaces]),
        transition_velocity=f(transition_velocity), model_parameters=f(parameters),
        broad_phase_capacity=capacity,
    )


class _ContactHandle(ForceHandle):
    """The subsystem's element handle: its State.z count (3 per exponential-spring point) follows the pairs."""

    def __init__(self, subsystem, tracker):
        self._contact = subsystem
        super().__init__(subsystem, lambda: _build_element(tracker, subsystem._transition_velocity,
                                                           *subsystem._force_model, subsystem._broad_phase_capacity),
                         "CompliantContactSubsystem")

    @property
    def num_z(self) -> int:
        if self._contact._force_model[0] != "exponential_spring":
            return 0
        tracker, kinds = self._contact.tracker, lambda s: s[3].geometry.kind  # noqa: E731
        surfaces = tracker.get_surfaces()
        pairs = [(kinds(surfaces[b]), kinds(surfaces[a])) if swapped else (kinds(surfaces[a]), kinds(surfaces[b]))
                 for a, b, swapped in tracker.select_pairs()]
        return sum(3 * smooth.EXPONENTIAL_POINTS.get(k, 0) for k in pairs)


class CompliantContactSubsystem(GeneralForceSubsystem):
    """Simbody's CompliantContactSubsystem: Hertz (circular, elliptical) with Hunt-Crossley dissipation,
    brick/half-space penalty, Simbody's material combination and friction (static, dynamic, viscous, with
    ``set_transition_velocity``, default 0.01 m/s as Simbody) on every pair the ``tracker`` tracks; or, by
    ``set_force_model``, OpenSim's smooth sphere/half-space law or Simbody's exponential spring on every pair.

    A force subsystem with one element (``self.force``, a ForceHandle: ``set_disabled(state)`` etc.)."""

    def __init__(self, system: MultibodySystem, tracker: ContactTrackerSubsystem):
        if not isinstance(tracker, ContactTrackerSubsystem) or tracker.system is not system:
            raise InvalidArgument("CompliantContactSubsystem(system, tracker) needs the jb.ContactTrackerSubsystem of this system")
        super().__init__(system)
        self.tracker = tracker
        self._transition_velocity = 0.01
        self._force_model = (None, ())
        self._broad_phase_capacity = 0
        self.force = _ContactHandle(self, tracker)

    def set_force_model(self, name: str | None, parameters=None) -> None:
        """The force model of every tracked pair, before ``realize_topology()``: None (default) the pair table's
        (Simbody's: Hertz, penalty, elastic foundation); ``"smooth_hertz"``: OpenSim's SmoothSphereHalfSpaceForce
        law on Hertz pairs, ``parameters`` a dict overriding ``SMOOTH_HERTZ_DEFAULTS`` (constant_contact_force N,
        hertz_smoothing 1/m, hunt_crossley_smoothing s/m; Model leaves ``model_parameters``); materials and the
        transition velocity as for the other models; ``"exponential_spring"``: Simbody's ExponentialSpringForce
        of each half-space pair's points, ``parameters`` a ``jb.ExponentialSpringParameters`` (default
        Simbody's), the materials unused, 3 State.z entries per point (p0x, p0y, K; ``self.force.z_slice``).
        See ``_dynamics/contact/compliant_smooth_models.py`` for the laws and the pairs each accepts."""
        self.system._check_not_frozen("set the force model")
        if name is None:
            self._force_model = (None, ())
        elif name == "smooth_hertz":
            given = dict(parameters or {})
            unknown = sorted(set(given) - set(SMOOTH_HERTZ_DEFAULTS))
            if unknown:
                raise InvalidArgument(f"CompliantContactSubsystem smooth_hertz: unknown parameters {unknown}; "
                                      f"known: {sorted(SMOOTH_HERTZ_DEFAULTS)}")
            values = [float(given.get(k, v)) for k, v in SMOOTH_HERTZ_DEFAULTS.items()]
            if not all(np.isfinite(v) and v >= 0 for v in values):
                raise InvalidArgument(f"CompliantContactSubsystem smooth_hertz: parameters must be finite and >= 0, got {values}")
            self._force_model = (name, tuple(values))
        elif name == "exponential_spring":
            parameters = ExponentialSpringParameters() if parameters is None else parameters
            if not isinstance(parameters, ExponentialSpringParameters):
                raise InvalidArgument("CompliantContactSubsystem exponential_spring: parameters must be "
                                      f"jb.ExponentialSpringParameters, got {type(parameters).__name__}")
            checked = parameters.checked("CompliantContactSubsystem exponential_spring")
            self._force_model = (name, tuple(float(checked[k]) for k in smooth.EXPONENTIAL_PARAMETERS))
        else:
            raise InvalidArgument(f"CompliantContactSubsystem force model must be None, 'smooth_hertz' or "
                                  f"'exponential_spring', got {name!r}")

    def set_broad_phase(self, capacity: int | str) -> None:
        """Broad phase (before ``realize_topology()``; 0, the default: off; ``"auto"``, as ``load_mjcf`` and
        ``load_urdf`` set it: ``AUTO_BROAD_PHASE_CAPACITY`` when more than ``AUTO_BROAD_PHASE_PAIRS`` pairs are
        tracked at ``realize_topology()``, else off): each pair kind with more than
        ``capacity`` pairs runs its narrow phase only on the ``capacity`` pairs whose bounding spheres are
        nearest, the others getting no force; if more than ``capacity`` of them have overlapping bounding spheres
        the whole kind is tracked (never a dropped contact). Forces equal the full narrow phase's; see
        ``_dynamics/contact/broad_phase.py``. Worth it for models with many far pairs (hundreds of geoms)."""
        self.system._check_not_frozen("set the broad phase")
        if capacity == "auto":
            self._broad_phase_capacity = "auto"
            return
        if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 0:
            raise InvalidArgument(f"CompliantContactSubsystem broad phase capacity must be an int >= 0 or 'auto', "
                                  f"got {capacity!r}")
        self._broad_phase_capacity = int(capacity)

    def set_transition_velocity(self, v) -> None:
        """Friction's transition velocity (m/s, > 0; Simbody's default 0.01); before ``realize_topology()``
        (after it, it is the Model leaf ``transition_velocity`` of the element)."""
        self.system._check_not_frozen("set the transition velocity")
        v = float(np.asarray(v, dtype=float))
        if not (np.isfinite(v) and v > 0):
            raise InvalidArgument(f"CompliantContactSubsystem transition velocity must be positive, got {v!r}")
        self._transition_velocity = v

    def get_transition_velocity(self, model):
        """The Model's transition velocity (m/s), a leaf of its element."""
        return self.force._element(model).transition_velocity

    def set_transition_velocity_in(self, model, v):
        """A Model with transition velocity ``v`` (traced values allowed; nothing recompiles)."""
        return self.force._set_leaf(model, "transition_velocity", v)

    def get_contact_tracker_subsystem(self) -> ContactTrackerSubsystem:
        return self.tracker

    def get_num_contact_pairs(self, model) -> int:
        return len(self.force._element(model).pairs())

    def get_contact_pairs(self, model) -> list:
        """[(ContactSurface 1, ContactSurface 2)] of each tracked pair, in ``get_contact_forces`` order, with the
        (mobilized body, index on body) of each: [((mobod1, i1), (mobod2, i2))]."""
        surfaces = self.tracker.get_surfaces()
        return [tuple((surfaces[s][0], surfaces[s][1]) for s in pair) for pair in self.force._element(model).pairs()]

    def get_contact_forces(self, state: State, model) -> ContactForces:
        """Simbody's ContactForce per tracked pair (fixed-size arrays, ``ContactForces``; inactive pairs carry
        zeros and ``active`` False). The State must be realized to Velocity. jit/vmap/grad-able."""
        self.force._check(state, "get_contact_forces")
        require(state, Stage.Velocity, "CompliantContactSubsystem.get_contact_forces")
        return self.force._element(model).calc_contact_forces(state, state.z[self.force.z_slice])
