"""Relative kinematics of frames and points: the formulas behind MobilizedBody's "in another body" operators and
the time derivatives of point-to-point distances (Simbody's findRelativeVelocity/Acceleration,
calcStationToStationDistance and its derivatives).

Conventions: A and B are frames given by their poses and spatial velocities/accelerations in Ground G, at their
origins and expressed in G (``R_GA`` (3, 3), ``p_GA`` (3,), ``V_GA``/``A_GA`` (2, 3) (angular, linear)). A
relative quantity of B in A is measured in A (derivatives taken in A) and expressed in A. Units: m, m/s, m/s^2,
rad/s, rad/s^2. Pure functions of arrays: no Model, no State.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._math import spatial


def relative_velocity(R_GA, p_GA, V_GA, p_GB, V_GB):
    """V_AB (2, 3): angular velocity of B in A and velocity of Bo in A, expressed in A."""
    w_AB_G = V_GB[0] - V_GA[0]
    v_AB_G = (V_GB[1] - V_GA[1]) - jnp.cross(V_GA[0], p_GB - p_GA)
    return spatial.mattvec(R_GA, jnp.stack([w_AB_G, v_AB_G]))


def relative_angular_acceleration(R_GA, V_GA, A_GA, V_GB, A_GB):
    """Angular acceleration of B in A (derivative taken in A), expressed in A, (3,)."""
    w_AB_G = V_GB[0] - V_GA[0]
    return spatial.mattvec(R_GA, (A_GB[0] - A_GA[0]) - jnp.cross(V_GA[0], w_AB_G))


def relative_acceleration(R_GA, p_GA, V_GA, A_GA, p_GB, V_GB, A_GB):
    """A_AB (2, 3): angular acceleration of B in A and acceleration of Bo in A, expressed in A."""
    w_GA, v_GA = V_GA[0], V_GA[1]
    b_GA, a_GA = A_GA[0], A_GA[1]
    p = p_GB - p_GA  # Ao -> Bo in G
    w_AB_G = V_GB[0] - w_GA
    b_AB_G = (A_GB[0] - b_GA) - jnp.cross(w_GA, w_AB_G)  # derivative taken in A
    v_AB_G = (V_GB[1] - v_GA) - jnp.cross(w_GA, p)
    a_AB_G = (A_GB[1] - a_GA) - jnp.cross(b_GA, p) - 2.0 * jnp.cross(w_GA, v_AB_G) - jnp.cross(w_GA, jnp.cross(w_GA, p))
    return spatial.mattvec(R_GA, jnp.stack([b_AB_G, a_AB_G]))


def station_velocity(V, r):
    """Velocity of a point at r from a frame's origin (any common frame) with the frame's V (2, 3): v + w x r."""
    return V[1] + jnp.cross(V[0], r)


def station_acceleration(A, w, r):
    """Acceleration of a point fixed at r from a frame's origin: a + b x r + w x (w x r), with the frame's
    spatial acceleration A (2, 3) and angular velocity w (3,)."""
    return A[1] + jnp.cross(A[0], r) + jnp.cross(w, jnp.cross(w, r))


def moving_point_velocity(V, r, v_rel):
    """Velocity of a point at r moving with v_rel (taken in the frame): station velocity + v_rel (3,)."""
    return station_velocity(V, r) + v_rel


def moving_point_acceleration(A, w, r, v_rel, a_rel):
    """Acceleration of a point at r moving with v_rel and a_rel (taken in the frame): station acceleration +
    Coriolis 2 w x v_rel + a_rel (3,)."""
    return station_acceleration(A, w, r) + 2.0 * jnp.cross(w, v_rel) + a_rel


def _safe_div(x, d):
    return x / jnp.where(d == 0, 1.0, d)


def distance_rate(r, v):
    """d/dt |r| given r and v = dr/dt; Simbody's convention |v| when r = 0."""
    d = spatial.safe_norm(r)
    return jnp.where(d == 0, spatial.safe_norm(v), _safe_div(jnp.dot(v, r), d))


def distance_acceleration(r, v, a):
    """d^2/dt^2 |r| given r, v = dr/dt, a = dv/dt; Simbody's conventions at r = 0 and v = 0."""
    d = spatial.safe_norm(r)
    s = spatial.safe_norm(v)
    coincident = jnp.where(s == 0, spatial.safe_norm(a), _safe_div(jnp.dot(a, v), s))
    u = _safe_div(r, d)
    vp = v - jnp.dot(v, u) * u
    separated = jnp.dot(a, u) + _safe_div(jnp.dot(vp, v), d)
    return jnp.where(d == 0, coincident, separated)
