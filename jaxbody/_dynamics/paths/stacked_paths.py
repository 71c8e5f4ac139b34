"""Several GeometryPaths without wrap objects evaluated together: length, lengthening speed and tension forces of
M paths, traced once for all of them instead of once per path.

The paths' points are concatenated into one :class:`PathPoints` (so stations, MovingPathPoint functions and
ConditionalPathPoint conditions are evaluated in one pass) and laid out as an (M, K) table, K the most points
of any path, the missing entries masked. Each row is OpenSim's current path of its muscle (its active points,
in order) and gets exactly GeometryPath's formulas (jaxbody._dynamics.paths.geometry_path): the straight-segment
length, OpenSim's lengthening speed (GeometryPath::computeLengtheningSpeed) and forces
(GeometryPath::produceForces), so the numbers equal the one-path evaluation to round-off.

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
from jaxbody._dynamics.paths.geometry_path import GeometryPath
from jaxbody._dynamics.paths.path_points import PathPoints


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


class CurrentPaths(NamedTuple):
    """Each path's current path (valid entries first): P (M, K, 3) in G, body (M, K), valid (M, K), row (M, K)."""

    P: jnp.ndarray
    body: jnp.ndarray
    valid: jnp.ndarray
    row: jnp.ndarray


def calc_current_paths(stack: StackedPaths, R_GB, p_GB, q) -> CurrentPaths:
    """The active points of every path, compacted per path (GeometryPath.calc_current_path without wraps)."""
    P = stack.points.calc_locations_in_ground(R_GB, p_GB, q)
    active = stack.points.calc_active(q)
    bodies = np.asarray(stack.points.bodies, np.int32)
    valid = active[stack.row] & jnp.asarray(stack.real)
    order = jnp.argsort(~valid, axis=1, stable=True)
    take = lambda x: jnp.take_along_axis(x, order if x.ndim == 2 else order[..., None], axis=1)  # noqa: E731
    return CurrentPaths(take(P[stack.row]), take(jnp.asarray(bodies[stack.row])), take(valid),
                        take(jnp.asarray(stack.row, jnp.int32)))


def calc_lengths(paths: CurrentPaths) -> jnp.ndarray:
    """(M,) path lengths (m): the straight segments between consecutive valid entries."""
    straight = wm.norm(paths.P[:, 1:] - paths.P[:, :-1])
    return jnp.sum(jnp.where(paths.valid[:, 1:], straight, 0.0), -1)


def calc_lengthening_speeds(stack: StackedPaths, paths: CurrentPaths, pos, vel, q) -> jnp.ndarray:
    """(M,) OpenSim's lengthening speeds (m/s) of the current paths. Needs Velocity."""
    w, v = vel.V_GB[paths.body, 0], vel.V_GB[paths.body, 1]
    entry_v = v + jnp.cross(w, paths.P - pos.p_GB[paths.body])
    if stack.depends_on_q:
        _, station_dot = jax.jvp(stack.points.calc_stations, (q,), (vel.qdot,))
        entry_v = entry_v + jnp.einsum("mkij,mkj->mki", pos.R_GB[paths.body], station_dot[paths.row])
    r, dv = paths.P[:, 1:] - paths.P[:, :-1], entry_v[:, 1:] - entry_v[:, :-1]
    d = wm.norm(r)
    tiny = d < wm.EPS
    speed = jnp.where(tiny, wm.norm(dv), jnp.sum(dv * r, -1) / jnp.where(tiny, 1.0, d))
    return jnp.sum(jnp.where(paths.valid[:, 1:], speed, 0.0), -1)


def calc_tension_forces(stack: StackedPaths, paths: CurrentPaths, model, state, tensions):
    """Each path's forces of its tension (M,) N: body forces (M, nbodies, 2, 3) at Bo in G and mobility forces
    (M, nu) (GeometryPath.calc_tension_forces). Needs Position."""
    pos = state.position
    M = paths.P.shape[0]
    e, _ = wm.normalize_or_zero(paths.P[:, 1:] - paths.P[:, :-1])
    crosses = paths.valid[:, 1:] & (paths.body[:, 1:] != paths.body[:, :-1])
    f = jnp.where(crosses[..., None], tensions[:, None, None] * e, 0.0)  # (M, K - 1, 3) on each segment's first end
    zero = jnp.zeros((M, 1, 3), f.dtype)
    F = jnp.concatenate([f, zero], 1) - jnp.concatenate([zero, f], 1)
    moments = jnp.cross(paths.P - pos.p_GB[paths.body], F)
    m = jnp.arange(M)[:, None]
    body_forces = jnp.zeros((M, model.topology.nbodies, 2, 3), F.dtype).at[m, paths.body].add(
        jnp.stack([moments, F], 2))
    mobility = jnp.zeros((M,) + state.u.shape, F.dtype)
    if stack.depends_on_q:
        mobility = _moving_point_forces(stack, paths, model, state, F)
    return body_forces, mobility


def _moving_point_forces(stack: StackedPaths, paths: CurrentPaths, model, state, F) -> jnp.ndarray:
    """(M, nu) generalized forces of the entry forces F (M, K, 3) on MovingPathPoints (produceForces)."""
    pos, points = state.position, stack.points
    dp_dq = points.calc_station_derivatives(state.q)  # (N, 3) in the body frame
    x_q = np.array([next((c for c in cs if c >= 0), -1) for cs in points.moving_q])
    dP_G = jnp.einsum("mkij,mkj->mki", pos.R_GB[paths.body], dp_dq[paths.row])
    x_q_entry = jnp.asarray(x_q, jnp.int32)[paths.row]
    work = jnp.where(x_q_entry >= 0, jnp.sum(dP_G * F, -1), 0.0)
    M = paths.P.shape[0]
    f_q = jnp.zeros((M,) + state.q.shape, F.dtype).at[jnp.arange(M)[:, None], jnp.maximum(x_q_entry, 0)].add(work)
    return jax.vmap(lambda g: q_forces_to_mobility(model, state, g))(f_q)
