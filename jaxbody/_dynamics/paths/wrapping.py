"""OpenSim's GeometryPath::applyWrapObjects on fixed shapes: which segment each wrap object wraps, and the path
through the tangent points.

The current path is a padded list of K = points + 2 wraps entries (:class:`CurrentPath`), the valid ones
first, in path order: the active path points and, after the segment each wrap object took, its two tangent
points (fixed on the wrap object's body). For each wrap object in order (OpenSim 4.6, GeometryPath.cpp):

1. its previous tangent points are removed;
2. every segment between consecutive entries from the first to the last active point of its ``range`` (except
   a segment between two tangent points of one object) is wrapped (``wrap_line``, vmapped over segments);
3. the first mandatory wrap wins, else the wrap that lengthens the path least; its tangent points are inserted.

One wrap object: one pass. Several: up to 8 passes, stopping once the length changes by less than 0.5 mm;
after the first pass, if the first object did not wrap and the second had a point inside it, the two swap
order. A lane is frozen once OpenSim would have stopped, and a pass runs only while some lane is not, so the
result is OpenSim's path with shapes independent of q. Not reproduced: OpenSim's PathWrap "previous wrap" memory,
read only when a sphere's line passes through its centre.

OpenSim's Point::getLocationInGround caches a point's Ground location at its first read in a realization, and
a tangent point keeps that cache when a later pass moves it. So with several wrap objects OpenSim's lengths,
length changes, speeds and force directions use each tangent point's location when first read (after the pass
that made it, or by an earlier length-change test), while the wrap computations and the velocities use its
latest location. Both are kept: ``P`` (latest) and ``S`` (as read), with the cache in :class:`WrapCache`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxbody._dynamics.paths import wrap_math as wm
from jaxbody._math import spatial
from jaxbody._math.lanes import any_lane

#: OpenSim's GeometryPath::applyWrapObjects: passes for several wrap objects, and its convergence test (m).
MAX_PASSES = 8
CONVERGED_LENGTH_CHANGE = 0.0005
#: Stand-in end points (m, in W) for segments a wrap object does not consider: far from any wrap object.
FAR_SEGMENT = ((1000.0, 1000.0, 1000.0), (2000.0, 1000.0, 1000.0))


class CurrentPath(NamedTuple):
    """K entries: P (K, 3) locations in G (m); body (K,) body index; valid (K,) (valid entries first); point (K,)
    the PathPointSet index (-1 for tangent points); owner (K,) the wrap index (-1 for path points);
    wrap_length (K,) the surface length ending at a second tangent point (m); S (K, 3) the location OpenSim
    reads in G (m; = P but for a tangent point moved after its first read, see the module docstring); slot (K,)
    2 owner + (0: first, 1: second tangent point), -1 for path points."""

    P: jnp.ndarray
    body: jnp.ndarray
    valid: jnp.ndarray
    point: jnp.ndarray
    owner: jnp.ndarray
    wrap_length: jnp.ndarray
    S: jnp.ndarray
    slot: jnp.ndarray


class WrapCache(NamedTuple):
    """OpenSim's Ground-location cache of the 2 n_wraps tangent points: S (2 n, 3) (m), known (2 n,)."""

    S: jnp.ndarray
    known: jnp.ndarray


def empty_cache(n_wraps: int, dtype) -> WrapCache:
    return WrapCache(jnp.zeros((2 * n_wraps, 3), dtype), jnp.zeros(2 * n_wraps, bool))


def _read(path: CurrentPath, cache: WrapCache, read) -> WrapCache:
    """The cache after OpenSim reads the Ground locations of the entries where ``read`` (K,): a tangent point's
    first read fixes its location (its S, = P while unread)."""
    n = cache.known.shape[0]
    first = read & (path.slot >= 0)
    slot = jnp.where(first, path.slot, n)
    flags = jnp.zeros(n + 1, bool).at[slot].set(first)[:n]
    values = jnp.zeros((n + 1, 3), path.S.dtype).at[slot].set(path.S)[:n]
    fresh = flags & ~cache.known
    return WrapCache(jnp.where(fresh[:, None], values, cache.S), cache.known | flags)


