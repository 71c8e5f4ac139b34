"""Simbody's decorations: the geometry classes, MobilizedBody's body/outboard/inboard decorations, and
``matter.calc_decorative_geometry`` placing them in Ground, checked against homogeneous 4x4 transforms
composed in this file from the mobilizers' definitions (Pin: rotation about z by q; Ball: the rotation of the
unit quaternion (w, x, y, z)), eagerly and under jit, vmap and grad.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb

from helpers import assert_close, central_difference
from viz_systems import ARM_X_BM, ARM_X_PF, HAND_X_BM, HAND_X_PF, build_decorated, sample_q

Stage = jb.Stage


@pytest.fixture(scope="module")
def decorated():
    record, added = build_decorated()
    record.model = record.system.realize_topology()
    return record, added


def H(R, p=(0.0, 0.0, 0.0)):
    """4x4 homogeneous transform of rotation R (matrix or jb.Rotation) and translation p."""
    out = np.eye(4)
    out[:3, :3] = np.asarray(getattr(R, "R", R), float)
    out[:3, 3] = np.asarray(p, float)
    return out


def H_of(X):
    return H(X.R, X.p)


def rot_z(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def rot_quat(q):
    w, x, y, z = np.asarray(q, float) / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def expected_placements(q, added):
    """X_GD (4x4) of every decoration in calc_decorative_geometry's order, then the bodies' frames X_GB."""
    X_G_arm = H(*ARM_X_PF) @ H(rot_z(q[0])) @ np.linalg.inv(H(*ARM_X_BM))
    X_G_hand = X_G_arm @ H(*HAND_X_PF) @ H(rot_quat(q[1:5])) @ np.linalg.inv(H(*HAND_X_BM))
    X_GB = {"Ground": np.eye(4), "arm": X_G_arm, "hand": X_G_hand}
    by_body = {name: [d for d in added if d[0] == name] for name in X_GB}
    placed = []
    for name in ("Ground", "arm", "hand"):
        for where in ("body", "outboard", "inboard"):
            for _, _, X, g in (d for d in by_body[name] if d[1] == where):
                anchor = {"body": X_GB[name], "outboard": X_GB[name] @ H(*HAND_X_BM),
                          "inboard": X_G_arm @ H(*HAND_X_PF)}[where]
                placed.append(anchor @ H_of(X) @ H_of(g.transform))
    return placed, [X_GB[n] for n in ("Ground", "arm", "hand")]


def realized(model, q):
    return model.realize(model.default_state().set_q(jnp.asarray(q)), Stage.Position)


# -- the geometry classes -------------------------------------------------------------------------------------


def test_geometry_defaults_are_simbodys_and_setters_return_copies():
    assert float(jb.DecorativeSphere().get_radius()) == 0.5
    assert_close(jb.DecorativeBrick().get_half_lengths(), [0.5, 0.5, 0.5], 0)
    cylinder = jb.DecorativeCylinder()
    assert (float(cylinder.get_radius()), float(cylinder.get_half_height())) == (0.5, 0.5)
    line = jb.DecorativeLine()
    assert_close(line.get_point1(), [0, 0, 0], 0)
    assert_close(line.get_point2(), [1, 1, 1], 0)
    assert float(jb.DecorativeFrame().get_axis_length()) == 1.0
    assert_close(jb.DecorativeEllipsoid().get_radii(), [0.5, 1 / 3, 0.25], 0)
    mesh = jb.DecorativeMesh("arm.obj", 2.0)
    assert mesh.get_mesh_file() == "arm.obj"
    assert_close(mesh.get_scale_factors(), [2, 2, 2], 0)

    sphere = jb.DecorativeSphere(0.2)
    assert_close(sphere.get_color(), [-1, -1, -1], 0)  # Simbody's "renderer default"
    assert float(sphere.get_opacity()) == -1 and sphere.get_body_id() == 0
    red = sphere.set_color([1, 0, 0]).set_opacity(0.25).set_transform(jb.Transform([1.0, 2.0, 3.0])).set_body_id(4)
    assert_close(red.get_color(), [1, 0, 0], 0)
    assert float(red.get_opacity()) == 0.25 and red.get_body_id() == 4
    assert_close(red.get_transform().p, [1, 2, 3], 0)
    assert isinstance(red, jb.DecorativeSphere) and float(red.get_radius()) == 0.2
    assert_close(sphere.get_color(), [-1, -1, -1], 0)  # the original is unchanged
    assert_close(sphere.get_transform().p, [0, 0, 0], 0)


@pytest.mark.parametrize("geometry", [jb.DecorativeSphere(0.2), jb.DecorativeBrick([0.1, 0.2, 0.3]),
                                      jb.DecorativeEllipsoid([0.3, 0.2, 0.1]), jb.DecorativeCylinder(0.1, 0.4),
                                      jb.DecorativeLine([1, 2, 3], [4, 5, 6]), jb.DecorativeFrame(0.7),
                                      jb.DecorativeMesh("arm.obj", [1, 2, 3])], ids=lambda g: type(g).__name__)
def test_setters_rebuild_through_the_constructor(geometry):
    """Every class's copy (``set_*``) keeps its shape fields and changes only the one asked for, also the
    static body id; the constructor takes the shared fields as keywords."""
    moved = geometry.set_body_id(3).set_color([0, 1, 0])
    assert type(moved) is type(geometry) and moved.get_body_id() == 3 and geometry.get_body_id() == 0
    assert_close(moved.get_color(), [0, 1, 0], 0)
    shared = ("transform", "color", "opacity", "body_id")
    same = jax.tree_util.tree_map(lambda a, b: bool(jnp.all(a == b)), *(
        {k: v for k, v in vars(g).items() if k not in shared} for g in (moved, geometry)))
    assert all(jax.tree_util.tree_leaves(same)) and jax.tree_util.tree_structure(same).num_leaves >= 1
    direct = type(geometry)(**{k: v for k, v in vars(moved).items() if k not in shared},
                            color=[0, 1, 0], body_id=3)
    assert jax.tree_util.tree_all(jax.tree_util.tree_map(lambda a, b: bool(jnp.all(a == b)), direct, moved))


@pytest.mark.parametrize("make, message", [
    (lambda: jb.DecorativeSphere(-1.0), "radius"),
    (lambda: jb.DecorativeBrick([0.1, 0.0, 0.1]), "half lengths"),
    (lambda: jb.DecorativeCylinder(0.1, np.nan), "half height"),
    (lambda: jb.DecorativeLine([0, 0], [1, 1, 1]), "point1"),
    (lambda: jb.DecorativeEllipsoid([1, 1, 0]), "radii"),
    (lambda: jb.DecorativeMesh(""), "file name"),
    (lambda: jb.DecorativeSphere().set_color([2, 0, 0]), "color"),
    (lambda: jb.DecorativeSphere().set_opacity(1.5), "opacity"),
    (lambda: jb.DecorativeSphere().set_body_id(-1), "body id"),
    (lambda: jb.DecorativeSphere().set_transform("here"), "set_transform"),
    (lambda: jb.DecorativeSphere(0.1, color=[0, 2, 0]), "color"),
    (lambda: jb.DecorativeBrick(opacity=-0.5), "opacity"),
    (lambda: jb.DecorativeFrame(body_id=-2), "body id"),
])
def test_bad_geometry_is_rejected(make, message):
    with pytest.raises(jb.InvalidArgument, match=message):
        make()


# -- attaching decorations ---------------------------------------------------------------------------------------


def test_counts_getters_and_stored_frames():
    record, added = build_decorated()
    arm, hand, ground = record.bodies["arm"], record.bodies["hand"], record.bodies["Ground"]
    assert (arm.get_num_body_decorations(), arm.get_num_outboard_decorations(), arm.get_num_inboard_decorations()) == (2, 0, 0)
    assert (hand.get_num_body_decorations(), hand.get_num_outboard_decorations(), hand.get_num_inboard_decorations()) == (0, 1, 1)
    assert ground.get_num_body_decorations() == 1
    # Stored as Simbody does: transform = X (given) * the geometry's own transform; body id = the frame's body.
    _, _, X, g = added[0]
    stored = arm.get_body_decoration(0)
    assert isinstance(stored, jb.DecorativeSphere) and stored.get_body_id() == arm.get_mobilized_body_index()
    assert_close(H_of(stored.get_transform()), H_of(X) @ H_of(g.transform), 1e-15)
    assert_close(stored.get_color(), [1, 0, 0], 0)
    assert hand.get_outboard_decoration(0).get_body_id() == hand.get_mobilized_body_index()
    assert hand.get_inboard_decoration(0).get_body_id() == arm.get_mobilized_body_index()  # F is on the parent
    assert hand.add_outboard_decoration(jb.Rotation.about_x(0.1), jb.DecorativeFrame(0.1)) == 1
    with pytest.raises(jb.InvalidArgument, match="out of range"):
        arm.get_body_decoration(2)
    with pytest.raises(jb.InvalidArgument, match="arm: add_body_decoration needs a jb.DecorativeGeometry"):
        arm.add_body_decoration(jb.Transform(), "sphere")
    with pytest.raises(jb.InvalidArgument, match="Ground has no inboard"):
        ground.add_inboard_decoration(jb.Transform(), jb.DecorativeSphere())
    with pytest.raises(jb.InvalidArgument, match="hand: X_BD"):
        hand.add_body_decoration(jb.Transform(np.diag([1.0, 1.0, -1.0])), jb.DecorativeSphere())


def test_decorations_survive_realize_topology_and_may_be_added_after():
    record, _ = build_decorated()
    model = record.system.realize_topology()
    arm = record.bodies["arm"]
    assert arm.get_num_body_decorations() == 2
    arm.add_body_decoration(jb.Transform([0.0, -0.5, 0.0]), jb.DecorativeSphere(0.02))
    state = realized(model, [0.3, 1, 0, 0, 0])
    n = len(record.matter.calc_decorative_geometry(state, model))
    assert n == 6 + 3 + 2  # 6 decorations, 3 body frames, 2 parent-child lines


# -- placement in Ground -------------------------------------------------------------------------------------------


def test_placement_in_ground_matches_composed_transforms(decorated):
    record, added = decorated
    rng = np.random.default_rng(3)
    for q in sample_q(rng, (3,)):
        geometry = record.matter.calc_decorative_geometry(realized(record.model, q), record.model)
        placed, X_GB = expected_placements(q, added)
        assert len(geometry) == len(placed) + 3 + 2
        for g, expected, (_, _, _, original) in zip(geometry, placed, _in_order(added)):
            assert type(g) is type(original) and g.get_body_id() == 0
            assert_close(H_of(g.get_transform()), expected, 1e-12, f"X_GD of {type(g).__name__}")
            assert_close(g.get_color(), original.get_color(), 0)
        frames, lines = geometry[len(placed):len(placed) + 3], geometry[len(placed) + 3:]
        for frame, X in zip(frames, X_GB):
            assert isinstance(frame, jb.DecorativeFrame) and float(frame.get_axis_length()) == 0.5
            assert_close(H_of(frame.get_transform()), X, 1e-12, "default body frame")
        for line, (parent, child) in zip(lines, [(0, 1), (1, 2)]):
            assert isinstance(line, jb.DecorativeLine)
            assert_close(line.get_point1(), X_GB[parent][:3, 3], 1e-12, "line start: parent origin")
            assert_close(line.get_point2(), X_GB[child][:3, 3], 1e-12, "line end: child origin")


def _in_order(added):
    """``added`` in calc_decorative_geometry's order (by body index, then body, outboard, inboard)."""
    rank = {"Ground": 0, "arm": 1, "hand": 2}
    where = {"body": 0, "outboard": 1, "inboard": 2}
    return sorted(added, key=lambda d: (rank[d[0]], where[d[1]]))


