"""Several GeometryPaths without wrap objects evaluated together: length, lengthening speed and tension forces of
M paths, traced once for all of them instead of once per path.

The paths' points are concatenated into one :class:`PathPoints` (so stations, MovingPathPoint functions and
ConditionalPathPoint conditions are evaluated in one pass) and laid out as an (M, K) table, K the most points
of any path, the missing entries masked. Each row is OpenSim's current path of its muscle (a
:class:`CurrentPath` of its active points, in order, ``point`` indexing the concatenated points) and gets
GeometryPath's own formulas (jaxbody._dynamics.paths.geometry_path) by ``jax.vmap``: the straight-segment
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

from jaxbody._dynamics.paths.base import q_forces_to_mobility
from jaxbody._dynamics.paths.geometry_path import (
    GeometryPath,
    entry_velocities,
    lengthening_speed,
    moving_point_q_forces,
    moving_x_coordinates,
    tension_forces,
)
from jaxbody._dynamics.paths.path_points import PathPoints
from jaxbody._dynamics.paths.wrapping import CurrentPath, compact, path_length


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


def calc_current_paths(stack: StackedPaths, R_GB, p_GB, q) -> CurrentPath:
    """Every path's current path (GeometryPath.calc_current_path without wraps), stacked: each field (M, K, ...);
    ``point`` indexes ``stack.points``."""
    P = stack.points.calc_locations_in_ground(R_GB, p_GB, q)
    valid = stack.points.calc_active(q)[stack.row] & jnp.asarray(stack.real)
    bodies = np.asarray(stack.points.bodies, np.int32)[stack.row]
    M, K = stack.row.shape
    paths = CurrentPath(P[stack.row], jnp.asarray(bodies), valid, jnp.asarray(stack.row, jnp.int32),
                        jnp.full((M, K), -1, jnp.int32), jnp.zeros((M, K), P.dtype), P[stack.row],
                        jnp.full((M, K), -1, jnp.int32))
    return jax.vmap(compact)(paths)


def calc_lengths(paths: CurrentPath) -> jnp.ndarray:
    """(M,) path lengths (m): the straight segments between consecutive valid entries."""
    return jax.vmap(path_length)(paths)


def calc_lengthening_speeds(stack: StackedPaths, paths: CurrentPath, pos, vel, q) -> jnp.ndarray:
    """(M,) OpenSim's lengthening speeds (m/s) of the current paths. Needs Velocity."""
    station_dot = None
    if stack.depends_on_q:
        _, station_dot = jax.jvp(stack.points.calc_stations, (q,), (vel.qdot,))
    return jax.vmap(lambda path: lengthening_speed(path, entry_velocities(path, pos, vel, station_dot)))(paths)


def calc_tension_forces(stack: StackedPaths, paths: CurrentPath, model, state, tensions):
    """Each path's forces of its tension (M,) N: body forces (M, nbodies, 2, 3) at Bo in G and mobility forces
    (M, nu) (GeometryPath.calc_tension_forces). Needs Position."""
    pos = state.position
    body_forces, F = jax.vmap(lambda path, t: tension_forces(path, pos, model.topology.nbodies, t))(paths, tensions)
    if not stack.depends_on_q:
        return body_forces, jnp.zeros((tensions.shape[0],) + state.u.shape, F.dtype)
    dp_dq, x_q = stack.points.calc_station_derivatives(state.q), moving_x_coordinates(stack.points)
    f_q = jax.vmap(lambda path, F: moving_point_q_forces(path, pos, F, dp_dq, x_q, state.q.shape[0]))(paths, F)
    return body_forces, jax.vmap(lambda g: q_forces_to_mobility(model, state, g))(f_q)
