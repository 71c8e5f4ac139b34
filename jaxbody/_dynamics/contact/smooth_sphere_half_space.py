"""Simbody/OpenSim's SmoothSphereHalfSpaceForce (SmoothSphereHalfSpaceForce.cpp): smooth, for optimization.

Per pair, with indentation ``d = R + dot(c - p_H, x_H)`` (c the sphere center, in the half-space body),
``n`` = the half-space frame's x axis in G (pointing into the half-space, "in the direction of contact"):

* Hertz ``fh = 4/3 k sqrt(R k) (d^2 + cf)^(3/4) (1/2 + 1/2 tanh(bd d))`` with ``k = 1/2 stiffness^(2/3)``;
  PE ``2/5 fh d`` (OpenSim's approximation; not the integral of fh);
* Hunt-Crossley ``fhc = fh (1 + 3/2 c vn) (1/2 + 1/2 tanh(bv (vn + 2 / (3 c))))``, ``vn = dot(v, n)`` with
  v the velocity of the contact point on the sphere relative to the half-space;
* friction ``fhc (min(vrel, 1) (ud + 2 (us - ud) / (1 + vrel^2)) + uv vslip)`` along ``v_t / vslip``,
  ``vslip = sqrt(|v_t|^2 + cf)``, ``vrel = vslip / vt``;
* the force ``fhc n + friction`` acts on the half-space body at the contact point ``c + R n - d/2 n`` and
  its negative on the sphere's body.

Everything is smooth in q and u. With ``dissipation = 0`` the tanh factor is 1 (Simbody's limit).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.contact import geometry
from jaxbody._dynamics.forces import ForceElement
from jaxbody._math import spatial


class SmoothSphereHalfSpaceForce(ForceElement):
    """Smooth sphere/half-space contact, pairs (npairs) sharing one parameter set.

    Static: ``sphere_body``, ``half_space_body`` (npairs,). Leaves: ``sphere_center`` (npairs, 3) in the sphere
    body, m; ``radius`` (npairs,), m; ``R_BH``, ``p_BH``: half-space frames on their bodies; scalars
    ``stiffness`` (N/m^2), ``dissipation`` (s/m), ``static_friction``, ``dynamic_friction``,
    ``viscous_friction`` (s/m), ``transition_velocity`` (m/s), ``constant_contact_force`` (cf),
    ``hertz_smoothing`` (bd, 1/m), ``hunt_crossley_smoothing`` (bv, s/m). Needs Velocity.
    """

    sphere_body: tuple = eqx.field(static=True)
    half_space_body: tuple = eqx.field(static=True)
    sphere_center: jnp.ndarray
    radius: jnp.ndarray
    R_BH: jnp.ndarray
    p_BH: jnp.ndarray
    stiffness: jnp.ndarray
    dissipation: jnp.ndarray
    static_friction: jnp.ndarray
    dynamic_friction: jnp.ndarray
    viscous_friction: jnp.ndarray
    transition_velocity: jnp.ndarray
    constant_contact_force: jnp.ndarray
    hertz_smoothing: jnp.ndarray
    hunt_crossley_smoothing: jnp.ndarray

    def calc(self, model, state):
        pos, vel = state.position, state.velocity
        sb, hb = np.asarray(self.sphere_body), np.asarray(self.half_space_body)
        R = self.radius
        center = pos.p_GB[sb] + spatial.matvec(pos.R_GB[sb], self.sphere_center)
        R_GH, p_GH = geometry.frame_in_ground(pos, hb, self.R_BH, self.p_BH)
        normal = R_GH[:, :, 0]
        d = R + jnp.sum((center - p_GH) * normal, -1)
        point = center + (R - 0.5 * d)[:, None] * normal
        cf, c = self.constant_contact_force, self.dissipation
        k = 0.5 * self.stiffness ** (2.0 / 3.0)
        fh = 4.0 / 3.0 * k * jnp.sqrt(R * k) * (d * d + cf) ** 0.75 * (0.5 + 0.5 * jnp.tanh(self.hertz_smoothing * d))
        pe = jnp.sum(0.4 * fh * d)
        v = geometry.point_velocity(pos, vel, sb, point) - geometry.point_velocity(pos, vel, hb, point)
        vn = jnp.sum(v * normal, -1)
        vt = v - vn[:, None] * normal
        dissipative = c != 0
        offset = 2.0 / (3.0 * jnp.where(dissipative, c, 1.0))
        gate = jnp.where(dissipative, 0.5 + 0.5 * jnp.tanh(self.hunt_crossley_smoothing * (vn + offset)), 1.0)
        fhc = fh * (1 + 1.5 * c * vn) * gate
        vslip = jnp.sqrt(jnp.sum(vt * vt, -1) + cf)
        g = geometry.hunt_crossley_friction_over_slip(
            vslip, self.transition_velocity, self.static_friction, self.dynamic_friction, self.viscous_friction
        )
        force = fhc[:, None] * (normal + g[:, None] * vt)  # on the half-space; its negative on the sphere
        nb = model.topology.nbodies
        F = geometry.point_forces_on_bodies(nb, pos, hb, point, force)
        F = F + geometry.point_forces_on_bodies(nb, pos, sb, point, -force)
        return F, jnp.zeros(model.topology.nu, F.dtype), pe
