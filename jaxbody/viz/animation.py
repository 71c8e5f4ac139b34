"""``animate``: a trajectory (a State pytree with a leading time axis, as ``jb.simulate`` returns) written as
an animated GIF (Pillow, which matplotlib already needs) or an MP4 (imageio + imageio-ffmpeg: ``pip install
jaxbody[viz]``). Headless: the frames are drawn on one reused Agg figure (``jaxbody.viz.scene``), and a GIF is
written with one palette for all frames.
"""

from __future__ import annotations

import contextlib
import os
import pathlib

import jax
import numpy as np

from jaxbody.errors import InvalidArgument
from jaxbody.viz.figure import AXES, make_scene, new_figure

FORMATS = (".gif", ".mp4")
PALETTE_SAMPLES = 8  # frames the GIF palette is made from
TITLE_POINTS = 11


def _mp4_imageio(path):
    """imageio.v2, with imageio-ffmpeg present, for writing the MP4 ``path``; ImportError saying what to install."""
    try:
        import imageio.v2 as imageio
        import imageio_ffmpeg  # noqa: F401  (the ffmpeg binary imageio needs for MP4)
    except ImportError as e:
        raise ImportError(
            f"writing {path} needs imageio and imageio-ffmpeg: pip install 'jaxbody[viz]' (or write a .gif, "
            f"which needs only Pillow): {e}"
        ) from None
    return imageio


def _mp4_writer(path, fps):
    return _mp4_imageio(path).get_writer(str(path), fps=fps, codec="libx264", quality=7)


@contextlib.contextmanager
def _spawn_without_fork_hooks():
    """imageio-ffmpeg starts ffmpeg with ``preexec_fn=os.setpgrp``, which makes Python run its at-fork hooks, and
    JAX's hook warns that forking a multithreaded process may deadlock. Without ``preexec_fn`` (imageio-ffmpeg's
    switch IMAGEIO_FFMPEG_NO_PREVENT_SIGINT, set for the writer's lifetime only) subprocess starts ffmpeg by
    vfork/posix_spawn, which runs no Python in the child; a Ctrl-C then also reaches ffmpeg."""
    key, previous = "IMAGEIO_FFMPEG_NO_PREVENT_SIGINT", os.environ.get("IMAGEIO_FFMPEG_NO_PREVENT_SIGINT")
    os.environ[key] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = previous


def check_animation_path(path) -> pathlib.Path:
    """``path`` as a Path if it ends in one of FORMATS and its folder exists (else InvalidArgument), and for an
    MP4 if imageio and imageio-ffmpeg are installed (else ImportError): checked before any frame is drawn."""
    path = pathlib.Path(path)
    if path.suffix.lower() not in FORMATS:
        raise InvalidArgument(f"animation {path}: the extension must be one of {FORMATS}")
    if not path.parent.is_dir():
        raise InvalidArgument(f"animation {path}: the folder {path.parent} does not exist")
    if path.suffix.lower() == ".mp4":
        _mp4_imageio(path)
    return path


class Renderer:
    """Frames of a Scene as RGB arrays (H, W, 3) from one reused Agg figure: ``frame(k, text)`` draws sample
    ``k`` with ``text`` as its title (written with Pillow). The fixed annotations (``scene.annotate``: text is what costs most in a
    frame) are drawn once on a transparent figure and blended into every frame. ``artists`` are the moving
    ones (``scene.setup``)."""

    def __init__(self, scene, figsize=(6.4, 6.4), dpi=80):
        self.scene = scene
        overlay = new_figure(figsize, dpi)
        overlay.patch.set_alpha(0.0)
        scene.annotate(overlay.add_axes(AXES))
        overlay.canvas.draw()
        rgba = np.asarray(overlay.canvas.buffer_rgba()).astype(float)
        self.drawn = np.nonzero(rgba[..., 3] > 0)
        self.alpha = rgba[..., 3:][self.drawn] / 255.0
        self.color = rgba[..., :3][self.drawn] * self.alpha  # Agg's RGBA is not premultiplied
        from matplotlib import font_manager
        from PIL import ImageFont

        self.font = ImageFont.truetype(font_manager.findfont("DejaVu Sans"), round(TITLE_POINTS * dpi / 72))
        self.figure = new_figure(figsize, dpi)
        self.ax = self.figure.add_axes(AXES)
        self.artists = scene.setup(self.ax)
        self.moving = list(self.ax.collections)  # the grid, faces and lines
        for artist in self.moving:
            artist.set_animated(True)
        self.figure.canvas.draw()
        self.background = self.figure.canvas.copy_from_bbox(self.figure.bbox)

    def frame(self, k, text="") -> np.ndarray:
        """Sample ``k`` drawn over the saved background (blitting: the figure itself is not redrawn)."""
        from PIL import Image, ImageDraw

        self.scene.draw(self.ax, self.artists, k)
        self.ax.apply_aspect()  # what the Axes' own draw would do after new limits
        self.figure.canvas.restore_region(self.background)
        for artist in self.moving:
            self.figure.draw_artist(artist)
        image = np.asarray(self.figure.canvas.buffer_rgba())[..., :3].copy()
        image[self.drawn] = (image[self.drawn] * (1 - self.alpha) + self.color).astype(np.uint8)
        if text:  # Pillow's text is ten times cheaper than a matplotlib Text in every frame
            picture = Image.fromarray(image)
            ImageDraw.Draw(picture).text((image.shape[1] / 2, 0.03 * image.shape[0]), text, fill=(0, 0, 0),
                                         font=self.font, anchor="mm")
            image = np.asarray(picture)
        return image


