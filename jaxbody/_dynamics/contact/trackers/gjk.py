"""Signed distance of two convex shapes from their support functions: GJK for separated cores, EPA for
overlapping ones, with bounded iteration counts (jit, vmap; no Python branch on values). One pair per call
(the pair-table trackers in ``curved.py`` vmap it).

Let ``M = A - B`` be the Minkowski difference of the two cores (``support.py``; radii are swept afterwards) and
``sep(n) = -h_A(n) - h_B(-n) - r_A - r_B`` the gap between the shapes along a unit direction n from A to B
(h: support value). For convex shapes the signed distance is ``max_n sep(n)``: the distance when apart, minus
the penetration depth when overlapping. GJK finds the point of M closest to the origin (``GJK_STEPS``
iterations; the closest point of each simplex is found by trying all 15 sub-simplices, no Johnson branching);
when the origin is in M (cores overlap within ``1e-12 size``), EPA (``EPA_STEPS`` expansions of a polytope of
at most ``4 + EPA_STEPS`` vertices held in fixed arrays, the horizon found from a table of directed edges)
finds the face of M nearest the origin. Both are ``lax.while_loop`` s that stop at convergence; under vmap a
loop runs until its last lane has stopped (the stopped lanes' carries frozen), and EPA does no step at all in
a batch whose cores are all apart. The batch cost is therefore linear in the lanes times the slowest lane's
steps: ~4 ms of CPU per ellipsoid pair at the tests' -O0 flags when some lane runs EPA's 48 steps (4096 lanes of
2 pairs: ~35 s), most of it in EPA's O(faces) step. The search itself carries no gradient; the results are then
re-evaluated with gradients:

* ``distance = sep(n*)`` at the found direction n* (Danskin: its gradient is exact where the maximum is);
* witness points: the barycentric combination of the final simplex's (or EPA face's) support points,
  recomputed at their stored directions (they move with the shapes' features), plus the radii along n*;
* ``normal``: n*; where both cores have smooth support functions (sphere, ellipsoid), ``NEWTON_STEPS`` Newton
  steps on the stationarity condition ``P(n) (s_A(n) - s_B(-n)) = 0`` polish it, the witness points are the
  supports at it (on the surfaces) and one more, differentiated, step gives its implicit-function
  derivative; with a flat or edged core the normal carries no derivative.

Tolerance (float64): GJK stops when ``|v|^2 - v.w <= 1e-24 size^2``, EPA when the support gap of the nearest
face is below ``1e-11 size``. Against coal (tests/contact/test_gjk_golden.py, 0.05-0.1 m shapes, all eight
curved pairs): the distance agrees to 1.6e-10 m apart (+0.03 m) and deep (-0.02 m), to 7.5e-7 m within 1e-6 m
of contact, where GJK's linear convergence on curved and flat features stops short within the fixed counts
(the distance is then ``sep(n)`` at the best normal found, a lower bound whose error is second order in the
normal's); normals to 2e-5 apart and deep. MJX documents ~1e-6 for its float32 GJK/EPA.
"""

from __future__ import annotations

from itertools import combinations
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.contact.trackers.support import convex_support
from jaxbody._math import spatial

#: GJK iterations (each adds one support point; converged steps change nothing).
GJK_STEPS = 64
#: Newton steps polishing the normal of two smooth cores (sphere, ellipsoid) after GJK/EPA.
NEWTON_STEPS = 4
#: EPA expansions (each adds one polytope vertex and at most 2 * (vertices) faces in total).
EPA_STEPS = 48

_SUBSETS = {k: np.array(list(combinations(range(4), k))) for k in (1, 2, 3, 4)}
_TETRA = np.array([[0, 1, 2], [0, 3, 1], [0, 2, 3], [1, 3, 2]])


class SignedDistance(NamedTuple):
    """``distance`` (signed, m; negative: penetration depth), ``normal`` (3,) unit from A to B, ``point_A``,
    ``point_B`` (3,) witness points on the two surfaces (G)."""

    distance: jnp.ndarray
    normal: jnp.ndarray
    point_A: jnp.ndarray
    point_B: jnp.ndarray


def _solve_small(G, rhs):
    """(solution, ok) of the (g, k, k) Gram systems G x = rhs (k <= 3); ok: not degenerate (det > 1e-12 times
    the product of the diagonal; the determinant in closed form, the solve by LU for its accuracy)."""
    k = G.shape[-1]
    if k == 1:
        det = G[:, 0, 0]
    elif k == 2:
        det = G[:, 0, 0] * G[:, 1, 1] - G[:, 0, 1] * G[:, 1, 0]
    else:
        det = jnp.sum(G[:, :, 0] * jnp.cross(G[:, :, 1], G[:, :, 2]), -1)
    ok = det > 1e-12 * jnp.prod(jnp.diagonal(G, axis1=1, axis2=2), -1)
    x = jnp.linalg.solve(jnp.where(ok[:, None, None], G, jnp.eye(k, dtype=G.dtype)), rhs[..., None])[..., 0]
    return x, ok


