"""Signed distance, normal and witness points between convex shapes, at least one a solid polytope (box or
convex mesh), against a box, convex mesh, capsule or sphere: exact, with no iteration and no tolerance.

Each shape is a *core* polytope swept by a radius (Minkowski sum with a ball): a sphere is a point swept by its
radius, a capsule (radius r, half-length h, axis z) the segment z in [-h, h] swept by r, a box (half-sizes) and a
convex mesh (vertices, hull triangles) have radius 0. A core is given in G by ``Polytope``: vertices, triangles
(static), edges (static), the SAT face axes and edge directions.

Signed distance ``s`` of two shapes = signed distance of their cores minus both radii:

* cores overlap (decided by the separating-axis test over the face axes of both cores and every cross product
  of their edge directions, the 15 axes of box/box): ``-depth``, the smallest overlap over those axes, which
  is the exact penetration depth of two polytopes (the minimum over all directions is attained at one of them);
* cores apart: the exact distance, the minimum over every vertex/triangle, vertex/edge, vertex/vertex and
  edge/edge feature pair (brute force: O(nv_A nt_B + nv_B nt_A + ne_A ne_B), fixed size, so jit and vmap work).

``normal`` (unit, G) points from shape A to shape B (moving B along it separates them); ``point_A``,
``point_B``: witness points on the two surfaces with ``point_B - point_A = s * normal``. Where the deepest
feature is not unique (face on face, edge parallel to face) the witness points are one point of that feature
(coal's EPA may pick another); depth and normal are still exact. Degenerate axes (parallel edges) are skipped.
Cores closer than 1e-12 m take the best separating axis as normal. The gradients are those of the active
feature pair / axis (exact away from switches between them).

Pair-table trackers: ``convex_pair`` (a polytope against a sphere or capsule: one point) and ``polytope_pair``
(two polytopes: ``polytope_manifold``, every vertex inside the other body a point, so resting faces are stable).

This replaces MJX's GJK/EPA (iterative, tolerance ~1e-6 in its float32 setting) for these pairs; ellipsoids and
cylinders (curved, no finite candidate axis set) are not handled here.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.contact.trackers.contact import point_contact
from jaxbody._dynamics.contact.trackers.mesh import closest_point_on_triangle
from jaxbody._math import spatial

_GAP_FOR_NORMAL = 1e-12  # m: closer cores take the normal of their best separating axis (the gap's is noise)
_BOX_CORNERS = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float)
_BOX_TRIANGLES = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                           [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
_BOX_EDGES = np.array([[0, 4], [1, 5], [2, 6], [3, 7], [0, 2], [1, 3], [4, 6], [5, 7], [0, 1], [2, 3], [4, 5], [6, 7]])


class Polytope(NamedTuple):
    """A convex core in G: ``vertices`` (nv, 3) m; ``triangles`` (nt, 3) and ``edges`` (ne, 2) static numpy
    index arrays (possibly empty); ``face_axes`` (nf, 3) and ``edge_directions`` (nd, 3), not necessarily
    unit (separating-axis candidates); ``radius`` (scalar) m swept around the core."""

    vertices: jnp.ndarray
    triangles: np.ndarray
    edges: np.ndarray
    face_axes: jnp.ndarray
    edge_directions: jnp.ndarray
    radius: jnp.ndarray


class ConvexContact(NamedTuple):
    """``distance`` (signed, m; negative = penetration depth), ``normal`` (3,) A to B, ``point_A``, ``point_B`` (3,)."""

    distance: jnp.ndarray
    normal: jnp.ndarray
    point_A: jnp.ndarray
    point_B: jnp.ndarray


def sphere(R_GS, p_GS, radius):
    """Sphere of ``radius`` centered at ``p_GS`` (``R_GS`` unused; kept for a uniform signature)."""
    del R_GS
    empty = jnp.zeros((0, 3), p_GS.dtype)
    return Polytope(p_GS[None], np.zeros((0, 3), int), np.zeros((0, 2), int), empty, empty, jnp.asarray(radius, p_GS.dtype))


def capsule(R_GC, p_GC, radius, half_length):
    """Capsule: the segment ``p_GC +- half_length z_C`` swept by ``radius``."""
    z = R_GC[:, 2]
    ends = jnp.stack([p_GC - half_length * z, p_GC + half_length * z])
    return Polytope(ends, np.zeros((0, 3), int), np.array([[0, 1]]), jnp.zeros((0, 3), p_GC.dtype), z[None],
                    jnp.zeros((), p_GC.dtype) + radius)


def box(R_GB, p_GB, half_sizes):
    """Box with ``half_sizes`` (3,) along the axes of frame B (X_GB): 8 corners, 12 triangles, 12 edges."""
    vertices = p_GB + (_BOX_CORNERS * half_sizes) @ R_GB.T
    return Polytope(vertices, _BOX_TRIANGLES, _BOX_EDGES, R_GB.T, R_GB.T, jnp.zeros((), p_GB.dtype))


def convex_mesh(R_GM, p_GM, vertices_M, triangles, edges):
    """Convex mesh: ``vertices_M`` (nv, 3) in M, outward hull ``triangles`` and unique ``edges`` (static)."""
    v = p_GM + vertices_M @ R_GM.T
    t = v[triangles]
    return Polytope(v, triangles, edges, jnp.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]),
                    v[edges[:, 1]] - v[edges[:, 0]], jnp.zeros((), p_GM.dtype))


def hull_edges(triangles):
    """Unique undirected edges (ne, 2) of a triangle list (host-side, for ``convex_mesh``)."""
    e = np.sort(np.concatenate([triangles[:, [0, 1]], triangles[:, [1, 2]], triangles[:, [2, 0]]]), axis=1)
    return np.unique(e, axis=0)


def _segment_closest_points(p1, q1, p2, q2):
    """Closest points on segments [p1, q1] and [p2, q2] (..., 3) of nonzero lengths (Ericson 5.1.9)."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, f = jnp.sum(d1 * d1, -1), jnp.sum(d2 * d2, -1), jnp.sum(d2 * r, -1)
    c, b = jnp.sum(d1 * r, -1), jnp.sum(d1 * d2, -1)
    denom = a * e - b * b
    parallel = denom <= 1e-14 * a * e
    s0 = jnp.where(parallel, 0.0, jnp.clip((b * f - c * e) / jnp.where(parallel, 1.0, denom), 0.0, 1.0))
    t0 = (b * s0 + f) / e
    s = jnp.where(t0 < 0, jnp.clip(-c / a, 0.0, 1.0), jnp.where(t0 > 1, jnp.clip((b - c) / a, 0.0, 1.0), s0))
    t = jnp.clip(t0, 0.0, 1.0)
    return p1 + s[..., None] * d1, p2 + t[..., None] * d2


