"""Bad input to the mesh and convex builders raises InvalidArgument naming the body or shape; a mesh file loads
through trimesh (the ``io`` extra) to the same model as its arrays."""

import os

import numpy as np
import pytest
from ball_models import _ball_system
from mesh_models import MODELS, icosphere, read_obj

import jaxbody as jb
from jaxbody.errors import InvalidArgument

V, F = icosphere(0.1, 0)


def _handle():
    system, matter, forces, ball = _ball_system()
    return system, matter, jb.ElasticFoundationForce(forces), ball


@pytest.mark.parametrize(
    "vertices, faces, message",
    [
        (V, F[:-1], "not closed"),  # a face missing: open mesh
        (V, np.vstack([F[:1, ::-1], F[1:]]), "not closed"),  # one face flipped
        (V, np.vstack([F, [[0, 0, 1]]]), "zero area"),
        (V, F + len(V), "outside"),
        (V[:, :2], F, "vertices must be"),
        (np.where(np.arange(len(V))[:, None] == 3, np.nan, V), F, "vertices must be"),
        (V, F.astype(float), "faces must be"),
    ],
    ids=["open", "flipped", "degenerate", "index", "shape", "nan", "float-faces"],
)
def test_bad_mesh_names_the_body(vertices, faces, message):
    _, _, ef, ball = _handle()
    with pytest.raises(InvalidArgument, match=f"mesh on 'ball'.*{message}"):
        ef.add_mesh(ball, vertices, faces, stiffness=1e6)


def test_bad_parameters_and_missing_partner():
    system, matter, ef, ball = _handle()
    with pytest.raises(InvalidArgument, match="mesh on 'ball': stiffness must be positive"):
        ef.add_mesh(ball, V, F, stiffness=0.0)
    with pytest.raises(InvalidArgument, match="dissipation"):
        ef.add_mesh(ball, V, F, stiffness=1e6, dissipation=-1.0)
    with pytest.raises(InvalidArgument, match="sphere on 'ball': radius must be positive"):
        ef.add_sphere(ball, -0.1)
    ef.add_mesh(ball, V, F, stiffness=1e6)
    ef.add_sphere(ball, 0.1)  # same body: no pair
    with pytest.raises(InvalidArgument, match="no mesh has a half-space, sphere or other mesh on a different body"):
        system.realize_topology()


def test_bad_frames_name_the_surface():
    # A stretched rotation or a NaN position would place the springs silently wrong.
    _, matter, ef, ball = _handle()
    with pytest.raises(InvalidArgument, match="half-space on 'Ground': X_BH rotation is not a proper orthonormal"):
        ef.add_half_space(matter.Ground(), jb.Transform(jb.Rotation(2 * np.eye(3)), np.zeros(3)))
    with pytest.raises(InvalidArgument, match="mesh on 'ball': X_BM is not finite"):
        ef.add_mesh(ball, V, F, jb.Transform(jb.Rotation(), [0.0, np.nan, 0.0]), stiffness=1e6)


def test_coplanar_convex_mesh_is_refused():
    square = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]
    with pytest.raises(InvalidArgument, match="ConvexMesh: convex hull: the points are coplanar"):
        jb.ContactGeometry.ConvexMesh(square)


def test_mesh_file_matches_arrays():
    pytest.importorskip("trimesh")
    path = os.path.join(MODELS, "icosphere_r0.1.obj")
    models = []
    for from_file in (True, False):
        system, matter, ef, ball = _handle()
        if from_file:
            ef.add_mesh_file(ball, path, stiffness=1e6)
        else:
            ef.add_mesh(ball, *read_obj(path), stiffness=1e6)
        ef.add_half_space(matter.Ground())
        models.append(system.realize_topology())
    a, b = (m.forces[0] for m in models)
    np.testing.assert_array_equal(a.vertices[0], b.vertices[0])
    assert a.faces == b.faces


def test_contact_geometry_from_file():
    pytest.importorskip("trimesh")
    path = os.path.join(MODELS, "icosphere_r0.1.obj")
    v, f = read_obj(path)
    mesh = jb.ContactGeometry.TriangleMesh.from_file(path)
    np.testing.assert_array_equal(mesh.fields["vertices"], v)
    assert mesh.faces == tuple(map(tuple, f.tolist()))
    hull = jb.ContactGeometry.ConvexMesh.from_file(path)
    assert len(hull.faces) == len(f)  # every icosphere vertex is on its hull
    with pytest.raises(InvalidArgument, match="ContactGeometry.TriangleMesh: no mesh file"):
        jb.ContactGeometry.TriangleMesh.from_file(path + ".missing")