def _closest_on_simplex(P, mask):
    """Closest point to the origin of the hull of the points ``P`` (4, 3) where ``mask`` (4,): (v (3,),
    barycentric weights (4,), the supporting subset (4,) bool), over every sub-simplex (affine projection with
    nonnegative weights; degenerate ones skipped). Any kept candidate is a convex combination, so the minimum
    is a point of the hull."""
    best = None
    for k, idx in _SUBSETS.items():
        pts = P[idx]  # (g, k, 3)
        p0 = pts[:, 0]
        if k == 1:
            lam, ok = jnp.ones((len(idx), 1), P.dtype), jnp.ones(len(idx), bool)
        else:
            E = pts[:, 1:] - p0[:, None]
            mu, ok = _solve_small(jnp.einsum("gik,gjk->gij", E, E), -jnp.einsum("gik,gk->gi", E, p0))
            lam = jnp.concatenate([1 - jnp.sum(mu, -1, keepdims=True), mu], -1)
        v = jnp.einsum("gk,gkc->gc", lam, pts)
        ok = ok & jnp.all(lam >= -1e-12, -1) & jnp.all(mask[idx], -1)
        score = jnp.sum(v * v, -1)
        score = jnp.where(ok & jnp.isfinite(score), score, jnp.inf)
        weights = jnp.zeros((len(idx), 4), P.dtype).at[jnp.arange(len(idx))[:, None], idx].set(lam)
        sub = jnp.zeros((len(idx), 4), bool).at[jnp.arange(len(idx))[:, None], idx].set(True)
        cand = (score, v, weights, sub)
        best = cand if best is None else tuple(jnp.concatenate([a, b]) for a, b in zip(best, cand))
    j = jnp.argmin(best[0])
    return best[1][j], best[2][j], best[3][j]


def _support_M(A, B, d):
    """Support point of M = A_core - B_core along d."""
    return A.core(d) - B.core(-d)


def _off_plane_direction(P, mask):
    """A direction out of the affine hull of the 1-3 active points (to grow a degenerate simplex)."""
    order = jnp.argsort(~mask, stable=True)
    Q = P[order]
    count = jnp.sum(mask)
    e1 = Q[1] - Q[0]
    helper = jnp.eye(3, dtype=P.dtype)[jnp.argmin(jnp.abs(e1))]
    d2 = jnp.cross(e1, helper)
    d3 = jnp.cross(e1, Q[2] - Q[0])
    d = jnp.where(count == 1, jnp.asarray([1.0, 0.3, 0.2], P.dtype), jnp.where(count == 2, d2, d3))
    return d / jnp.where(spatial.safe_norm(d) > 0, spatial.safe_norm(d), 1.0), Q[0]


def gjk(A, B, steps: int = GJK_STEPS):
    """GJK on the cores: (simplex points (4, 3), their directions (4, 3), mask (4,), weights (4,), v (3,)
    closest point of M to the origin, overlapping bool), after at most ``steps`` (static) iterations."""
    dtype = A.center.dtype
    scale = A.size + B.size + jnp.asarray(1e-300, dtype)
    d0 = A.center - B.center
    d0 = jnp.where(spatial.safe_norm(d0) > 1e-12 * scale, d0, jnp.asarray([1.0, 0.0, 0.0], dtype))
    P = jnp.zeros((4, 3), dtype).at[0].set(_support_M(A, B, d0))
    D = jnp.zeros((4, 3), dtype).at[0].set(d0)
    mask = jnp.zeros(4, bool).at[0].set(True)

    def step(carry):
        P, D, mask, done, _, _, i = carry
        v, lam, sub = _closest_on_simplex(P, mask)
        vv = v @ v
        inside = vv <= (1e-12 * scale) ** 2
        full = jnp.sum(mask) == 4
        e, base = _off_plane_direction(P, mask)
        w_plus, w_minus = _support_M(A, B, e), _support_M(A, B, -e)
        grow_plus = jnp.abs(e @ (w_plus - base)) >= jnp.abs(e @ (w_minus - base))
        d = jnp.where(inside, jnp.where(grow_plus, e, -e), -v)
        w = jnp.where(inside, jnp.where(grow_plus, w_plus, w_minus), _support_M(A, B, -v))
        converged = ~inside & (vv - v @ w <= 1e-24 * scale * scale)
        stop = done | converged | (inside & full)
        keep = jnp.where(inside, mask, sub)
        slot = jnp.argmin(keep)  # first free slot (keep has at most 3 points here)
        new_mask = keep.at[slot].set(True)
        P2, D2 = P.at[slot].set(w), D.at[slot].set(d)
        pick = lambda new, old: jnp.where(stop, old, new)  # noqa: E731
        return pick(P2, P), pick(D2, D), pick(new_mask, mask), stop, v, lam, i + 1

    # A while loop: under vmap it runs until every lane has stopped (at most GJK_STEPS), a lane that stopped
    # keeps its carry. The last step's v and weights stay valid for the final simplex: a step only fills a slot
    # they weigh 0.
    start = (P, D, mask, jnp.zeros((), bool), jnp.zeros(3, dtype), jnp.zeros(4, dtype), jnp.zeros((), jnp.int32))
    P, D, mask, _, v, lam, _ = jax.lax.while_loop(lambda c: ~c[3] & (c[6] < steps), step, start)
    v, lam, _ = _closest_on_simplex(P, mask)
    return P, D, mask, lam, v, v @ v <= (1e-12 * scale) ** 2


