"""SimbodyMatterSubsystem mixin: default geometry switch and every decoration placed in Ground.

``calc_decorative_geometry(state, model)`` gathers the decorations of all bodies (host data on the handles, see
``mobilized_body_decorations``) and places them with one batched transform composition, so it works under
``jax.jit``, ``jax.vmap`` (over states and models) and ``jax.grad``. Inboard and outboard decorations sit on
the frames F and M, which are the Model's numbers (X_PF, X_BM): the Model is a required argument after
Simbody's (the package's convention; nothing falls back to the System's realized model).
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._api.decorative_geometry import (
    DecorativeFrame,
    DecorativeGeometry,
    DecorativeLine,
)
from jaxbody._api.mobilized_body_decorations import BODY, INBOARD, OUTBOARD
from jaxbody._api.stage_operator import check_model_argument
from jaxbody._dynamics.state import State, require
from jaxbody._dynamics.state_checks import check_state
from jaxbody._math.spatial import Transform, compose
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument

#: Axis length (m, times the system's default length scale) of the default geometry's body frames (Simbody: 0.5).
DEFAULT_FRAME_LENGTH = 0.5
_ANCHORS = (BODY, OUTBOARD, INBOARD)


class MatterDecorations:
    """Mixed into SimbodyMatterSubsystem (needs ``system``, ``_bodies``)."""

    def set_show_default_geometry(self, show: bool):
        """Whether ``calc_decorative_geometry`` adds the default sketch of the tree (default True, as in Simbody).

        A visualization hint: may be changed at any time, before or after ``realize_topology()``.
        """
        self._show_default_geometry = bool(show)
        return self

    def get_show_default_geometry(self) -> bool:
        return getattr(self, "_show_default_geometry", True)

    def calc_decorative_geometry(self, state: State, model) -> list[DecorativeGeometry]:
        """Every decoration placed in Ground: each returned geometry's transform is X_GD and its body id is 0.

        Order: for each body in index order, its body, outboard (on M) and inboard (on F, of its parent)
        decorations; then, when ``get_show_default_geometry()``, the default geometry: a DecorativeFrame at each
        body's origin (Ground included; axis length 0.5 times the system's default length scale) and a
        DecorativeLine from each parent's origin to its child's origin. (Simbody's default sketch also draws
        half-size F and M frames; that is left out.)

        Args:
            state: realized to Stage.Position (X_GB is read from it).
            model: the Model whose X_PF and X_BM place inboard and outboard decorations (the state's:
                ``system.realize_topology()``, or one from ``jb.replace_parameters``); required.

        Returns:
            a list of DecorativeGeometry (array leaves: traced under jit, batched under vmap).
        """
        check_model_argument("calc_decorative_geometry", self._describe(), model)
        if model.signature != self._signature():
            raise InvalidArgument(f"calc_decorative_geometry: the model is not of {self._describe()}")
        check_state(model, state, "calc_decorative_geometry")
        require(state, Stage.Position, "calc_decorative_geometry")
        pos, prm = state.position, model.parameters
        decorations = [(g, _ANCHORS.index(where), mobod.index)
                       for mobod in self._bodies for where in _ANCHORS for g in mobod._decorations(where)]
        placed = _place(decorations, pos, prm) if decorations else []
        if self.get_show_default_geometry():
            placed += self._default_geometry(pos)
        return placed

    def calc_decorative_geometry_and_append(self, state: State, geometry: list, model) -> list:
        """Simbody's calcDecorativeGeometryAndAppend, without writing into its argument: ``geometry + new``.

        jaxbody never modifies its arguments, so this returns a new list (``geometry`` is left as it was);
        ``new`` is ``calc_decorative_geometry(state, model)``.
        """
        return list(geometry) + self.calc_decorative_geometry(state, model)

    def _default_geometry(self, pos) -> list[DecorativeGeometry]:
        length = DEFAULT_FRAME_LENGTH * self.system.get_default_length_scale()
        frames = [DecorativeFrame(length).set_transform(Transform(pos.R_GB[b], pos.p_GB[b]))
                  for b in range(len(self._bodies))]
        children = [mobod.index for mobod in self._bodies[1:]]
        parents = [mobod.parent.index for mobod in self._bodies[1:]]
        start, end = pos.p_GB[jnp.asarray(parents, int)], pos.p_GB[jnp.asarray(children, int)]
        lines = [DecorativeLine(start[i], end[i]) for i in range(len(children))]
        return frames + lines


def _place(decorations, pos, prm) -> list[DecorativeGeometry]:
    """``[(geometry, anchor, body)]`` -> geometry with X_GD = X_GB X_BA X_AD, A the anchor (B, M or F).

    One gather and one batched composition for all decorations; inboard ones use the parent's X_GB and the
    child's X_PF (the stored geometry's body id is already the parent).
    """
    nb = pos.R_GB.shape[0]
    anchor = jnp.asarray([a for _, a, _ in decorations], int)
    child = jnp.asarray([b for _, _, b in decorations], int)
    owner = jnp.asarray([g.body_id for g, _, _ in decorations], int)
    eye = jnp.broadcast_to(jnp.eye(3, dtype=pos.R_GB.dtype), (nb, 3, 3))
    R_BA = jnp.stack([eye, prm.R_BM, prm.R_PF])[anchor, child]
    p_BA = jnp.stack([jnp.zeros_like(prm.p_BM), prm.p_BM, prm.p_PF])[anchor, child]
    R_AD = jnp.stack([g.transform.R for g, _, _ in decorations])
    p_AD = jnp.stack([g.transform.p for g, _, _ in decorations])
    R_GA, p_GA = compose(pos.R_GB[owner], pos.p_GB[owner], R_BA, p_BA)
    R_GD, p_GD = compose(R_GA, p_GA, R_AD, p_AD)
    return [g._with(transform=Transform(R_GD[i], p_GD[i]), body_id=0) for i, (g, _, _) in enumerate(decorations)]


__all__ = ["MatterDecorations", "DEFAULT_FRAME_LENGTH"]
