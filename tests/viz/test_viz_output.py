"""jaxbody.viz on the small decorated system: the up-direction view, plot_state's PNG, animate's GIF/MP4
frame counts (read back), plot_trajectory's quantities against per-sample operator calls, and the adapter
from imported visual records to decorations.
"""

from __future__ import annotations

import dataclasses
import types
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from PIL import Image, ImageSequence

import jaxbody as jb
import jaxbody.viz as viz
from jaxbody.viz.draw import axis_labels, view_rotation

from helpers import assert_close
from viz_systems import build_decorated

Stage = jb.Stage


@pytest.fixture(scope="module")
def scene():
    """The decorated system with a mesh on the hand, and a 6-sample trajectory (RK4) from a moving state."""
    record, _ = build_decorated()
    record.bodies["hand"].add_body_decoration(jb.Transform([0, 0.1, 0]), jb.DecorativeMesh("hand.stl", 0.01))
    record.bodies["hand"].add_body_decoration(jb.Transform([0, 0.3, 0]), jb.DecorativeEllipsoid([0.05, 0.02, 0.03]))
    model = record.system.realize_topology()
    state = model.default_state().set_q(jnp.asarray([0.3, 0.9, 0.3, 0.2, 0.1])).set_u(jnp.asarray([1.0, 0.5, -0.5, 2.0]))
    _, trajectory = jb.simulate(model, state, 0.02, 12, save_every=2)
    return record, model, state, trajectory


def gif_frames(path) -> int:
    with Image.open(path) as image:
        return sum(1 for _ in ImageSequence.Iterator(image))


@pytest.mark.parametrize("up", ["+x", "-x", "+y", "-y", "+z", "-z"])
def test_view_rotation_puts_up_on_the_plot_vertical(up):
    system = jb.MultibodySystem().set_up_direction(up)
    R_VG = view_rotation(system.get_up_direction())
    assert_close(R_VG @ R_VG.T, np.eye(3), 0)
    assert np.isclose(np.linalg.det(R_VG), 1.0)
    assert_close(R_VG @ system.get_up_direction(), [0, 0, 1], 0)
    assert axis_labels(R_VG)[2] == f"{up.lstrip('+')} (m, up)"


def test_plot_state_writes_a_png(scene, tmp_path):
    record, model, state, _ = scene
    path = tmp_path / "state.png"
    fig = viz.plot_state(record.system, model, state, path=path)
    assert path.stat().st_size > 10_000
    with Image.open(path) as image:
        assert image.size == (600, 600)
        pixels = np.asarray(image.convert("RGB"), float)
    assert pixels.std() > 10  # something drawn, not a blank canvas
    ax = fig.axes[0]
    texts = [text.get_text() for text in ax.texts]
    assert ax.get_title() == "t = 0.000 s" and "y (up)" in texts and "x" in texts and "z" in texts
    assert any("1 mesh(es) (hand.stl" in text for text in texts)  # not found: a sphere, with a note
    # Into a given Axes, with another up direction.
    record.system.set_up_direction("z")
    try:
        fig2 = viz.plot_state(record.system, None, state, ax=fig.add_subplot(1, 2, 2), title="pose")
    finally:
        record.system.set_up_direction("y")
    assert fig2 is fig and "z (up)" in [t.get_text() for t in fig.axes[-1].texts] and fig.axes[-1].get_title() == "pose"


def test_host_placement_equals_calc_decorative_geometry(scene):
    """jaxbody.viz.placement (numpy, for many samples) places every decoration as calc_decorative_geometry does:
    body, outboard (M) and inboard (F) decorations, Ground's, and the default frames and lines."""
    from jaxbody.viz.placement import body_frames, place

    record, model, _, trajectory = scene
    R_GB, p_GB = body_frames(model, trajectory)
    placed = place(record.system, model, R_GB, p_GB)
    matter = record.system.get_matter_subsystem()
    for k in (0, 3):
        sample = model.realize(jax.tree_util.tree_map(lambda x, k=k: x[k], trajectory), Stage.Position)
        expected = matter.calc_decorative_geometry(sample, model)
        assert len(expected) == len(placed)
        for want, got in zip(expected, placed):
            assert type(want) is type(got.geometry)
            if isinstance(want, jb.DecorativeLine):
                ends = np.stack([want.transform.R @ want.point1 + want.transform.p,
                                 want.transform.R @ want.point2 + want.transform.p])
                assert_close(got.ends[k], ends, 1e-14)
            else:
                assert_close(got.R[k], want.transform.R, 1e-14)
                assert_close(got.p[k], want.transform.p, 1e-14)


