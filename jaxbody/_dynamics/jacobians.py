"""System, station and frame Jacobians: operator (O(n)), explicit and bias forms (catalogue 4.6).

All Jacobians map u to velocities in Ground. Station and frame tasks are
given as static body indices with stations (points fixed on the body, in the
body frame, shape (nt, 3)); a frame task's linear velocity is that of its
origin. Explicit forms apply the O(n) transpose operator to unit vectors, so
they cost O(n) per row, as in Simbody.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._math import spatial
from jaxbody._topology import mobilizer_groups, tree_scan
from jaxbody._typing import BodySpatialVecs, Mobilities


def multiply_by_system_jacobian(model, pos, u: Mobilities) -> BodySpatialVecs:
    """``J u`` (nbodies, 2, 3): body spatial velocities at Bo in G for speeds u. Cost: one outward scan."""
    topo = model.topology
    Hu = spatial.unflat(spatial.matvec(pos.H_PB_G, mobilizer_groups.per_body_u(topo, u)))
    return tree_scan.shift_outward(topo, pos.p_PB_G, Hu)


def multiply_by_system_jacobian_transpose(model, pos, body_forces: BodySpatialVecs) -> Mobilities:
    """``J^T F`` (nu,) for spatial forces F (nbodies, 2, 3) at Bo in G. Cost: one inward scan."""
    topo = model.topology
    F, _ = tree_scan.shift_inward(topo, pos.p_PB_G, body_forces)
    return mobilizer_groups.from_per_body_u(topo, spatial.mattvec(pos.H_PB_G, spatial.flat(F)))


def calc_system_jacobian(model, pos):
    """J as blocks (nbodies, nu, 2, 3): element (b, j) is body b's spatial velocity per unit u_j."""
    eye = jnp.eye(model.topology.nu, dtype=pos.p_GB.dtype)
    return jax.vmap(lambda e: multiply_by_system_jacobian(model, pos, e), out_axes=1)(eye)


def station_offsets(pos, bodies, stations):
    """Station vectors ``R_GB s`` (nt, 3) in G for static body indices and stations in B."""
    return spatial.matvec(pos.R_GB[bodies], stations)


def multiply_by_station_jacobian(model, pos, bodies, stations, u):
    """Station velocities in G (nt, 3): ``v_S = v_B + w_B x (R_GB s)``. Cost: one outward scan."""
    V = multiply_by_system_jacobian(model, pos, u)[bodies]
    return V[:, 1] + jnp.cross(V[:, 0], station_offsets(pos, bodies, stations))


def station_forces_to_body_forces(model, pos, bodies, stations, forces_G):
    """Forces (nt, 3) in G applied at stations -> body spatial forces (nbodies, 2, 3) at Bo."""
    r = station_offsets(pos, bodies, stations)
    F = jnp.stack([jnp.cross(r, forces_G), forces_G], -2)
    return jnp.zeros((model.topology.nbodies, 2, 3), forces_G.dtype).at[bodies].add(F)


def multiply_by_station_jacobian_transpose(model, pos, bodies, stations, forces_G):
    """``J_S^T f`` (nu,) for forces (nt, 3) in G at the stations. Cost: one inward scan."""
    F = station_forces_to_body_forces(model, pos, bodies, stations, forces_G)
    return multiply_by_system_jacobian_transpose(model, pos, F)


def calc_station_jacobian(model, pos, bodies, stations):
    """Explicit station Jacobian (3 nt, nu); rows 3i..3i+2 belong to task i."""
    nt = len(bodies)
    eye = jnp.eye(3 * nt, dtype=pos.p_GB.dtype).reshape(3 * nt, nt, 3)
    return jax.vmap(lambda f: multiply_by_station_jacobian_transpose(model, pos, bodies, stations, f))(eye)


def calc_bias_for_station_jacobian(pos, vel, bodies, stations):
    """``Jdot_S u`` (nt, 3): station accelerations at udot = 0 (Coriolis and centripetal terms)."""
    a = vel.total_coriolis[bodies]
    w = vel.V_GB[bodies, 0]
    r = station_offsets(pos, bodies, stations)
    return a[:, 1] + jnp.cross(a[:, 0], r) + jnp.cross(w, jnp.cross(w, r))


def multiply_by_frame_jacobian(model, pos, bodies, origins, u):
    """Frame spatial velocities (nt, 2, 3): ``[w_B ; v_B + w_B x (R_GB o)]``, o the frame origin in B."""
    V = multiply_by_system_jacobian(model, pos, u)[bodies]
    r = station_offsets(pos, bodies, origins)
    return jnp.stack([V[:, 0], V[:, 1] + jnp.cross(V[:, 0], r)], -2)


def multiply_by_frame_jacobian_transpose(model, pos, bodies, origins, forces_G):
    """``J_F^T F`` (nu,) for spatial forces (nt, 2, 3) in G applied at the frame origins."""
    r = station_offsets(pos, bodies, origins)
    F_Bo = jnp.stack([forces_G[:, 0] + jnp.cross(r, forces_G[:, 1]), forces_G[:, 1]], -2)
    F = jnp.zeros((model.topology.nbodies, 2, 3), forces_G.dtype).at[bodies].add(F_Bo)
    return multiply_by_system_jacobian_transpose(model, pos, F)


def calc_frame_jacobian(model, pos, bodies, origins):
    """Explicit frame Jacobian (6 nt, nu); rows 6i..6i+5 = task i's (angular, linear)."""
    nt = len(bodies)
    eye = jnp.eye(6 * nt, dtype=pos.p_GB.dtype).reshape(6 * nt, nt, 2, 3)
    return jax.vmap(lambda F: multiply_by_frame_jacobian_transpose(model, pos, bodies, origins, F))(eye)


def calc_bias_for_frame_jacobian(pos, vel, bodies, origins):
    """``Jdot_F u`` (nt, 2, 3): frame spatial accelerations at udot = 0."""
    a = vel.total_coriolis[bodies]
    return jnp.stack([a[:, 0], calc_bias_for_station_jacobian(pos, vel, bodies, origins)], -2)
