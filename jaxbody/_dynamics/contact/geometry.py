"""Contact geometry kernels, vectorized over contact pairs (no Python loop over pairs).

All positions and vectors are in Ground (G), meters; body indices are static integer arrays (npairs,).
Half-spaces follow Simbody's ``ContactGeometry::HalfSpace``: in its frame H the material occupies x > 0
and the outward normal is -x.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._math import spatial


def station_kinematics(pos, vel, body, station_B):
    """Location (n, 3) and velocity (n, 3) in G of stations ``station_B`` (n, 3, in B) of bodies ``body`` (n,).

    Needs Position (``pos``: PositionCache) and Velocity (``vel``: VelocityCache).
    """
    r = spatial.matvec(pos.R_GB[body], station_B)
    return pos.p_GB[body] + r, point_velocity(pos, vel, body, pos.p_GB[body] + r)


def point_velocity(pos, vel, body, p_G):
    """Velocity in G (n, 3) of the points of bodies ``body`` (n,) located at ``p_G`` (n, 3) in G."""
    V = vel.V_GB[body]
    return V[:, 1] + jnp.cross(V[:, 0], p_G - pos.p_GB[body])


def frame_in_ground(pos, body, R_BH, p_BH):
    """``X_GH = X_GB X_BH`` for frames H fixed on bodies ``body`` (n,) (or one body, int): (R_GH (n, 3, 3), p_GH (n, 3))."""
    R_GB = pos.R_GB[body]
    return spatial.matmul(R_GB, R_BH), pos.p_GB[body] + spatial.matvec(R_GB, p_BH)


def point_forces_on_bodies(nbodies, pos, body, p_G, f_G):
    """Spatial forces (nbodies, 2, 3) at body origins in G of forces ``f_G`` (n, 3) applied at points ``p_G``.

    ``body`` (n,) static; several forces on one body add up (Simbody's applyForceToBodyPoint).
    """
    r = p_G - pos.p_GB[body]
    F = jnp.stack([jnp.cross(r, f_G), f_G], -2)
    return jnp.zeros((nbodies, 2, 3), f_G.dtype).at[np.asarray(body)].add(F)


def sphere_in_half_space(pos, sphere_body, sphere_center_B, radius, half_space_body, R_BH, p_BH):
    """Sphere/half-space pair geometry of spheres and half-spaces fixed on bodies: ``half_space_sphere`` at the
    sphere centers ``sphere_center_B`` (n, 3, in their bodies) and half-space frames ``X_BH`` (n) in G."""
    center = pos.p_GB[sphere_body] + spatial.matvec(pos.R_GB[sphere_body], sphere_center_B)
    R_GH, p_GH = frame_in_ground(pos, half_space_body, R_BH, p_BH)
    return half_space_sphere(R_GH, p_GH, center, radius)


def half_space_sphere(R_GH, p_GH, center_G, radius):
    """Simbody's CollisionDetectionAlgorithm::HalfSpaceSphere for half-spaces X_GH (R (n, 3, 3), p (n, 3)) and
    spheres (``center_G`` (n, 3), ``radius`` (n,)).

    Returns (depth (n,), normal (n, 3), location (n, 3)): ``depth = radius + x`` with x the sphere center's
    H-frame x coordinate (positive when overlapping), ``normal`` the half-space's outward normal ``-x_H``
    in G (from the half-space towards the sphere), ``location`` the point midway between the sphere's
    deepest point and the half-space surface, ``X_GH (depth/2, y, z)``. Computed for every pair whether or
    not it overlaps (callers mask with ``depth > 0``).
    """
    c_H = spatial.mattvec(R_GH, center_G - p_GH)
    depth = radius + c_H[:, 0]
    location = p_GH + spatial.matvec(R_GH, jnp.stack([0.5 * depth, c_H[:, 1], c_H[:, 2]], -1))
    return depth, -R_GH[:, :, 0], location


def hunt_crossley_friction_over_slip(vslip, transition_velocity, us, ud, uv):
    """The friction law of Simbody's HuntCrossleyForce and ElasticFoundationForce (and OpenSim's
    SmoothSphereHalfSpaceForce) divided by slip speed: ``g`` with friction force ``f g v_t``. Not a Stribeck
    curve: Simbody's CompliantContactSubsystem uses another law (``compliant_models.stribeck_over_slip``).

    Simbody: ``|f_t| = f (min(vrel, 1) (ud + 2 (us - ud) / (1 + vrel^2)) + uv vslip)`` along ``v_t / vslip``,
    ``vrel = vslip / transition_velocity``. Written as ``g = |f_t| / (f vslip)`` so that it is finite with
    a finite gradient at ``vslip = 0`` (where ``min(vrel, 1) / vslip = 1 / transition_velocity``).
    """
    vrel = vslip / transition_velocity
    ratio = jnp.where(vrel < 1, 1.0 / transition_velocity, 1.0 / jnp.where(vrel < 1, 1.0, vslip))
    return ratio * (ud + 2 * (us - ud) / (1 + vrel * vrel)) + uv
