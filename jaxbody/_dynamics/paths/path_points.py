"""OpenSim's path points as one fixed-shape batch: PathPoint, ConditionalPathPoint and MovingPathPoint.

Every point of a path is one row: its body (static index), the pose of its parent frame F in the body
(R_BF (3, 3), p_BF (3,) m: an OpenSim PhysicalOffsetFrame, or the identity), its location in F (m), and optionally

* a condition (ConditionalPathPoint): the point is active while its coordinate q[c] lies in
  ``[range_0 - 1e-5, range_1 + 1e-5]`` (OpenSim 4.6's ConditionalPathPoint::isActive tolerance);
* location functions (MovingPathPoint): component k of the station is ``f_k(clamp(q[c_k], range_k))``, the
  coordinate clamped to its range as OpenSim's MovingPathPoint::getLocation does; a component with a function
  and no coordinate is ``f_k(0)`` (OpenSim: "assume a Constant"); a component without a function keeps the
  station's value.

The active set changes with q, so every point is computed and the inactive ones are masked: shapes stay fixed
under jit and vmap. Functions are static callables ``f(x (1,)) -> scalar`` (jaxbody.io.opensim_functions
builds them from the file); stations and ranges are array leaves.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._math import spatial

#: OpenSim 4.6's tolerance on a ConditionalPathPoint's range (ConditionalPathPoint::isActive).
CONDITION_TOLERANCE = 1e-5


class PathPoints(eqx.Module):
    """n path points. bodies: static (n,) body indices. locations: (n, 3) in each point's frame F (m); R_BF (n, 3, 3)
    and p_BF (n, 3) the frames' poses in their bodies.

    condition_q: static (n,) q index of each point's condition (-1: always active); condition_range (n, 2).
    moving: static (n,) tuples of three callables or None (the x, y, z location functions; ``()`` for a
    fixed point); moving_q: static (n,) tuples of three q indices (-1: no coordinate); moving_range (n, 3, 2)
    the coordinates' ranges for the clamp.
    """

    bodies: tuple = eqx.field(static=True)
    locations: jnp.ndarray
    R_BF: jnp.ndarray
    p_BF: jnp.ndarray
    condition_q: tuple = eqx.field(static=True)
    condition_range: jnp.ndarray
    moving: tuple = eqx.field(static=True)
    moving_q: tuple = eqx.field(static=True)
    moving_range: jnp.ndarray

    @classmethod
    def fixed(cls, bodies, stations) -> "PathPoints":
        """Points fixed on bodies: ``bodies`` (n,) indices, ``stations`` (n, 3) in each body's frame (m)."""
        stations = jnp.asarray(stations)
        n = len(bodies)
        dtype = stations.dtype
        return cls(tuple(int(b) for b in bodies), stations, jnp.tile(jnp.eye(3, dtype=dtype), (n, 1, 1)),
                   jnp.zeros((n, 3), dtype), (-1,) * n, jnp.zeros((n, 2), dtype),
                   ((),) * n, ((-1, -1, -1),) * n, jnp.zeros((n, 3, 2), stations.dtype))

    @property
    def size(self) -> int:
        return len(self.bodies)

    def calc_stations(self, q) -> jnp.ndarray:
        """Each point's station (n, 3) in its body frame at coordinates q (MovingPathPoint locations applied)."""
        moving = [(i, k, f) for i, functions in enumerate(self.moving) for k, f in enumerate(functions) if f is not None]
        local = self.locations
        if moving:
            values = []
            for i, k, f in moving:
                c = self.moving_q[i][k]
                x = jnp.zeros((), q.dtype) if c < 0 else jnp.clip(q[c], self.moving_range[i, k, 0], self.moving_range[i, k, 1])
                values.append(f(x[None]))
            rows, cols = np.array([m[0] for m in moving]), np.array([m[1] for m in moving])
            local = local.at[rows, cols].set(jnp.stack(values).astype(local.dtype))
        return self.p_BF + spatial.matvec(self.R_BF, local)

    def calc_station_derivatives(self, q) -> jnp.ndarray:
        """(n, 3) in the body frame: each moving component's derivative by its own coordinate, at q unclamped
        (OpenSim's MovingPathPoint::getdPointdQ); 0 for fixed components."""
        local = jnp.zeros_like(self.locations)
        for i, functions in enumerate(self.moving):
            for k, f in enumerate(functions):
                c = self.moving_q[i][k] if f is not None else -1
                if c >= 0:
                    local = local.at[i, k].set(jax.grad(lambda x: f(x[None]))(q[c]))
        return spatial.matvec(self.R_BF, local)

    def calc_active(self, q) -> jnp.ndarray:
        """(n,) bool: which points are active at q (ConditionalPathPoints outside their range are not)."""
        c = np.asarray(self.condition_q)
        if np.all(c < 0):
            return jnp.ones(self.size, bool)
        value = q[np.maximum(c, 0)]
        inside = (value >= self.condition_range[:, 0] - CONDITION_TOLERANCE) & (
            value <= self.condition_range[:, 1] + CONDITION_TOLERANCE)
        return jnp.where(jnp.asarray(c >= 0), inside, True)

    def calc_locations_in_ground(self, R_GB, p_GB, q) -> jnp.ndarray:
        """Each point's location in Ground (n, 3), active or not."""
        b = np.asarray(self.bodies)
        return p_GB[b] + spatial.matvec(R_GB[b], self.calc_stations(q))


def previous_active(active) -> jnp.ndarray:
    """(n,) index of the nearest active point before each point (-1 where none)."""
    index = jnp.where(active, jnp.arange(active.shape[0]), -1)
    before = jnp.concatenate([jnp.full((1,), -1, index.dtype), index[:-1]])
    return jax.lax.cummax(before)


def polyline_length(P, active) -> jnp.ndarray:
    """Length (scalar) of the polyline through the active rows of P (n, 3), in order; gradient-safe when two
    consecutive active points coincide."""
    prev = previous_active(active)
    d = spatial.safe_norm(P - P[jnp.maximum(prev, 0)])
    return jnp.sum(jnp.where(active & (prev >= 0), d, 0.0))

