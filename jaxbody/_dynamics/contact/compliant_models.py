"""Simbody's CompliantContactSubsystem force models (CompliantContactSubsystem.cpp, Simbody 3.9), per point.

A force model turns a tracker's ``Contact`` (n pairs, m points) and the two surfaces' materials into forces::

    model(contact, material1, material2, thickness1, thickness2, relative_velocity, transition_velocity)
        -> PointForces

``material_i`` (n, 5): (stiffness, dissipation, static, dynamic, viscous friction) of each pair's surface i;
``thickness_i`` (n,) m; ``relative_velocity(point_G (n, m, 3)) -> (n, m, 3)``: velocity in G of surface 2's
material point at ``point_G`` relative to surface 1's material point there; ``transition_velocity`` (m/s).
Points with depth <= 0 give zero force, energy and power, with finite gradients (where-safe formulas).

Simbody's laws, with ``x`` the depth, ``xdot = -v . n`` the penetration rate, ``v_t`` the slip velocity:

* Materials combine by stiffness shares: ``s1 = k2 / (k1 + k2)`` (Hertz: ``k_i = stiffness_i^(2/3)``;
  penalty: the stiffness itself), ``k = k1 s1``, ``c = c1 s1 + c2 (1 - s1)``; the force acts at
  ``origin + x (1/2 - s1) n``. Friction coefficients combine as ``2 a b / (a + b)``
  (``hunt_crossley.harmonic_combination``).
* Hertz (``hertz_circular``, ``hertz_elliptical``): ``fH = e 4/3 k x sqrt(R k x)``, ``R = 2 / (kmax + kmin)``,
  ``e`` = 1 (circular) or Simbody's eccentricity correction from the ellipse ratio (elliptical);
  ``fN = fH (1 + 3/2 c xdot)``; PE ``2/5 fH x``; power loss ``3/2 fH c xdot^2`` + friction's.
* Penalty (``point_penalty``, Simbody's BrickHalfSpacePenalty per corner): ``fK = k x``, ``fN = fK (1 + c xdot)``,
  PE ``k x^2 / 2`` (kept while fN <= 0, where the power loss is ``-fK xdot``).
* ``fN <= 0``: no force (Hertz: no PE, no power either, as Simbody). Friction: ``mu(v)`` Simbody's stribeck
  law with step5 blends (``stribeck_over_slip``), force ``-fN mu v_t / |v_t|`` on surface 2.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax.numpy as jnp

from jaxbody._dynamics.contact.hunt_crossley import harmonic_combination
from jaxbody._math import spatial


class PointForces(NamedTuple):
    """Per point (n, m): ``point_G`` (n, m, 3) where the force acts, ``force_G`` (n, m, 3) on surface 2 (its
    negative on surface 1), ``potential_energy`` (n, m) J, ``power_loss`` (n, m) W (>= 0)."""

    point_G: jnp.ndarray
    force_G: jnp.ndarray
    potential_energy: jnp.ndarray
    power_loss: jnp.ndarray


def step5(x):
    """SimTK's step5 ``10 x^3 - 15 x^4 + 6 x^5`` on [0, 1]."""
    return x * x * x * (10 + x * (6 * x - 15))


def stribeck_over_slip(vslip, transition_velocity, us, ud, uv):
    """Simbody's CompliantContactSubsystem friction ``mu`` divided by the slip speed (finite at 0).

    ``v = vslip / vt``: ``mu = ud`` (v >= 3), ``us - (us - ud) step5((v - 1) / 2)`` (1 <= v < 3),
    ``us step5(v)`` (v < 1), plus ``uv vslip`` (viscous). Differs from HuntCrossleyForce's law
    (``geometry.hunt_crossley_friction_over_slip``).
    """
    v = vslip / transition_velocity
    sliding = v >= 1
    over = 1.0 / jnp.where(sliding, vslip, 1.0)
    dry_sliding = jnp.where(v >= 3, ud, us - (us - ud) * step5(jnp.clip((v - 1) / 2, 0.0, 1.0))) * over
    w = jnp.where(sliding, 0.0, v)
    dry_sticking = us * w * w * (10 + w * (6 * w - 15)) / transition_velocity
    return jnp.where(sliding, dry_sliding, dry_sticking) + uv


