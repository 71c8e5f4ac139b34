"""MobilizedBody mixin: Simbody's decorations attached to a body, its outboard frame M or its inboard frame F.

Decorations are visualization hints, host data kept on the handle (like the system's up direction): the
Model does not carry them, so they survive ``realize_topology()`` and may be added before or after it.
``matter.calc_decorative_geometry(state, model)`` places them in Ground.
"""

from __future__ import annotations

from jaxbody._api.arguments import integer
from jaxbody._api.body import host_transform
from jaxbody._api.decorative_geometry import DecorativeGeometry
from jaxbody._math.spatial import Transform
from jaxbody.errors import InvalidArgument

#: Where a decoration is attached: the body frame B, the mobilizer's outboard frame M (on B) or its
#: inboard frame F (on the parent P).
BODY, OUTBOARD, INBOARD = "body", "outboard", "inboard"


class MobilizedBodyDecorations:
    """Mixed into MobilizedBody (needs ``name``, ``index`` and ``parent``)."""

    def _decorations(self, where: str) -> list:
        lists = self.__dict__.setdefault("_decoration_lists", {BODY: [], OUTBOARD: [], INBOARD: []})
        return lists[where]

    def _add_decoration(self, where: str, X, frame: str, geometry) -> int:
        if not isinstance(geometry, DecorativeGeometry):
            raise InvalidArgument(
                f"{self.name}: add_{where}_decoration needs a jb.DecorativeGeometry (e.g. jb.DecorativeSphere(0.1)), "
                f"got {type(geometry).__name__}"
            )
        if where == INBOARD and self.parent is None:
            raise InvalidArgument(f"{self.name}: Ground has no inboard mobilizer frame F; use add_body_decoration")
        R, p = host_transform(X, frame, self.name)
        owner = self.index if where != INBOARD else self.parent.index
        placed = geometry.set_transform(Transform(R, p) * geometry.get_transform())._with(body_id=owner)
        decorations = self._decorations(where)
        decorations.append(placed)
        return len(decorations) - 1

    def _get_decoration(self, where: str, index) -> DecorativeGeometry:
        decorations = self._decorations(where)
        i = integer(index, f"{self.name}: {where} decoration index")
        if not 0 <= i < len(decorations):
            raise InvalidArgument(f"{self.name}: {where} decoration index {i} out of range (it has {len(decorations)})")
        return decorations[i]

    def add_body_decoration(self, X_BD, geometry: DecorativeGeometry) -> int:
        """Attach ``geometry`` to this body at ``X_BD`` (composed with the geometry's own transform).

        Returns its index among this body's body decorations. The stored copy's transform is X_BD times the
        geometry's transform, measured in B, and its body id is this body's index (Simbody's convention).
        """
        return self._add_decoration(BODY, X_BD, "X_BD", geometry)

    def add_outboard_decoration(self, X_MD, geometry: DecorativeGeometry) -> int:
        """Attach ``geometry`` to the mobilizer's outboard frame M (on this body) at ``X_MD``. Returns its index."""
        return self._add_decoration(OUTBOARD, X_MD, "X_MD", geometry)

    def add_inboard_decoration(self, X_FD, geometry: DecorativeGeometry) -> int:
        """Attach ``geometry`` to the mobilizer's inboard frame F (fixed on the parent) at ``X_FD``. Returns its index.

        The stored copy's body id is the parent's index; its transform X_FD times the geometry's is measured in F.
        """
        return self._add_decoration(INBOARD, X_FD, "X_FD", geometry)

    def get_num_body_decorations(self) -> int:
        return len(self._decorations(BODY))

    def get_body_decoration(self, index: int) -> DecorativeGeometry:
        """The body decoration ``index`` as stored: transform X_BD (in B), body id this body."""
        return self._get_decoration(BODY, index)

    def get_num_outboard_decorations(self) -> int:
        return len(self._decorations(OUTBOARD))

    def get_outboard_decoration(self, index: int) -> DecorativeGeometry:
        """The outboard decoration ``index`` as stored: transform X_MD (in M), body id this body."""
        return self._get_decoration(OUTBOARD, index)

    def get_num_inboard_decorations(self) -> int:
        return len(self._decorations(INBOARD))

    def get_inboard_decoration(self, index: int) -> DecorativeGeometry:
        """The inboard decoration ``index`` as stored: transform X_FD (in F), body id the parent."""
        return self._get_decoration(INBOARD, index)
