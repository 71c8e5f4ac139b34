"""``plot_state``: a static 3D matplotlib figure of a model in one state.

Headless: figures are built on their own Agg canvas (no pyplot), so the caller's matplotlib backend and
global state are left alone.
"""

from __future__ import annotations

import jax
import numpy as np

from jaxbody._typing import Stage
from jaxbody.viz.draw import draw_scene, geometry_points, view_rotation


def new_figure(figsize=(6.0, 6.0), dpi=100):
    """A matplotlib Figure on its own Agg canvas (no pyplot)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


def placed_geometry(system, model, state) -> list:
    """``matter.calc_decorative_geometry`` of ``state`` (realized to Position here), as host numpy arrays."""
    model = system.realize_topology() if model is None else model
    matter = system.get_matter_subsystem()
    geometry = matter.calc_decorative_geometry(model.realize(state, Stage.Position), model)
    return jax.tree_util.tree_map(np.asarray, geometry)


def scene_points(geometry_list) -> np.ndarray:
    """Ground points (n, 3) bounding the drawn geometry."""
    return np.vstack([geometry_points(g) for g in geometry_list]) if geometry_list else np.zeros((1, 3))


def plot_state(system, model, state, ax=None, path=None, title=None, figsize=(6.0, 6.0), dpi=100):
    """Draw the model in ``state``: every decoration placed in Ground by
    ``system.get_matter_subsystem().calc_decorative_geometry``, which with the default geometry on
    (``matter.set_show_default_geometry``) includes each body's frame and a segment from its parent's origin.

    Args:
        system: the MultibodySystem (its decorations and up direction ``system.get_up_direction()`` are used).
        model: its Model (None: ``system.realize_topology()``); a modified one places inboard/outboard
            decorations with its own X_PF, X_BM.
        state: one State (not a batch), realized here to Stage.Position.
        ax: a 3D Axes to draw into (``projection="3d"``); None makes a new Figure.
        path: if given, the figure is saved there (format from the extension, e.g. ``.png``).
        title: the Axes' title (default: the state's time).

    Returns:
        the matplotlib Figure.
    """
    geometry = placed_geometry(system, model, state)
    if ax is None:
        fig = new_figure(figsize, dpi)
        ax = fig.add_subplot(projection="3d")
    fig = ax.figure
    draw_scene(ax, geometry, view_rotation(system.get_up_direction()), scene_points(geometry))
    ax.set_title(f"t = {float(np.asarray(state.t)):.3f} s" if title is None else title)
    if path is not None:
        fig.savefig(path)
    return fig


__all__ = ["plot_state", "placed_geometry", "new_figure", "scene_points"]
