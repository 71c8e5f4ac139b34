"""``animate``: a trajectory (a State pytree with a leading time axis, as ``jb.simulate`` returns) written as
an animated GIF (Pillow, which matplotlib already needs) or an MP4 (imageio + imageio-ffmpeg: ``pip install
jaxbody[viz]``). Headless: every frame is drawn on an Agg canvas.
"""

from __future__ import annotations

import pathlib

import jax
import numpy as np

from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument
from jaxbody.viz.draw import draw_scene, view_rotation
from jaxbody.viz.figure import new_figure, scene_points

FORMATS = (".gif", ".mp4")


def _frame_geometry(system, model, trajectory):
    """Placed decorations of every sample: one jit(vmap) call; list of geometry with (T, ...) numpy leaves."""
    matter = system.get_matter_subsystem()
    place = jax.jit(jax.vmap(lambda s: matter.calc_decorative_geometry(model.realize(s, Stage.Position), model)))
    return jax.tree_util.tree_map(np.asarray, place(trajectory))


def _mp4_writer(path, fps):
    try:
        import imageio.v2 as imageio
        import imageio_ffmpeg  # noqa: F401  (the ffmpeg binary imageio needs for MP4)
    except ImportError as e:
        raise ImportError(
            f"writing {path} needs imageio and imageio-ffmpeg: pip install 'jaxbody[viz]' (or write a .gif, "
            f"which needs only Pillow): {e}"
        ) from None
    return imageio.get_writer(str(path), fps=fps, codec="libx264", quality=7)


def animate(system, model, trajectory, path, fps=20, stride=1, figsize=(6.4, 6.4), dpi=80, title="t = {t:.3f} s"):
    """Write an animation of ``trajectory`` to ``path`` (``.gif`` or ``.mp4``); returns the number of frames.

    Every ``stride``-th sample becomes one frame, so a trajectory of T samples gives ceil(T / stride)
    frames. Each frame is ``plot_state``'s picture of that sample (the decorations placed in Ground, the
    system's up direction vertical), with the same axis limits in all frames. The frames are placed with one
    ``jax.jit(jax.vmap(...))`` call over the samples.

    Args:
        system: the MultibodySystem. model: its Model (None: ``system.realize_topology()``).
        trajectory: a State whose leaves have a leading time axis (one lane: index a batch first).
        path: output file; its extension picks the format.
        fps: frames per second. stride: keep every ``stride``-th sample (>= 1).
        title: format string of each frame's title, with the sample's time ``t`` (s); None for none.
            (The GIF writer merges identical consecutive frames; the default title keeps them distinct.)
    """
    path = pathlib.Path(path)
    if path.suffix.lower() not in FORMATS:
        raise InvalidArgument(f"animate: {path} must end in one of {FORMATS}")
    if int(stride) != stride or stride < 1 or not fps > 0:
        raise InvalidArgument(f"animate: stride must be an integer >= 1 and fps > 0, got stride={stride}, fps={fps}")
    if np.ndim(trajectory.t) != 1:
        raise InvalidArgument(f"animate: the trajectory needs one leading time axis, got t of shape {np.shape(trajectory.t)}")
    model = system.realize_topology() if model is None else model
    samples = jax.tree_util.tree_map(lambda x: x[:: int(stride)], trajectory)
    geometry = _frame_geometry(system, model, samples)
    times = np.asarray(samples.t)
    frame = lambda k: jax.tree_util.tree_map(lambda x: x[k], geometry)  # noqa: E731
    limits = np.vstack([scene_points(frame(k)) for k in range(len(times))])
    R_VG = view_rotation(system.get_up_direction())

    fig = new_figure(figsize, dpi)
    images = []
    for k, t in enumerate(times):
        fig.clear()
        ax = fig.add_subplot(projection="3d")
        draw_scene(ax, frame(k), R_VG, limits)
        if title is not None:
            ax.set_title(title.format(t=float(t)))
        fig.canvas.draw()
        images.append(np.asarray(fig.canvas.buffer_rgba())[..., :3].copy())

    if path.suffix.lower() == ".gif":
        from PIL import Image

        first, *rest = [Image.fromarray(image) for image in images]
        first.save(path, save_all=True, append_images=rest, duration=1000.0 / fps, loop=0)
    else:
        writer = _mp4_writer(path, fps)
        for image in images:
            writer.append_data(image)
        writer.close()
    return len(images)


__all__ = ["animate"]