def _feature_pairs(A, B):
    """Candidate closest-point pairs (n, 3), (n, 3) over every feature pair of two cores (fixed n)."""
    pa, pb = [], []
    va, vb = A.vertices, B.vertices
    pa.append(jnp.broadcast_to(va[:, None], (len(va), len(vb), 3)).reshape(-1, 3))
    pb.append(jnp.broadcast_to(vb[None], (len(va), len(vb), 3)).reshape(-1, 3))
    for X, Y, flip in ((A, B, False), (B, A, True)):
        pts = []
        if len(Y.triangles):
            t = Y.vertices[Y.triangles]
            q = closest_point_on_triangle(X.vertices[:, None], t[None, :, 0], t[None, :, 1], t[None, :, 2])
            pts.append((jnp.broadcast_to(X.vertices[:, None], q.shape).reshape(-1, 3), q.reshape(-1, 3)))
        if len(Y.edges):
            e0, e1 = Y.vertices[Y.edges[:, 0]], Y.vertices[Y.edges[:, 1]]
            x = X.vertices[:, None]
            d = e1 - e0
            tt = jnp.clip(jnp.sum((x - e0) * d, -1) / jnp.sum(d * d, -1), 0.0, 1.0)
            q = e0 + tt[..., None] * d
            pts.append((jnp.broadcast_to(x, q.shape).reshape(-1, 3), q.reshape(-1, 3)))
        for x, y in pts:
            pa.append(y if flip else x)
            pb.append(x if flip else y)
    if len(A.edges) and len(B.edges):
        a0, a1 = A.vertices[A.edges[:, 0]][:, None], A.vertices[A.edges[:, 1]][:, None]
        b0, b1 = B.vertices[B.edges[:, 0]][None], B.vertices[B.edges[:, 1]][None]
        x, y = _segment_closest_points(a0, a1, b0, b1)
        pa.append(x.reshape(-1, 3))
        pb.append(y.reshape(-1, 3))
    return jnp.concatenate(pa), jnp.concatenate(pb)