def initial_path(P, bodies, active, n_wraps: int) -> CurrentPath:
    """The active path points (P (n, 3) in G, static bodies, active (n,)) padded with 2 n_wraps free entries."""
    n, pad = P.shape[0], 2 * n_wraps
    path = CurrentPath(
        jnp.concatenate([P, jnp.zeros((pad, 3), P.dtype)]),
        jnp.asarray(list(bodies) + [0] * pad, jnp.int32),
        jnp.concatenate([active, jnp.zeros(pad, bool)]),
        jnp.asarray(list(range(n)) + [-1] * pad, jnp.int32),
        jnp.full(n + pad, -1, jnp.int32),
        jnp.zeros(n + pad, P.dtype),
        jnp.concatenate([P, jnp.zeros((pad, 3), P.dtype)]),
        jnp.full(n + pad, -1, jnp.int32))
    return compact(path)


def compact(path: CurrentPath) -> CurrentPath:
    """Valid entries first, in their order (a stable sort)."""
    order = jnp.argsort(~path.valid, stable=True)
    return CurrentPath(*[x[order] for x in path])


def same_wrap(path: CurrentPath) -> jnp.ndarray:
    """(K - 1,) whether entries j and j + 1 are the two tangent points of one wrap object."""
    return (path.owner[:-1] >= 0) & (path.owner[:-1] == path.owner[1:])


def path_length(path: CurrentPath) -> jnp.ndarray:
    """OpenSim's calcLengthAfterPathComputation: straight segments (between the locations as read, S) plus each
    wrap's surface length."""
    straight = wm.norm(path.S[1:] - path.S[:-1])
    segment = jnp.where(same_wrap(path), path.wrap_length[1:], straight)
    return jnp.sum(jnp.where(path.valid[1:], segment, 0.0))


def _insert(path: CurrentPath, after, r1_G, r2_G, body, owner, length, cache: WrapCache) -> CurrentPath:
    """The path with tangent points r1, r2 inserted after entry ``after`` (the last two entries are free); their
    S is the cached location where OpenSim has one."""
    k = jnp.arange(path.P.shape[0])
    source = jnp.where(k <= after, k, jnp.maximum(k - 2, 0))
    first, second = k == after + 1, k == after + 2
    new = [x[source] for x in path]
    P = jnp.where(first[:, None], r1_G, jnp.where(second[:, None], r2_G, new[0]))
    s1 = jnp.where(cache.known[2 * owner], cache.S[2 * owner], r1_G)
    s2 = jnp.where(cache.known[2 * owner + 1], cache.S[2 * owner + 1], r2_G)
    S = jnp.where(first[:, None], s1, jnp.where(second[:, None], s2, new[6]))
    return CurrentPath(P, jnp.where(first | second, body, new[1]), jnp.where(first | second, True, new[2]),
                       jnp.where(first | second, -1, new[3]), jnp.where(first | second, owner, new[4]),
                       jnp.where(second, length, jnp.where(first, 0.0, new[5])), S,
                       jnp.where(first, 2 * owner, jnp.where(second, 2 * owner + 1, new[7])))


