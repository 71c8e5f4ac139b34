"""Where a MobilizedBody is and how it moves: its frame B in Ground G and in another body A, its stations,
frames fixed on it, and vectors re-expressed between frames (Simbody's basic operators), as a mixin.

Conventions (Simbody's): B is this body, A another body, G Ground. A *station* is a point fixed on a body,
given by its position from the body origin expressed in the body frame (``p_BS``, m). Spatial vectors are
(2, 3) arrays (angular, linear). Velocities are m/s and rad/s, accelerations m/s^2 and rad/s^2.

Every method takes a realized State first (other MobilizedBody handles as arguments), reads its caches
(``state.position.R_GB`` and ``p_GB``, ``state.velocity.V_GB``, ``state.acceleration.A_GB``) and returns
arrays or Transforms, so all work under ``jit``, ``vmap`` and ``grad``. ``@stage_operator(stage)`` states the
stage each needs and raises StageViolation while tracing when the State is not realized that far.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._api.stage_operator import stage_operator
from jaxbody._dynamics import relative_kinematics
from jaxbody._dynamics.state import State
from jaxbody._math import spatial
from jaxbody._math.spatial import Rotation, Transform
from jaxbody._typing import Stage


def _as_transform(X):
    return Transform(X) if isinstance(X, Rotation) else X


class MobilizedBodyFrames:
    """Mixin with B's pose and motion in G and in another body; uses ``self.index`` of MobilizedBody."""

    # ------------------------------------------------------------------------------------
    # Realized results: B's frame in Ground

    @stage_operator(Stage.Position)
    def get_body_transform(self, state: State) -> Transform:
        """X_GB."""
        pos = state.position
        return Transform(pos.R_GB[self.index], pos.p_GB[self.index])

    @stage_operator(Stage.Position)
    def get_body_rotation(self, state: State):
        return self.get_body_transform(state).R

    @stage_operator(Stage.Position)
    def get_body_origin_location(self, state: State):
        return self.get_body_transform(state).p

    @stage_operator(Stage.Velocity)
    def get_body_velocity(self, state: State):
        """V_GB = (w_GB, v_GBo) in G, shape (2, 3)."""
        return state.velocity.V_GB[self.index]

    @stage_operator(Stage.Velocity)
    def get_body_angular_velocity(self, state: State):
        return self.get_body_velocity(state)[0]

    @stage_operator(Stage.Velocity)
    def get_body_origin_velocity(self, state: State):
        return self.get_body_velocity(state)[1]

    @stage_operator(Stage.Acceleration)
    def get_body_acceleration(self, state: State):
        """A_GB = (alpha, a of Bo) in G, shape (2, 3)."""
        return state.acceleration.A_GB[self.index]

    @stage_operator(Stage.Acceleration)
    def get_body_angular_acceleration(self, state: State):
        return self.get_body_acceleration(state)[0]

    @stage_operator(Stage.Acceleration)
    def get_body_origin_acceleration(self, state: State):
        return self.get_body_acceleration(state)[1]

    # ------------------------------------------------------------------------------------
    # Basic operators: body frames relative to another body

    @stage_operator(Stage.Position)
    def find_body_transform_in_another_body(self, state: State, in_body_A) -> Transform:
        """X_AB = X_AG X_GB."""
        pos, a, b = state.position, in_body_A.index, self.index
        R_AG, p_AG = spatial.invert(pos.R_GB[a], pos.p_GB[a])
        R, p = spatial.compose(R_AG, p_AG, pos.R_GB[b], pos.p_GB[b])
        return Transform(R, p)

    @stage_operator(Stage.Position)
    def find_body_rotation_in_another_body(self, state: State, in_body_A):
        """R_AB = R_AG R_GB, (3, 3)."""
        R_GB = state.position.R_GB
        return spatial.tmatmul(R_GB[in_body_A.index], R_GB[self.index])

    @stage_operator(Stage.Position)
    def find_body_origin_location_in_another_body(self, state: State, to_body_A):
        """Station of A coincident with Bo: p_ABo in A, (3,)."""
        return to_body_A.find_station_at_ground_point(state, state.position.p_GB[self.index])

    @stage_operator(Stage.Velocity)
    def find_body_velocity_in_another_body(self, state: State, in_body_A):
        """V_AB (2, 3): angular velocity of B in A and velocity of Bo in A, expressed in A."""
        pos, V, a, b = state.position, state.velocity.V_GB, in_body_A.index, self.index
        return relative_kinematics.relative_velocity(pos.R_GB[a], pos.p_GB[a], V[a], pos.p_GB[b], V[b])

    @stage_operator(Stage.Velocity)
    def find_body_angular_velocity_in_another_body(self, state: State, in_body_A):
        """w_AB expressed in A, (3,) rad/s."""
        V_GB = state.velocity.V_GB
        w_AB_G = V_GB[self.index][0] - V_GB[in_body_A.index][0]
        return in_body_A.express_ground_vector_in_body_frame(state, w_AB_G)

    @stage_operator(Stage.Velocity)
    def find_body_origin_velocity_in_another_body(self, state: State, in_body_A):
        """Velocity of Bo in A, expressed in A, (3,) m/s."""
        return self.find_body_velocity_in_another_body(state, in_body_A)[1]

    @stage_operator(Stage.Acceleration)
    def find_body_acceleration_in_another_body(self, state: State, in_body_A):
        """A_AB (2, 3): angular acceleration of B in A and acceleration of Bo in A, in A."""
        pos, V, A, a, b = state.position, state.velocity.V_GB, state.acceleration.A_GB, in_body_A.index, self.index
        return relative_kinematics.relative_acceleration(pos.R_GB[a], pos.p_GB[a], V[a], A[a], pos.p_GB[b], V[b], A[b])

    @stage_operator(Stage.Acceleration)
    def find_body_angular_acceleration_in_another_body(self, state: State, in_body_A):
        """Angular acceleration of B in A (derivative taken in A), expressed in A, (3,)."""
        V, A, a, b = state.velocity.V_GB, state.acceleration.A_GB, in_body_A.index, self.index
        return relative_kinematics.relative_angular_acceleration(state.position.R_GB[a], V[a], A[a], V[b], A[b])

    @stage_operator(Stage.Acceleration)
    def find_body_origin_acceleration_in_another_body(self, state: State, in_body_A):
        """Acceleration of Bo in A, expressed in A, (3,)."""
        return self.find_body_acceleration_in_another_body(state, in_body_A)[1]

    # ------------------------------------------------------------------------------------
    # Basic operators: stations

    @stage_operator(Stage.Position)
    def find_station_location_in_ground(self, state: State, station_B):
        """p_GS = X_GB p_BS, (3,)."""
        pos = state.position
        return pos.p_GB[self.index] + spatial.matvec(pos.R_GB[self.index], jnp.asarray(station_B))

    @stage_operator(Stage.Position)
    def find_station_location_in_another_body(self, state: State, station_B, to_body_A):
        """p_AS = X_AG X_GB p_BS: the station of A coincident with station S of B, (3,)."""
        return to_body_A.find_station_at_ground_point(state, self.find_station_location_in_ground(state, station_B))

    @stage_operator(Stage.Velocity)
    def find_station_velocity_in_ground(self, state: State, station_B):
        """Velocity of station S of B in G, expressed in G: v + w x r, (3,)."""
        r = self.express_vector_in_ground_frame(state, station_B)
        return relative_kinematics.station_velocity(state.velocity.V_GB[self.index], r)

    @stage_operator(Stage.Velocity)
    def find_station_velocity_in_another_body(self, state: State, station_B, in_body_A):
        """Velocity of station S of B measured in A, expressed in A, (3,)."""
        V_AB = self.find_body_velocity_in_another_body(state, in_body_A)
        p_BS_A = self.express_vector_in_another_body_frame(state, station_B, in_body_A)
        return relative_kinematics.station_velocity(V_AB, p_BS_A)

    @stage_operator(Stage.Acceleration)
    def find_station_acceleration_in_ground(self, state: State, station_B):
        """Acceleration of station S of B in G, in G: a + b x r + w x (w x r), (3,)."""
        r = self.express_vector_in_ground_frame(state, station_B)
        return relative_kinematics.station_acceleration(state.acceleration.A_GB[self.index],
                                                        state.velocity.V_GB[self.index][0], r)

    @stage_operator(Stage.Acceleration)
    def find_station_acceleration_in_another_body(self, state: State, station_B, in_body_A):
        """Acceleration of station S of B measured in A, expressed in A, (3,)."""
        w_AB = self.find_body_angular_velocity_in_another_body(state, in_body_A)
        A_AB = self.find_body_acceleration_in_another_body(state, in_body_A)
        p = self.express_vector_in_another_body_frame(state, station_B, in_body_A)
        return relative_kinematics.station_acceleration(A_AB, w_AB, p)

    @stage_operator(Stage.Velocity)
    def find_station_location_and_velocity_in_ground(self, state: State, station_B):
        """(p_GS, v_GS), each (3,) in G."""
        pos, V = state.position, state.velocity.V_GB[self.index]
        r = spatial.matvec(pos.R_GB[self.index], jnp.asarray(station_B))
        return pos.p_GB[self.index] + r, relative_kinematics.station_velocity(V, r)

    @stage_operator(Stage.Acceleration)
    def find_station_location_velocity_and_acceleration_in_ground(self, state: State, station_B):
        """(p_GS, v_GS, a_GS), each (3,) in G."""
        pos, V, A = state.position, state.velocity.V_GB[self.index], state.acceleration.A_GB[self.index]
        r = spatial.matvec(pos.R_GB[self.index], jnp.asarray(station_B))
        return (pos.p_GB[self.index] + r, relative_kinematics.station_velocity(V, r),
                relative_kinematics.station_acceleration(A, V[0], r))

    @stage_operator(Stage.Position)
    def find_mass_center_location_in_ground(self, state: State):
        """p_GBc (3,) from the Position cache."""
        return state.position.p_GBc[self.index]

    @stage_operator(Stage.Position)
    def find_mass_center_location_in_another_body(self, state: State, to_body_A):
        """Station of A coincident with B's mass center, (3,) in A."""
        return to_body_A.find_station_at_ground_point(state, self.find_mass_center_location_in_ground(state))

    @stage_operator(Stage.Position)
    def find_station_at_ground_point(self, state: State, location_G):
        """p_BS = X_BG p_GS: the station of B at a Ground point, (3,)."""
        pos = state.position
        return spatial.mattvec(pos.R_GB[self.index], jnp.asarray(location_G) - pos.p_GB[self.index])

    @stage_operator(Stage.Position)
    def find_station_at_another_body_station(self, state: State, from_body_A, station_A):
        """Station of B coincident with station ``station_A`` of A, (3,) in B."""
        return from_body_A.find_station_location_in_another_body(state, station_A, self)

    @stage_operator(Stage.Position)
    def find_station_at_another_body_origin(self, state: State, from_body_A):
        """Station of B coincident with A's origin, (3,) in B."""
        return self.find_station_at_ground_point(state, state.position.p_GB[from_body_A.index])

    @stage_operator(Stage.Position)
    def find_station_at_another_body_mass_center(self, state: State, from_body_A):
        """Station of B coincident with A's mass center, (3,) in B. (Simbody's inline body passes B's own mass-center station to A by mistake; this
        follows the documented meaning.)
        """
        return self.find_station_at_ground_point(state, from_body_A.find_mass_center_location_in_ground(state))

    # ------------------------------------------------------------------------------------
    # Basic operators: frames fixed on B (``frame_B``: a Transform X_BF, or a Rotation R_BF)

    @stage_operator(Stage.Position)
    def find_frame_transform_in_ground(self, state: State, frame_B) -> Transform:
        """X_GF = X_GB X_BF for a frame F fixed on B (``frame_B`` a Transform X_BF)."""
        frame_B = _as_transform(frame_B)
        pos = state.position
        R, p = spatial.compose(pos.R_GB[self.index], pos.p_GB[self.index], frame_B.R, frame_B.p)
        return Transform(R, p)

    @stage_operator(Stage.Velocity)
    def find_frame_velocity_in_ground(self, state: State, frame_B):
        """V_GF (2, 3): w_GB and the velocity of F's origin, in G."""
        frame_B = _as_transform(frame_B)
        w = state.velocity.V_GB[self.index][0]
        return jnp.stack([w, self.find_station_velocity_in_ground(state, frame_B.p)])

    @stage_operator(Stage.Acceleration)
    def find_frame_acceleration_in_ground(self, state: State, frame_B):
        """A_GF (2, 3): b_GB and the acceleration of F's origin, in G."""
        frame_B = _as_transform(frame_B)
        b = state.acceleration.A_GB[self.index][0]
        return jnp.stack([b, self.find_station_acceleration_in_ground(state, frame_B.p)])

    # ------------------------------------------------------------------------------------
    # Basic operators: re-expressing vectors

    @stage_operator(Stage.Position)
    def express_vector_in_ground_frame(self, state: State, vector_B):
        """R_GB v_B, (3,)."""
        return spatial.matvec(state.position.R_GB[self.index], jnp.asarray(vector_B))

    @stage_operator(Stage.Position)
    def express_ground_vector_in_body_frame(self, state: State, vector_G):
        """R_BG v_G, (3,)."""
        return spatial.mattvec(state.position.R_GB[self.index], jnp.asarray(vector_G))

    @stage_operator(Stage.Position)
    def express_vector_in_another_body_frame(self, state: State, vector_B, in_body_A):
        """R_AB v_B, (3,)."""
        return in_body_A.express_ground_vector_in_body_frame(state, self.express_vector_in_ground_frame(state, vector_B))
