"""Mesh decorations drawn as meshes: STL, OBJ and DAE files read through trimesh, found from ``package://``
URIs, thinned to a face budget with their winding kept; MJCF meshes from MuJoCo's compiled assets; a sphere
and a note when the file or trimesh is missing."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import jaxbody as jb
from jaxbody.viz.figure import make_scene
from jaxbody.viz.meshes import MeshLibrary, candidates, decimate

trimesh = pytest.importorskip("trimesh")


def signed_volume(vertices, faces) -> float:
    a, b, c = (vertices[faces[:, k]] for k in range(3))
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6)


def test_decimate_keeps_the_shape_and_its_winding():
    sphere = trimesh.creation.icosphere(subdivisions=4, radius=0.5)  # 5120 faces
    vertices, faces = decimate(sphere.vertices, sphere.faces, 300)
    assert 50 < len(faces) <= 300
    assert signed_volume(vertices, faces) > 0.7 * signed_volume(sphere.vertices, sphere.faces) > 0
    assert np.allclose(np.ptp(vertices, 0), 1.0, atol=0.1)
    small = trimesh.creation.box()
    assert decimate(small.vertices, small.faces, 300)[1].shape == (12, 3)  # under budget: as is


@pytest.mark.parametrize("suffix", ["stl", "obj", "dae"])
def test_mesh_files_are_read_from_package_uris(tmp_path, suffix):
    if suffix == "dae":
        pytest.importorskip("collada")
    folder = tmp_path / "meshes" / "visual"
    folder.mkdir(parents=True)
    trimesh.creation.box(extents=[0.2, 0.1, 0.4]).export(folder / f"link.{suffix}")
    library = MeshLibrary([tmp_path])
    vertices, faces = library(f"package://robot_description/meshes/visual/link.{suffix}")
    assert len(faces) == 12 and np.allclose(np.ptp(vertices, 0), [0.2, 0.1, 0.4])
    assert signed_volume(vertices, faces) > 0  # outward winding, so back faces can be culled
    assert library("package://robot_description/meshes/visual/absent.stl") is None
    assert tmp_path / "link.stl" in candidates("package://pkg/meshes/link.stl", [tmp_path])


def decorated(filename, scale=1.0):
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    link = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(jb.MassProperties(1.0, [0, 0, 0],
                                jb.Inertia(0.1))), jb.Transform([0, 0.5, 0]))
    link.add_body_decoration(jb.Transform(), jb.DecorativeMesh(filename, scale))
    model = system.realize_topology()
    states = jb.simulate(model, model.default_state().set_u(np.array([1.0])), 0.01, 4, save_every=2)[1]
    return system, model, states


def test_a_mesh_is_drawn_with_its_faces(tmp_path):
    trimesh.creation.box(extents=[0.2, 0.1, 0.4]).export(tmp_path / "link.stl")
    system, model, states = decorated("package://arm/link.stl", 2.0)
    scene = make_scene(system, model, states, [tmp_path])
    assert scene.missing == [] and len(scene.faces) == 12
    assert np.allclose(np.ptp(scene.faces.reshape(-1, 3), 0), [0.4, 0.2, 0.8])  # scaled by 2
    fig = jb.viz.plot_state(system, model, jax_index(states, 1), meshes=[tmp_path], path=tmp_path / "mesh.png")
    assert not any("drawn as spheres" in t.get_text() for t in fig.axes[0].texts)


def test_missing_file_or_trimesh_gives_a_sphere_and_a_note(tmp_path, monkeypatch):
    trimesh.creation.box().export(tmp_path / "link.stl")
    system, model, states = decorated("link.stl")
    assert make_scene(system, model, states, []).missing == ["link.stl"]  # not in the working folder
    monkeypatch.setitem(sys.modules, "trimesh", None)  # trimesh not installed
    scene = make_scene(system, model, states, [tmp_path])
    assert scene.missing == ["link.stl"] and len(scene.faces) > 12
    fig = jb.viz.plot_state(system, model, jax_index(states, 0), meshes=[tmp_path])
    assert any("1 mesh(es) (link.stl, ...) not found or not readable: drawn as spheres" in t.get_text()
               for t in fig.axes[0].texts)


def test_mjcf_meshes_come_from_mujocos_compiled_assets(tmp_path):
    pytest.importorskip("mujoco")
    pytest.importorskip("jaxbody.io")
    from jaxbody.cli.demo_model import load_model, model_meshes

    trimesh.creation.box(extents=[0.3, 0.2, 0.1]).export(tmp_path / "block.obj")
    xml = tmp_path / "block.xml"
    xml.write_text("""<mujoco><asset><mesh name="block" file="block.obj"/></asset><worldbody>
      <body name="b" pos="0 0 1"><joint type="hinge" axis="1 0 0"/><geom type="mesh" mesh="block"/></body>
    </worldbody></mujoco>""")
    library = model_meshes(xml)
    vertices, faces = library("block")
    assert len(faces) == 12 and np.allclose(np.sort(np.ptp(vertices, 0)), [0.1, 0.2, 0.3], atol=1e-6)
    record = load_model(xml)
    assert jb.viz.add_visual_decorations(record.bodies, record.visuals) == 1
    model = record.system.realize_topology()
    states = jb.simulate(model, model.default_state(), 0.01, 2, save_every=1)[1]
    assert make_scene(record.system, model, states, library).missing == []


def jax_index(states, k):
    import jax

    return jax.tree_util.tree_map(lambda x: x[k], states)