_RATIO_U = (0.40227436, 3.7491752e-2, 7.4855761e-4, 2.1667028e-6)
_RATIO_V = (0.42678878, 4.2605401e-2, 9.0786922e-4, 2.7868927e-6)
_KE_A = (1.38629436112, 0.09666344259, 0.03590092383, 0.03742563713, 0.01451196212)
_KE_B = (0.5, 0.12498593597, 0.06880248576, 0.03328355346, 0.00441787012)
_KE_C = (1.0, 0.44325141463, 0.06260601220, 0.04757383546, 0.01736506451)
_KE_D = (0.0, 0.24998368310, 0.09200180037, 0.04069697526, 0.00526449639)


def _poly(coefficients, x):
    return sum(c * x**i for i, c in enumerate(coefficients))


def eccentricity_correction(kmax, kmin):
    """Simbody's Hertz force correction e for an elliptical contact of curvatures kmax >= kmin > 0.

    Ellipse ratio k = a / b from Antoine et al.'s approximation, then Simbody's approximate complete elliptic
    integrals K(m), E(m) (max error 2e-8) at ``m = 1 - 1/k^2``; ``e = pi k sqrt(E K) / (2 K^2)``; 1 where
    kmax == kmin (m <= 0: K = E = pi/2, as Simbody).
    """
    equal = kmax <= kmin
    ratio = jnp.where(equal, 2.0, kmax / jnp.where(equal, 1.0, kmin))
    q = jnp.log10(ratio) ** 2
    p = 2 * (1 + _poly((0.0,) + _RATIO_U, q)) / (3 * (1 + _poly((0.0,) + _RATIO_V, q)))
    k = ratio**p
    m1 = 1 / (k * k)  # 1 - m
    log_m1 = jnp.log(m1)
    K = _poly(_KE_A, m1) - log_m1 * _poly(_KE_B, m1)
    E = _poly(_KE_C, m1) - log_m1 * _poly(_KE_D, m1)
    return jnp.where(equal, 1.0, math.pi * k * jnp.sqrt(E * K) / (2 * K * K))


def _normal_and_friction(contact, f_elastic, c, xdot_factor, s1, x, mat1, mat2, relative_velocity, vt_transition):
    """Shared tail of the Hertz and penalty laws: (point, force on 2, fN > 0 mask, fHC, xdot, friction power)."""
    normal = contact.normal_G
    point = contact.point_G + (x * (0.5 - s1))[..., None] * normal
    vel = relative_velocity(point)
    xdot = -jnp.sum(vel * normal, -1)
    v_t = vel + xdot[..., None] * normal
    f_hc = f_elastic * xdot_factor * c * xdot
    f_n = f_elastic + f_hc
    pushing = (x > 0) & (f_n > 0)
    f_n = jnp.where(pushing, f_n, 0.0)
    us, ud, uv = (harmonic_combination(mat1[..., i], mat2[..., i])[:, None] for i in (2, 3, 4))
    vslip = spatial.safe_norm(v_t)
    g = stribeck_over_slip(vslip, vt_transition, us, ud, uv)
    force = f_n[..., None] * (normal - g[..., None] * v_t)
    return point, force, pushing, f_hc, xdot, f_n * g * vslip * vslip


def combine_by_shares(k1, k2, mat1, mat2):
    """Simbody's stiffness-share combination (module docstring) of the two surfaces' stiffnesses k1, k2 (n, 1)
    (already in the model's form: stiffness^(2/3), stiffness, or stiffness/thickness) and materials (n, 5):
    ``(s1, k, c)`` each (n, 1), ``s1 = k2 / (k1 + k2)``, ``k = k1 s1``, ``c = c1 s1 + c2 (1 - s1)``."""
    s1 = k2 / (k1 + k2)
    return s1, k1 * s1, mat1[:, 1:2] * s1 + mat2[:, 1:2] * (1 - s1)


