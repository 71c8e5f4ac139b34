"""SimbodyMatterSubsystem's unilateral-contact methods (a mixin), and the batched contact set they build.

``adopt_unilateral_contact`` / ``get_num_unilateral_contacts`` / ``get_unilateral_contact`` are Simbody's
names; ``build_contact_set`` turns the adopted contacts into the UnilateralContactSet that
jb.SemiExplicitEulerTimeStepper steps with (one batched group per geometry; Simbody catalogue 2.20).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._api.unilateral_contacts import StateLimitedFriction, UnilateralContact
from jaxbody._constraints.unilateral.contact_set import (
    CoordinateStops,
    DistanceContacts,
    EdgeContacts,
    PlaneContacts,
    SpeedRows,
    UnilateralContactSet,
)
from jaxbody.errors import InvalidArgument


class ConditionalFlag:
    """Mixin of jb.Constraint: Simbody's Topology-stage ``setIsConditional`` flag (default False). A conditional
    constraint is one a time stepper may enable and disable; jaxbody records the flag (the unilateral contacts
    of jb.SemiExplicitEulerTimeStepper carry their own conditions)."""

    def set_is_conditional(self, is_conditional: bool = True):
        self.matter.system._check_not_frozen(f"change whether {self.name} is conditional")
        self._is_conditional = bool(is_conditional)
        return self

    def is_conditional(self) -> bool:
        return getattr(self, "_is_conditional", False)


class UnilateralMatter:
    """Mixin of SimbodyMatterSubsystem (uses ``self.system`` and ``self._describe``)."""

    def _unilateral(self) -> list:
        if not hasattr(self, "_unilateral_contacts"):
            self._unilateral_contacts = []
        return self._unilateral_contacts

    def adopt_unilateral_contact(self, contact) -> int:
        """Add a jb.HardStopUpper, Rope, PointPlaneContact, ...; returns its UnilateralContactIndex."""
        if not isinstance(contact, UnilateralContact):
            raise InvalidArgument(f"adopt_unilateral_contact needs a jb.UnilateralContact, got {type(contact).__name__}")
        if contact.matter is not self:
            raise InvalidArgument(f"{contact.label}: its bodies belong to {contact.matter._describe()}, not to "
                                  f"{self._describe()}")
        if contact.index is not None:
            raise InvalidArgument(f"{contact.label} was already adopted (UnilateralContactIndex {contact.index})")
        self.system._check_not_frozen(f"adopt {contact.label}")
        contacts = self._unilateral()
        contact.index = len(contacts)
        contacts.append(contact)
        return contact.index

    def _speed_rows(self) -> list:
        if not hasattr(self, "_speed_row_list"):
            self._speed_row_list = []
        return self._speed_row_list

    def _register_speed_row(self, row):
        self.system._check_not_frozen(f"add {row.label}")
        self._speed_rows().append(row)

    def adopt_state_limited_friction(self, friction) -> int:
        """Add a jb.StateLimitedFriction; returns its StateLimitedFrictionIndex."""
        if not isinstance(friction, StateLimitedFriction):
            raise InvalidArgument(f"adopt_state_limited_friction needs a jb.StateLimitedFriction, got "
                                  f"{type(friction).__name__}")
        if friction.matter is not self:
            raise InvalidArgument(f"{friction.label}: its body belongs to {friction.matter._describe()}")
        if friction.index is not None:
            raise InvalidArgument(f"{friction.label} was already adopted (StateLimitedFrictionIndex {friction.index})")
        friction.index = self.get_num_state_limited_frictions()
        self._register_speed_row(friction)
        return friction.index

    def get_num_state_limited_frictions(self) -> int:
        return sum(isinstance(r, StateLimitedFriction) for r in self._speed_rows())

    def get_state_limited_friction(self, index: int) -> StateLimitedFriction:
        """The adopted friction element with this StateLimitedFrictionIndex."""
        frictions = [r for r in self._speed_rows() if isinstance(r, StateLimitedFriction)]
        if not isinstance(index, (int, np.integer)) or not 0 <= int(index) < len(frictions):
            raise InvalidArgument(f"state-limited friction index must be in [0, {len(frictions)}), got {index!r}")
        return frictions[int(index)]

    def get_num_unilateral_contacts(self) -> int:
        return len(self._unilateral())

    def get_unilateral_contact(self, index: int) -> UnilateralContact:
        """The adopted contact with this UnilateralContactIndex."""
        contacts = self._unilateral()
        if not isinstance(index, (int, np.integer)) or not 0 <= int(index) < len(contacts):
            raise InvalidArgument(f"unilateral contact index must be in [0, {len(contacts)}), got {index!r}")
        return contacts[int(index)]


def _leaves(contacts, names, dtype):
    return {n: jnp.asarray(np.asarray([getattr(c, n) for c in contacts]), dtype) for n in names}


def build_contact_set(matter, dtype=jnp.float64) -> UnilateralContactSet:
    """The adopted contacts as a UnilateralContactSet (groups in the order stops, planes, distances, edges)."""
    contacts, rows = matter._unilateral(), matter._speed_rows()
    if not contacts and not rows:
        raise InvalidArgument(f"{matter._describe()} has no unilateral contacts (matter.adopt_unilateral_contact) "
                              "or speed constraints")
    groups = {g: [c for c in contacts if c.group == g] for g in ("stops", "planes", "distances", "edges")}
    stops = planes = distances = edges = None
    if groups["stops"]:
        cs = groups["stops"]
        stops = CoordinateStops(
            q_index=tuple(c.bodies[0].q_start + c.which_q for c in cs),
            u_index=tuple(c.bodies[0].u_start + c.which_q for c in cs),
            sign=tuple(c.sign_convention for c in cs),
            **_leaves(cs, ("limit", "min_cor"), dtype),
        )
    if groups["planes"]:
        cs = groups["planes"]
        planes = PlaneContacts(
            plane_body=tuple(c.bodies[0].index for c in cs),
            follower_body=tuple(c.bodies[1].index for c in cs),
            **_leaves(cs, ("normal_B", "height", "point_F", "radius", "min_cor", "mu_s", "mu_d", "mu_v"), dtype),
        )
    if groups["distances"]:
        cs = groups["distances"]
        leaves = _leaves(cs, ("point1", "point2", "radius1", "radius2", "length", "min_cor", "mu_s", "mu_d", "mu_v"),
                         dtype)
        distances = DistanceContacts(
            body1=tuple(c.bodies[0].index for c in cs), body2=tuple(c.bodies[1].index for c in cs),
            sign=tuple(c.sign for c in cs), station1=leaves.pop("point1"), station2=leaves.pop("point2"), **leaves,
        )
    if groups["edges"]:
        cs = groups["edges"]
        edges = EdgeContacts(
            body_F=tuple(c.bodies[0].index for c in cs), body_B=tuple(c.bodies[1].index for c in cs),
            **_leaves(cs, ("R_FEf", "p_FEf", "half_length_F", "R_BEb", "p_BEb", "half_length_B", "min_cor", "mu_s",
                           "mu_d", "mu_v"), dtype),
        )
    grouped = groups["stops"] + groups["planes"] + groups["distances"] + groups["edges"]
    position = {id(c): i for i, c in enumerate(grouped)}
    speed_rows = None
    if rows:
        speed_rows = SpeedRows(
            u_index=tuple(r.mobod.u_start + r.which_u for r in rows), scale_by_mu=tuple(r.scale_by_mu for r in rows),
            **_leaves(rows, ("speed", "lower", "upper", "mu_s", "mu_d", "mu_v"), dtype),
        )
    return UnilateralContactSet(stops, planes, distances, tuple(position[id(c)] for c in contacts), speed_rows,
                                edges)


#: The constructors' ranges of each UnilateralContactSet coefficient leaf, (low, high) (unilateral_contacts._real).
_RANGES = {"min_cor": (0.0, 1.0), "mu_s": (0.0, np.inf), "mu_d": (0.0, np.inf), "mu_v": (0.0, np.inf),
           "radius": (0.0, np.inf), "radius1": (0.0, np.inf), "radius2": (0.0, np.inf), "length": (0.0, np.inf),
           "half_length_F": (0.0, np.inf), "half_length_B": (0.0, np.inf)}


def check_contact_set(matter, contacts: UnilateralContactSet, operation: str) -> None:
    """The contact constructors' checks on a UnilateralContactSet passed in as ``contacts=`` (e.g. modified
    with ``eqx.tree_at``): each coefficient finite and in its range (restitution in [0, 1], frictions, radii and
    lengths >= 0) and mu_d <= mu_s, raising InvalidArgument naming the contact (its label and
    UnilateralContactIndex) for concrete values; traced values are not checked (under jit, vmap or grad)."""
    adopted = matter._unilateral()
    labels = {g: [c.label for c in adopted if c.group == g] for g in ("stops", "planes", "distances", "edges")}
    for group in labels:
        leaves = getattr(contacts, group)
        if leaves is None:
            continue
        values = {}
        for name in _RANGES.keys() & {f.name for f in leaves.__dataclass_fields__.values()}:
            value = getattr(leaves, name)
            if isinstance(value, jax.core.Tracer):
                return
            values[name] = np.asarray(value)
        for k, label in enumerate(labels[group]):
            for name, value in values.items():
                low, high = _RANGES[name]
                x = value[..., k]
                if not np.all(np.isfinite(x) & (x >= low) & (x <= high)):
                    raise InvalidArgument(f"{operation}: contacts=: {label}: {name} must be finite and in [{low}, "
                                          f"{high}], got {x.tolist()}")
            if "mu_d" in values and np.any(values["mu_d"][..., k] > values["mu_s"][..., k]):
                raise InvalidArgument(f"{operation}: contacts=: {label}: the dynamic coefficient of friction mu_d "
                                      f"can't exceed mu_s (mu_d={values['mu_d'][..., k].tolist()}, "
                                      f"mu_s={values['mu_s'][..., k].tolist()})")
