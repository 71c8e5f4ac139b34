"""SimbodyMatterSubsystem's unilateral-contact methods (a mixin), and the batched contact set they build.

``adopt_unilateral_contact`` / ``get_num_unilateral_contacts`` / ``get_unilateral_contact`` are Simbody's
names; ``build_contact_set`` turns the adopted contacts into the UnilateralContactSet that
jb.SemiExplicitEulerTimeStepper steps with (one batched group per geometry; Simbody catalogue 2.20).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.unilateral_contacts import UnilateralContact
from jaxbody._constraints.unilateral.contact_set import (
    CoordinateStops,
    DistanceContacts,
    PlaneContacts,
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
    """The adopted contacts as a UnilateralContactSet (groups in the order stops, planes, distances)."""
    contacts = matter._unilateral()
    if not contacts:
        raise InvalidArgument(f"{matter._describe()} has no unilateral contacts (matter.adopt_unilateral_contact)")
    groups = {g: [c for c in contacts if c.group == g] for g in ("stops", "planes", "distances")}
    stops = planes = distances = None
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
    grouped = groups["stops"] + groups["planes"] + groups["distances"]
    position = {id(c): i for i, c in enumerate(grouped)}
    return UnilateralContactSet(stops, planes, distances, tuple(position[id(c)] for c in contacts))