def _face_planes(V, F):
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    raw = jnp.cross(b - a, c - a)
    length = spatial.safe_norm(raw)
    n = raw / jnp.where(length > 0, length, 1.0)[:, None]
    return raw, length, n, jnp.sum(n * a, -1)


def _first_true(mask, size):
    """Indices (size,) of the first ``size`` True entries of the 1-d ``mask``, clamped to len(mask) - 1 past the
    last one: ``jnp.nonzero(mask, size=size)`` without its cumulative sum, which XLA:CPU lowers to a
    reduce-window (quadratic in the block size, the largest cost of an EPA step under vmap): a log-depth
    associative scan, then a binary search of the running count."""
    count = jax.lax.associative_scan(jnp.add, mask.astype(jnp.int32))
    idx = jnp.searchsorted(count, jnp.arange(1, size + 1, dtype=jnp.int32), side="left", method="scan_unrolled")
    return jnp.minimum(idx, mask.shape[0] - 1)


def epa(A, B, P, D, active=True, steps: int = EPA_STEPS):
    """EPA from the GJK tetrahedron ``P`` (4, 3) (directions ``D``) containing the origin: (unit outward normal
    of M's face nearest the origin (3,), that face's three support directions (3, 3), barycentric weights of the
    origin's projection on it (3,)). ``active`` (bool): the cores overlap (otherwise no expansion is done and the
    result is meaningless); at most ``steps`` (static) expansions."""
    dtype = P.dtype
    scale = A.size + B.size + jnp.asarray(1e-300, dtype)
    nv = 4 + steps
    nf = 2 * nv - 4
    V = jnp.zeros((nv, 3), dtype).at[:4].set(P)
    VD = jnp.zeros((nv, 3), dtype).at[:4].set(D)
    flip = jnp.linalg.det(jnp.stack([P[1] - P[0], P[2] - P[0], P[3] - P[0]])) > 0
    tetra = jnp.where(flip, _TETRA[:, [0, 2, 1]], _TETRA)
    F = jnp.zeros((nf, 3), jnp.int32).at[:4].set(tetra.astype(jnp.int32))
    valid = jnp.zeros(nf, bool).at[:4].set(True)
    edge_k = np.array([[0, 1], [1, 2], [2, 0]])

    def nearest(V, F, valid):
        raw, length, n, dist = _face_planes(V, F)
        good = valid & (length > 1e-24 * scale * scale)
        j = jnp.argmin(jnp.where(good, dist, jnp.inf))
        return j, raw, length, n, dist

    def step(carry):
        V, VD, F, valid, done, k = carry
        j, raw, length, n, dist = nearest(V, F, valid)
        w = _support_M(A, B, n[j])
        converged = w @ n[j] - dist[j] <= 1e-11 * scale
        visible = valid & (jnp.sum(raw * (w - V[F[:, 0]]), -1) > 1e-14 * length * scale)
        edges = F[:, edge_k].reshape(-1, 2)  # (3 nf, 2) directed edges, face f's at 3f..3f+2
        edge_visible = jnp.repeat(visible, 3)
        table = jnp.zeros(nv * nv, bool).at[jnp.where(edge_visible, edges[:, 0] * nv + edges[:, 1], nv * nv)].set(
            True, mode="drop")
        horizon = edge_visible & ~table[edges[:, 1] * nv + edges[:, 0]]
        kept = valid & ~visible
        count = jnp.sum(horizon)
        # The r-th free slot (in slot order) gets the face on the r-th horizon edge (in edge order), r < count:
        # written as gathers (a scatter is a serial loop on XLA:CPU).
        rank = jax.lax.associative_scan(jnp.add, (~kept).astype(jnp.int32)) - 1
        filled = ~kept & (rank < count)
        edge = _first_true(horizon, nf)[jnp.clip(rank, 0, nf - 1)]
        new_vertex = 4 + k
        new_faces = jnp.stack([edges[edge, 0], edges[edge, 1], jnp.full(nf, new_vertex, jnp.int32)], -1)
        F2 = jnp.where(filled[:, None], new_faces, F)
        valid2 = kept | filled
        stop = done | converged | (count > jnp.sum(~kept)) | (count < 3)
        pick = lambda new, old: jnp.where(stop, old, new)  # noqa: E731
        here = (jnp.arange(nv) == new_vertex)[:, None]
        return (pick(jnp.where(here, w, V), V), pick(jnp.where(here, n[j], VD), VD), pick(F2, F),
                pick(valid2, valid), stop, k + 1)

    # Until every lane has converged (at most EPA_STEPS); a lane whose cores are apart (``active`` False) does
    # no step, so a batch with no overlapping pair skips EPA.
    start = (V, VD, F, valid, ~jnp.asarray(active, bool), jnp.zeros((), jnp.int32))
    V, VD, F, valid, _, _ = jax.lax.while_loop(lambda c: ~c[4] & (c[5] < steps), step, start)
    j, raw, length, n, dist = nearest(V, F, valid)
    tri = V[F[j]]
    q = dist[j] * n[j]
    area = jnp.where(length[j] > 0, length[j], 1.0)
    lam = jnp.stack([jnp.cross(tri[(i + 1) % 3] - q, tri[(i + 2) % 3] - q) @ n[j] for i in range(3)]) / area
    return n[j], VD[F[j]], lam