def _sat(A, B):
    """(overlap depth (scalar; <= 0: separated along some axis), unit normal A->B, witness on core A, on core B)."""
    cross = jnp.cross(A.edge_directions[:, None], B.edge_directions[None]).reshape(-1, 3)
    axes = jnp.concatenate([A.face_axes, B.face_axes, cross])
    norm = spatial.safe_norm(axes)
    scale = jnp.concatenate([spatial.safe_norm(A.face_axes), spatial.safe_norm(B.face_axes),
                             (spatial.safe_norm(A.edge_directions)[:, None] * spatial.safe_norm(B.edge_directions)[None]).reshape(-1)])
    valid = norm > 1e-9 * jnp.where(scale > 0, scale, 1.0)
    n = axes / jnp.where(valid, norm, 1.0)[:, None]
    pa, pb = A.vertices @ n.T, B.vertices @ n.T  # (nv, naxes)
    up = jnp.max(pa, 0) - jnp.min(pb, 0)  # overlap if B is pushed along +n
    down = jnp.max(pb, 0) - jnp.min(pa, 0)  # ... along -n
    overlap = jnp.where(valid, jnp.minimum(up, down), jnp.inf)
    k = jnp.argmin(overlap)
    depth = overlap[k]
    normal = jnp.where(up[k] <= down[k], 1.0, -1.0) * n[k]
    deep_B = B.vertices[jnp.argmin(B.vertices @ normal)]  # B's deepest vertex into A
    deep_A = A.vertices[jnp.argmax(A.vertices @ normal)]  # A's deepest vertex into B
    nfa, nfb = A.face_axes.shape[0], B.face_axes.shape[0]
    # Face of A: B's vertex is the witness; face of B: A's vertex; edge/edge: closest points of the two edge lines.
    on_A = jnp.where(k < nfa, deep_B + depth * normal, deep_A)
    on_B = jnp.where(k < nfa, deep_B, deep_A - depth * normal)
    if cross.shape[0]:
        nd = B.edge_directions.shape[0]
        i, j = (k - nfa - nfb) // nd, (k - nfa - nfb) % nd
        da, db = A.edge_directions[jnp.clip(i, 0)], B.edge_directions[jnp.clip(j, 0)]
        x, y = _line_closest_points(deep_A, da, deep_B, db)
        is_edge = k >= nfa + nfb
        on_A, on_B = jnp.where(is_edge, x, on_A), jnp.where(is_edge, y, on_B)
    return depth, normal, on_A, on_B


def _line_closest_points(p, d, q, e):
    """Closest points of the lines p + s d and q + t e (not parallel)."""
    r = p - q
    a, b, c, f, g = d @ d, d @ e, e @ e, d @ r, e @ r
    denom = a * c - b * b
    denom = jnp.where(denom != 0, denom, 1.0)
    s, t = (b * g - c * f) / denom, (a * g - b * f) / denom
    return p + s * d, q + t * e


def signed_distance(A, B):
    """ConvexContact between the shapes A and B (Polytope cores with radii); see the module docstring.

    Cost: O(nv_A nt_B + nv_B nt_A + ne_A ne_B) for the feature pairs and as many SAT axes.
    """
    depth, sat_normal, sat_A, sat_B = _sat(A, B)
    pa, pb = _feature_pairs(A, B)
    d2 = jnp.sum((pb - pa) ** 2, -1)
    k = jnp.argmin(d2)
    gap = spatial.safe_norm(pb[k] - pa[k])
    apart = depth <= 0
    use_gap = apart & (gap > _GAP_FOR_NORMAL)
    normal = jnp.where(use_gap, (pb[k] - pa[k]) / jnp.where(use_gap, gap, 1.0), sat_normal)
    core = jnp.where(apart, gap, -depth)
    on_A = jnp.where(apart, pa[k], sat_A) + A.radius * normal
    on_B = jnp.where(apart, pb[k], sat_B) - B.radius * normal
    return ConvexContact(core - A.radius - B.radius, normal, on_A, on_B)


# ---- Pair-table trackers (table.py's signature, batched over the n pairs by vmap) ----


def _core(shape_record, R, p):
    """The Polytope core of one surface of a shapes record (one pair's slice, leaves without the pair axis)."""
    kind = type(shape_record).kind
    if kind == "Sphere":
        return sphere(R, p, shape_record.radius)
    if kind == "Capsule":
        return capsule(R, p, shape_record.radius, shape_record.half_length)
    if kind == "Brick":
        return box(R, p, shape_record.half_lengths)
    triangles = np.asarray(shape_record.faces, dtype=np.int64)
    return convex_mesh(R, p, shape_record.vertices, triangles, hull_edges(triangles))


