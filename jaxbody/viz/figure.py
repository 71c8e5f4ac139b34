"""``plot_state``: a static picture of a model in one state, and what ``animate`` shares with it.

Headless: figures are built on their own Agg canvas (no pyplot), so the caller's matplotlib backend and
global state are left alone. The picture is an orthographic view drawn on a 2D Axes (``jaxbody.viz.scene``).
"""

from __future__ import annotations

import jax
import numpy as np

from jaxbody.viz.draw import view_rotation
from jaxbody.viz.meshes import as_library
from jaxbody.viz.placement import body_frames, place
from jaxbody.viz.scene import Scene

AXES = (0.0, 0.0, 1.0, 0.94)  # the picture's Axes in the figure, room for a title above
FALLBACK_RADIUS = 0.25  # a mesh that cannot be read: a sphere of this many default length scales


def new_figure(figsize=(6.0, 6.0), dpi=100):
    """A matplotlib Figure on its own Agg canvas (no pyplot)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


def make_scene(system, model, states, meshes) -> Scene:
    """The Scene of a State with a leading sample axis (``meshes``: see ``jaxbody.viz.meshes.as_library``)."""
    model = system.realize_topology() if model is None else model
    R_GB, p_GB = body_frames(model, states)
    return Scene(place(system, model, R_GB, p_GB), p_GB[:, 1:], view_rotation(system.get_up_direction()),
                 as_library(meshes), FALLBACK_RADIUS * system.get_default_length_scale())


def plot_state(system, model, state, ax=None, path=None, title=None, figsize=(6.0, 6.0), dpi=100, meshes=None):
    """Draw the model in ``state``: every decoration placed in Ground by
    ``system.get_matter_subsystem().calc_decorative_geometry``, which with the default geometry on
    (``matter.set_show_default_geometry``) includes each body's frame and a segment from its parent's origin.
    The system's up direction is vertical; a grid on Ground's horizontal plane, a scale bar and Ground's
    axes are drawn with it, and the view is framed on the bodies.

    Args:
        system: the MultibodySystem (its decorations and up direction ``system.get_up_direction()`` are used).
        model: its Model (None: ``system.realize_topology()``); a modified one places inboard/outboard
            decorations with its own X_PF, X_BM.
        state: one State (not a batch), realized here to Stage.Position.
        ax: a 2D matplotlib Axes to draw into; None makes a new Figure.
        path: if given, the figure is saved there (format from the extension, e.g. ``.png``).
        title: the Axes' title (default: the state's time).
        meshes: where mesh files are found: None (as written, or relative to the working folder), a folder or
            a list of folders, a name -> (vertices, faces) dict, or a ``jaxbody.viz.meshes.MeshLibrary``.

    Returns:
        the matplotlib Figure.
    """
    scene = make_scene(system, model, jax.tree_util.tree_map(lambda x: np.asarray(x)[None], state), meshes)
    if ax is None:
        fig = new_figure(figsize, dpi)
        ax = fig.add_axes(AXES)
    scene.draw(ax, scene.setup(ax), 0)
    scene.annotate(ax)
    ax.set_title(f"t = {float(np.asarray(state.t)):.3f} s" if title is None else title)
    if path is not None:
        ax.figure.savefig(path)
    return ax.figure


__all__ = ["plot_state", "make_scene", "new_figure"]
