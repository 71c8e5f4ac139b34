"""Simbody's mesh/mesh rule when no triangles cross (``trackers.mesh.meshes_cross``): one mesh wholly inside
another makes no contact, in the CompliantContactSubsystem's tracker as in ``jb.ElasticFoundationForce`` (whose
OpenSim 4.6 golden case "inside" is in test_mesh_golden.py). Also the crossing test on single triangles.
"""

import os

import jax
import jax.numpy as jnp
import numpy as np
from mesh_models import MODELS, icosphere, read_obj
from test_mesh_golden import GOLDEN

from jaxbody._dynamics.contact import shapes
from jaxbody._dynamics.contact.trackers import mesh

V, F = read_obj(os.path.join(MODELS, "icosphere_r0.1.obj"))
V2, F2 = read_obj(os.path.join(MODELS, "icosphere_r0.12.obj"))


def test_triangles_cross_only_when_an_edge_pierces_the_other():
    tri = jnp.asarray([[[0.0, 0, 0], [1, 0, 0], [0, 1, 0]]])
    piercing = jnp.asarray([[[0.2, 0.2, -1], [0.2, 0.2, 1], [2, 2, 0.5]]])
    beside = piercing + jnp.asarray([5.0, 0, 0])
    above = piercing + jnp.asarray([0.0, 0, 1.5])
    assert bool(mesh.meshes_cross(tri, piercing)) and bool(mesh.meshes_cross(piercing, tri))
    assert not bool(mesh.meshes_cross(tri, beside)) and not bool(mesh.meshes_cross(tri, above))


def test_nested_meshes_do_not_cross_overlapping_ones_do():
    v1, f1 = icosphere(0.1, 1)
    v2, f2 = icosphere(0.12, 1)
    inner, outer = jnp.asarray(v1)[f1], jnp.asarray(v2)[f2]
    assert not bool(mesh.meshes_cross(inner, outer))  # concentric: 0.1 < the outer mesh's face distance 0.112
    assert bool(mesh.meshes_cross(inner + jnp.asarray([0.05, 0.0, 0.0]), outer))


def test_compliant_tracker_gives_no_contact_with_one_mesh_inside_the_other():
    case = next(c for c in GOLDEN["mesh"]["cases"] if c["name"] == "inside")
    other = GOLDEN["mesh"]
    R_BM, p_BM = np.asarray(GOLDEN["mesh_R_BM"]), np.asarray(GOLDEN["mesh_location"])
    R1 = jnp.asarray(np.asarray(case["R_GB"]) @ R_BM)[None]
    p1 = jnp.asarray(np.asarray(case["p_GB"]) + np.asarray(case["R_GB"]) @ p_BM)[None]
    R2, p2 = jnp.asarray(other["R_GO"])[None], jnp.asarray(other["location"])[None]
    m1 = shapes.TriangleMesh(jnp.asarray(V)[None], tuple(map(tuple, F.tolist())))
    m2 = shapes.TriangleMesh(jnp.asarray(V2)[None], tuple(map(tuple, F2.tolist())))
    track = jax.jit(mesh.triangle_mesh_triangle_mesh)
    contact = track(R1, p1, m1, R2, p2, m2)
    assert np.all(np.asarray(contact.depth) <= 0)
    # jb.ElasticFoundationForce's springs (one side) at the same pose: none active
    raw = mesh.mesh_mesh_patch(R1[0], p1[0], jnp.asarray(V), F, R2[0], p2[0], jnp.asarray(V2), F2)
    assert not np.any(np.asarray(raw.active))
    moved = track(R1, p1 + jnp.asarray([0.06, 0.0, 0.0]), m1, R2, p2, m2)  # now crossing: contact
    assert np.any(np.asarray(moved.depth) > 0)
