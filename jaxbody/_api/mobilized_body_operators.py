"""Simbody's MobilizedBody basic and high-level operators, snake_case, as a mixin of MobilizedBody.

Every method takes a realized State first (other MobilizedBody handles as
arguments), reads the State's caches, and returns arrays or Transforms; nothing
is mutated, so all of them work under ``jit``, ``vmap`` and ``grad``. The
stage each needs is checked with ``require`` while tracing (StageViolation).

Conventions (Simbody's): B is this body, A another body, G Ground. A *station*
is a point fixed on a body given by its position from the body origin,
expressed in the body frame (``p_BS``, m). Spatial vectors are (2, 3) arrays
(angular, linear). Velocities are m/s and rad/s, accelerations m/s^2 and
rad/s^2, forces N, torques N m, masses kg, inertias kg m^2.

Mass properties. Position-stage (and later) operators read the body's mass
properties from the State's Position cache (``Mk_G``, ``p_GBc``), so they
always agree with the model the State was realized with. The Instance-stage
getters (``get_body_mass_properties`` and friends) have no cache to read: they
take an optional ``model`` and read ``model.parameters``; without one they
return the construction values of the Body.

Methods Simbody leaves unimplemented are implemented here:
``get_mobilizer_acceleration`` and the four moving-point operators
(``calc_body_moving_point_velocity_in_body``,
``calc_body_moving_point_acceleration_in_body``,
``calc_moving_point_to_point_distance_time_derivative``,
``calc_moving_point_to_point_distance_2nd_time_derivative``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxbody._math import spatial
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument
from jaxbody._math.spatial import Rotation, Transform
from jaxbody._dynamics.state import State, require


class MassPropertiesArrays(NamedTuple):
    """Traceable mass properties: ``mass`` () kg; ``com`` (3,) mass center measured from the
    body origin Bo; ``inertia`` (3, 3) about Bo. ``com`` and ``inertia`` are expressed in the
    frame the producing method names (B, G or A); a rotation only, never a shift of Bo."""

    mass: jnp.ndarray
    com: jnp.ndarray
    inertia: jnp.ndarray


def _point_inertia(mass, p):
    """``m (|p|^2 1 - p p^T)``: inertia about O of a point mass at p (measured from O)."""
    eye = jnp.eye(3, dtype=p.dtype)
    return mass * (jnp.dot(p, p) * eye - jnp.outer(p, p))


def _safe_div(x, d):
    return x / jnp.where(d == 0, 1.0, d)


def _distance_rate(r, v):
    """d/dt |r| given r and v = dr/dt; Simbody's convention |v| when r = 0."""
    d = spatial.safe_norm(r)
    return jnp.where(d == 0, spatial.safe_norm(v), _safe_div(jnp.dot(v, r), d))


def _distance_accel(r, v, a):
    """d^2/dt^2 |r| given r, v = dr/dt, a = dv/dt; Simbody's conventions at r = 0 and v = 0."""
    d = spatial.safe_norm(r)
    s = spatial.safe_norm(v)
    coincident = jnp.where(s == 0, spatial.safe_norm(a), _safe_div(jnp.dot(a, v), s))
    u = _safe_div(r, d)
    vp = v - jnp.dot(v, u) * u
    separated = jnp.dot(a, u) + _safe_div(jnp.dot(vp, v), d)
    return jnp.where(d == 0, coincident, separated)


def _as_transform(X):
    return Transform(X) if isinstance(X, Rotation) else X


def _relative_acceleration(R_GA, p_GA, V_GA, A_GA, p_GB, V_GB, A_GB):
    """Simbody's findRelativeAcceleration: A_AB (2, 3), B's frame measured and expressed in A."""
    w_GA, v_GA = V_GA[0], V_GA[1]
    b_GA, a_GA = A_GA[0], A_GA[1]
    p = p_GB - p_GA  # Ao -> Bo in G
    p_dot = V_GB[1] - v_GA  # d/dt in G
    p_ddot = A_GB[1] - a_GA
    w_AB_G = V_GB[0] - w_GA
    b_AB_G = (A_GB[0] - b_GA) - jnp.cross(w_GA, w_AB_G)  # derivative taken in A
    v_AB_G = p_dot - jnp.cross(w_GA, p)
    a_AB_G = (
        p_ddot
        - jnp.cross(b_GA, p)
        - 2.0 * jnp.cross(w_GA, v_AB_G)
        - jnp.cross(w_GA, jnp.cross(w_GA, p))
    )
    return spatial.mattvec(R_GA, jnp.stack([b_AB_G, a_AB_G]))