def test_animate_gif_has_one_frame_per_sample(scene, tmp_path):
    record, model, _, trajectory = scene
    n = trajectory.t.shape[0]
    path = tmp_path / "motion.gif"
    assert viz.animate(record.system, model, trajectory, path, fps=10) == n
    assert gif_frames(path) == n
    with Image.open(path) as image:
        assert image.info["duration"] == 100 and image.size == (512, 512)
    strided = tmp_path / "strided.gif"
    assert viz.animate(record.system, model, trajectory, strided, stride=4, dpi=40) == gif_frames(strided) == 2


def test_animate_mp4(scene, tmp_path):
    imageio = pytest.importorskip("imageio.v2")
    pytest.importorskip("imageio_ffmpeg")
    record, model, _, trajectory = scene
    path = tmp_path / "motion.mp4"
    with warnings.catch_warnings(record=True) as caught:   # ffmpeg is started without forking this JAX process
        warnings.simplefilter("always")
        assert viz.animate(record.system, model, trajectory, path, fps=5, dpi=40) == trajectory.t.shape[0]
    assert not [w for w in caught if "fork" in str(w.message)], [str(w.message) for w in caught]
    reader = imageio.get_reader(path)
    try:
        assert reader.count_frames() == trajectory.t.shape[0] and path.stat().st_size > 1000
    finally:
        reader.close()


def test_animate_rejects_bad_arguments(scene, tmp_path):
    record, model, state, trajectory = scene
    with pytest.raises(jb.InvalidArgument, match=".gif"):
        viz.animate(record.system, model, trajectory, tmp_path / "motion.avi")
    with pytest.raises(jb.InvalidArgument, match="stride"):
        viz.animate(record.system, model, trajectory, tmp_path / "motion.gif", stride=0)
    with pytest.raises(jb.InvalidArgument, match="leading time axis"):
        viz.animate(record.system, model, state, tmp_path / "motion.gif")


def test_plot_trajectory_quantities_match_per_sample_operators(scene, tmp_path):
    _, model, _, trajectory = scene
    # Sample 2 with its quaternion scaled off the unit sphere: a nonzero qErr (quaternion norm error).
    trajectory = dataclasses.replace(trajectory, q=trajectory.q.at[2, 1:5].multiply(1.01))
    path = tmp_path / "trajectory.png"
    fig, data = viz.plot_trajectory(model, trajectory, path=path)
    assert path.stat().st_size > 10_000 and len(fig.axes) == 6
    for k in range(trajectory.t.shape[0]):
        sample = model.realize(jax.tree_util.tree_map(lambda x, k=k: x[k], trajectory), Stage.Dynamics)
        assert_close(data["energy"][k], model.calc_energy(sample), 1e-12, "energy")
        assert_close(data["kinetic_energy"][k], model.calc_kinetic_energy(sample), 1e-12, "kinetic energy")
        assert_close(data["q_err"][k], np.max(np.abs(model.get_q_err(sample))), 1e-14, "max |qErr|")
    assert data["q_err"][2] > 1e-3 and data["q_err"][0] < 1e-12
    assert_close(data["q"], trajectory.q, 0)
    assert data["u_err"].shape == (trajectory.t.shape[0],) and not data["u_err"].any()  # no constraints


def test_opensim_style_visual_records():
    """load_osim's records: R and p fields, OpenSim's kind names, rgb ``color``, ``mesh_file``, cylinders along y."""
    record, _ = build_decorated()
    arm = record.bodies["arm"]
    R = np.asarray(jb.Rotation.about_z(0.3).R)
    osim = lambda kind, size, mesh_file=None: types.SimpleNamespace(  # noqa: E731
        body="arm", R=R, p=np.array([0.0, -0.1, 0.0]), kind=kind, size=size, mesh_file=mesh_file, color=(0.9, 0.1, 0.1))
    visuals = [osim("Brick", (0.1, 0.2, 0.3)), osim("Ellipsoid", (0.1, 0.05, 0.02)), osim("Cylinder", (0.02, 0.2)),
               osim("Mesh", (1.0, 1.0, 1.0), "humerus.vtp")]
    before = arm.get_num_body_decorations()
    assert viz.add_visual_decorations(record.bodies, visuals, cylinder_axis="y") == 4
    brick, ellipsoid, cylinder, mesh = (arm.get_body_decoration(before + i) for i in range(4))
    assert isinstance(brick, jb.DecorativeBrick) and isinstance(ellipsoid, jb.DecorativeEllipsoid)
    assert_close(ellipsoid.get_radii(), [0.1, 0.05, 0.02], 0)
    assert_close(cylinder.get_transform().R, R, 0)  # along y already: not turned
    assert_close(brick.get_transform().p, [0, -0.1, 0], 0)
    assert_close(brick.get_color(), [0.9, 0.1, 0.1], 0) and float(brick.get_opacity()) == 1.0
    assert mesh.get_mesh_file() == "humerus.vtp"


