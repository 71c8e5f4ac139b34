"""OpenSim's GeometryPath: a muscle or ligament path through path points (jaxbody._dynamics.paths.path_points).

Length = the sum of the straight segments between consecutive active points (OpenSim 4.6
GeometryPath::calcLengthAfterPathComputation). Speed, forces and moment arms come from the Path interface
(jaxbody._dynamics.paths.base) by differentiating this geometry.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._dynamics.paths.base import Path
from jaxbody._dynamics.paths.path_points import PathPoints, polyline_length


class GeometryPath(Path):
    """A path through ``points`` (PathPoints). Cost: O(points) per length evaluation."""

    points: PathPoints

    @classmethod
    def fixed(cls, bodies, stations) -> "GeometryPath":
        """A path through points fixed on bodies: ``bodies`` (n >= 2,) indices, ``stations`` (n, 3) in each body (m)."""
        return cls(PathPoints.fixed(bodies, stations))

    def depends_on_q(self) -> bool:
        return any(self.points.moving)

    def calc_length_from_poses(self, R_GB, p_GB, q) -> jnp.ndarray:
        P = self.points.calc_locations_in_ground(R_GB, p_GB, q)
        return polyline_length(P, self.points.calc_active(q))