def _stationarity(A, B, n):
    """Tangential part of ``s_A(n) - s_B(-n)`` at unit n (zero at the separation's extremum)."""
    s = A.core(n) - B.core(-n)
    return s - (s @ n) * n


def _newton_normal(A, B, frozen, normal):
    """``NEWTON_STEPS`` Newton steps on the tangential stationarity of smooth cores from ``normal`` (no
    gradient), then one differentiated step: the implicit-function derivative of the normal."""

    def step(n, shapes):
        t1 = spatial.perp(n)
        T = jnp.stack([t1, jnp.cross(n, t1)], -1)

        def residual(x, shapes):
            m = n + T @ x
            return T.T @ _stationarity(*shapes, m / spatial.safe_norm(m))

        x0 = jnp.zeros(2, n.dtype)
        J = jax.jacfwd(residual)(x0, frozen)
        ok = jnp.abs(jnp.linalg.det(J)) > 1e-12 * jnp.max(jnp.abs(J)) ** 2
        dx = -jnp.linalg.solve(jnp.where(ok, J, jnp.eye(2, dtype=J.dtype)), residual(x0, shapes))
        m = n + T @ jnp.where(ok, dx, 0.0)
        return m / spatial.safe_norm(m)

    n = jax.lax.fori_loop(0, NEWTON_STEPS, lambda _, n: step(n, frozen), normal)
    return step(jax.lax.stop_gradient(n), (A, B))


def signed_distance(shape_A, R_A, p_A, shape_B, R_B, p_B, smooth: bool = False) -> SignedDistance:
    """``SignedDistance`` of two surfaces (shape records without a surface axis, at poses X_GS = (R, p)); see
    the module docstring. ``smooth`` (static): both cores have smooth support functions (the normal then gets
    its implicit-function derivative)."""
    A, B = convex_support(shape_A, R_A, p_A), convex_support(shape_B, R_B, p_B)
    stop = lambda *x: jax.tree.map(jax.lax.stop_gradient, x)  # noqa: E731
    frozen = (convex_support(*stop(shape_A, R_A, p_A)), convex_support(*stop(shape_B, R_B, p_B)))
    P, D, mask, lam, v, overlap = gjk(*frozen)
    n_epa, D_epa, lam_epa = epa(*frozen, P, D, overlap)
    gap = spatial.safe_norm(v)
    n_gjk = -v / jnp.where(gap > 0, gap, 1.0)
    normal = jax.lax.stop_gradient(jnp.where(overlap, n_epa, n_gjk))
    dirs = jnp.where(overlap, jnp.concatenate([D_epa, D[:1]]), D)
    weights = jax.lax.stop_gradient(jnp.where(overlap, jnp.concatenate([lam_epa, jnp.zeros(1, lam.dtype)]), lam))
    dirs = jax.lax.stop_gradient(dirs)
    core_A = sum(weights[i] * A.core(dirs[i]) for i in range(4))
    core_B = sum(weights[i] * B.core(-dirs[i]) for i in range(4))
    if smooth:
        normal = _newton_normal(A, B, frozen, normal)
        core_A, core_B = A.core(normal), B.core(-normal)  # on the surfaces, exactly at the normal
    distance = normal @ (B.core(-normal) - A.core(normal)) - A.radius - B.radius
    return SignedDistance(distance, normal, core_A + A.radius * normal, core_B - B.radius * normal)