# -- visual records (jaxbody.io's .visuals) -----------------------------------------------------------------------


def test_visual_records_become_decorations():
    record, _ = build_decorated()
    hand = record.bodies["hand"]
    X_BV = np.eye(4)
    X_BV[:3, 3] = [0.1, 0.0, 0.0]
    visuals = [
        dict(body="hand", X_BV=X_BV, kind="sphere", size=[0.05], rgba=[0, 0, 1, 0.5]),
        types.SimpleNamespace(body_name="hand", transform=None, kind="box", size=[0.1, 0.2, 0.3], mesh=None, rgba=None),
        dict(body="hand", kind="cylinder", size=[0.02, 0.15]),
        dict(body="hand", kind="capsule", size=[0.03, 0.2]),
        dict(body="hand", kind="mesh", mesh="link.dae", size=[0.001, 0.001, 0.001]),
    ]
    before = hand.get_num_body_decorations()
    assert viz.add_visual_decorations(record.bodies, visuals) == 1 + 1 + 1 + 3 + 1
    got = [hand.get_body_decoration(before + i) for i in range(7)]
    kinds = [type(g).__name__ for g in got]
    assert kinds == ["DecorativeSphere", "DecorativeBrick", "DecorativeCylinder", "DecorativeCylinder",
                     "DecorativeSphere", "DecorativeSphere", "DecorativeMesh"]
    assert_close(got[0].get_transform().p, [0.1, 0, 0], 0)
    assert_close(got[0].get_color(), [0, 0, 1], 0) and float(got[0].get_opacity()) == 0.5
    assert_close(got[1].get_half_lengths(), [0.1, 0.2, 0.3], 0)
    # URDF/MJCF cylinders and capsules are along V's z; Simbody's cylinder is along y: y is turned onto z.
    for cylinder in got[2:4]:
        assert_close(cylinder.get_transform().R @ np.array([0, 1.0, 0]), [0, 0, 1], 1e-15)
    assert_close(got[3].get_half_height(), 0.2, 0)
    assert_close(got[4].get_transform().p, [0, 0, -0.2], 1e-15) and float(got[4].get_radius()) == 0.03
    assert_close(got[5].get_transform().p, [0, 0, 0.2], 1e-15)
    assert got[6].get_mesh_file() == "link.dae"
    with pytest.raises(jb.InvalidArgument, match="kind must be one of"):
        viz.add_visual_decorations(record.bodies, [dict(body="hand", kind="cone", size=[1])])
    with pytest.warns(UserWarning, match="visual skipped.*cone"):
        assert viz.add_visual_decorations(record.bodies, [dict(body="hand", kind="cone", size=[1])], on_error="warn") == 0
    with pytest.raises(jb.InvalidArgument, match="no body of that name"):
        viz.add_visual_decorations(record.bodies, [dict(body="foot", kind="sphere", size=[1])])
    with pytest.raises(jb.InvalidArgument, match="needs 3 size"):
        viz.add_visual_decorations(record.bodies, [dict(body="hand", kind="box", size=[1])])


def test_plot_trajectory_names_coordinates_and_gives_kinetic_energy_its_own_axis(scene):
    """Lines named by an importer's map (joint -> (MobilizedBody, first q, nq, nu)), unnamed entries q<i>/u<i>;
    the kinetic energy alone on one axis, potential and total on another."""
    from jaxbody.viz.trajectory import coordinate_labels

    record, model, _, trajectory = scene
    arm, hand = record.bodies["arm"], record.bodies["hand"]
    coordinates = {"shoulder": (arm, 0, 1, 1), "wrist": (hand, 0, 4, 3)}  # jaxbody.io.imported.Coordinate fields
    q_labels, u_labels = coordinate_labels(5, 4, coordinates)
    assert q_labels == ["shoulder", "wrist[0]", "wrist[1]", "wrist[2]", "wrist[3]"]
    assert u_labels == ["shoulder", "wrist[0]", "wrist[1]", "wrist[2]"]
    assert coordinate_labels(5, 4, {"shoulder": (arm, 0, 1, 1)})[1] == ["shoulder", "u1", "u2", "u3"]
    fig, data = viz.plot_trajectory(model, trajectory, coordinates=coordinates)
    by_title = {ax.get_title(): ax for ax in fig.axes}
    assert [t.get_text() for t in by_title["generalized coordinates"].get_legend().get_texts()] == q_labels
    kinetic = by_title["kinetic energy"].get_lines()
    assert len(kinetic) == 1 and np.allclose(kinetic[0].get_ydata(), data["kinetic_energy"])
    assert len(by_title["potential and total energy"].get_lines()) == 2
