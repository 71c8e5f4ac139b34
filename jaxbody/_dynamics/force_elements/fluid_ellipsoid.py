"""MuJoCo's ellipsoid fluid model (``mj_ellipsoidFluidModel``, ``<geom fluidshape="ellipsoid">``) on one geom.

Notation: body B, the geom's frame E (origin p_BE in B, axes R_BE), its semi-axes s = (s0, s1, s2) (m, MuJoCo's
``mju_geomSemiAxes``: a sphere (r, r, r), a capsule (r, r, h + r), a cylinder (r, r, h), else the size), fluid
density rho (kg/m^3), dynamic viscosity mu (Pa s), wind (3,) (m/s, in G). w and v are the angular velocity and
the velocity of E's origin relative to the wind, both expressed in E. The coefficients are MuJoCo's
``geom_fluid`` row: interaction c (scales everything; MJCF writes it 0 or 1), blunt drag C_Db, slender drag
C_Ds, angular drag C_Dang, Kutta lift C_K, Magnus lift C_M, and the compiler's added-mass factors
m_v = (m_v0, m_v1, m_v2) (m^3) and inertia factors I_v (m^5), which multiply rho. In E (all products
element-wise):

* added mass, the velocity terms only: force ``(rho m_v v) x w``, torque ``(rho m_v v) x v + (rho I_v w) x w``.
  MuJoCo's explicit forward dynamics leaves out the term ``-rho (I_v, m_v) * (dw/dt, dv/dt)`` (it would make
  qfrc_fluid depend on qacc; MuJoCo keeps it only for its derivatives), and so does this element;
* Magnus lift ``C_M rho V (w x v)`` with V = 4/3 pi s0 s1 s2;
* Kutta lift ``(C_K rho cos(a) A_p (n x v)) x v`` with n = ((s1 s2)^2 v0, (s2 s0)^2 v1, (s0 s1)^2 v2), the
  projected area ``A_p = pi sqrt(P_d / max(eps, P_n))``, ``P_d = sum_i (s_j s_k)^4 v_i^2``,
  ``P_n = sum_i (s_j s_k v_i)^2`` and ``cos(a) = P_n / max(eps, |v| P_d)`` (eps = mjMINVAL = 1e-15);
* drag: force ``-(mu 3 pi D + rho |v| (A_p C_Db + C_Ds (A_max - A_p))) v`` with D = 2/3 (s0 + s1 + s2) and
  A_max = pi d_max d_mid (the largest and middle semi-axes); torque ``-(mu pi D^3 + rho |m|) w`` with
  ``m_i = w_i (C_Dang I_i + C_Ds (I_max - I_i))``, ``I_i = 8/15 pi s_i max(s_j, s_k)^4``, I_max = 8/15 pi d_mid
  d_max^4.

The sum, times c, acts at E's origin (as MuJoCo applies it); no potential energy. The norms and the square root
are written with gradient-safe branches, so the force's derivatives are finite (0 where MuJoCo's value is flat)
at v = 0 and w = 0. Cost: O(1) per geom. Needs Velocity.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.forces import ForceElement, no_mobility_forces, station_force, station_velocity
from jaxbody._math.spatial import safe_norm

MJMINVAL = 1e-15


def _safe_sqrt(x):
    """sqrt(x) for x >= 0 with a zero (not infinite) derivative at x = 0."""
    positive = x > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, x, 1.0)), 0.0)


def _ellipsoid_moments(s):
    """``I_i = 8/15 pi s_i max(s_j, s_k)^4`` (3,) for semi-axes s (3,)."""
    other = jnp.stack([jnp.maximum(s[1], s[2]), jnp.maximum(s[2], s[0]), jnp.maximum(s[0], s[1])])
    return 8.0 / 15.0 * jnp.pi * s * other**4


def ellipsoid_fluid_wrench(w, v, s, coef, virtual_mass, virtual_inertia, rho, mu):
    """(torque, force) (3,) each, in E, on a geom with semi-axes s (3,) moving at (w, v) relative to the fluid
    (in E); ``coef`` (6,): interaction, blunt drag, slender drag, angular drag, Kutta lift, Magnus lift (module
    doc)."""
    c, blunt, slender, angular, kutta, magnus = (coef[i] for i in range(6))
    lin_mom, ang_mom = rho * virtual_mass * v, rho * virtual_inertia * w
    torque = jnp.cross(lin_mom, v) + jnp.cross(ang_mom, w)
    force = jnp.cross(lin_mom, w)

    d_max, d_min = jnp.max(s), jnp.min(s)
    d_mid = jnp.sum(s) - d_max - d_min
    a_max = jnp.pi * d_max * d_mid
    volume = 4.0 / 3.0 * jnp.pi * s[0] * s[1] * s[2]
    pair = jnp.stack([s[1] * s[2], s[2] * s[0], s[0] * s[1]])
    proj_denom = jnp.sum(pair**4 * v**2)
    proj_num = jnp.sum((pair * v) ** 2)
    a_proj = jnp.pi * _safe_sqrt(proj_denom / jnp.maximum(MJMINVAL, proj_num))
    speed = safe_norm(v)
    cos_alpha = proj_num / jnp.maximum(MJMINVAL, speed * proj_denom)
    kutta_circ = kutta * rho * cos_alpha * a_proj * jnp.cross(pair**2 * v, v)
    magnus_force = magnus * rho * volume * jnp.cross(w, v)

    diameter = 2.0 / 3.0 * jnp.sum(s)
    moments = _ellipsoid_moments(s)
    i_max = 8.0 / 15.0 * jnp.pi * d_mid * d_max**4
    mom_visc = w * (angular * moments + slender * (i_max - moments))
    drag_lin = mu * 3.0 * jnp.pi * diameter + rho * speed * (a_proj * blunt + slender * (a_max - a_proj))
    drag_ang = mu * jnp.pi * diameter**3 + rho * safe_norm(mom_visc)
    torque = torque - drag_ang * w
    force = force + magnus_force + jnp.cross(kutta_circ, v) - drag_lin * v
    return c * torque, c * force


class EllipsoidFluid(ForceElement):
    """MuJoCo's ellipsoid fluid forces on one geom of a body (module doc); every number is a Model leaf."""

    groupable = True
    index_fields = ("body",)

    body: int = eqx.field(static=True)
    p_BE: jnp.ndarray             # (3,) m, the geom's origin in B
    R_BE: jnp.ndarray             # (3, 3) the geom's axes in B
    semiaxes: jnp.ndarray         # (3,) m
    coefficients: jnp.ndarray     # (6,) interaction, blunt drag, slender drag, angular drag, Kutta lift, Magnus lift
    virtual_mass: jnp.ndarray     # (3,) m^3
    virtual_inertia: jnp.ndarray  # (3,) m^5
    density: jnp.ndarray          # kg/m^3
    viscosity: jnp.ndarray        # Pa s
    wind: jnp.ndarray             # (3,) m/s in G

    def calc(self, model, state):
        pos, vel = state.position, state.velocity
        R_GE = pos.R_GB[self.body] @ self.R_BE
        w = R_GE.T @ vel.V_GB[self.body, 0]
        v = R_GE.T @ (station_velocity(pos, vel, self.body, self.p_BE) - self.wind)
        torque_E, force_E = ellipsoid_fluid_wrench(w, v, self.semiaxes, self.coefficients, self.virtual_mass,
                                                   self.virtual_inertia, self.density, self.viscosity)
        F = station_force(model.topology.nbodies, self.body, pos.R_GB, self.p_BE, R_GE @ force_E)
        F = F.at[self.body, 0].add(R_GE @ torque_E)
        return F, no_mobility_forces(model, F.dtype), jnp.zeros((), F.dtype)
