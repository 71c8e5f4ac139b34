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


def calc_central_inertia_in_ground(params, pos):
    """System inertia about the system mass center, in G, (3, 3)."""
    m = params.mass
    c_G = pos.p_GBc - pos.p_GB
    I_o = pos.Mk_G[:, :3, :3]
    eye = jnp.eye(3, dtype=I_o.dtype)

    def point_inertia(mass, r):
        return mass[:, None, None] * (jnp.sum(r * r, -1)[:, None, None] * eye - r[:, :, None] * r[:, None, :])

    I_c = I_o - point_inertia(m, c_G)
    d = pos.p_GBc - calc_mass_center_location(params, pos)
    return jnp.sum(I_c + point_inertia(m, d), 0)
