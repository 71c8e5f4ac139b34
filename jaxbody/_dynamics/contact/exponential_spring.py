"""Simbody's ExponentialSpringForce (ExponentialSpringForce.cpp, Simbody 3.9), stations vectorized.

Contact plane P fixed in Ground (``X_GP``; its z axis is the normal). Per body station, with
``p_P, v_P`` its location and velocity in P (``pz``, ``vz`` normal, ``pxy``, ``vxy`` tangential):

* normal: ``fzElas = d1 exp(-d2 (pz - d0))``, ``fzDamp = -cz vz fzElas``, ``fz = fzElas + fzDamp``, clamped to
  [0, maxFz] (Simbody's adjustments of fzElas/fzDamp kept);
* friction, with elastic anchor point p0 and sliding state K in [0, 1]: ``mu = mus - K (mus - muk)``, limit
  ``mu fz``; model 1 (pure damping ``-cxy vxy``, capped at the limit) and model 2 (damped spring
  ``-kxy (pxy - p0) - cxy vxy``, both parts scaled to the limit) blended by K; the updated anchor
  ``p0' = pxy + fricElas / kxy``;
* the force acts on the body at the station and its negative on Ground; PE ``fzElas / d2 + kxy |pxy - p0'|^2 / 2``.

State variables (z, 3 per station): the anchor point (p0x, p0y) in P and the sliding state K. Deviation from
Simbody, where p0 and K are auto-update *discrete* variables set after each step (``p0 <- p0'`` and
``K <- stepUp(clamp(|p0' - p0| / (dt vSettle), 0, 1))``): here they are continuous, each relaxing with the
time constant ``tau`` (``sliding_time_constant``), ``p0dot = (p0' - p0) / tau``,
``Kdot = (stepUp(clamp(|p0dot| / vSettle, 0, 1)) - K) / tau`` (K target 1 when the friction limit is below
Simbody's SignificantReal) -- Simbody's update with dt replaced by tau, smooth and integrable by RK4.
At given p0 and K the forces and PE are Simbody's exactly. mus and muk are parameters (Simbody: discrete).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.contact import geometry
from jaxbody._dynamics.forces import ForceElement
from jaxbody._math import spatial
from jaxbody._math.linalg import SIGNIFICANT_REAL

_MAX_EXPONENT = 700.0  # exp() argument cap: finite forces and gradients at any depth (|pz - d0| < 0.6 m unaffected)


def step_up(x):
    """SimTK::stepUp: ``10 x^3 - 15 x^4 + 6 x^5`` on [0, 1]."""
    return x * x * x * (10 + x * (6 * x - 15))


def _capped(f, limit, limit_sqr):
    """``f`` (n, 3) scaled down to length ``limit`` where longer: (capped force, scale, exceeded)."""
    n2 = jnp.sum(f * f, -1)
    exceeded = n2 > limit_sqr
    scale = jnp.where(exceeded, limit / jnp.sqrt(jnp.where(exceeded, n2, 1.0)), 1.0)
    return f * scale[:, None], scale


def spring_law(params, p_P, v_P, z):
    """Simbody's exponential spring at n stations: ``p_P``, ``v_P`` (n, 3) each station's location and velocity in
    the plane frame P (relative to the plane), ``z`` (n, 3) its (p0x, p0y, K); ``params`` any object with the
    ExponentialSpringForce parameter attributes (d0, d1, d2, normal_viscosity, max_normal_force,
    friction_elasticity, friction_viscosity, mu_static, mu_kinetic). Returns (f_P (n, 3) the force on the
    station in P, fzElas (n,), p0' (n, 2) the updated anchors, the friction limit (n,))."""
    p0, K = z[:, :2], z[:, 2]
    pz, vz, pxy, vxy = p_P[:, 2], v_P[:, 2], p_P[:, :2], v_P[:, :2]
    f_elas = params.d1 * jnp.exp(jnp.minimum(-params.d2 * (pz - params.d0), _MAX_EXPONENT))
    f_damp = -params.normal_viscosity * vz * f_elas
    fz = f_elas + f_damp
    f_damp = jnp.where(fz < 0, -f_elas, f_damp)
    fz = jnp.clip(fz, 0.0, params.max_normal_force)
    f_elas = jnp.where(fz >= params.max_normal_force, fz - f_damp, f_elas)
    mu = params.mu_static - K * (params.mu_static - params.mu_kinetic)
    limit = mu * fz
    limit_sqr = limit * limit
    damp2 = -params.friction_viscosity * vxy
    damp1, _ = _capped(damp2, limit, limit_sqr)
    elas2 = -params.friction_elasticity * (pxy - p0)
    _, scale = _capped(elas2 + damp2, limit, limit_sqr)
    elas2, damp2 = elas2 * scale[:, None], damp2 * scale[:, None]
    elas = elas2 * (1 - K)[:, None]
    fric = elas + damp2 + (damp1 - damp2) * K[:, None]
    moving = limit >= SIGNIFICANT_REAL
    fric = jnp.where(moving[:, None], fric, 0.0)
    anchor = jnp.where(moving[:, None], pxy + elas / params.friction_elasticity, pxy)
    return jnp.concatenate([fric, fz[:, None]], -1), f_elas, anchor, limit


def anchor_rates(params, anchor, limit, z):
    """d/dt of the (n, 3) state (p0x, p0y, K) (module docstring) from ``spring_law``'s updated anchors and limits;
    ``params`` also needs ``sliding_time_constant`` and ``settle_velocity``."""
    tau = params.sliding_time_constant
    p0_dot = (anchor - z[:, :2]) / tau
    speed = spatial.safe_norm(p0_dot)
    target = jnp.where(limit > SIGNIFICANT_REAL, step_up(jnp.clip(speed / params.settle_velocity, 0.0, 1.0)), 1.0)
    return jnp.concatenate([p0_dot, ((target - z[:, 2]) / tau)[:, None]], -1)


class ExponentialSpringForce(ForceElement):
    """Exponential springs of stations on bodies against one contact plane fixed in Ground.

    Static: ``body`` (n,). Leaves: ``R_GP`` (3, 3), ``p_GP`` (3,) the plane; ``station`` (n, 3) in B, m;
    Simbody's ExponentialSpringParameters as scalars: ``d0`` (m), ``d1`` (N), ``d2`` (1/m),
    ``normal_viscosity`` cz (s/m), ``max_normal_force`` (N), ``friction_elasticity`` kxy (N/m),
    ``friction_viscosity`` cxy (N s/m), ``settle_velocity`` (m/s), ``mu_static``, ``mu_kinetic``; and
    ``sliding_time_constant`` tau (s) of the continuous anchor/sliding dynamics. ``initial_z`` (n, 3): the
    default (p0x, p0y, K) per station (Simbody: p0 = 0, K = 1). Needs Velocity.
    """

    body: tuple = eqx.field(static=True)
    R_GP: jnp.ndarray
    p_GP: jnp.ndarray
    station: jnp.ndarray
    d0: jnp.ndarray
    d1: jnp.ndarray
    d2: jnp.ndarray
    normal_viscosity: jnp.ndarray
    max_normal_force: jnp.ndarray
    friction_elasticity: jnp.ndarray
    friction_viscosity: jnp.ndarray
    settle_velocity: jnp.ndarray
    mu_static: jnp.ndarray
    mu_kinetic: jnp.ndarray
    sliding_time_constant: jnp.ndarray
    initial_z: jnp.ndarray

    def num_z(self) -> int:
        return 3 * len(self.body)

    def default_z(self, dtype):
        return jnp.asarray(self.initial_z, dtype).reshape(-1)

    def calc(self, model, state):
        """Forces at the model's default anchor points and sliding states (``initial_z``)."""
        return self.calc_with_z(model, state, self.default_z(state.q.dtype))

    def _station_in_plane(self, state):
        body = np.asarray(self.body)
        p_G, v_G = geometry.station_kinematics(state.position, state.velocity, body, self.station)
        return p_G, spatial.mattvec(self.R_GP, p_G - self.p_GP), spatial.mattvec(self.R_GP, v_G)

    def calc_details(self, state, z):
        """(f_P (n, 3) force on each station in P, fzElas (n,), p0' (n, 2) updated anchors, limit (n,))."""
        _, p_P, v_P = self._station_in_plane(state)
        return spring_law(self, p_P, v_P, z.reshape(-1, 3))

    def calc_with_z(self, model, state, z):
        p_G, p_P, _ = self._station_in_plane(state)
        f_P, f_elas, anchor, _ = self.calc_details(state, z)
        f_G = spatial.matvec(self.R_GP, f_P)
        nb = model.topology.nbodies
        F = geometry.point_forces_on_bodies(nb, state.position, np.asarray(self.body), p_G, f_G)
        F = F.at[0].add(geometry.point_forces_on_bodies(1, state.position, np.zeros(len(self.body), int), p_G, -f_G)[0])
        r = p_P[:, :2] - anchor
        pe = jnp.sum(f_elas / self.d2 + 0.5 * self.friction_elasticity * jnp.sum(r * r, -1))
        return F, jnp.zeros(model.topology.nu, F.dtype), pe

    def calc_z_dot(self, model, state, z):
        _, _, anchor, limit = self.calc_details(state, z)
        return anchor_rates(self, anchor, limit, z.reshape(-1, 3)).reshape(-1)