class MobilizedBodyOperators:
    """Mixin with Simbody's MobilizedBody operators; see the module docstring for conventions.

    Uses ``self.index``, ``self.q_start``, ``self.u_start``, ``self.body``, ``self.X_PF``,
    ``self.X_BM``, ``self.params``, ``self.mobilizer`` and ``self.parent`` of MobilizedBody.
    """

    # ------------------------------------------------------------------------------------
    # cache access (private)

    def _pos(self, state: State, op: str):
        return require(state, Stage.Position, op).position

    def _vel(self, state: State, op: str):
        return require(state, Stage.Velocity, op).velocity

    def _acc(self, state: State, op: str):
        return require(state, Stage.Acceleration, op).acceleration

    def _R_GB(self, state, op):
        return self._pos(state, op).R_GB[self.index]

    def _p_GB(self, state, op):
        return self._pos(state, op).p_GB[self.index]

    def _V_GB(self, state, op):
        return self._vel(state, op).V_GB[self.index]

    def _A_GB(self, state, op):
        return self._acc(state, op).A_GB[self.index]

    def _is_same(self, other) -> bool:
        return other is self or (getattr(other, "matter", None) is self.matter and other.index == self.index)

    def _mobilizer_for(self, model=None):
        """The mobilizer object: from ``model``'s topology when given (its Euler/quaternion mode)."""
        if model is None:
            return self.mobilizer
        mobs = model.topology.mobilizers
        if self.index >= len(mobs) or mobs[self.index].with_euler(False) != self.mobilizer_prototype:
            raise InvalidArgument(f"{self.name}: the model given does not contain this mobilized body")
        return mobs[self.index]

    def _mobilizer_params(self, model=None):
        """This mobilizer's parameters (n_params,): model's leaves when given, else construction values."""
        n = self.mobilizer_prototype.n_params
        if model is None or n == 0:
            return jnp.asarray(self.params, dtype=float).reshape(n)
        self._mobilizer_for(model)
        for i, g in enumerate(model.topology.groups):
            if self.index in g.bodies:
                return model.parameters.mobilizer_params[i][g.bodies.index(self.index)]
        raise InvalidArgument(f"{self.name}: the model given does not contain this mobilized body")

    # ------------------------------------------------------------------------------------
    # State access: derivatives of q and u

    def get_one_q_dot(self, state: State, which: int):
        """qdot of this mobilizer's q ``which`` (0..nq-1). Requires Velocity."""
        self._check_q_index(which, state)
        return self._vel(state, "get_one_q_dot").qdot[self.q_start + which]

    def get_q_dot_as_vector(self, state: State):
        """qdot of this mobilizer's q in use, (nq,). Requires Velocity."""
        return self._vel(state, "get_q_dot_as_vector").qdot[self._q_slice(state)]

    def get_one_u_dot(self, state: State, which: int):
        """udot of this mobilizer's u ``which`` (0..nu-1). Requires Acceleration."""
        self._check_u_index(which)
        return self._acc(state, "get_one_u_dot").udot[self.u_start + which]

    def get_u_dot_as_vector(self, state: State):
        """udot of this mobilizer, (nu,). Requires Acceleration."""
        return self._acc(state, "get_u_dot_as_vector").udot[self._u_slice()]

    def get_one_q_dot_dot(self, state: State, which: int):
        """qdotdot of this mobilizer's q ``which``. Requires Acceleration."""
        self._check_q_index(which, state)
        return self._acc(state, "get_one_q_dot_dot").qdotdot[self.q_start + which]

    def get_q_dot_dot_as_vector(self, state: State):
        """qdotdot of this mobilizer's q in use, (nq,). Requires Acceleration."""
        return self._acc(state, "get_q_dot_dot_as_vector").qdotdot[self._q_slice(state)]

    def get_one_from_q_partition(self, state: State, which: int, qlike):
        """Element ``which`` of this mobilizer's slots of a q-like (nq_total,) vector."""
        self._check_q_index(which, state)
        return jnp.asarray(qlike)[self.q_start + which]

    def get_one_from_u_partition(self, state: State, which: int, ulike):
        """Element ``which`` of this mobilizer's slots of a u-like (nu_total,) vector."""
        self._check_u_index(which)
        return jnp.asarray(ulike)[self.u_start + which]

    # ------------------------------------------------------------------------------------
    # State access: mobilizer, frames, hinge matrix

    def get_mobilizer_acceleration(self, state: State, model=None):
        """A_FM (2, 3): acceleration of M in F, measured and expressed in F (Simbody's TODO).

        ``A_FM = d/dt V_FM = H_FM udot + HDot_FM u`` (linear part at Mo). H_FM comes from the
        Position cache; HDot_FM is recomputed by the mobilizer. Screw and Ellipsoid need their
        parameters: pass ``model`` to use the model's (else the construction values are used);
        ``model`` also fixes the Euler/quaternion mode. Requires Acceleration.
        """
        state = require(state, Stage.Acceleration, "get_mobilizer_acceleration")
        mob = self._mobilizer_for(model)
        nu = mob.nu
        dtype = state.u.dtype
        if nu == 0:
            return jnp.zeros((2, 3), dtype)
        q = state.q[self.q_start : self.q_start + mob.nq_alloc]
        u = state.u[self.u_start : self.u_start + nu]
        udot = state.acceleration.udot[self.u_start : self.u_start + nu]
        H = state.position.H_FM[self.index][:, :nu]
        params = self._mobilizer_params(model).astype(dtype)
        HDot = mob.calc_HDot_FM(q[None], u[None], params[None])[0]
        return spatial.unflat(spatial.matvec(H, udot) + spatial.matvec(HDot, u))

    def get_inboard_frame(self, state: State | None = None, model=None) -> Transform:
        """X_PF, frame F on the parent P. From ``model.parameters`` when given, else the default."""
        if model is None:
            return Transform(*self.X_PF)
        self._mobilizer_for(model)
        return Transform(model.parameters.R_PF[self.index], model.parameters.p_PF[self.index])

    def get_outboard_frame(self, state: State | None = None, model=None) -> Transform:
        """X_BM, frame M on this body B. From ``model.parameters`` when given, else the default."""
        if model is None:
            return Transform(*self.X_BM)
        self._mobilizer_for(model)
        return Transform(model.parameters.R_BM[self.index], model.parameters.p_BM[self.index])

    def get_h_col(self, state: State, which: int):
        """Column ``which`` of H_PB_G as a (2, 3) spatial vector: V_PB_G = H u (in G, at Bo). Requires Position."""
        self._check_u_index(which)
        return self._pos(state, "get_h_col").H_PB_G[self.index][:, which].reshape(2, 3)

    def get_h_fm_col(self, state: State, which: int):
        """Column ``which`` of H_FM as a (2, 3) spatial vector: V_FM = H_FM u (in F, at Mo). Requires Position."""
        self._check_u_index(which)
        return self._pos(state, "get_h_fm_col").H_FM[self.index][:, which].reshape(2, 3)

    # ------------------------------------------------------------------------------------
    # State access: mass properties (Instance stage; model parameters or construction values)

    def get_body_mass_properties(self, state: State | None = None, model=None) -> MassPropertiesArrays:
        """(mass, com p_BBc in B, inertia about Bo in B) as arrays.

        From ``model.parameters`` when ``model`` is given, else the Body's construction values.
        """
        if model is None:
            mp = self.body.mass_properties
            return MassPropertiesArrays(jnp.asarray(mp.mass), jnp.asarray(mp.com), jnp.asarray(mp.inertia.matrix))
        self._mobilizer_for(model)
        prm = model.parameters
        return MassPropertiesArrays(prm.mass[self.index], prm.com_B[self.index], prm.inertia_Bo_B[self.index])

    def get_body_mass(self, state: State | None = None, model=None):
        """Mass (kg), scalar; see get_body_mass_properties."""
        return self.get_body_mass_properties(state, model).mass

    def get_body_mass_center_station(self, state: State | None = None, model=None):
        """Mass center station p_BBc (3,) in B; see get_body_mass_properties."""
        return self.get_body_mass_properties(state, model).com

    def get_body_unit_inertia_about_body_origin(self, state: State | None = None, model=None):
        """Inertia about Bo in B divided by the mass (m^2), (3, 3); zero for a massless body."""
        m, _, I = self.get_body_mass_properties(state, model)
        return _safe_div(I, m)

    def calc_body_central_inertia(self, state: State | None = None, model=None):
        """Inertia about the mass center Bc, expressed in B (3, 3); see get_body_mass_properties."""
        m, c, I = self.get_body_mass_properties(state, model)
        return I - _point_inertia(m, c)

    # ------------------------------------------------------------------------------------
    # Basic operators: body frames relative to another body

    def find_body_transform_in_another_body(self, state: State, in_body_A) -> Transform:
        """X_AB = X_AG X_GB. Requires Position."""
        op = "find_body_transform_in_another_body"
        R_AG, p_AG = spatial.invert(in_body_A._R_GB(state, op), in_body_A._p_GB(state, op))
        R, p = spatial.compose(R_AG, p_AG, self._R_GB(state, op), self._p_GB(state, op))
        return Transform(R, p)

    def find_body_rotation_in_another_body(self, state: State, in_body_A):
        """R_AB = R_AG R_GB, (3, 3). Requires Position."""
        op = "find_body_rotation_in_another_body"
        return spatial.tmatmul(in_body_A._R_GB(state, op), self._R_GB(state, op))

    def find_body_origin_location_in_another_body(self, state: State, to_body_A):
        """Station of A coincident with Bo: p_ABo in A, (3,). Requires Position."""
        return to_body_A.find_station_at_ground_point(state, self._p_GB(state, "find_body_origin_location_in_another_body"))

    def find_body_velocity_in_another_body(self, state: State, in_body_A):
        """V_AB (2, 3): angular velocity of B in A and velocity of Bo in A, expressed in A. Requires Velocity."""
        op = "find_body_velocity_in_another_body"
        V_GB, V_GA = self._V_GB(state, op), in_body_A._V_GB(state, op)
        w_AB_G = V_GB[0] - V_GA[0]
        p_AB_G = self._p_GB(state, op) - in_body_A._p_GB(state, op)
        v_AB_G = (V_GB[1] - V_GA[1]) - jnp.cross(V_GA[0], p_AB_G)
        return spatial.mattvec(in_body_A._R_GB(state, op), jnp.stack([w_AB_G, v_AB_G]))

    def find_body_angular_velocity_in_another_body(self, state: State, in_body_A):
        """w_AB expressed in A, (3,) rad/s. Requires Velocity."""
        op = "find_body_angular_velocity_in_another_body"
        w_AB_G = self._V_GB(state, op)[0] - in_body_A._V_GB(state, op)[0]
        return in_body_A.express_ground_vector_in_body_frame(state, w_AB_G)

    def find_body_origin_velocity_in_another_body(self, state: State, in_body_A):
        """Velocity of Bo in A, expressed in A, (3,) m/s. Requires Velocity."""
        return self.find_body_velocity_in_another_body(state, in_body_A)[1]

    def find_body_acceleration_in_another_body(self, state: State, in_body_A):
        """A_AB (2, 3): angular acceleration of B in A and acceleration of Bo in A, in A. Requires Acceleration."""
        op = "find_body_acceleration_in_another_body"
        return _relative_acceleration(
            in_body_A._R_GB(state, op), in_body_A._p_GB(state, op), in_body_A._V_GB(state, op), in_body_A._A_GB(state, op),
            self._p_GB(state, op), self._V_GB(state, op), self._A_GB(state, op),
        )

    def find_body_angular_acceleration_in_another_body(self, state: State, in_body_A):
        """Angular acceleration of B in A (derivative taken in A), expressed in A, (3,). Requires Acceleration."""
        op = "find_body_angular_acceleration_in_another_body"
        w_GA, w_GB = in_body_A._V_GB(state, op)[0], self._V_GB(state, op)[0]
        b_GA, b_GB = in_body_A._A_GB(state, op)[0], self._A_GB(state, op)[0]
        w_AB_G = w_GB - w_GA
        b_AB_G = (b_GB - b_GA) - jnp.cross(w_GA, w_AB_G)
        return spatial.mattvec(in_body_A._R_GB(state, op), b_AB_G)

    def find_body_origin_acceleration_in_another_body(self, state: State, in_body_A):
        """Acceleration of Bo in A, expressed in A, (3,). Requires Acceleration."""
        return self.find_body_acceleration_in_another_body(state, in_body_A)[1]

    # ------------------------------------------------------------------------------------
    # Basic operators: stations

    def find_station_location_in_ground(self, state: State, station_B):
        """p_GS = X_GB p_BS, (3,). Requires Position."""
        op = "find_station_location_in_ground"
        return self._p_GB(state, op) + spatial.matvec(self._R_GB(state, op), jnp.asarray(station_B))

    def find_station_location_in_another_body(self, state: State, station_B, to_body_A):
        """p_AS = X_AG X_GB p_BS: the station of A coincident with station S of B, (3,). Requires Position."""
        return to_body_A.find_station_at_ground_point(state, self.find_station_location_in_ground(state, station_B))

    def find_station_velocity_in_ground(self, state: State, station_B):
        """Velocity of station S of B in G, expressed in G: v + w x r, (3,). Requires Velocity."""
        op = "find_station_velocity_in_ground"
        V = self._V_GB(state, op)
        r = self.express_vector_in_ground_frame(state, station_B)
        return V[1] + jnp.cross(V[0], r)

    def find_station_velocity_in_another_body(self, state: State, station_B, in_body_A):
        """Velocity of station S of B measured in A, expressed in A, (3,). Requires Velocity."""
        V_AB = self.find_body_velocity_in_another_body(state, in_body_A)
        p_BS_A = self.express_vector_in_another_body_frame(state, station_B, in_body_A)
        return V_AB[1] + jnp.cross(V_AB[0], p_BS_A)

    def find_station_acceleration_in_ground(self, state: State, station_B):
        """Acceleration of station S of B in G, in G: a + b x r + w x (w x r), (3,). Requires Acceleration."""
        op = "find_station_acceleration_in_ground"
        w = self._V_GB(state, op)[0]
        A = self._A_GB(state, op)
        r = self.express_vector_in_ground_frame(state, station_B)
        return A[1] + jnp.cross(A[0], r) + jnp.cross(w, jnp.cross(w, r))

    def find_station_acceleration_in_another_body(self, state: State, station_B, in_body_A):
        """Acceleration of station S of B measured in A, expressed in A, (3,). Requires Acceleration."""
        w_AB = self.find_body_angular_velocity_in_another_body(state, in_body_A)
        A_AB = self.find_body_acceleration_in_another_body(state, in_body_A)
        p = self.express_vector_in_another_body_frame(state, station_B, in_body_A)
        return A_AB[1] + jnp.cross(A_AB[0], p) + jnp.cross(w_AB, jnp.cross(w_AB, p))

    def find_station_location_and_velocity_in_ground(self, state: State, station_B):
        """(p_GS, v_GS), each (3,) in G. Requires Velocity."""
        op = "find_station_location_and_velocity_in_ground"
        V = self._V_GB(state, op)
        r = spatial.matvec(self._R_GB(state, op), jnp.asarray(station_B))
        return self._p_GB(state, op) + r, V[1] + jnp.cross(V[0], r)

    def find_station_location_velocity_and_acceleration_in_ground(self, state: State, station_B):
        """(p_GS, v_GS, a_GS), each (3,) in G. Requires Acceleration."""
        op = "find_station_location_velocity_and_acceleration_in_ground"
        V, A = self._V_GB(state, op), self._A_GB(state, op)
        r = spatial.matvec(self._R_GB(state, op), jnp.asarray(station_B))
        w_x_r = jnp.cross(V[0], r)
        return self._p_GB(state, op) + r, V[1] + w_x_r, A[1] + jnp.cross(A[0], r) + jnp.cross(V[0], w_x_r)

    def find_mass_center_location_in_ground(self, state: State):
        """p_GBc (3,) from the Position cache. Requires Position."""
        return self._pos(state, "find_mass_center_location_in_ground").p_GBc[self.index]

    def find_mass_center_location_in_another_body(self, state: State, to_body_A):
        """Station of A coincident with B's mass center, (3,) in A. Requires Position."""
        return to_body_A.find_station_at_ground_point(state, self.find_mass_center_location_in_ground(state))

    def find_station_at_ground_point(self, state: State, location_G):
        """p_BS = X_BG p_GS: the station of B at a Ground point, (3,). Requires Position."""
        op = "find_station_at_ground_point"
        return spatial.mattvec(self._R_GB(state, op), jnp.asarray(location_G) - self._p_GB(state, op))

    def find_station_at_another_body_station(self, state: State, from_body_A, station_A):
        """Station of B coincident with station ``station_A`` of A, (3,) in B. Requires Position."""
        return from_body_A.find_station_location_in_another_body(state, station_A, self)

    def find_station_at_another_body_origin(self, state: State, from_body_A):
        """Station of B coincident with A's origin, (3,) in B. Requires Position."""
        return self.find_station_at_ground_point(state, from_body_A._p_GB(state, "find_station_at_another_body_origin"))

    def find_station_at_another_body_mass_center(self, state: State, from_body_A):
        """Station of B coincident with A's mass center, (3,) in B. Requires Position.

        (Simbody's inline body passes B's own mass-center station to A by mistake; this
        follows the documented meaning.)
        """
        return self.find_station_at_ground_point(state, from_body_A.find_mass_center_location_in_ground(state))

    # ------------------------------------------------------------------------------------
    # Basic operators: frames fixed on B (``frame_B``: a Transform X_BF, or a Rotation R_BF)

    def find_frame_transform_in_ground(self, state: State, frame_B) -> Transform:
        """X_GF = X_GB X_BF for a frame F fixed on B (``frame_B`` a Transform X_BF). Requires Position."""
        frame_B = _as_transform(frame_B)
        op = "find_frame_transform_in_ground"
        R, p = spatial.compose(self._R_GB(state, op), self._p_GB(state, op), frame_B.R, frame_B.p)
        return Transform(R, p)

    def find_frame_velocity_in_ground(self, state: State, frame_B):
        """V_GF (2, 3): w_GB and the velocity of F's origin, in G. Requires Velocity."""
        frame_B = _as_transform(frame_B)
        w = self._V_GB(state, "find_frame_velocity_in_ground")[0]
        return jnp.stack([w, self.find_station_velocity_in_ground(state, frame_B.p)])

    def find_frame_acceleration_in_ground(self, state: State, frame_B):
        """A_GF (2, 3): b_GB and the acceleration of F's origin, in G. Requires Acceleration."""
        frame_B = _as_transform(frame_B)
        b = self._A_GB(state, "find_frame_acceleration_in_ground")[0]
        return jnp.stack([b, self.find_station_acceleration_in_ground(state, frame_B.p)])

    # ------------------------------------------------------------------------------------
    # Basic operators: re-expressing vectors and mass properties

    def express_vector_in_ground_frame(self, state: State, vector_B):
        """R_GB v_B, (3,). Requires Position."""
        return spatial.matvec(self._R_GB(state, "express_vector_in_ground_frame"), jnp.asarray(vector_B))

    def express_ground_vector_in_body_frame(self, state: State, vector_G):
        """R_BG v_G, (3,). Requires Position."""
        return spatial.mattvec(self._R_GB(state, "express_ground_vector_in_body_frame"), jnp.asarray(vector_G))

    def express_vector_in_another_body_frame(self, state: State, vector_B, in_body_A):
        """R_AB v_B, (3,). Requires Position."""
        return in_body_A.express_ground_vector_in_body_frame(state, self.express_vector_in_ground_frame(state, vector_B))

    def _mass_properties_in_ground(self, state, op):
        pos = self._pos(state, op)
        Mk = pos.Mk_G[self.index]
        return MassPropertiesArrays(Mk[3, 3], pos.p_GBc[self.index] - pos.p_GB[self.index], Mk[:3, :3])

    def express_mass_properties_in_ground_frame(self, state: State) -> MassPropertiesArrays:
        """B's mass properties about Bo, re-expressed (not shifted) in G. Requires Position."""
        return self._mass_properties_in_ground(state, "express_mass_properties_in_ground_frame")

    def express_mass_properties_in_another_body_frame(self, state: State, in_body_A) -> MassPropertiesArrays:
        """B's mass properties about Bo, re-expressed (not shifted) in A. Requires Position."""
        op = "express_mass_properties_in_another_body_frame"
        m, c_G, I_G = self._mass_properties_in_ground(state, op)
        R_GA = in_body_A._R_GB(state, op)
        return MassPropertiesArrays(m, spatial.mattvec(R_GA, c_G), spatial.tmatmul(R_GA, spatial.matmul(I_G, R_GA)))

    # ------------------------------------------------------------------------------------
    # High-level operators: inertia and momentum

    def get_body_spatial_inertia_in_ground(self, state: State):
        """Spatial inertia Mk about Bo in G (6, 6), from the Position cache. Requires Position."""
        return self._pos(state, "get_body_spatial_inertia_in_ground").Mk_G[self.index]

    def calc_body_spatial_inertia_matrix_in_ground(self, state: State):
        """``[[I_Bo, [m c]x], [-[m c]x, m 1]]`` (6, 6) in G; Ground: diag(inf) as in Simbody. Requires Position."""
        if self.is_ground():
            return jnp.diag(jnp.full(6, jnp.inf, dtype=state.q.dtype))
        return self.get_body_spatial_inertia_in_ground(state)

    def calc_body_inertia_about_another_body_station(self, state: State, in_body_A, about_location_on_A):
        """Inertia of B about station PA of A, expressed in A (3, 3). Requires Position."""
        op = "calc_body_inertia_about_another_body_station"
        m, c_G, I_o_G = self._mass_properties_in_ground(state, op)
        p_GPA = in_body_A.find_station_location_in_ground(state, about_location_on_A)
        p_BoPA_G = p_GPA - self._p_GB(state, op)
        I_PA_G = I_o_G - _point_inertia(m, c_G) + _point_inertia(m, c_G - p_BoPA_G)
        R_GA = in_body_A._R_GB(state, op)
        return spatial.tmatmul(R_GA, spatial.matmul(I_PA_G, R_GA))

    def calc_body_momentum_about_body_origin_in_ground(self, state: State):
        """Mk_G V_GB (2, 3): (angular momentum about Bo, linear momentum) in G. Requires Velocity."""
        op = "calc_body_momentum_about_body_origin_in_ground"
        Mk = self._pos(state, op).Mk_G[self.index]
        return spatial.unflat(spatial.matvec(Mk, spatial.flat(self._V_GB(state, op))))

    def calc_body_momentum_about_body_mass_center_in_ground(self, state: State):
        """(I_Bc w_GB, m v_GBc) (2, 3) in G: momentum with the angular part about Bc. Requires Velocity."""
        op = "calc_body_momentum_about_body_mass_center_in_ground"
        m, c_G, I_o_G = self._mass_properties_in_ground(state, op)
        V = self._V_GB(state, op)
        I_c_G = I_o_G - _point_inertia(m, c_G)
        v_Bc = V[1] + jnp.cross(V[0], c_G)
        return jnp.stack([spatial.matvec(I_c_G, V[0]), m * v_Bc])

    # ------------------------------------------------------------------------------------
    # High-level operators: distances between stations

    def calc_station_to_station_distance(self, state: State, location_on_B, body_A, location_on_A):
        """|p_GPA - p_GPB| (m) for station PB of B and PA of A. Requires Position (none if A is B)."""
        if self._is_same(body_A):
            return spatial.safe_norm(jnp.asarray(location_on_A) - jnp.asarray(location_on_B))
        r = body_A.find_station_location_in_ground(state, location_on_A) - self.find_station_location_in_ground(state, location_on_B)
        return spatial.safe_norm(r)

    def calc_station_to_station_distance_time_derivative(self, state: State, location_on_B, body_A, location_on_A):
        """d/dt of the station-to-station distance (m/s); the relative speed when coincident. Requires Velocity."""
        if self._is_same(body_A):
            require(state, Stage.Velocity, "calc_station_to_station_distance_time_derivative")
            return jnp.zeros((), state.q.dtype)
        rB, vB = self.find_station_location_and_velocity_in_ground(state, location_on_B)
        rA, vA = body_A.find_station_location_and_velocity_in_ground(state, location_on_A)
        return _distance_rate(rA - rB, vA - vB)

    def calc_station_to_station_distance_2nd_time_derivative(self, state: State, location_on_B, body_A, location_on_A):
        """d^2/dt^2 of the station-to-station distance (m/s^2), Simbody's conventions. Requires Acceleration."""
        if self._is_same(body_A):
            require(state, Stage.Acceleration, "calc_station_to_station_distance_2nd_time_derivative")
            return jnp.zeros((), state.q.dtype)
        rB, vB, aB = self.find_station_location_velocity_and_acceleration_in_ground(state, location_on_B)
        rA, vA, aA = body_A.find_station_location_velocity_and_acceleration_in_ground(state, location_on_A)
        return _distance_accel(rA - rB, vA - vB, aA - aB)

    # ------------------------------------------------------------------------------------
    # High-level operators: points moving on bodies (unimplemented in Simbody)

    def _moving_point_in_ground(self, state, location_B, velocity_B, acceleration_B=None):
        """Location, velocity (and acceleration) in G of a point P moving on B.

        ``velocity_B``/``acceleration_B`` are d/dt and d^2/dt^2 of p_BP taken in B, expressed in B.
        """
        op = "moving point operator"
        R = self._R_GB(state, op)
        r = spatial.matvec(R, jnp.asarray(location_B))
        vrel = spatial.matvec(R, jnp.asarray(velocity_B))
        V = self._V_GB(state, op)
        w_x_r = jnp.cross(V[0], r)
        p = self._p_GB(state, op) + r
        v = V[1] + w_x_r + vrel
        if acceleration_B is None:
            return p, v
        A = self._A_GB(state, op)
        arel = spatial.matvec(R, jnp.asarray(acceleration_B))
        a = A[1] + jnp.cross(A[0], r) + jnp.cross(V[0], w_x_r) + 2.0 * jnp.cross(V[0], vrel) + arel
        return p, v, a

    def calc_body_moving_point_velocity_in_body(self, state: State, location_on_B, velocity_on_B, in_body_A):
        """Velocity in A, expressed in A, of a point P moving on B (3,).

        P is at ``location_on_B`` (p_BP in B) with velocity ``velocity_on_B`` taken in B and
        expressed in B: ``v_AP = v_AS + R_AB v_rel``, S the station of B coincident with P.
        Requires Velocity.
        """
        v_AS = self.find_station_velocity_in_another_body(state, location_on_B, in_body_A)
        return v_AS + self.express_vector_in_another_body_frame(state, velocity_on_B, in_body_A)

    def calc_body_moving_point_acceleration_in_body(
        self, state: State, location_on_B, velocity_on_B, acceleration_on_B, in_body_A
    ):
        """Acceleration in A, expressed in A, of a point P moving (and accelerating) on B (3,).

        ``a_AP = a_AS + 2 w_AB x (R_AB v_rel) + R_AB a_rel`` where S is the station of B
        coincident with P and v_rel, a_rel are the point's velocity and acceleration taken in B,
        expressed in B. Requires Acceleration.
        """
        a_AS = self.find_station_acceleration_in_another_body(state, location_on_B, in_body_A)
        w_AB = self.find_body_angular_velocity_in_another_body(state, in_body_A)
        v_rel = self.express_vector_in_another_body_frame(state, velocity_on_B, in_body_A)
        a_rel = self.express_vector_in_another_body_frame(state, acceleration_on_B, in_body_A)
        return a_AS + 2.0 * jnp.cross(w_AB, v_rel) + a_rel

    def calc_moving_point_to_point_distance_time_derivative(
        self, state: State, location_on_B, velocity_on_B, body_A, location_on_A, velocity_on_A
    ):
        """d/dt |p_PB PA| (m/s) for points PB moving on B and PA moving on A.

        Locations are stations in their bodies' frames; velocities are their time derivatives
        taken in those frames. Relative speed when the points coincide. Requires Velocity.
        """
        rB, vB = self._moving_point_in_ground(state, location_on_B, velocity_on_B)
        rA, vA = body_A._moving_point_in_ground(state, location_on_A, velocity_on_A)
        return _distance_rate(rA - rB, vA - vB)

    def calc_moving_point_to_point_distance_2nd_time_derivative(
        self, state: State, location_on_B, velocity_on_B, acceleration_on_B,
        body_A, location_on_A, velocity_on_A, acceleration_on_A,
    ):
        """d^2/dt^2 |p_PB PA| (m/s^2) for points moving on B and A (see the first derivative).

        Accelerations are second time derivatives of the locations taken in their body frames.
        Requires Acceleration.
        """
        rB, vB, aB = self._moving_point_in_ground(state, location_on_B, velocity_on_B, acceleration_on_B)
        rA, vA, aA = body_A._moving_point_in_ground(state, location_on_A, velocity_on_A, acceleration_on_A)
        return _distance_accel(rA - rB, vA - vB, aA - aB)

    # -- mobilizer reaction forces --------------------------------------------------------

    def find_mobilizer_reaction_on_body_at_m_in_ground(self, state: State, model):
        """Spatial force (2, 3) this body's mobilizer applies to it, at Mo, in G. Requires Acceleration.

        ``model`` is the Model the state was realized with (the reaction needs its parameters).
        """
        return model.calc_mobilizer_reaction_forces(state)[self.index]

    def find_mobilizer_reaction_on_body_at_origin_in_ground(self, state: State, model):
        """The same reaction moved to the body origin Bo: ``[t_M + p_BM_G x f ; f]``. Requires Acceleration."""
        F = self.find_mobilizer_reaction_on_body_at_m_in_ground(state, model)
        R_GB = self._pos(state, "find_mobilizer_reaction_on_body_at_origin_in_ground").R_GB[self.index]
        p_BM_G = spatial.matvec(R_GB, model.parameters.p_BM[self.index])
        return jnp.stack([F[0] + jnp.cross(p_BM_G, F[1]), F[1]])

    def find_mobilizer_reaction_on_parent_at_f_in_ground(self, state: State, model):
        """Equal and opposite reaction on the parent, moved to the inboard frame origin Fo, in G. Requires Acceleration."""
        return self._reaction_on_parent_at(state, model, at_frame_F=True)

    def find_mobilizer_reaction_on_parent_at_origin_in_ground(self, state: State, model):
        """Equal and opposite reaction on the parent, moved to the parent's origin Po, in G. Requires Acceleration."""
        return self._reaction_on_parent_at(state, model, at_frame_F=False)

    def _reaction_on_parent_at(self, state, model, at_frame_F):
        pos = self._pos(state, "find_mobilizer_reaction_on_parent")
        F = self.find_mobilizer_reaction_on_body_at_m_in_ground(state, model)
        i, parent = self.index, max(model.topology.parent[self.index], 0)
        p_GM = pos.p_GB[i] + spatial.matvec(pos.R_GB[i], model.parameters.p_BM[i])
        p_GP = pos.p_GB[parent]
        point = p_GP + spatial.matvec(pos.R_GB[parent], model.parameters.p_PF[i]) if at_frame_F else p_GP
        # Force -f at Mo; its moment about the new point adds (p_M - point) x (-f).
        return jnp.stack([-F[0] - jnp.cross(p_GM - point, F[1]), -F[1]])

    # ------------------------------------------------------------------------------------
    # Force helpers (Simbody adds into an argument; here a new array is returned)

    def _check_body_forces(self, state, body_forces):
        body_forces = jnp.asarray(body_forces)
        if body_forces.shape != state.body_forces.shape:
            raise InvalidArgument(f"{self.name}: body_forces must have shape {state.body_forces.shape}, got {body_forces.shape}")
        return body_forces

    def apply_body_force(self, state: State, spatial_force_G, body_forces):
        """body_forces (nbodies, 2, 3) plus ``spatial_force_G`` (torque, force at Bo) in G on this body."""
        F = jnp.asarray(spatial_force_G)
        if F.shape != (2, 3):
            raise InvalidArgument(f"{self.name}: spatial_force_G must have shape (2, 3), got {F.shape}")
        return self._check_body_forces(state, body_forces).at[self.index].add(F)

    def apply_body_torque(self, state: State, torque_G, body_forces):
        """body_forces plus a pure torque (3,) in G on this body."""
        return self._check_body_forces(state, body_forces).at[self.index, 0].add(jnp.asarray(torque_G))

    def apply_force_to_body_point(self, state: State, station_B, force_G, body_forces):
        """body_forces plus force ``force_G`` (in G) applied at station ``station_B`` (in B). Requires Position."""
        r = self.express_vector_in_ground_frame(state, station_B)
        f = jnp.asarray(force_G)
        return self._check_body_forces(state, body_forces).at[self.index].add(jnp.stack([jnp.cross(r, f), f]))

    def apply_one_mobility_force(self, state: State, which: int, f, mobility_forces):
        """mobility_forces (nu_total,) plus ``f`` on this mobilizer's u ``which``."""
        self._check_u_index(which)
        mobility_forces = jnp.asarray(mobility_forces)
        if mobility_forces.shape != state.u.shape:
            raise InvalidArgument(f"{self.name}: mobility_forces must have shape {state.u.shape}, got {mobility_forces.shape}")
        return mobility_forces.at[self.u_start + which].add(f)

    def convert_q_force_to_u_force(self, state: State, f_q, model=None):
        """u-space force ``N^T f_q`` (nu,) for a q-space force ``f_q`` (nq in use,) of this mobilizer.

        Power is preserved: ``f_q . qdot = f_u . u``. ``model`` fixes the Euler/quaternion mode
        (default: the matter subsystem's). Requires Position.
        """
        require(state, Stage.Position, "convert_q_force_to_u_force")
        mob = self._mobilizer_for(model)
        f_q = jnp.asarray(f_q, state.q.dtype)
        if f_q.shape != (mob.nq_in_use,):
            raise InvalidArgument(f"{self.name}: f_q must have length {mob.nq_in_use}, got shape {f_q.shape}")
        if mob.nu == 0:
            return jnp.zeros((0,), state.q.dtype)
        q = state.q[self.q_start : self.q_start + mob.nq_alloc]
        f_pad = jnp.zeros(mob.nq_alloc, state.q.dtype).at[: mob.nq_in_use].set(f_q)
        return mob.multiply_by_n_transpose(q[None], f_pad[None])[0]

    # ------------------------------------------------------------------------------------
    # Topology utilities

    def get_base_mobilized_body(self):
        """The ancestor whose parent is Ground (this body if its parent is Ground; Ground for Ground)."""
        body = self
        while body.parent is not None and body.parent.parent is not None:
            body = body.parent
        return body

    def clone_for_new_parent(self, parent, *, name=None):
        """A new MobilizedBody of this type with the same X_PF, Body, X_BM and parameters, on ``parent``.

        It is added to ``parent``'s matter subsystem; raises TopologyFrozen if that system was
        already frozen by realize_topology(), UnknownParent if ``parent`` is not a MobilizedBody.
        """
        params = self.params if self.mobilizer_prototype.n_params else None
        clone = type(self)._factory(
            self.mobilizer_prototype, parent, Transform(*self.X_PF), self.body, Transform(*self.X_BM), params=params, name=name
        )
        # Keep the exact float64 frames (Transform may hold them in a lower precision).
        clone.X_PF = (np.array(self.X_PF[0]), np.array(self.X_PF[1]))
        clone.X_BM = (np.array(self.X_BM[0]), np.array(self.X_BM[1]))
        return clone
