"""Several GeometryPaths without wrap objects evaluated together: length, lengthening speed and tension forces of
M paths, traced once for all of them instead of once per path.

The paths' points are concatenated into one :class:`PathPoints` (so stations, MovingPathPoint functions and
ConditionalPathPoint conditions are evaluated in one pass) and laid out as an (M, K) table, K the most points
of any path, the missing entries masked. Each row is OpenSim's current path of its muscle: its active points,
in order, kept in the static layout with each entry's previous and next active entry (``StackedEntries``)
rather than compacted by a sort, so that bodies stay static (gathers become slices, the forces reach their
bodies by a product with a static incidence table rather than a scatter). On it GeometryPath's own formulas
(jaxbody._dynamics.paths.geometry_path): the straight-segment length, OpenSim's lengthening speed
(GeometryPath::computeLengtheningSpeed) and forces (GeometryPath::produceForces), so the numbers equal the
one-path evaluation to round-off.

Shapes: M paths, K entries per path, nbodies bodies, nq coordinates, nu mobilities. Stages: length and forces
need Position, the speed Velocity. Cost: O(M K) plus one pass of the MovingPathPoint functions; an N(q)^T
product per path only when some path has a MovingPathPoint.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.paths import wrap_math as wm
from jaxbody._dynamics.paths.base import q_forces_to_mobility
from jaxbody._dynamics.paths.geometry_path import GeometryPath, moving_point_q_forces, moving_x_coordinates
from jaxbody._dynamics.paths.path_points import PathPoints, previous_active


def stackable(path) -> bool:
    """Whether ``path`` can join a stack: a GeometryPath without wrap objects."""
    return type(path) is GeometryPath and not path.wraps


class StackedPaths(NamedTuple):
    """M paths' points concatenated (``points``, N rows) and their static (M, K) layout: ``row`` the row of
    ``points`` of each entry (0 where ``real`` is False: a padding entry)."""

    points: PathPoints
    row: np.ndarray
    real: np.ndarray

    @property
    def depends_on_q(self) -> bool:
        return any(self.points.moving)


def stack_paths(paths) -> StackedPaths:
    """The :class:`StackedPaths` of stackable ``paths`` (static layout, array leaves concatenated)."""
    pts = [p.points for p in paths]
    cat = lambda name: jnp.concatenate([jnp.asarray(getattr(p, name)) for p in pts])  # noqa: E731
    joined = lambda name: sum((tuple(getattr(p, name)) for p in pts), ())  # noqa: E731
    points = PathPoints(joined("bodies"), cat("locations"), cat("R_BF"), cat("p_BF"), joined("condition_q"),
                        cat("condition_range"), joined("moving"), joined("moving_q"), cat("moving_range"))
    sizes = [p.size for p in pts]
    starts = np.cumsum([0] + sizes[:-1])
    k = np.arange(max(sizes))
    real = k[None, :] < np.asarray(sizes)[:, None]
    row = np.where(real, starts[:, None] + k[None, :], 0)
    return StackedPaths(points, row, real)


class StackedEntries(NamedTuple):
    """The M paths' entries in their static (M, K) layout, not compacted: P (M, K, 3) each entry's location in G
    (m, active or not), valid (M, K) whether it is on the current path (a real, active point), prev (M, K) the
    index of the previous valid entry of its path (-1: none) and next (M, K) of the next one (K: none). A segment
    ends at every valid entry with prev >= 0: the same segments, in the same order, as the compacted current path
    (wrapping.compact) has, without its sort."""

    P: jnp.ndarray
    valid: jnp.ndarray
    prev: jnp.ndarray
    next: jnp.ndarray


def calc_entries(stack: StackedPaths, R_GB, p_GB, q) -> StackedEntries:
    """Every path's entries at q (``StackedEntries``). Needs Position."""
    P = stack.points.calc_locations_in_ground(R_GB, p_GB, q)[stack.row]
    valid = stack.points.calc_active(q)[stack.row] & jnp.asarray(stack.real)
    K = stack.row.shape[1]
    prev = jax.vmap(previous_active)(valid)
    after = jnp.concatenate([jnp.where(valid, jnp.arange(K), K)[:, 1:], jnp.full((valid.shape[0], 1), K)], 1)
    return StackedEntries(P, valid, prev, jax.lax.cummin(after, axis=1, reverse=True))


