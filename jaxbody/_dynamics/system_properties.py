"""Whole-system mass, mass center, momentum, inertia and kinetic energy (catalogue 4.6, "Energetics")."""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._math import spatial


def calc_kinetic_energy(params, pos, vel, u):
    """``1/2 sum V_GB^T Mk_G V_GB + 1/2 sum armature u^2`` (J): the bodies' and the rotors' (armature) energy,
    ``1/2 u^T M u``."""
    V = spatial.flat(vel.V_GB)
    return 0.5 * jnp.sum(V * spatial.matvec(pos.Mk_G, V)) + 0.5 * jnp.sum(params.armature * u * u)


def calc_system_mass(params):
    return jnp.sum(params.mass)


def calc_mass_center_location(params, pos):
    """System mass center in G (3,). NaN for a massless system."""
    m = params.mass
    return (m @ pos.p_GBc) / jnp.sum(m)


def _mass_center_velocities(pos, vel):
    c_G = pos.p_GBc - pos.p_GB
    return vel.V_GB[:, 1] + jnp.cross(vel.V_GB[:, 0], c_G)


def calc_mass_center_velocity(params, pos, vel):
    m = params.mass
    return (m @ _mass_center_velocities(pos, vel)) / jnp.sum(m)


def calc_mass_center_acceleration(params, pos, vel, A_GB):
    """System mass-center acceleration in G from body accelerations A_GB (nbodies, 2, 3)."""
    m = params.mass
    c_G = pos.p_GBc - pos.p_GB
    w = vel.V_GB[:, 0]
    a_c = A_GB[:, 1] + jnp.cross(A_GB[:, 0], c_G) + jnp.cross(w, jnp.cross(w, c_G))
    return (m @ a_c) / jnp.sum(m)


def calc_momentum_about_ground_origin(pos, vel):
    """(angular momentum about the Ground origin, linear momentum), shape (2, 3)."""
    h = spatial.unflat(spatial.matvec(pos.Mk_G, spatial.flat(vel.V_GB)))  # about each Bo
    angular = h[:, 0] + jnp.cross(pos.p_GB, h[:, 1])
    return jnp.stack([jnp.sum(angular, 0), jnp.sum(h[:, 1], 0)])


def calc_central_momentum(params, pos, vel):
    """Momentum with the angular part taken about the system mass center, (2, 3)."""
    h = calc_momentum_about_ground_origin(pos, vel)
    c = calc_mass_center_location(params, pos)
    return jnp.stack([h[0] - jnp.cross(c, h[1]), h[1]])


def point_mass_inertia(mass, r):
    """``m (|r|^2 1 - r r^T)`` (..., 3, 3): the inertia about O of masses m (...,) at r (..., 3) from O (the
    parallel-axis term)."""
    eye = jnp.eye(3, dtype=r.dtype)
    mass = jnp.asarray(mass, r.dtype)
    return mass[..., None, None] * (jnp.sum(r * r, -1)[..., None, None] * eye - r[..., :, None] * r[..., None, :])


def calc_central_inertia_in_ground(params, pos):
    """System inertia about the system mass center, in G, (3, 3)."""
    m = params.mass
    I_c = pos.Mk_G[:, :3, :3] - point_mass_inertia(m, pos.p_GBc - pos.p_GB)
    d = pos.p_GBc - calc_mass_center_location(params, pos)
    return jnp.sum(I_c + point_mass_inertia(m, d), 0)


def calc_mass_properties_in_ground(params, pos):
    """(mass (), mass center from the Ground origin in G (3,), inertia about the Ground origin in G (3, 3)) of
    the whole system (Simbody's calcSystemMassPropertiesInGround)."""
    mass = calc_system_mass(params)
    com = calc_mass_center_location(params, pos)
    return mass, com, calc_central_inertia_in_ground(params, pos) + point_mass_inertia(mass, com)
