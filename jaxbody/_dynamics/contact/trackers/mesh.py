"""Triangle-mesh trackers (Simbody's ContactGeometry::TriangleMesh against half-space, sphere and mesh).

A mesh is ``vertices`` (nv, 3) in its frame M, m (a Model leaf), and ``faces`` (nf, 3) vertex indices (static,
counter-clockwise seen from outside, so ``(v1 - v0) x (v2 - v0)`` points out). Each face carries one spring of
Simbody's elastic foundation at its centroid (ElasticFoundationForceImpl::setBodyParameters); a tracker returns a
``FacePatch``: per face, whether its spring is inside the other object and where the nearest point of the other
object's surface is. Arrays are (nf, ...) for every face whatever the overlap (inactive faces are masked), so a
pair's patch has a static shape: jit and vmap over states work, and the pair table vmaps over pairs of equal
meshes.

Simbody's rule for a spring (CollisionDetectionAlgorithm::*TriangleMesh + findNearestPoint), reproduced here:

* half-space (H frame, material x > 0): the centroid's ``x_H >= 0``; nearest point ``(0, y_H, z_H)``;
* sphere (center c, radius r): ``|centroid - c| <= r``; nearest point ``c + r (centroid - c)/|centroid - c|``;
* mesh O: nearest point over every face of O (brute force, O(nf nf_O), where Simbody walks an OBB tree) and
  inside when ``(centroid - nearest) . n_face < 0`` for the face holding the nearest point.

Mesh/mesh follows Simbody's rule for when there is contact at all (ContactTracker::TriangleMeshTriangleMesh and
CollisionDetectionAlgorithm::TriangleMeshTriangleMesh): no triangle of one mesh crossing a triangle of the other
means no contact, even when one mesh lies wholly inside the other (``meshes_cross``). When they cross, Simbody keeps
the crossing faces and those a ray cast finds buried; here the inside test above decides, which agrees whenever
the meshes' surfaces cross. Ties in the nearest face (a point nearest to an edge or vertex) take the lowest face
index, which matches Simbody for convex neighbourhoods. Cost: half-space and sphere O(nf); mesh/mesh
O(nf * nf_O) (memory (nf, nf_O, 3)).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.contact.trackers.contact import Contact
from jaxbody._math import spatial


class FacePatch(NamedTuple):
    """Per-face spring data of one mesh against another object, all in G (m, m^2).

    ``active`` (nf,) bool: the spring (face centroid) is inside the other object at a nonzero distance.
    ``spring`` (nf, 3): face centroids. ``nearest`` (nf, 3): nearest point of the other object's surface.
    ``area`` (nf,): face areas. ``normal`` (nf, 3): outward face normals.
    """

    active: jnp.ndarray
    spring: jnp.ndarray
    nearest: jnp.ndarray
    area: jnp.ndarray
    normal: jnp.ndarray


def spring_stretch(patch):
    """(direction (nf, 3) from each spring to its nearest point, distance (nf,) m, active (nf,) bool): a spring
    is active when inside at a nonzero distance; an inactive one's direction is its raw displacement (finite,
    for the caller to mask)."""
    disp = patch.nearest - patch.spring
    dist = spatial.safe_norm(disp)
    active = patch.active & (dist > 0)
    return disp / jnp.where(active, dist, 1.0)[:, None], dist, active


def face_springs(vertices, faces):
    """Centroids (nf, 3), areas (nf,) and outward unit normals (nf, 3) of the faces, in the mesh frame.

    ``vertices`` (nv, 3) m; ``faces`` (nf, 3) static int. Simbody's findCentroid, getFaceArea, getFaceNormal.
    """
    v = vertices[faces]
    cross = jnp.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
    norm = spatial.safe_norm(cross)
    return v.mean(1), 0.5 * norm, cross / jnp.where(norm > 0, norm, 1.0)[:, None]


def _springs_in_ground(R_GM, p_GM, vertices, faces):
    centroid, area, normal = face_springs(vertices, faces)
    return p_GM + centroid @ R_GM.T, area, normal @ R_GM.T


def mesh_half_space_patch(R_GM, p_GM, vertices, faces, R_GH, p_GH):
    """Springs of mesh M (frame X_GM) against half-space H (frame X_GH, material at x_H > 0): a FacePatch."""
    spring, area, normal = _springs_in_ground(R_GM, p_GM, vertices, faces)
    x_H = (spring - p_GH) @ R_GH[:, 0]
    nearest = spring - x_H[:, None] * R_GH[:, 0]
    return FacePatch(x_H > 0, spring, nearest, area, normal)


def mesh_sphere_patch(R_GM, p_GM, vertices, faces, center, radius):
    """Springs of mesh M against a sphere (``center`` (3,) in G, ``radius`` m): a FacePatch.

    A spring exactly at the center has no nearest point; it is inactive (Simbody would produce NaN).
    """
    spring, area, normal = _springs_in_ground(R_GM, p_GM, vertices, faces)
    d = spring - center
    dist = spatial.safe_norm(d)
    active = (dist < radius) & (dist > 0)
    nearest = center + (radius / jnp.where(dist > 0, dist, 1.0))[:, None] * d
    return FacePatch(active, spring, nearest, area, normal)


def closest_point_on_triangle(p, a, b, c):
    """Closest point to ``p`` on triangles (a, b, c), all (..., 3) broadcast; Voronoi-region form (Ericson 5.1.5).

    Every region is computed and selected with ``where`` so the result is jit/vmap friendly; the guarded
    divisions keep gradients finite for degenerate triangles.
    """

    def dot(x, y):
        return jnp.sum(x * y, -1)

    def safe_div(n, d):
        return n / jnp.where(d != 0, d, 1.0)

    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = dot(ab, ap), dot(ac, ap)
    bp = p - b
    d3, d4 = dot(ab, bp), dot(ac, bp)
    cp = p - c
    d5, d6 = dot(ab, cp), dot(ac, cp)
    vc = d1 * d4 - d3 * d2
    vb = d5 * d2 - d1 * d6
    va = d3 * d6 - d5 * d4
    denom = va + vb + vc
    v_in, w_in = safe_div(vb, denom), safe_div(vc, denom)
    result = a + v_in[..., None] * ab + w_in[..., None] * ac
    # Edges, then vertices (a vertex region overrides the edge regions it borders).
    t_bc = safe_div(d4 - d3, (d4 - d3) + (d5 - d6))
    result = jnp.where(((va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0))[..., None], b + t_bc[..., None] * (c - b), result)
    t_ac = safe_div(d2, d2 - d6)
    result = jnp.where(((vb <= 0) & (d2 >= 0) & (d6 <= 0))[..., None], a + t_ac[..., None] * ac, result)
    t_ab = safe_div(d1, d1 - d3)
    result = jnp.where(((vc <= 0) & (d1 >= 0) & (d3 <= 0))[..., None], a + t_ab[..., None] * ab, result)
    result = jnp.where(((d6 >= 0) & (d5 <= d6))[..., None], c, result)
    result = jnp.where(((d3 >= 0) & (d4 <= d3))[..., None], b, result)
    return jnp.where(((d1 <= 0) & (d2 <= 0))[..., None], a, result)


def _edges_cross_triangles(tri_a, tri_b):
    """Whether any edge of the triangles ``tri_a`` (na, 3, 3) passes through the interior of any triangle
    ``tri_b`` (nb, 3, 3): its ends strictly on opposite sides of the triangle's plane and the three orientations
    of the edge against the triangle's sides of one strict sign. O(na nb), no division."""
    p, q = tri_a[:, None, :, None], jnp.roll(tri_a, -1, 1)[:, None, :, None]  # (na, 1, 3 edges, 1, 3)
    a, b, c = (tri_b[None, :, None, i] for i in range(3))  # (1, nb, 1, 3)
    plane = jnp.cross(b - a, c - a)
    sp, sq = jnp.sum((p[..., 0, :] - a) * plane, -1), jnp.sum((q[..., 0, :] - a) * plane, -1)
    corners = tri_b[None, :, None]  # (1, nb, 1, 3 corners, 3)
    seg = q - p
    side = jnp.sum(seg * jnp.cross(corners - p, jnp.roll(corners, -1, -2) - p), -1)  # (na, nb, 3, 3)
    through = jnp.all(side > 0, -1) | jnp.all(side < 0, -1)
    return jnp.any((sp * sq < 0) & through)


