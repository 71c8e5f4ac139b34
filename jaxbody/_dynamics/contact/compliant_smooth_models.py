"""OpenSim's SmoothSphereHalfSpaceForce law and Simbody's ExponentialSpringForce as force models of the
CompliantContactSubsystem, on every tracked pair whose Contact they can read (issue 34 item 3).

Both are chosen per subsystem (``CompliantContactSubsystem.set_force_model``), replacing the pair table's model
(``trackers.table.PAIR_TABLE``) on every tracked pair; a pair they cannot act on raises at ``realize_topology()``.

* ``"smooth_hertz"`` (``smooth_hertz``): the SmoothSphereHalfSpaceForce law on any pair the table gives a Hertz
  model (one point per contact with curvatures: sphere, capsule and ellipsoid pairs, half-space against them,
  brick/convex/cylinder against sphere and capsule), with the depth ``d`` (signed: the trackers give the signed
  distance when apart, so the smooth tail acts there as in OpenSim), the normal, the contact point and the
  effective radius ``R = 2 / (kmax + kmin)`` (the sphere's radius against a half-space; ``r1 r2 / (r1 + r2)`` for
  two spheres; no eccentricity correction). Materials combine by Simbody's Hertz rule (``k_i = E_i^(2/3)``,
  ``s1 = k2 / (k1 + k2)``, ``k = k1 s1``, ``c = c1 s1 + c2 (1 - s1)``, frictions ``2 a b / (a + b)``), so two
  surfaces of one material E give OpenSim's ``k = E^(2/3) / 2``. Per point, with ``vn = xdot`` the penetration
  rate and ``v_t`` the slip velocity: ``fh = 4/3 k sqrt(R k) (d^2 + cf)^(3/4) (1/2 + 1/2 tanh(bd d))``,
  ``fhc = fh (1 + 3/2 c vn) (1/2 + 1/2 tanh(bv (vn + 2 / (3 c))))`` (the gate 1 when c = 0), friction
  ``-fhc g(vslip) v_t`` with ``vslip = sqrt(|v_t|^2 + cf)`` and HuntCrossleyForce's ``g`` (OpenSim's), at the
  Contact's point (midway between the surfaces, as OpenSim; no stiffness-share shift); PE ``2/5 fh d``; power
  loss ``(fhc - fh) vn + fhc g |v_t|^2`` (the non-elastic forces' power; the tanh gates can make it slightly
  negative). Parameters (Model leaves, ``smooth_parameters``): cf (N), bd (1/m), bv (s/m).
* ``"exponential_spring"`` (``exponential_spring``): Simbody's ExponentialSpringForce (``exponential_spring``'s
  law and continuous anchor dynamics) of each Contact point against the half-space: pairs of a HalfSpace (surface
  1) with a Sphere (1 point), Capsule (its 2 end spheres), Ellipsoid (1) or Brick (its 8 corners)
  (``EXPONENTIAL_POINTS``). The station is the point's deepest point ``point - depth/2 normal`` (height ``-depth``
  over the plane); the plane frame P on the half-space's frame S is ``(x_P, y_P, z_P) = (z_S, y_S, -x_S)`` (z_P the
  outward normal), moving with the half-space's body; velocities are relative to it. The surfaces' materials and
  the transition velocity are not used (Simbody's element has neither): the parameters are one
  ``jb.ExponentialSpringParameters`` (Model leaves, ``exponential_parameters``), and each point has state
  variables (p0x, p0y, K) in ``State.z``. PE ``fzElas / d2 + kxy |pxy - p0'|^2 / 2``; power loss
  ``fzElas vz - f . v`` (the power the force takes from the motion, less its elastic normal part's; the
  friction's elastic part included).
"""

from __future__ import annotations

from types import SimpleNamespace

import jax.numpy as jnp

from jaxbody._dynamics.contact import exponential_spring as spring_law_module
from jaxbody._dynamics.contact import geometry
from jaxbody._dynamics.contact.compliant_models import PointForces, combine_by_shares
from jaxbody._dynamics.contact.hunt_crossley import harmonic_combination
from jaxbody._math import spatial

#: Table force models whose pairs the smooth law accepts (one point per contact with an effective radius).
SMOOTH_HERTZ_PAIRS = ("hertz_circular", "hertz_elliptical")
#: Pairs the exponential spring accepts (surface 1 a HalfSpace) -> Contact points per pair.
EXPONENTIAL_POINTS = {("HalfSpace", "Sphere"): 1, ("HalfSpace", "Capsule"): 2, ("HalfSpace", "Ellipsoid"): 1,
                      ("HalfSpace", "Brick"): 8}
