"""Pictures a person can read: one frame of each real model (Panda, UR5, MJX humanoid, gait9dof18musc) from a
short simulation, drawn as ``jb.viz.animate`` draws it, has the model's silhouette spanning at least a third of
the image height; and a Panda whose finger sliders fly 14.75 m away (as they did without joint stops) is still
framed on the arm, where framing on every body (the old bounding box) makes the arm a dot.

The silhouette is the set of pixels that change when the model's artists are hidden (the grid, scale bar,
axes and title stay), so it measures the model alone.
"""

from __future__ import annotations

import dataclasses
import pathlib
import warnings

import jax
import numpy as np
import pytest

import jaxbody as jb
from jaxbody.viz import scene as scene_module
from jaxbody.viz.animation import Renderer
from jaxbody.viz.figure import make_scene

MODELS = pathlib.Path(__file__).resolve().parents[1] / "models"
CASES = {"panda": "panda.urdf", "ur5": "ur5_robot.urdf", "humanoid": "mjx_humanoid.xml",
         "gait9dof18musc": "osim/gait9dof18musc.osim"}
DPI = 40  # 256 x 256 frames: enough to measure, cheap in CI


def load(name):
    pytest.importorskip("jaxbody.io")
    if name == "humanoid":
        pytest.importorskip("mujoco")
    from jaxbody.cli.demo_model import load_model, set_view_hints

    path = MODELS / CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        record = load_model(path)
        jb.viz.add_visual_decorations(record.bodies, record.visuals, cylinder_axis="y" if name.startswith("gait") else "z",
                                      on_error="warn")
    model = record.system.realize_topology()
    set_view_hints(record.system, model)
    return record, model


def short_run(model, n_steps=40, seed=0, record=None):
    """0.08 s of RK4 from random speeds from the file's default State (MuJoCo's qpos0: the humanoid on its floor,
    not 1.26 m under it with its contact), 5 samples."""
    state = model.default_state() if record is None else record.default_state(model)
    state = state.set_u(0.5 * np.random.default_rng(seed).normal(size=model.get_num_u()))
    return jb.simulate(model, state, 2e-3, n_steps, save_every=n_steps // 4)[1]


def silhouette_height(renderer, k) -> float:
    """Fraction of the image height spanned by the rows where the model's pixels are."""
    image = renderer.frame(k, "t")
    for artist in renderer.artists:
        artist.set_visible(False)
    background = renderer.frame(k, "t")
    for artist in renderer.artists:
        artist.set_visible(True)
    rows = np.nonzero(np.any(image != background, axis=(1, 2)))[0]
    return 0.0 if rows.size == 0 else (rows.max() - rows.min() + 1) / image.shape[0]


# gait9dof18musc is long for the CI budget (15 s, 2026-11-29); the other models run in CI
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.long) if n == "gait9dof18musc" else n for n in CASES])
def test_the_model_fills_the_frame(name):
    record, model = load(name)
    trajectory = short_run(model, record=record)
    renderer = Renderer(make_scene(record.system, model, trajectory, None), dpi=DPI)
    assert silhouette_height(renderer, 2) >= 1 / 3


def test_outlier_bodies_do_not_shrink_the_model(monkeypatch):
    record, model = load("panda")
    trajectory = short_run(model)
    q = np.array(trajectory.q)
    for joint in ("panda_finger_joint1", "panda_finger_joint2"):
        c = record.coordinates[joint]
        q[2:, c.mobilized_body.q_start + c.q_index] = 14.75  # flung off in the last three samples
    flung = dataclasses.replace(trajectory, q=jax.numpy.asarray(q))
    robust = silhouette_height(Renderer(make_scene(record.system, model, flung, None), dpi=DPI), 1)
    monkeypatch.setattr(scene_module, "OUTLIER", np.inf)  # the old framing: a box around every point of the run
    naive = silhouette_height(Renderer(make_scene(record.system, model, flung, None), dpi=DPI), 1)
    assert robust >= 1 / 3 > naive, (robust, naive)