def meshes_cross(triangles_1, triangles_2):
    """Simbody's test for mesh/mesh contact: does a triangle of one mesh (n1, 3, 3) cross a triangle of the
    other (n2, 3, 3) (both in one frame)? Two triangles in general position cross iff an edge of one passes
    through the other (Simbody's Guigue-Devillers test also counts touching boundaries and coplanar overlaps:
    measure-zero poses, where this says no). A scalar bool, piecewise constant in the poses."""
    return _edges_cross_triangles(triangles_1, triangles_2) | _edges_cross_triangles(triangles_2, triangles_1)


def mesh_mesh_patch(R_GM, p_GM, vertices, faces, R_GO, p_GO, other_vertices, other_faces):
    """Springs of mesh M against the closed triangle mesh O (frame X_GO): a FacePatch (see module notes); no
    spring is active when no triangles of the two meshes cross (Simbody's rule)."""
    spring, area, normal = _springs_in_ground(R_GM, p_GM, vertices, faces)
    w = p_GO + other_vertices @ R_GO.T
    tri = w[other_faces]  # (nf_O, 3, 3) in G
    crossing = meshes_cross((p_GM + vertices @ R_GM.T)[faces], tri)
    _, _, n_O = face_springs(other_vertices, other_faces)
    n_O = n_O @ R_GO.T
    q = closest_point_on_triangle(spring[:, None], tri[None, :, 0], tri[None, :, 1], tri[None, :, 2])
    d2 = jnp.sum((q - spring[:, None]) ** 2, -1)
    face = jnp.argmin(d2, axis=1)
    nearest = jnp.take_along_axis(q, face[:, None, None], axis=1)[:, 0]
    delta = spring - nearest
    active = (jnp.sum(delta * n_O[face], -1) < 0) & (jnp.sum(delta * delta, -1) > 0) & crossing
    return FacePatch(active, spring, nearest, area, normal)