#: Order of the exponential spring's parameter leaves (``exponential_parameters``).
EXPONENTIAL_PARAMETERS = ("d0", "d1", "d2", "normal_viscosity", "max_normal_force", "friction_elasticity",
                          "friction_viscosity", "settle_velocity", "mu_static", "mu_kinetic", "sliding_time_constant")


def smooth_hertz(contact, material1, material2, relative_velocity, transition_velocity, parameters) -> PointForces:
    """The smooth Hertz/Hunt-Crossley law (module docstring) at every Contact point (n, m); ``material_i`` (n, 5),
    ``parameters`` (3,): (cf, bd, bv)."""
    cf, bd, bv = parameters[0], parameters[1], parameters[2]
    _, k, c = combine_by_shares(material1[:, 0:1] ** (2.0 / 3.0), material2[:, 0:1] ** (2.0 / 3.0),
                                material1, material2)
    us, ud, uv = (harmonic_combination(material1[:, i], material2[:, i])[:, None] for i in (2, 3, 4))
    d, normal, point = contact.depth, contact.normal_G, contact.point_G
    R = 2.0 / (contact.curvatures[..., 0] + contact.curvatures[..., 1])
    fh = 4.0 / 3.0 * k * jnp.sqrt(R * k) * (d * d + cf) ** 0.75 * (0.5 + 0.5 * jnp.tanh(bd * d))
    v = relative_velocity(point)
    vn = -jnp.sum(v * normal, -1)
    v_t = v + vn[..., None] * normal
    dissipative = c != 0
    offset = 2.0 / (3.0 * jnp.where(dissipative, c, 1.0))
    gate = jnp.where(dissipative, 0.5 + 0.5 * jnp.tanh(bv * (vn + offset)), 1.0)
    fhc = fh * (1 + 1.5 * c * vn) * gate
    slip2 = jnp.sum(v_t * v_t, -1)
    g = geometry.hunt_crossley_friction_over_slip(jnp.sqrt(slip2 + cf), transition_velocity, us, ud, uv)
    force = fhc[..., None] * (normal - g[..., None] * v_t)
    return PointForces(point, force, 0.4 * fh * d, (fhc - fh) * vn + fhc * g * slip2)


def plane_frames(R_G1):
    """The exponential spring's plane frames R_GP (n, 3, 3) of half-space frames R_G1 (n, 3, 3): (z_S, y_S, -x_S)."""
    return jnp.stack([R_G1[:, :, 2], R_G1[:, :, 1], -R_G1[:, :, 0]], -1)


def exponential_spring(contact, R_G1, p_G1, relative_velocity, parameters, z):
    """Simbody's exponential spring at every Contact point (n, m) of half-space pairs (module docstring).

    ``R_G1``, ``p_G1`` (n, 3, 3), (n, 3): the half-spaces' frames; ``parameters`` (11,) in
    ``EXPONENTIAL_PARAMETERS`` order; ``z`` (n, m, 3) each point's (p0x, p0y, K). Returns (PointForces,
    z_dot (n, m, 3))."""
    n, m = contact.depth.shape
    params = SimpleNamespace(**{name: parameters[i] for i, name in enumerate(EXPONENTIAL_PARAMETERS)})  # as attributes
    station = contact.point_G - (0.5 * contact.depth)[..., None] * contact.normal_G
    R_GP = jnp.repeat(plane_frames(R_G1), m, 0)  # (n m, 3, 3)
    flat = station.reshape(-1, 3)
    p_P = spatial.mattvec(R_GP, flat - jnp.repeat(p_G1, m, 0))
    v_P = spatial.mattvec(R_GP, relative_velocity(station).reshape(-1, 3))
    zz = z.reshape(-1, 3)
    f_P, f_elas, anchor, limit = spring_law_module.spring_law(params, p_P, v_P, zz)
    r = p_P[:, :2] - anchor
    pe = f_elas / params.d2 + 0.5 * params.friction_elasticity * jnp.sum(r * r, -1)
    power = f_elas * v_P[:, 2] - jnp.sum(f_P * v_P, -1)
    force = spatial.matvec(R_GP, f_P).reshape(n, m, 3)
    z_dot = spring_law_module.anchor_rates(params, anchor, limit, zz).reshape(n, m, 3)
    return PointForces(station, force, pe.reshape(n, m), power.reshape(n, m)), z_dot