def _at(x, index):
    """x (M, K, ...) at per-path entry indices (M, K), clamped into [0, K - 1] (masked by the caller)."""
    i = jnp.clip(index, 0, x.shape[1] - 1)
    return jnp.take_along_axis(x, i.reshape(i.shape + (1,) * (x.ndim - 2)), axis=1)


def _segment_ends(entries: StackedEntries) -> jnp.ndarray:
    """(M, K) whether a straight segment ends at each entry (valid, after another valid entry)."""
    return entries.valid & (entries.prev >= 0)


def calc_lengths(entries: StackedEntries) -> jnp.ndarray:
    """(M,) path lengths (m): the straight segments between consecutive valid entries (wrapping.path_length)."""
    straight = wm.norm(entries.P - _at(entries.P, entries.prev))
    return jnp.sum(jnp.where(_segment_ends(entries), straight, 0.0), 1)


def _entry_bodies(stack: StackedPaths) -> np.ndarray:
    """(M, K) static body index of each entry (padding: its row 0's body, masked everywhere)."""
    return np.asarray(stack.points.bodies, np.int32)[stack.row]


def calc_lengthening_speeds(stack: StackedPaths, entries: StackedEntries, pos, vel, q) -> jnp.ndarray:
    """(M,) OpenSim's lengthening speeds (m/s, geometry_path.lengthening_speed) of the current paths. Needs
    Velocity."""
    body = _entry_bodies(stack)
    v = vel.V_GB[body, 1] + jnp.cross(vel.V_GB[body, 0], entries.P - pos.p_GB[body])
    if stack.depends_on_q:  # a MovingPathPoint's own motion, R_GB (dp/dt) in its body frame
        _, station_dot = jax.jvp(stack.points.calc_stations, (q,), (vel.qdot,))
        v = v + jnp.einsum("mkij,mkj->mki", pos.R_GB[body], station_dot[stack.row])
    r, dv = entries.P - _at(entries.P, entries.prev), v - _at(v, entries.prev)
    d = wm.norm(r)
    tiny = d < wm.EPS
    speed = jnp.where(tiny, wm.norm(dv), jnp.sum(dv * r, -1) / jnp.where(tiny, 1.0, d))
    return jnp.sum(jnp.where(_segment_ends(entries), speed, 0.0), 1)


def calc_tension_forces(stack: StackedPaths, entries: StackedEntries, model, state, tensions, enabled):
    """The forces of the paths' tensions (M,) N (geometry_path.tension_forces, OpenSim's produceForces) summed
    over the enabled paths (``enabled`` (M,) bool; a disabled path's entry forces are selected away): body forces
    (nbodies, 2, 3) at Bo in G and mobility forces (nu,). Needs Position. The entries' forces reach their bodies
    by one product with a static (nbodies, M K) incidence matrix (no scatter, no per-path body arrays)."""
    pos, nbodies = state.position, model.topology.nbodies
    body = _entry_bodies(stack)
    e, _ = wm.normalize_or_zero(entries.P - _at(entries.P, entries.prev))
    crosses = _segment_ends(entries) & (jnp.asarray(body) != _at(jnp.asarray(body), entries.prev))
    f = jnp.where(crosses[..., None], tensions[:, None, None] * e, 0.0)  # on the segment ending at each entry
    outgoing = jnp.where((entries.valid & (entries.next < body.shape[1]))[..., None], _at(f, entries.next), 0.0)
    F = jnp.where(enabled[:, None, None], outgoing - f, 0.0)
    moments = jnp.cross(entries.P - pos.p_GB[body], F)
    incidence = jnp.asarray(np.arange(nbodies)[:, None] == body.reshape(-1), F.dtype)  # (nbodies, M K)
    body_forces = (incidence @ jnp.concatenate([moments, F], -1).reshape(-1, 6)).reshape(nbodies, 2, 3)
    if not stack.depends_on_q:
        return body_forces, jnp.zeros(state.u.shape, F.dtype)
    dp_dq, x_q = stack.points.calc_station_derivatives(state.q), moving_x_coordinates(stack.points)
    point = np.where(stack.real, stack.row, -1)
    f_q = jax.vmap(lambda point, body, F: moving_point_q_forces(point, body, pos, F, dp_dq, x_q, state.q.shape[0]))(
        point, body, F)
    return body_forces, q_forces_to_mobility(model, state, jnp.sum(f_q, 0))

