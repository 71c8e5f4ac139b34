"""Broad phase of the compliant contact element: bounding spheres, and the narrow phase run on a fixed number
of candidate pairs per pair kind (static shapes: jit, vmap and grad see one program).

Each surface has a bounding sphere about its frame's origin (``bounding_radius``, from its shape's leaves, so
it follows swept sizes); a half-space's is a plane. A pair's gap ``bounding_gap`` is a lower bound of its
signed distance: ``|c1 - c2| - r1 - r2`` for two spheres, ``-x_H(c) - r`` for a sphere against a half-space
(x_H: the center's coordinate along the half-space's inward x). ``track_candidates`` runs a pair group's tracker
on the ``capacity`` pairs of least gap (``lax.top_k``: a static count) and gives every other pair a far
Contact: depth ``-gap`` clipped to at most 0 (no force), the midpoint of the centers, the x axis as normal,
curvature 1 (finite everywhere, as inactive points must be). Where more pairs than ``capacity`` have a gap
<= 0 the whole group is tracked instead (``lax.cond``: never a dropped contact). Under vmap the rule is per
batch, not per lane: the fallback's condition is reduced over the lanes (``any_lane``), so the whole batch
tracks the whole group when any lane overflows and only the candidates otherwise (a lane-wise condition would
make vmap's cond a select that runs both branches on every lane, the full narrow phase included). Forces are
those of the full narrow phase either way; the ``ContactForces`` report's depth of a far pair is the bounding
gap's (<= 0) instead of its exact separation, in the lanes of a batch that took the candidates. Cost: O(n) gaps
and a top-k, plus ``capacity`` narrow phase pairs instead of n.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._dynamics.contact.trackers.contact import Contact
from jaxbody._math import spatial
from jaxbody._math.lanes import any_lane


def bounding_radius(record):
    """(n,) radius about S's origin enclosing each surface of a shape record; inf for half-spaces."""
    kind = type(record).kind
    if kind == "Sphere":
        return record.radius
    if kind == "Capsule":
        return record.radius + record.half_length
    if kind == "Cylinder":
        return jnp.sqrt(record.radius ** 2 + record.half_length ** 2)
    if kind == "Ellipsoid":
        return jnp.max(record.radii, -1)
    if kind == "Brick":
        return spatial.safe_norm(record.half_lengths)
    if kind in ("ConvexMesh", "TriangleMesh"):
        return jnp.max(spatial.safe_norm(record.vertices), -1)
    raise ValueError(f"no bounding sphere for contact shape {kind}")


def bounding_gap(kinds, R_G1, p_G1, shape1, p_G2, shape2):
    """(n,) lower bound of the signed distance of each pair (module docstring); kinds: the table's order."""
    r2 = bounding_radius(shape2)
    if kinds[0] == "HalfSpace":
        return -jnp.sum(R_G1[:, :, 0] * (p_G2 - p_G1), -1) - r2
    return spatial.safe_norm(p_G2 - p_G1) - bounding_radius(shape1) - r2


def track_candidates(track, kinds, capacity, R_G1, p_G1, shape1, R_G2, p_G2, shape2) -> Contact:
    """The group's Contact (n pairs) from its tracker run on ``capacity`` candidate pairs (module docstring)."""
    gap = bounding_gap(kinds, R_G1, p_G1, shape1, p_G2, shape2)
    everything = lambda: track(R_G1, p_G1, shape1, R_G2, p_G2, shape2)  # noqa: E731

    def candidates():
        _, index = jax.lax.top_k(-jax.lax.stop_gradient(gap), capacity)
        pick = lambda x: jax.tree.map(lambda a: a[index], x)  # noqa: E731
        near = track(pick(R_G1), pick(p_G1), pick(shape1), pick(R_G2), pick(p_G2), pick(shape2))
        n, m = gap.shape[0], near.depth.shape[1]
        far_depth = jnp.broadcast_to(jnp.minimum(-gap, 0.0)[:, None], (n, m))
        mid = jnp.broadcast_to((0.5 * (p_G1 + p_G2))[:, None], (n, m, 3))
        x = jnp.zeros((n, m, 3), gap.dtype).at[..., 0].set(1.0)
        far = Contact(far_depth, mid, x, jnp.ones((n, m, 2), gap.dtype), jnp.zeros((n, m), gap.dtype))
        return Contact(*(f.at[index].set(c) for f, c in zip(far, near)))

    return jax.lax.cond(any_lane(jnp.sum(jax.lax.stop_gradient(gap) <= 0) > capacity), everything, candidates)
