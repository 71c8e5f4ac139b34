"""Simbody's HuntCrossleyForce on sphere/half-space pairs (HuntCrossleyForce.cpp, catalogue 5).

Per pair (surface 1 = the half-space, surface 2 = the sphere, as Simbody's GeneralContactSubsystem orders
them), with per-surface stiffness, dissipation c_i and friction coefficients; Simbody stores
``k_i = stiffness_i^(2/3)`` (HuntCrossleyForceImpl::Parameters), then:

* ``s1 = k2 / (k1 + k2)``, ``k = k1 s1``, ``c = c1 s1 + c2 (1 - s1)``; the contact point moves from the
  midpoint by ``depth (1/2 - s1)`` along the normal;
* Hertz ``fH = 4/3 k depth sqrt(R k depth)`` (R the sphere radius), PE ``2/5 fH depth``;
* Hunt-Crossley ``f = fH (1 + 3/2 c vn)``, ``vn`` the approach speed along the normal, no force if f <= 0;
* friction: coefficients combined as ``2 a b / (a + b)`` (0 if both are 0), Simbody's law with the
  transition velocity (``geometry.hunt_crossley_friction_over_slip``) opposing the tangential slip velocity.

Deviation from Simbody: Simbody's loop ``return``s at the first pair whose f <= 0 (skipping the later
pairs); here that pair alone gives no force. Depth is masked (``depth > 0``) so gradients are finite and
exact through contact onset (the force and its first derivative vanish there).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.contact import geometry
from jaxbody._dynamics.forces import ForceElement
from jaxbody._math import spatial


def harmonic_combination(a, b):
    """Simbody's combined friction coefficient ``2 a b / (a + b)``; 0 when a and b are both 0."""
    s = a + b
    return jnp.where(s != 0, 2 * a * b / jnp.where(s != 0, s, 1.0), 0.0)


class HuntCrossleyForce(ForceElement):
    """Hunt-Crossley contact between spheres and half-spaces, all pairs at once.

    Static: ``half_space_body``, ``sphere_body`` (npairs,) body indices. Leaves: ``R_BH`` (npairs, 3, 3),
    ``p_BH`` (npairs, 3) the half-space frames on their bodies; ``sphere_center`` (npairs, 3) in the sphere's
    body, m; ``radius`` (npairs,), m; ``half_space_parameters``, ``sphere_parameters`` (npairs, 5): Simbody's
    body parameters (stiffness (N/m^2), dissipation s/m, static, dynamic, viscous (s/m) friction) of
    each pair's two surfaces; ``transition_velocity`` (m/s). Needs Velocity.
    """

    half_space_body: tuple = eqx.field(static=True)
    sphere_body: tuple = eqx.field(static=True)
    R_BH: jnp.ndarray
    p_BH: jnp.ndarray
    sphere_center: jnp.ndarray
    radius: jnp.ndarray
    half_space_parameters: jnp.ndarray
    sphere_parameters: jnp.ndarray
    transition_velocity: jnp.ndarray

    def calc(self, model, state):
        pos, vel = state.position, state.velocity
        hb, sb = np.asarray(self.half_space_body), np.asarray(self.sphere_body)
        depth, normal, location = geometry.sphere_in_half_space(
            pos, sb, self.sphere_center, self.radius, hb, self.R_BH, self.p_BH
        )
        p1, p2 = self.half_space_parameters.T, self.sphere_parameters.T
        k1, k2 = p1[0] ** (2.0 / 3.0), p2[0] ** (2.0 / 3.0)
        s1 = k2 / (k1 + k2)
        touching = depth > 0
        d = jnp.where(touching, depth, 0.0)
        location = location + (d * (0.5 - s1))[:, None] * normal
        k = k1 * s1
        c = p1[1] * s1 + p2[1] * (1 - s1)
        rkd = self.radius * k * d
        f_hertz = 4.0 / 3.0 * k * d * jnp.where(touching, jnp.sqrt(jnp.where(touching, rkd, 1.0)), 0.0)
        pe = jnp.sum(0.4 * f_hertz * d)
        v = geometry.point_velocity(pos, vel, hb, location) - geometry.point_velocity(pos, vel, sb, location)
        vn = jnp.sum(v * normal, -1)
        vt = v - vn[:, None] * normal
        f = f_hertz * (1 + 1.5 * c * vn)
        f = jnp.where(f > 0, f, 0.0)
        us, ud, uv = (harmonic_combination(p1[i], p2[i]) for i in (2, 3, 4))
        vslip = spatial.safe_norm(vt)
        g = geometry.hunt_crossley_friction_over_slip(vslip, self.transition_velocity, us, ud, uv)
        force = f[:, None] * (normal + g[:, None] * vt)  # on the sphere; its negative on the half-space
        nb = model.topology.nbodies
        F = geometry.point_forces_on_bodies(nb, pos, sb, location, force)
        F = F + geometry.point_forces_on_bodies(nb, pos, hb, location, -force)
        return F, jnp.zeros(model.topology.nu, F.dtype), pe