# ---- Pair-table trackers (table.py's signature): one Contact point per mesh face, for "elastic_foundation" ----


def _face_points(patch, mesh_is_surface_1, area_scale=1.0):
    """Contact fields (depth, point, normal, area), each (nf, ...), of one mesh's springs; normal from surface 1
    into surface 2 (Simbody: the other surface is pushed along spring - nearest when the mesh is surface 1)."""
    to_nearest, dist, active = spring_stretch(patch)
    n = jnp.where(active[:, None], -to_nearest, patch.normal)  # any unit vector where inactive
    n = n if mesh_is_surface_1 else -n
    return jnp.where(active, dist, 0.0), 0.5 * (patch.spring + patch.nearest), n, patch.area * area_scale


def _contact(parts):
    depth, point, normal, area = (jnp.concatenate(x, 1) for x in zip(*parts))
    return Contact(depth, point, normal, jnp.zeros(depth.shape + (2,), depth.dtype), area)


def _faces(mesh):
    return np.asarray(mesh.faces, dtype=np.int64)


def half_space_triangle_mesh(R_G1, p_G1, half_space, R_G2, p_G2, mesh):
    """Half-space (surface 1) against a triangle mesh: one point per mesh face (m = nf)."""
    f = lambda R1, p1, R2, p2, v: _face_points(mesh_half_space_patch(R2, p2, v, _faces(mesh), R1, p1), False)
    return _contact([jax.vmap(f)(R_G1, p_G1, R_G2, p_G2, mesh.vertices)])


def sphere_triangle_mesh(R_G1, p_G1, sphere, R_G2, p_G2, mesh):
    """Sphere (surface 1) against a triangle mesh: one point per mesh face (m = nf)."""
    f = lambda p1, r, R2, p2, v: _face_points(mesh_sphere_patch(R2, p2, v, _faces(mesh), p1, r), False)
    return _contact([jax.vmap(f)(p_G1, sphere.radius, R_G2, p_G2, mesh.vertices)])


def triangle_mesh_triangle_mesh(R_G1, p_G1, mesh1, R_G2, p_G2, mesh2):
    """Two triangle meshes: the faces of mesh 1, then those of mesh 2 (m = nf1 + nf2). Simbody's
    CompliantContactSubsystem shares the patch: with contact areas A1, A2 (sums of the active faces' areas),
    each side's areas are scaled by ``(A1 + A2) / 4 / A_i`` when both are nonzero."""

    def one(R1, p1, v1, R2, p2, v2):
        side1 = mesh_mesh_patch(R1, p1, v1, _faces(mesh1), R2, p2, v2, _faces(mesh2))
        side2 = mesh_mesh_patch(R2, p2, v2, _faces(mesh2), R1, p1, v1, _faces(mesh1))
        a1, a2 = (jnp.sum(jnp.where(s.active, s.area, 0.0)) for s in (side1, side2))
        both = (a1 > 0) & (a2 > 0)
        scale1 = jnp.where(both, (a1 + a2) / 4 / jnp.where(both, a1, 1.0), 1.0)
        scale2 = jnp.where(both, (a1 + a2) / 4 / jnp.where(both, a2, 1.0), 1.0)
        return _face_points(side1, True, scale1), _face_points(side2, False, scale2)

    sides = jax.vmap(one)(R_G1, p_G1, mesh1.vertices, R_G2, p_G2, mesh2.vertices)
    return _contact(sides)