def apply_wrap(path: CurrentPath, cache: WrapCache, index: int, path_wrap, single_wrap: bool, point_active, R_GB,
               p_GB):
    """One wrap object (``index`` in the PathWrapSet): ``(path, cache, result code, aborted)`` as OpenSim's loop
    body."""
    path = compact(path._replace(valid=path.valid & (path.owner != index)))
    wrap = path_wrap.wrap
    if not wrap.active:
        return path, cache, jnp.asarray(wm.NO_WRAP), jnp.asarray(False)
    first, last = path_wrap.start, path_wrap.end
    in_range = point_active[first:last + 1]
    any_active = jnp.any(in_range)
    start_point = first + jnp.argmax(in_range)
    end_point = last - jnp.argmax(in_range[::-1])
    start = jnp.argmax(path.valid & (path.point == start_point))
    end = jnp.argmax(path.valid & (path.point == end_point))
    j = jnp.arange(path.P.shape[0] - 1)
    eligible = path.valid[1:] & (start <= j) & (j < end) & ~same_wrap(path) & any_active
    R_GW = R_GB[wrap.body] @ wrap.R_BW
    p_GW = p_GB[wrap.body] + spatial.matvec(R_GB[wrap.body], wrap.p_BW)
    to_W = lambda x: spatial.matvec(R_GW.T, x - p_GW)  # noqa: E731
    to_G = lambda x: p_GW + spatial.matvec(R_GW, x)  # noqa: E731
    P1, P2 = path.P[:-1], path.P[1:]
    # segments not considered get a far-away stand-in, so no NaN from a degenerate one reaches a gradient
    far1, far2 = jnp.asarray(FAR_SEGMENT[0], P1.dtype), jnp.asarray(FAR_SEGMENT[1], P1.dtype)
    p1_W = jnp.where(eligible[:, None], jax.vmap(to_W)(P1), far1)
    p2_W = jnp.where(eligible[:, None], jax.vmap(to_W)(P2), far2)
    lines = jax.vmap(lambda a, b: wrap.wrap_line(a, b, single_wrap))(p1_W, p2_W)
    r1_G, r2_G = jax.vmap(to_G)(lines.r1), jax.vmap(to_G)(lines.r2)
    S1, S2 = path.S[:-1], path.S[1:]
    change = wm.norm(S1 - r1_G) + lines.length + wm.norm(S2 - r2_G) - wm.norm(S1 - S2)
    mandatory = eligible & (lines.code == wm.MANDATORY_WRAP)
    wrapped = eligible & (lines.code == wm.WRAPPED)
    has_mandatory = jnp.any(mandatory)
    # calcPathLengthChange reads both ends of each wrapped segment OpenSim evaluates (up to the first mandatory)
    tested = wrapped & (~has_mandatory | (j < jnp.argmax(mandatory)))
    no = jnp.zeros(1, bool)
    cache = _read(path, cache, jnp.concatenate([tested, no]) | jnp.concatenate([no, tested]))
    best = jnp.where(has_mandatory, jnp.argmax(mandatory), jnp.argmin(jnp.where(wrapped, change, jnp.inf)))
    found = has_mandatory | jnp.any(wrapped)
    last_evaluated = j.shape[0] - 1 - jnp.argmax(eligible[::-1])
    result = jnp.where(has_mandatory, wm.MANDATORY_WRAP,
                       jnp.where(jnp.any(eligible), lines.code[last_evaluated], wm.NO_WRAP))
    inserted = _insert(path, best, r1_G[best], r2_G[best], wrap.body, index, lines.length[best], cache)
    path = jax.tree_util.tree_map(lambda a, b: jnp.where(found, a, b), inserted, path)
    return path, cache, result, ~any_active


def _select(flag, a, b):
    return jax.tree_util.tree_map(lambda x, y: jnp.where(flag, x, y), a, b)