def _hertz(contact, mat1, mat2, relative_velocity, transition_velocity, elliptical):
    s1, k, c = combine_by_shares(mat1[:, 0:1] ** (2.0 / 3.0), mat2[:, 0:1] ** (2.0 / 3.0), mat1, mat2)
    touching = contact.depth > 0
    x = jnp.where(touching, contact.depth, 0.0)
    kmax, kmin = contact.curvatures[..., 0], contact.curvatures[..., 1]
    R = 2.0 / jnp.where(touching, kmax + kmin, 1.0)
    e = eccentricity_correction(kmax, kmin) if elliptical else 1.0
    rkx = R * k * x
    f_h = e * 4.0 / 3.0 * k * x * jnp.where(touching, jnp.sqrt(jnp.where(touching, rkx, 1.0)), 0.0)
    point, force, pushing, f_hc, xdot, p_friction = _normal_and_friction(
        contact, f_h, c, 1.5, s1, x, mat1, mat2, relative_velocity, transition_velocity)
    pe = jnp.where(pushing, 0.4 * f_h * x, 0.0)
    power = jnp.where(pushing, f_hc * xdot, 0.0) + p_friction
    return PointForces(point, force, pe, power)


def hertz_circular(contact, material1, material2, thickness1, thickness2, relative_velocity, transition_velocity):
    """Simbody's HertzCircular (effective radius ``1 / kmax`` from the Contact's curvatures)."""
    return _hertz(contact, material1, material2, relative_velocity, transition_velocity, elliptical=False)


def hertz_elliptical(contact, material1, material2, thickness1, thickness2, relative_velocity, transition_velocity):
    """Simbody's HertzElliptical: R = 2 / (kmax + kmin) and the eccentricity correction."""
    return _hertz(contact, material1, material2, relative_velocity, transition_velocity, elliptical=True)


def point_penalty(contact, material1, material2, thickness1, thickness2, relative_velocity, transition_velocity):
    """Simbody's BrickHalfSpacePenalty law, per point: linear stiffness, ``fN = k x (1 + c xdot)``."""
    s1, k, c = combine_by_shares(material1[:, 0:1], material2[:, 0:1], material1, material2)
    touching = contact.depth > 0
    x = jnp.where(touching, contact.depth, 0.0)
    f_k = k * x
    point, force, pushing, f_hc, xdot, p_friction = _normal_and_friction(
        contact, f_k, c, 1.0, s1, x, material1, material2, relative_velocity, transition_velocity)
    pe = 0.5 * k * x * x
    power = jnp.where(pushing, f_hc * xdot, jnp.where(touching, -f_k * xdot, 0.0)) + p_friction
    return PointForces(point, force, pe, power)


def elastic_foundation(contact, material1, material2, thickness1, thickness2, relative_velocity, transition_velocity):
    """Simbody's CompliantContactSubsystem ElasticFoundation, per mesh face (a Contact point with its ``area``):
    ``kh_i = stiffness_i / thickness_i``, ``s1 = kh2 / (kh1 + kh2)``, ``kh = kh1 s1``, ``c = c1 s1 + c2 (1 - s1)``,
    ``fK = kh area x``, ``fN = fK (1 + c xdot)``; no force, energy or power where fN <= 0; PE ``fK x / 2``.
    (Simbody applies the patch's resultant at a pressure-weighted point; the resultant is the same.)"""
    s1, kh, c = combine_by_shares(material1[:, 0:1] / thickness1[:, None], material2[:, 0:1] / thickness2[:, None],
                                  material1, material2)
    touching = contact.depth > 0
    x = jnp.where(touching, contact.depth, 0.0)
    f_k = kh * contact.area * x
    point, force, pushing, f_hc, xdot, p_friction = _normal_and_friction(
        contact, f_k, c, 1.0, s1, x, material1, material2, relative_velocity, transition_velocity)
    pe = jnp.where(pushing, 0.5 * f_k * x, 0.0)
    power = jnp.where(pushing, f_hc * xdot, 0.0) + p_friction
    return PointForces(point, force, pe, power)


#: Force model name (as the pair table gives it) -> function with the signature above.
FORCE_MODELS = {
    "hertz_circular": hertz_circular,
    "hertz_elliptical": hertz_elliptical,
    "point_penalty": point_penalty,
    "elastic_foundation": elastic_foundation,
}