#: Browsers play a GIF frame delay under 20 ms as 100 ms (and GIF stores delays in 10 ms steps).
MIN_GIF_DELAY_MS = 20
GIF_DELAY_STEP_MS = 10


def write_gif(path, images, fps) -> None:
    """RGB frames (H, W, 3) as a looping GIF, quantized without dithering to one palette made from a few frames.
    GIF stores each frame's delay in 10 ms steps, so the delays are rounded cumulatively (frame k ends at
    round(k / fps, 10 ms)): at 30 fps they alternate 30 and 40 ms and the whole GIF lasts frames / fps, as the
    trajectory does. Frame delays under 20 ms (fps > 50), which browsers stretch to 100 ms, are written as 20 ms
    with a warning: the GIF then plays slower than real time by 20 ms x fps (write an .mp4, or use fewer frames,
    for real time)."""
    import warnings

    from PIL import Image

    delay = 1000.0 / fps
    if delay < MIN_GIF_DELAY_MS:
        warnings.warn(f"{path}: {fps:g} frames per second is a {delay:.1f} ms GIF delay, which browsers play as "
                      f"100 ms; written as {MIN_GIF_DELAY_MS} ms ({MIN_GIF_DELAY_MS * fps / 1000:.2g}x slower than "
                      f"real time): for real time use at most 50 frames per second (fewer frames, a larger stride) or "
                      f"write an .mp4", stacklevel=3)
        delay = MIN_GIF_DELAY_MS
    ends = np.round(np.arange(1, len(images) + 1) * delay / GIF_DELAY_STEP_MS) * GIF_DELAY_STEP_MS
    durations = np.maximum(np.diff(ends, prepend=0.0), MIN_GIF_DELAY_MS).astype(int).tolist()

    picks = np.linspace(0, len(images) - 1, min(PALETTE_SAMPLES, len(images))).astype(int)
    palette = Image.fromarray(np.concatenate([images[k] for k in picks])).quantize(256, Image.Quantize.MEDIANCUT)
    frames = [Image.fromarray(image).quantize(palette=palette, dither=Image.Dither.NONE) for image in images]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=durations, loop=0)


def animate(system, model, trajectory, path, fps=20, stride=1, figsize=(6.4, 6.4), dpi=80, title="t = {t:.3f} s",
            meshes=None):
    """Write an animation of ``trajectory`` to ``path`` (``.gif`` or ``.mp4``); returns the number of frames.

    Every ``stride``-th sample becomes one frame, so a trajectory of T samples gives ceil(T / stride)
    frames. Each frame is ``plot_state``'s picture of that sample (the decorations placed in Ground, the
    system's up direction vertical), with the camera framed on the bodies over the whole run (robust to
    outliers; see ``jaxbody.viz.scene``). The bodies' frames come from one ``jax.jit(jax.vmap(realize))``
    call, the decorations are placed on the host (``jaxbody.viz.placement``) and every frame is drawn on one
    reused figure (``Renderer``); meshes are thinned to ``jaxbody.viz.meshes.MAX_FACES`` faces.

    Args:
        system: the MultibodySystem. model: its Model (None: ``system.realize_topology()``).
        trajectory: a State whose leaves have a leading time axis (one lane: index a batch first).
        path: output file; its extension picks the format.
        fps: frames per second. stride: keep every ``stride``-th sample (>= 1).
        title: format string of each frame's title, with the sample's time ``t`` (s); None for none.
            (The GIF writer merges identical consecutive frames; the default title keeps them distinct.)
        meshes: where mesh files are found (see ``plot_state``).
    """
    path = check_animation_path(path)
    if int(stride) != stride or stride < 1 or not fps > 0:
        raise InvalidArgument(f"animate: stride must be an integer >= 1 and fps > 0, got stride={stride}, fps={fps}")
    if np.ndim(trajectory.t) != 1:
        raise InvalidArgument(f"animate: the trajectory needs one leading time axis, got t of shape {np.shape(trajectory.t)}")
    samples = jax.tree_util.tree_map(lambda x: x[:: int(stride)], trajectory)
    scene = make_scene(system, model, samples, meshes)
    times = np.asarray(samples.t)

    renderer = Renderer(scene, figsize, dpi)
    images = [renderer.frame(k, "" if title is None else title.format(t=float(t))) for k, t in enumerate(times)]

    if path.suffix.lower() == ".gif":
        write_gif(path, images, fps)
    else:
        with _spawn_without_fork_hooks():
            writer = _mp4_writer(path, fps)
            for image in images:
                writer.append_data(image)
            writer.close()
    return len(images)


__all__ = ["animate", "check_animation_path", "write_gif", "Renderer"]