def _one_pass(path, cache, stopped, swap, wraps, point_active, R_GB, p_GB):
    """One pass of applyWrapObjects over the PathWrapSet (several wrap objects), the first two in swapped order
    where ``swap``: ``(path, cache, stopped, result codes in pass order)``. Positions 0 and 1 are a 2-step scan
    that switches between wrap objects 0 and 1, so every wrap object is traced once whatever the order."""
    def run(i, path, cache):
        new, new_cache, result, abort = apply_wrap(path, cache, i, wraps[i], False, point_active, R_GB, p_GB)
        return new, new_cache, jnp.asarray(result, jnp.int32), jnp.asarray(abort, bool)

    def position(carry, p):
        path, cache, stopped = carry
        new, new_cache, result, abort = jax.lax.switch(jnp.where(swap, 1 - p, p), [
            lambda path, cache: run(0, path, cache), lambda path, cache: run(1, path, cache)], path, cache)
        path, cache = _select(stopped, (path, cache), (new, new_cache))
        return (path, cache, stopped | abort), result

    (path, cache, stopped), first_two = jax.lax.scan(position, (path, cache, stopped), jnp.arange(2))
    results = [first_two[0], first_two[1]]
    for i in range(2, len(wraps)):
        new, new_cache, result, abort = run(i, path, cache)
        path, cache = _select(stopped, (path, cache), (new, new_cache))
        stopped = stopped | abort
        results.append(result)
    # calcLengthAfterPathComputation reads every entry
    return path, _read(path, cache, path.valid), stopped, results


def apply_wrap_objects(path: CurrentPath, wraps, point_active, R_GB, p_GB) -> CurrentPath:
    """OpenSim's applyWrapObjects on ``path`` (from :func:`initial_path`) for the PathWraps ``wraps``. With several
    wrap objects the passes are one ``lax.scan`` (the first pass decides the swap), so each wrap object's
    geometry is traced once; a pass runs only while some lane (of a vmapped batch) has not stopped or converged
    (``lax.cond`` on ``any_lane``), so a path costs the passes it needs (typically 2), not MAX_PASSES."""
    n_wraps = len(wraps)
    if n_wraps == 0:
        return path
    cache = empty_cache(n_wraps, path.P.dtype)
    if n_wraps == 1:
        path, cache, _, _ = apply_wrap(path, cache, 0, wraps[0], True, point_active, R_GB, p_GB)
        return path

    def one_pass(carry, k):
        path, cache, stopped, done, last_length, swap = carry
        new, new_cache, new_stopped, results = _one_pass(path, cache, stopped, swap, wraps, point_active, R_GB, p_GB)
        length = path_length(new)
        # after the first pass: the swap test (the first object did not wrap, the second had a point inside)
        swap_now = (results[0] == wm.NO_WRAP) & (results[1] == wm.INSIDE_RADIUS) & ~new_stopped
        first = (_select(swap_now, compact(new._replace(valid=new.valid & (new.owner != 0))), new), new_cache,
                 new_stopped, jnp.asarray(False), length, swap_now)
        # later passes: frozen once OpenSim stopped or converged
        frozen = done | stopped
        kept, kept_cache = _select(frozen, (path, cache), (new, new_cache))
        converged = jnp.abs(length - last_length) < CONVERGED_LENGTH_CHANGE
        later = (kept, kept_cache, jnp.where(frozen, stopped, new_stopped), done | (~stopped & converged),
                 jnp.where(frozen, last_length, length), swap)
        return _select(k == 0, first, later)

    def step(carry, k):
        # a pass changes nothing once every lane is frozen: skip it then (one decision for the whole batch)
        _, _, stopped, done, _, _ = carry
        needed = (k == 0) | ~(stopped | done)
        return jax.lax.cond(any_lane(needed), one_pass, lambda carry, k: carry, carry, k), None

    zero = jnp.zeros((), path.P.dtype)
    carry = (path, cache, jnp.asarray(False), jnp.asarray(False), zero, jnp.asarray(False))
    (path, *_), _ = jax.lax.scan(step, carry, jnp.arange(MAX_PASSES))
    return path


def wrap_range(start: int, end: int, n_points: int) -> tuple[int, int]:
    """OpenSim's 1-based PathWrap ``range`` (values < 1: first / last point) as 0-based (first, last)."""
    return (0 if start < 1 else start - 1), (n_points - 1 if end < 1 else end - 1)