def _curvature(shape_record):
    """Relative curvature of the contact: the sphere's or capsule's 1/radius (the polytope side is flat); 0 for
    two polytopes (their point_penalty law ignores it)."""
    radius = getattr(shape_record, "radius", None)
    return 0.0 if radius is None else 1.0 / radius


def _face_depths(P, x):
    """Depth of points x (n, 3) inside the polytope core P below its nearest face plane, and that face's unit
    outward normal: (n,) m (<= 0: on or outside some face plane), (n, 3). Cost O(n nt)."""
    t = P.vertices[P.triangles]
    normal = jnp.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])
    normal = normal / spatial.safe_norm(normal)[:, None]
    height = x @ normal.T - jnp.sum(normal * t[:, 0], -1)  # (n, nt) signed distances to the face planes
    return -jnp.max(height, -1), normal[jnp.argmax(height, -1)]


def polytope_manifold(A, B):
    """Contact points of two solid polytopes (no radius): every vertex of either strictly inside the other, with
    its depth below the *other* body's nearest face plane and that face's normal (B's vertex v in A: ``min_f
    (o_f - n_f.v)`` along A's outward ``n_f``; A's vertex in B along minus B's face normal), at the midpoint
    between the vertex and that plane; where no vertex is inside (edge on edge, or apart), the single
    deepest-feature point of ``signed_distance``. Each vertex's depth is continuous in both poses (0 where it
    crosses a face plane) and its derivative is that of the face it is under: with faces (nearly) parallel the
    depths follow the tilt of the pressed face whichever SAT axis is minimal (one normal from the SAT for all
    points gave the other body's tilt, a wrong derivative; issue 34).
    Returns depth (m,), point (m, 3), normal (m, 3) from A to B, m = nv_A + nv_B + 1; inactive points have
    depth <= 0. Cost O(nv_A nt_B + nv_B nt_A) plus ``signed_distance``."""
    c = signed_distance(A, B)
    d_B, n_B = _face_depths(A, B.vertices)  # B's vertices in A: pushed out along A's face normal (A to B)
    d_A, n_A = _face_depths(B, A.vertices)  # A's vertices in B: along minus B's face normal
    any_inside = jnp.any(d_B > 0) | jnp.any(d_A > 0)
    depth = jnp.concatenate([d_B, d_A, jnp.where(any_inside, 0.0, -c.distance)[None]])
    point = jnp.concatenate([B.vertices + 0.5 * d_B[:, None] * n_B, A.vertices + 0.5 * d_A[:, None] * n_A,
                             (0.5 * (c.point_A + c.point_B))[None]])
    return depth, point, jnp.concatenate([n_B, -n_A, c.normal[None]])


def polytope_pair(R_G1, p_G1, shape1, R_G2, p_G2, shape2):
    """Two solid polytopes (Brick, ConvexMesh), table signature, for the point_penalty law: the vertex manifold
    of ``polytope_manifold`` (a box lying on a face rests on its four corners), m = nv_1 + nv_2 + 1."""

    def one(R1, p1, s1, R2, p2, s2):
        return polytope_manifold(_core(s1, R1, p1), _core(s2, R2, p2))

    depth, point, normal = jax.vmap(one)(R_G1, p_G1, shape1, R_G2, p_G2, shape2)
    return point_contact(depth, point, normal)


def convex_pair(R_G1, p_G1, shape1, R_G2, p_G2, shape2):
    """A polytope against a round shape (Brick or ConvexMesh against Sphere, Capsule), table signature:
    one point (m = 1) at the midpoint of the witness points, ``depth = -signed_distance``, normal from
    surface 1 into 2, curvatures from the round surface (``_curvature``). Exact (see the module docstring)."""

    def one(R1, p1, s1, R2, p2, s2):
        c = signed_distance(_core(s1, R1, p1), _core(s2, R2, p2))
        k = _curvature(s1) + _curvature(s2)
        return -c.distance, 0.5 * (c.point_A + c.point_B), c.normal, jnp.stack([k, k]) * jnp.ones_like(c.distance)

    depth, point, normal, curvatures = jax.vmap(one)(R_G1, p_G1, shape1, R_G2, p_G2, shape2)
    return point_contact(depth[:, None], point[:, None], normal[:, None], curvatures[:, None])
