"""load_urdf(collision=True) (jaxbody.io.urdf_collision): <collision> primitives and meshes as contact surfaces at
Pinocchio's placements, mesh files found and hulled, missing ones named, bad input, and a floating robot
resting on a floor the user adds (weight carried, under jit); the Panda's own collision set from its shipped meshes."""

from __future__ import annotations

import pathlib
import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody.io import load_urdf
from jaxbody.io.urdf_parse import rpy_matrix

trimesh = pytest.importorskip("trimesh", reason="URDF collision meshes are read with trimesh")

ROBOT = """<robot name="r">
<link name="base"><inertial><mass value="2"/><inertia ixx=".02" iyy=".02" izz=".02" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><origin xyz="0 0 -0.05" rpy="0.1 0.2 0.3"/><geometry><sphere radius="0.1"/></geometry></collision>
  <collision><geometry><mesh filename="package://pkg/meshes/cube.stl" scale="1 2 1"/></geometry></collision>
  <collision><geometry><mesh filename="package://pkg/meshes/missing.stl"/></geometry></collision></link>
<link name="arm"><inertial><mass value="0.5"/><inertia ixx=".01" iyy=".01" izz=".01" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><origin xyz="0 0 0.2"/><geometry><capsule radius="0.03" length="0.3"/></geometry></collision></link>
<link name="tool"><collision><origin xyz="0.01 0 0"/><geometry><box size="0.1 0.2 0.3"/></geometry></collision></link>
<joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.1"/>
  <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
<joint name="tool_fixed" type="fixed"><parent link="arm"/><child link="tool"/><origin xyz="0 0 0.4" rpy="0 0 0.5"/></joint>
</robot>"""


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    root = tmp_path_factory.mktemp("packages")
    (root / "pkg" / "meshes").mkdir(parents=True)
    trimesh.creation.box(extents=(0.2, 0.2, 0.2)).export(root / "pkg" / "meshes" / "cube.stl")
    return str(root)


def _load(package, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        imp = load_urdf(ROBOT, floating_base=True, collision=True, package_dirs=[package], **kw)
    return imp, [str(w.message) for w in caught]


def test_surfaces_at_pinocchios_placements(package):
    imp, msgs = _load(package)
    s = imp.contact.surfaces
    assert [x.geometry.kind for x in s["base"]] == ["Sphere", "ConvexMesh"]
    assert s["arm"][0].geometry.kind == "Capsule" and s["tool"][0].geometry.kind == "Brick"
    np.testing.assert_allclose(s["tool"][0].geometry.fields["half_lengths"], [0.05, 0.1, 0.15])
    hull = s["base"][1].geometry.fields["vertices"]
    np.testing.assert_allclose(np.ptp(hull, axis=0), [0.2, 0.4, 0.2], atol=1e-12)  # scaled by (1, 2, 1)
    arm = imp.bodies["arm"].body.contact_surfaces
    tool_R, tool_p = arm[1][0], arm[1][1]  # the fixed tool link is fused into "arm" at its joint origin
    np.testing.assert_allclose(tool_R, rpy_matrix([0, 0, 0.5]), atol=1e-15)
    np.testing.assert_allclose(tool_p, [0, 0, 0.4] + rpy_matrix([0, 0, 0.5]) @ [0.01, 0, 0], atol=1e-15)
    base = imp.bodies["base"].body.contact_surfaces
    np.testing.assert_allclose(base[0][0], rpy_matrix([0.1, 0.2, 0.3]), atol=1e-15)
    assert any("base: package://pkg/meshes/missing.stl (not found)" in m for m in msgs), msgs
    assert imp.contact.left_out == ["base: package://pkg/meshes/missing.stl (not found)"]


def test_triangle_mesh_option_and_bad_input(package):
    imp, _ = _load(package, collision_mesh="mesh")
    assert imp.contact.surfaces["base"][1].geometry.kind == "TriangleMesh"
    with pytest.raises(jb.errors.InvalidArgument, match="collision_mesh"):
        _load(package, collision_mesh="hull")
    with pytest.raises(jb.errors.InvalidArgument, match="contact_material"):
        _load(package, contact_material=(1e6, 1, 0.5, 0.5))
    bad = ROBOT.replace('<collision><origin xyz="0 0 0.2"/><geometry><capsule radius="0.03" length="0.3"/></geometry>'
                        '</collision>', "<collision></collision>")
    with pytest.raises(jb.errors.InvalidArgument, match="link 'arm'|arm"):
        load_urdf(bad, collision=True, package_dirs=[package])


BALL = """<robot name="ball"><link name="ball"><inertial><mass value="1"/>
<inertia ixx=".004" iyy=".004" izz=".004" ixy="0" ixz="0" iyz="0"/></inertial>
<collision><geometry><sphere radius="0.1"/></geometry></collision></link></robot>"""


def test_floating_ball_rests_on_a_user_floor_under_jit():
    material = jb.ContactMaterial(1e6, 1.0, 0.8, 0.6)
    imp = load_urdf(BALL, floating_base=True, collision=True, contact_material=material)
    floor = jb.ContactSurface(jb.ContactGeometry.HalfSpace(), material)
    down = jb.Transform(jb.Rotation(np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])), np.zeros(3))  # normal +z
    imp.matter.Ground().update_body().add_contact_surface(down, floor)
    model = imp.system.realize_topology()
    state = model.default_state()
    state = state.set_q(state.q.at[6].set(0.15))
    final, traj = jax.jit(lambda s: jb.simulate(model, s, 5e-4, 2000, "semi_explicit_euler", save_every=100))(state)
    assert bool(jnp.all(jnp.isfinite(traj.q)))
    s = model.realize(final, jb.Stage.Velocity)
    report = imp.contact.subsystem.get_contact_forces(s, model)
    assert float(report.force_G[:, 2].sum()) == pytest.approx(9.81, rel=0.05)  # carries its weight
    assert 0.09 < float(final.q[6]) < 0.1 and abs(float(final.u[5])) < 0.05


