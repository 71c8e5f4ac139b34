"""OpenSim's GeometryPath: a muscle or ligament path through path points, wrapping over wrap objects.

Length: OpenSim 4.6's current path (jaxbody._dynamics.paths.wrapping: active points, tangent points of the
wrap objects) and its length, straight segments plus each wrap's surface length
(GeometryPath::calcLengthAfterPathComputation).

Lengthening speed and tension forces follow OpenSim's own formulas on the current path, so they agree with
OpenSim for every wrap method:

* speed (GeometryPath::computeLengtheningSpeed): the sum over consecutive entries of the relative velocity
  along the segment; tangent points move with their wrap object's body, path points with theirs (plus a
  MovingPathPoint's own velocity ``R_GF (df/dq) qdot``);
* forces (GeometryPath::produceForces): the tension along each segment whose ends lie on different bodies, at
  its end points; a MovingPathPoint at such a segment's end also gets the generalized force
  ``(R_GF dp/dq) . f`` on its x coordinate.

Both read the entries' locations as OpenSim reads them (``CurrentPath.S``: with several wrap objects a tangent
point's Ground location is OpenSim's cached one, wrapping.py) and move them with their latest locations (``P``).

Where the wrap is OpenSim's exact shortest path (path points, spheres) these equal the derivatives of the
length; a cylinder's and an ellipsoid's tangent points are OpenSim's approximation, so there its moment arms
(``computeMomentArm``, from these forces) differ from ``-dL/du`` (``calc_moment_arms``, exact by autodiff).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.paths import wrap_math as wm
from jaxbody._dynamics.paths.base import Path, q_forces_to_mobility
from jaxbody._dynamics.paths.path_points import PathPoints
from jaxbody._dynamics.paths.wrapping import CurrentPath, apply_wrap_objects, initial_path, path_length


def entry_velocities(path: CurrentPath, pos, vel, station_dot=None) -> jnp.ndarray:
    """(K, 3) velocity in G of each entry: a body-fixed point, plus a MovingPathPoint's own motion when
    ``station_dot`` (n, 3), the path points' station rates in their body frames, is given."""
    w, v = vel.V_GB[path.body, 0], vel.V_GB[path.body, 1]
    out = v + jnp.cross(w, path.P - pos.p_GB[path.body])
    if station_dot is not None:
        local = jnp.where((path.point >= 0)[:, None], station_dot[jnp.maximum(path.point, 0)], 0.0)
        out = out + jnp.einsum("kij,kj->ki", pos.R_GB[path.body], local)
    return out


def lengthening_speed(path: CurrentPath, entry_v) -> jnp.ndarray:
    """OpenSim's computeLengtheningSpeed (m/s): the entries' relative velocities (K, 3) along each segment."""
    r, dv = path.S[1:] - path.S[:-1], entry_v[1:] - entry_v[:-1]
    d = wm.norm(r)
    tiny = d < wm.EPS
    speed = jnp.where(tiny, wm.norm(dv), jnp.sum(dv * r, -1) / jnp.where(tiny, 1.0, d))
    return jnp.sum(jnp.where(path.valid[1:], speed, 0.0))


def tension_forces(path: CurrentPath, pos, nbodies: int, tension):
    """OpenSim's produceForces of ``tension`` (N) along ``path``: ``(body_forces (nbodies, 2, 3) at Bo in G,
    F (K, 3))``, F the force in G on each entry (the tension along each segment whose ends lie on different
    bodies, on its first end, and its opposite on its second)."""
    e, _ = wm.normalize_or_zero(path.S[1:] - path.S[:-1])
    crosses = path.valid[1:] & (path.body[1:] != path.body[:-1])
    f = jnp.where(crosses[:, None], tension * e, 0.0)
    zero = jnp.zeros((1, 3), f.dtype)
    F = jnp.concatenate([f, zero]) - jnp.concatenate([zero, f])
    moments = jnp.cross(path.P - pos.p_GB[path.body], F)
    body_forces = jnp.zeros((nbodies, 2, 3), F.dtype).at[path.body].add(jnp.stack([moments, F], 1))
    return body_forces, F