def test_default_geometry_switch_and_append_alias(decorated):
    record, added = decorated
    matter = record.matter
    state = realized(record.model, [0.2, 0.9, 0.1, 0.3, 0.1])
    assert matter.get_show_default_geometry() is True
    everything = matter.calc_decorative_geometry(state, record.model)
    matter.set_show_default_geometry(False)
    try:
        only = matter.calc_decorative_geometry(state, record.model)
    finally:
        matter.set_show_default_geometry(True)
    assert len(only) == len(added) and len(everything) == len(added) + 5
    given = [jb.DecorativeLine()]
    appended = matter.calc_decorative_geometry_and_append(state, given, record.model)
    assert len(given) == 1 and appended[0] is given[0] and len(appended) == 1 + len(everything)


def test_bad_state_or_model(decorated):
    record, _ = decorated
    with pytest.raises(jb.StageViolation, match="Stage.Position"):
        record.matter.calc_decorative_geometry(record.model.default_state(), record.model)
    other, _ = build_decorated()
    other.bodies["hand"].add_body_decoration(jb.Transform(), jb.DecorativeSphere())
    jb.MobilizedBody.Pin(other.bodies["hand"], jb.Transform(), jb.Body.Massless(), jb.Transform(), name="extra")
    other_model = other.system.realize_topology()
    with pytest.raises(jb.InvalidArgument, match="calc_decorative_geometry"):
        record.matter.calc_decorative_geometry(realized(record.model, [0, 1, 0, 0, 0]), other_model)


