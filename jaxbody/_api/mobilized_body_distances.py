"""Distances between points on two MobilizedBodies and points moving on bodies, as a mixin of MobilizedBody.

Station-to-station distance and its first two time derivatives (Simbody's operators), and the operators
Simbody leaves unimplemented for points that move on their bodies
(``calc_body_moving_point_velocity_in_body``, ``calc_body_moving_point_acceleration_in_body``,
``calc_moving_point_to_point_distance_time_derivative``,
``calc_moving_point_to_point_distance_2nd_time_derivative``).

Conventions (Simbody's): B is this body, A another body, G Ground. Locations are stations in their
body's frame (m); a moving point's velocity and acceleration are the time derivatives of its location
taken in, and expressed in, its body's frame (m/s, m/s^2). Distances are m, their rates m/s and m/s^2;
where the points coincide (or do not separate) the derivatives follow Simbody's conventions.
``@stage_operator(stage)`` states the stage each needs (StageViolation while tracing otherwise).
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._api.stage_operator import stage_operator
from jaxbody._dynamics import relative_kinematics
from jaxbody._dynamics.state import State
from jaxbody._math import spatial
from jaxbody._typing import Stage


class MobilizedBodyDistances:
    """Mixin with point-to-point distances and moving-point operators; uses ``self.index`` and ``self.matter``."""

    def _is_same(self, other) -> bool:
        return other is self or (getattr(other, "matter", None) is self.matter and other.index == self.index)

    # ------------------------------------------------------------------------------------
    # High-level operators: distances between stations

    # No stage in the decorator: when A is B the distance needs none; otherwise find_station_location_in_ground
    # checks Position.
    @stage_operator()
    def calc_station_to_station_distance(self, state: State, location_on_B, body_A, location_on_A):
        """|p_GPA - p_GPB| (m) for station PB of B and PA of A; a State realized to Position unless A is B."""
        if self._is_same(body_A):
            return spatial.safe_norm(jnp.asarray(location_on_A) - jnp.asarray(location_on_B))
        r = body_A.find_station_location_in_ground(state, location_on_A) - self.find_station_location_in_ground(state, location_on_B)
        return spatial.safe_norm(r)

    @stage_operator(Stage.Velocity)
    def calc_station_to_station_distance_time_derivative(self, state: State, location_on_B, body_A, location_on_A):
        """d/dt of the station-to-station distance (m/s); the relative speed when coincident."""
        if self._is_same(body_A):
            return jnp.zeros((), state.q.dtype)
        rB, vB = self.find_station_location_and_velocity_in_ground(state, location_on_B)
        rA, vA = body_A.find_station_location_and_velocity_in_ground(state, location_on_A)
        return relative_kinematics.distance_rate(rA - rB, vA - vB)

    @stage_operator(Stage.Acceleration)
    def calc_station_to_station_distance_2nd_time_derivative(self, state: State, location_on_B, body_A, location_on_A):
        """d^2/dt^2 of the station-to-station distance (m/s^2), Simbody's conventions."""
        if self._is_same(body_A):
            return jnp.zeros((), state.q.dtype)
        rB, vB, aB = self.find_station_location_velocity_and_acceleration_in_ground(state, location_on_B)
        rA, vA, aA = body_A.find_station_location_velocity_and_acceleration_in_ground(state, location_on_A)
        return relative_kinematics.distance_acceleration(rA - rB, vA - vB, aA - aB)

    # ------------------------------------------------------------------------------------
    # High-level operators: points moving on bodies (unimplemented in Simbody)

    def _moving_point_in_ground(self, state, location_B, velocity_B, acceleration_B=None):
        """Location, velocity (and acceleration) in G of a point P moving on B.

        ``velocity_B``/``acceleration_B`` are d/dt and d^2/dt^2 of p_BP taken in B, expressed in B.
        The caller checks the stage (Velocity, or Acceleration when ``acceleration_B`` is given).
        """
        R = state.position.R_GB[self.index]
        r = spatial.matvec(R, jnp.asarray(location_B))
        vrel = spatial.matvec(R, jnp.asarray(velocity_B))
        V = state.velocity.V_GB[self.index]
        p = state.position.p_GB[self.index] + r
        v = relative_kinematics.moving_point_velocity(V, r, vrel)
        if acceleration_B is None:
            return p, v
        arel = spatial.matvec(R, jnp.asarray(acceleration_B))
        return p, v, relative_kinematics.moving_point_acceleration(state.acceleration.A_GB[self.index], V[0], r, vrel,
                                                                   arel)

    @stage_operator(Stage.Velocity)
    def calc_body_moving_point_velocity_in_body(self, state: State, location_on_B, velocity_on_B, in_body_A):
        """Velocity in A, expressed in A, of a point P moving on B (3,).

        P is at ``location_on_B`` (p_BP in B) with velocity ``velocity_on_B`` taken in B and
        expressed in B: ``v_AP = v_AS + R_AB v_rel``, S the station of B coincident with P.
        """
        v_AS = self.find_station_velocity_in_another_body(state, location_on_B, in_body_A)
        return v_AS + self.express_vector_in_another_body_frame(state, velocity_on_B, in_body_A)

    @stage_operator(Stage.Acceleration)
    def calc_body_moving_point_acceleration_in_body(
        self, state: State, location_on_B, velocity_on_B, acceleration_on_B, in_body_A
    ):
        """Acceleration in A, expressed in A, of a point P moving (and accelerating) on B (3,).

        ``a_AP = a_AS + 2 w_AB x (R_AB v_rel) + R_AB a_rel`` where S is the station of B
        coincident with P and v_rel, a_rel are the point's velocity and acceleration taken in B,
        expressed in B."""
        A_AB = self.find_body_acceleration_in_another_body(state, in_body_A)
        w_AB = self.find_body_angular_velocity_in_another_body(state, in_body_A)
        p = self.express_vector_in_another_body_frame(state, location_on_B, in_body_A)
        v_rel = self.express_vector_in_another_body_frame(state, velocity_on_B, in_body_A)
        a_rel = self.express_vector_in_another_body_frame(state, acceleration_on_B, in_body_A)
        return relative_kinematics.moving_point_acceleration(A_AB, w_AB, p, v_rel, a_rel)

    @stage_operator(Stage.Velocity)
    def calc_moving_point_to_point_distance_time_derivative(
        self, state: State, location_on_B, velocity_on_B, body_A, location_on_A, velocity_on_A
    ):
        """d/dt |p_PB PA| (m/s) for points PB moving on B and PA moving on A.

        Locations are stations in their bodies' frames; velocities are their time derivatives
        taken in those frames. Relative speed when the points coincide."""
        rB, vB = self._moving_point_in_ground(state, location_on_B, velocity_on_B)
        rA, vA = body_A._moving_point_in_ground(state, location_on_A, velocity_on_A)
        return relative_kinematics.distance_rate(rA - rB, vA - vB)

    @stage_operator(Stage.Acceleration)
    def calc_moving_point_to_point_distance_2nd_time_derivative(
        self, state: State, location_on_B, velocity_on_B, acceleration_on_B,
        body_A, location_on_A, velocity_on_A, acceleration_on_A,
    ):
        """d^2/dt^2 |p_PB PA| (m/s^2) for points moving on B and A (see the first derivative).

        Accelerations are second time derivatives of the locations taken in their body frames.
        """
        rB, vB, aB = self._moving_point_in_ground(state, location_on_B, velocity_on_B, acceleration_on_B)
        rA, vA, aA = body_A._moving_point_in_ground(state, location_on_A, velocity_on_A, acceleration_on_A)
        return relative_kinematics.distance_acceleration(rA - rB, vA - vB, aA - aB)