def moving_point_q_forces(point, body, pos, F, dp_dq, x_q, nq: int) -> jnp.ndarray:
    """Generalized forces (nq,) conjugate to q of the entry forces F (K, 3) on MovingPathPoints (produceForces):
    ``(R_GB dp/dq) . F`` on each moving point's x coordinate. point (K,): each entry's path point index (-1: a
    tangent point or padding; a CurrentPath's ``point``), body (K,) its body; dp_dq (n, 3): each point's station
    derivative in its body frame; x_q (n,) static: the q index of its x function (-1: none,
    :func:`moving_x_coordinates`)."""
    entry_point = jnp.maximum(point, 0)
    dP_G = jnp.einsum("kij,kj->ki", pos.R_GB[body], dp_dq[entry_point])
    is_moving = (point >= 0) & jnp.asarray(x_q >= 0)[entry_point]
    work = jnp.where(is_moving, jnp.sum(dP_G * F, -1), 0.0)
    return jnp.zeros(nq, F.dtype).at[jnp.asarray(x_q)[entry_point]].add(work)


def moving_x_coordinates(points: PathPoints) -> np.ndarray:
    """(n,) static: the q index of each point's first MovingPathPoint function with a coordinate (-1: none)."""
    return np.array([next((c for c in cs if c >= 0), -1) for cs in points.moving_q])


class GeometryPath(Path):
    """A path through ``points`` (PathPoints) wrapping over ``wraps`` (PathWrap, in PathWrapSet order).
    Cost: O(points) without wrap objects; with W of them, up to 8 passes of W wraps over every segment."""

    points: PathPoints
    wraps: tuple = ()

    @classmethod
    def fixed(cls, bodies, stations) -> "GeometryPath":
        """A path through points fixed on bodies: ``bodies`` (n >= 2,) indices, ``stations`` (n, 3) in each body (m)."""
        return cls(PathPoints.fixed(bodies, stations))

    def depends_on_q(self) -> bool:
        return any(self.points.moving)

    def calc_current_path(self, R_GB, p_GB, q) -> CurrentPath:
        """OpenSim's current path: active points and tangent points in G (jaxbody._dynamics.paths.wrapping)."""
        P = self.points.calc_locations_in_ground(R_GB, p_GB, q)
        active = self.points.calc_active(q)
        path = initial_path(P, self.points.bodies, active, len(self.wraps))
        return apply_wrap_objects(path, self.wraps, active, R_GB, p_GB)

    def calc_length_from_poses(self, R_GB, p_GB, q) -> jnp.ndarray:
        return path_length(self.calc_current_path(R_GB, p_GB, q))

    def calc_lengthening_speed(self, model, state) -> jnp.ndarray:
        """OpenSim's lengthening speed (m/s; see the module docstring). Needs Velocity. Cost: one length evaluation."""
        pos = state.position
        return self._speed_on(self.calc_current_path(pos.R_GB, pos.p_GB, state.q), state)

    def calc_tension_forces(self, model, state, tension):
        """OpenSim's path forces (GeometryPath::produceForces) of ``tension`` (N): body forces (nbodies, 2, 3) at Bo
        in G and mobility forces (nu,). Needs Position. Cost: one length evaluation."""
        pos = state.position
        return self._forces_on(self.calc_current_path(pos.R_GB, pos.p_GB, state.q), model, state, tension)

    def calc_length_and_lengthening_speed(self, model, state):
        """Length (m) and OpenSim's lengthening speed (m/s) on one current path. Needs Velocity. Cost: one
        length evaluation."""
        pos = state.position
        path = self.calc_current_path(pos.R_GB, pos.p_GB, state.q)
        return path_length(path), self._speed_on(path, state)

    def calc_forces_of_tension(self, model, state, tension_of):
        """Length, speed and the forces of ``tension_of(length, speed) -> (tension, aux)`` on one current path
        (Path.calc_forces_of_tension): the wrap objects are traced and evaluated once, not three times. Needs
        Velocity. Cost: one length evaluation."""
        pos = state.position
        path = self.calc_current_path(pos.R_GB, pos.p_GB, state.q)
        tension, aux = tension_of(path_length(path), self._speed_on(path, state))
        return (*self._forces_on(path, model, state, tension), aux)

    def _speed_on(self, path: CurrentPath, state) -> jnp.ndarray:
        pos, vel = state.position, state.velocity
        station_dot = None
        if self.depends_on_q():
            _, station_dot = jax.jvp(self.points.calc_stations, (state.q,), (vel.qdot,))
        return lengthening_speed(path, entry_velocities(path, pos, vel, station_dot))

    def _forces_on(self, path: CurrentPath, model, state, tension):
        pos = state.position
        body_forces, F = tension_forces(path, pos, model.topology.nbodies, tension)
        if not self.depends_on_q():
            return body_forces, jnp.zeros_like(state.u, dtype=F.dtype)
        f_q = moving_point_q_forces(path.point, path.body, pos, F, self.points.calc_station_derivatives(state.q),
                                    moving_x_coordinates(self.points), state.q.shape[0])
        return body_forces, q_forces_to_mobility(model, state, f_q)