# -- jit, vmap, grad ------------------------------------------------------------------------------------------------


def _hand_brick_pose(record):
    """q -> (R, p) of the hand's outboard brick in Ground (index 3 in placement order)."""
    def pose(q):
        g = record.matter.calc_decorative_geometry(realized(record.model, q), record.model)[3]
        return g.transform.R, g.transform.p
    return pose


def test_jit_vmap_grad(decorated):
    record, added = decorated
    rng = np.random.default_rng(7)
    qs = sample_q(rng, (4,))
    place = lambda q: record.matter.calc_decorative_geometry(realized(record.model, q), record.model)  # noqa: E731
    eager = place(qs[0])
    jitted = jax.jit(place)(qs[0])
    for a, b in zip(jax.tree_util.tree_leaves(jitted), jax.tree_util.tree_leaves(eager)):
        assert_close(a, b, 1e-14, "jit vs eager")
    batched = jax.vmap(place)(jnp.asarray(qs))
    for lane, q in enumerate(qs):
        placed, _ = expected_placements(q, added)
        for g, expected in zip(batched, placed):
            assert_close(H(g.transform.R[lane], g.transform.p[lane]), expected, 1e-12, f"vmap lane {lane}")

    pose = _hand_brick_pose(record)
    weights_R, weights_p = rng.normal(size=(3, 3)), rng.normal(size=3)
    scalar = lambda q: jnp.sum(pose(q)[0] * weights_R) + pose(q)[1] @ weights_p  # noqa: E731
    grad = jax.jit(jax.grad(scalar))(jnp.asarray(qs[1]))
    fd = central_difference(scalar, jnp.asarray(qs[1]), 1e-6)
    assert np.max(np.abs(grad)) > 0.1
    assert_close(grad, fd, 1e-8, "d(brick pose)/dq vs central differences")


