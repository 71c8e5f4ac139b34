"""Simbody's Force::LinearBushing (catalogue 5): a 6-dof linear spring-damper between frames F (on body 1)
and M (on body 2).

Coordinates ``q = (a, p)``: a the body-fixed X-Y-Z angles of R_FM, p = p_FM in F. Rates
``qdot = (N_B(a) w_FM_M, v_FM in F)`` with N_B the body-frame XYZ kinematic matrix (w expressed in M, the
derivative of p_FM taken in F). Generalized forces ``f = -(k * q + c * qdot)`` (per coordinate); the moment
on body 2 is ``R_GM N_B^T f[0:3]`` and the force ``R_GF f[3:6]`` acts at Mo; body 1 gets the opposite at the
same point (so at Fo with the moment of the shift p_FM). PE ``sum k q^2 / 2``. The energy dissipated so far,
``integral of sum c qdot^2``, is this element's one z variable.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.forces import ForceElement, no_body_forces, no_mobility_forces
from jaxbody._math import spatial


def n_body_xyz(a):
    """``N_B`` (3, 3) with ``adot = N_B w_M`` for body-fixed X-Y-Z angles a (w in the rotated frame).

    Singular at cos a1 = 0 (Simbody's calcNForBodyXYZInBodyFrame).
    """
    s1, c1 = jnp.sin(a[1]), jnp.cos(a[1])
    s2, c2 = jnp.sin(a[2]), jnp.cos(a[2])
    z = jnp.zeros_like(c1)
    return jnp.stack([
        jnp.stack([c2, -s2, z]),
        jnp.stack([c1 * s2, c1 * c2, z]),
        jnp.stack([-s1 * c2, s1 * s2, c1]),
    ]) / c1


class TwoFrameBushing(ForceElement):
    """Frame F = X_B1F on body1 and frame M = X_B2M on body2, their bushing coordinates q = (a, p) and rates, and
    the body forces of generalized forces on q (the module docstring); LinearBushing and OpenSim's
    ExpressionBasedBushingForce differ only in the generalized forces."""

    body1: int = eqx.field(static=True)
    body2: int = eqx.field(static=True)
    R_B1F: jnp.ndarray
    p_B1F: jnp.ndarray
    R_B2M: jnp.ndarray
    p_B2M: jnp.ndarray

    def calc_q_and_q_dot(self, state):
        """The bushing's coordinates q (6,) and rates qdot (6,), with the frames they came from."""
        pos, vel = state.position, state.velocity
        b1, b2 = self.body1, self.body2
        p_B1F_G, p_B2M_G = spatial.matvec(pos.R_GB[b1], self.p_B1F), spatial.matvec(pos.R_GB[b2], self.p_B2M)
        R_GF, R_GM = spatial.matmul(pos.R_GB[b1], self.R_B1F), spatial.matmul(pos.R_GB[b2], self.R_B2M)
        p_FM_G = pos.p_GB[b2] + p_B2M_G - pos.p_GB[b1] - p_B1F_G
        R_FM = spatial.tmatmul(R_GF, R_GM)
        a, p_FM = spatial.body_fixed_xyz_from_rotation(R_FM), spatial.mattvec(R_GF, p_FM_G)
        (w1, v1), (w2, v2) = vel.V_GB[b1], vel.V_GB[b2]
        v_GF, v_GM = v1 + jnp.cross(w1, p_B1F_G), v2 + jnp.cross(w2, p_B2M_G)
        w_FM_F = spatial.mattvec(R_GF, w2 - w1)
        v_FM_F = spatial.mattvec(R_GF, v_GM - v_GF - jnp.cross(w1, p_FM_G))
        N_B = n_body_xyz(a)
        qdot = jnp.concatenate([spatial.matvec(N_B, spatial.mattvec(R_FM, w_FM_F)), v_FM_F])
        return jnp.concatenate([a, p_FM]), qdot, (N_B, R_GF, R_GM, p_B1F_G, p_B2M_G, p_FM_G)

    def body_forces_of(self, model, f, frames):
        """Body forces (nbodies, 2, 3) of generalized forces f (6,) on the bushing coordinates."""
        N_B, R_GF, R_GM, p_B1F_G, p_B2M_G, p_FM_G = frames
        m_G = spatial.matvec(R_GM, spatial.mattvec(N_B, f[:3]))
        f_G = spatial.matvec(R_GF, f[3:])
        F2 = jnp.stack([m_G + jnp.cross(p_B2M_G, f_G), f_G])
        F1 = jnp.stack([-(m_G + jnp.cross(p_FM_G, f_G)) - jnp.cross(p_B1F_G, f_G), -f_G])
        return no_body_forces(model, f.dtype).at[self.body2].add(F2).at[self.body1].add(F1)


class LinearBushing(TwoFrameBushing):
    """Linear bushing between frame F = X_B1F on body1 and frame M = X_B2M on body2 (see the module docstring).

    stiffness (6,): 3 rotational (N m/rad) then 3 translational (N/m); damping (6,) likewise (per unit rate).
    Needs Velocity. z = (dissipated energy (J),), zdot = ``sum c qdot^2``.
    """

    stiffness: jnp.ndarray
    damping: jnp.ndarray

    def calc(self, model, state):
        q, qdot, frames = self.calc_q_and_q_dot(state)
        F = self.body_forces_of(model, -(self.stiffness * q + self.damping * qdot), frames)
        return F, no_mobility_forces(model, F.dtype), 0.5 * jnp.sum(self.stiffness * q * q)

    def num_z(self) -> int:
        return 1

    def calc_z_dot(self, model, state, z):
        _, qdot, _ = self.calc_q_and_q_dot(state)
        return jnp.sum(self.damping * qdot * qdot)[None]