MODELS = pathlib.Path(__file__).resolve().parents[1] / "models"


def test_panda_collision_set_from_its_shipped_meshes():
    """The Panda's own collision set (tests/models/panda.urdf with its convex .stl meshes under tests/models/meshes):
    every link's <collision> becomes a surface, none is left out, each mesh's hull is trimesh's hull of the file
    (the same vertex set), and the boxes keep their sizes. Fingers welded, so they join panda_link7."""
    text = (MODELS / "panda.urdf").read_text()
    text = re.sub(r'(<joint name="panda_finger_joint\d" type=")prismatic', r"\1fixed", text)
    text = text.replace('<mimic joint="panda_finger_joint1"/>', "")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imp = load_urdf(text, collision=True, package_dirs=[str(MODELS / "meshes")])
    surfaces = imp.contact.surfaces
    assert imp.contact.left_out == []
    meshes = [f"panda_link{i}" for i in range(8)] + ["panda_hand"]
    assert sorted(surfaces) == sorted(meshes + ["panda_leftfinger", "panda_rightfinger"])
    for link in meshes:
        assert [s.geometry.kind for s in surfaces[link]] == ["ConvexMesh"], link
        name = "hand" if link == "panda_hand" else link.replace("panda_", "")
        stl = MODELS / "meshes/example-robot-data/robots/panda_description/meshes/collision" / f"{name}.stl"
        expected = np.unique(np.round(trimesh.load(stl).convex_hull.vertices, 12), axis=0)
        got = np.unique(np.round(np.asarray(surfaces[link][0].geometry.fields["vertices"]), 12), axis=0)
        np.testing.assert_allclose(got, expected, atol=1e-12, err_msg=link)
    for finger in ("panda_leftfinger", "panda_rightfinger"):
        boxes = surfaces[finger]
        assert [s.geometry.kind for s in boxes] == ["Brick"] * 4
        np.testing.assert_allclose(boxes[0].geometry.fields["half_lengths"], [0.011, 0.0075, 0.01], atol=1e-15)
    assert len(imp.bodies["panda_link7"].body.contact_surfaces) == 1 + 1 + 8  # link7, hand, 8 finger boxes fused