def test_model_parameters_move_inboard_and_outboard_decorations(decorated):
    """A model with another X_BM (hand) places the hand's outboard decoration with it (and grad flows to it)."""
    record, added = decorated
    q = jnp.asarray([0.4, 0.8, 0.2, -0.3, 0.4])
    base = record.model.parameters.p_BM

    def brick_p(p_BM_hand):
        model = jb.replace_parameters(record.model, p_BM=base.at[2].set(p_BM_hand))
        g = record.matter.calc_decorative_geometry(realized(model, q), model)[3]
        return g.transform.p

    p0 = np.asarray(base[2])
    shifted = p0 + np.array([0.0, 0.1, 0.0])
    # X_GB of the hand depends on X_BM too: compose everything again with the new X_BM.
    X_G_arm = H(*ARM_X_PF) @ H(rot_z(0.4)) @ np.linalg.inv(H(*ARM_X_BM))
    X_BM = H(HAND_X_BM[0], shifted)
    X_G_hand = X_G_arm @ H(*HAND_X_PF) @ H(rot_quat(np.asarray(q[1:]))) @ np.linalg.inv(X_BM)
    _, _, X_MD, g = added[2]
    expected = (X_G_hand @ X_BM @ H_of(X_MD) @ H_of(g.transform))[:3, 3]
    assert_close(brick_p(jnp.asarray(shifted)), expected, 1e-12, "outboard decoration with a new X_BM")
    jac = jax.jacfwd(brick_p)(jnp.asarray(p0))
    assert_close(jac, central_difference(brick_p, jnp.asarray(p0), 1e-6), 1e-8, "d p_GD / d p_BM")
