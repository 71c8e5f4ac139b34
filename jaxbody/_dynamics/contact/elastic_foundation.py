"""Simbody's ElasticFoundationForce (ElasticFoundationForce.cpp, GeneralContactSubsystem flavour, as OpenSim uses it).

A triangle mesh carries one linear spring per face at the face centroid, of area ``A`` (the face area, halved
for each mesh of a mesh/mesh pair). For a spring inside the other object (trackers/mesh.py decides), with
``d`` the vector from the spring to the nearest point of the other surface, ``n = d/|d|``, and ``v`` the
velocity of the other body minus that of the mesh body, both at the nearest point (all in G):

* normal ``f = k A |d| (1 + c v.n)``, no force where ``f <= 0`` (k the mesh's stiffness, Pa/m = N/m^3;
  c its dissipation, s/m). Only the mesh's own parameters enter: Simbody's elastic foundation does not combine
  materials; a mesh/mesh pair runs the rule once from each side;
* friction ``f (min(vrel, 1) (ud + 2 (us - ud)/(1 + vrel^2)) + uv |v_t|)`` along ``v_t/|v_t|``,
  ``v_t = v - (v.n) n``, ``vrel = |v_t| / transition_velocity``
  (``geometry.hunt_crossley_friction_over_slip``; finite gradient at zero slip);
* the force acts on the mesh body at the nearest point, its negative on the other body there;
* potential energy ``k A |d|^2 / 2`` per active spring.

Cost: O(faces) per mesh/half-space or mesh/sphere pair, O(faces * faces_O) per mesh/mesh pair (the tracker).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.contact import geometry
from jaxbody._dynamics.contact.trackers import mesh
from jaxbody._dynamics.forces import ForceElement, station_location
from jaxbody._math import spatial


def spring_forces(patch, v_rel, parameters, transition_velocity, area_scale=1.0):
    """Per-face forces on the mesh (nf, 3) in G at ``patch.nearest``, and the total potential energy (scalar).

    ``patch``: trackers.mesh.FacePatch. ``v_rel`` (nf, 3): velocity of the other body minus the mesh body's at
    the nearest points, m/s. ``parameters`` (5,): the mesh's stiffness (N/m^3), dissipation (s/m), static,
    dynamic and viscous (s/m) friction. ``area_scale``: 0.5 for each side of a mesh/mesh pair, else 1.
    Inactive faces give exactly zero force and energy (their gradients are zero too).
    """
    k, c, us, ud, uv = (parameters[i] for i in range(5))
    direction, dist, active = mesh.spring_stretch(patch)
    vn = jnp.sum(v_rel * direction, -1)
    vt = v_rel - vn[:, None] * direction
    stiffness = k * area_scale * patch.area
    f = stiffness * dist * (1 + c * vn)
    f = jnp.where(active & (f > 0), f, 0.0)
    g = geometry.hunt_crossley_friction_over_slip(spatial.safe_norm(vt), transition_velocity, us, ud, uv)
    force = f[:, None] * (direction + g[:, None] * vt)
    pe = jnp.sum(jnp.where(active, 0.5 * stiffness * dist * dist, 0.0))
    return force, pe


def pair_body_forces(nbodies, pos, vel, mesh_body, other_body, patch, parameters, transition_velocity, area_scale=1.0):
    """Spatial body forces (nbodies, 2, 3) in G and potential energy of one mesh's springs against another body.

    ``mesh_body``, ``other_body``: static body indices. ``pos``/``vel``: Position and Velocity caches.
    """
    nf = patch.spring.shape[0]
    mb, ob = np.full(nf, mesh_body), np.full(nf, other_body)
    p = patch.nearest
    v_rel = geometry.point_velocity(pos, vel, ob, p) - geometry.point_velocity(pos, vel, mb, p)
    force, pe = spring_forces(patch, v_rel, parameters, transition_velocity, area_scale)
    F = geometry.point_forces_on_bodies(nbodies, pos, mb, p, force)
    return F + geometry.point_forces_on_bodies(nbodies, pos, ob, p, -force), pe


class ElasticFoundationForce(ForceElement):
    """Simbody's ElasticFoundationForce on a contact set: every mesh against every half-space, sphere and other
    mesh of the set on a different body.

    Static: ``mesh_body`` (nm,), ``faces`` (nm tuples of (nf_i, 3) index tuples), ``sphere_body`` (ns,),
    ``half_space_body`` (nh,), ``pairs``: tuples ``(kind, mesh, other)`` with kind "half_space", "sphere" or
    "mesh" and indices into those lists. Leaves: ``vertices`` (nm arrays (nv_i, 3), m, in the mesh frame M);
    ``R_BM`` (nm, 3, 3), ``p_BM`` (nm, 3) the mesh frames on their bodies; ``parameters`` (nm, 5) each mesh's
    stiffness (N/m^3), dissipation (s/m), static, dynamic, viscous (s/m) friction; ``sphere_center`` (ns, 3) in
    its body, ``radius`` (ns,); ``R_BH`` (nh, 3, 3), ``p_BH`` (nh, 3) the half-space frames (material at
    x_H > 0); ``transition_velocity`` (m/s). Needs Velocity. Cost: see the module docstring.
    """

    mesh_body: tuple = eqx.field(static=True)
    faces: tuple = eqx.field(static=True)
    sphere_body: tuple = eqx.field(static=True)
    half_space_body: tuple = eqx.field(static=True)
    pairs: tuple = eqx.field(static=True)
    vertices: tuple
    R_BM: jnp.ndarray
    p_BM: jnp.ndarray
    parameters: jnp.ndarray
    sphere_center: jnp.ndarray
    radius: jnp.ndarray
    R_BH: jnp.ndarray
    p_BH: jnp.ndarray
    transition_velocity: jnp.ndarray

    def _mesh_frame(self, pos, i):
        return geometry.frame_in_ground(pos, self.mesh_body[i], self.R_BM[i], self.p_BM[i])

    def _patch(self, pos, kind, i, j):
        R_GM, p_GM = self._mesh_frame(pos, i)
        verts, faces = self.vertices[i], np.asarray(self.faces[i])
        if kind == "half_space":
            b = self.half_space_body[j]
            R_GH, p_GH = geometry.frame_in_ground(pos, b, self.R_BH[j], self.p_BH[j])
            return mesh.mesh_half_space_patch(R_GM, p_GM, verts, faces, R_GH, p_GH), b
        if kind == "sphere":
            b = self.sphere_body[j]
            return mesh.mesh_sphere_patch(R_GM, p_GM, verts, faces, station_location(pos, b, self.sphere_center[j]),
                                          self.radius[j]), b
        R_GO, p_GO = self._mesh_frame(pos, j)
        patch = mesh.mesh_mesh_patch(R_GM, p_GM, verts, faces, R_GO, p_GO, self.vertices[j], np.asarray(self.faces[j]))
        return patch, self.mesh_body[j]

    def calc(self, model, state):
        pos, vel = state.position, state.velocity
        nb = model.topology.nbodies
        F = jnp.zeros((nb, 2, 3), pos.p_GB.dtype)
        pe = jnp.zeros((), pos.p_GB.dtype)
        for kind, i, j in self.pairs:
            sides = [(i, j)] + ([(j, i)] if kind == "mesh" else [])
            for a, b in sides:
                patch, other_body = self._patch(pos, kind, a, b)
                F_pair, pe_pair = pair_body_forces(nb, pos, vel, self.mesh_body[a], other_body, patch,
                                                   self.parameters[a], self.transition_velocity, 1.0 / len(sides))
                F, pe = F + F_pair, pe + pe_pair
        return F, jnp.zeros(model.topology.nu, F.dtype), pe
