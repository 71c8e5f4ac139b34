"""Elements acting on mobilities (catalogue 5): Simbody's MobilityLinearSpring, MobilityLinearDamper,
MobilityConstantForce, MobilityLinearStop, MobilityDiscreteForce and GlobalDamper, and jaxbody's own
MobilitySmoothCoulombFriction (Simbody has none).

Indices into ``State.q`` / ``State.u`` are static; stiffnesses, bounds and forces are array leaves.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.forces import ForceElement, mobility_force, no_body_forces



class MobilityLinearSpring(ForceElement):
    """Mobility force ``-K (q_k - q0)`` on u index k (the builder checks qdot_k = u_k); PE ``K (q_k - q0)^2 / 2``.

    stiffness K (N/m or N m/rad), q0 (m or rad). Needs Position.
    """

    groupable = True
    index_fields = ("q_index", "u_index")

    q_index: int = eqx.field(static=True)
    u_index: int = eqx.field(static=True)
    stiffness: jnp.ndarray
    q0: jnp.ndarray

    def calc(self, model, state):
        x = state.q[self.q_index] - self.q0
        F, f = mobility_force(model, self.u_index, -self.stiffness * x)
        return F, f, 0.5 * self.stiffness * x * x


class MobilityLinearDamper(ForceElement):
    """Mobility force ``-c u_k``; no potential energy. damping c (N s/m or N m s/rad). Needs Velocity."""

    groupable = True
    index_fields = ("u_index",)

    u_index: int = eqx.field(static=True)
    damping: jnp.ndarray

    def calc(self, model, state):
        F, f = mobility_force(model, self.u_index, -self.damping * state.u[self.u_index])
        return F, f, jnp.zeros((), f.dtype)


class MobilitySmoothCoulombFriction(ForceElement):
    """jaxbody's own element (Simbody has none): Coulomb friction on u index k, regularized by tanh.

    Mobility force ``f = -F tanh(u_k / v_t)`` with friction F >= 0 (N for a translational mobility, N m for a
    rotational one) and transition velocity v_t > 0 (the mobility's speed units: m/s or rad/s); no potential
    energy; power ``-F u_k tanh(u_k / v_t) <= 0``. Smooth and odd in u_k: |f| < F always, ``|f| > 0.995 F``
    beyond ``|u_k| = 3 v_t``, and within the band it is a damper of coefficient ``F / v_t`` at u_k = 0 (the
    stiffest part: an explicit step must resolve the decay rate ``F / (v_t M_kk)``). A smooth stand-in for
    MuJoCo's joint ``frictionloss`` and URDF's ``<dynamics friction>``, which MuJoCo solves as a dry-friction
    constraint: sliding (|u_k| >> v_t) both give ``F`` against the motion, but where MuJoCo's constraint holds
    a joint at rest under a load below F, this element lets it creep at ``u_k = v_t artanh(load / F)``.
    friction and transition_velocity are array leaves (sweepable, differentiable). Needs Velocity; applied at
    the Dynamics stage.
    """

    groupable = True
    index_fields = ("u_index",)

    u_index: int = eqx.field(static=True)
    friction: jnp.ndarray
    transition_velocity: jnp.ndarray

    def calc(self, model, state):
        u = state.u[self.u_index]
        F, f = mobility_force(model, self.u_index, -self.friction * jnp.tanh(u / self.transition_velocity))
        return F, f, jnp.zeros((), f.dtype)


class MobilityConstantForce(ForceElement):
    """Constant mobility force ``f`` on u index k; no potential energy."""

    groupable = True
    index_fields = ("u_index",)

    u_index: int = eqx.field(static=True)
    force: jnp.ndarray

    def calc(self, model, state):
        F, f = mobility_force(model, self.u_index, self.force * jnp.ones((), state.u.dtype))
        return F, f, jnp.zeros((), f.dtype)


class MobilityLinearStop(ForceElement):
    """Simbody's MobilityLinearStop: a one-sided spring with Hunt-Crossley-like dissipation at each bound.

    ``q > q_high``: ``f = min(0, -k x (1 + d qdot))``, ``x = q - q_high``; ``q < q_low``:
    ``f = max(0, -k x (1 - d qdot))``, ``x = q - q_low``; between the bounds 0. Applied to the u of the
    same index (qdot = u there, checked by the builder). PE ``k x^2 / 2`` while engaged (catalogue 5).
    stiffness k, dissipation d (s/m or s/rad), bounds q_low < q_high. Needs Velocity.
    """

    groupable = True
    index_fields = ("q_index", "u_index")

    q_index: int = eqx.field(static=True)
    u_index: int = eqx.field(static=True)
    stiffness: jnp.ndarray
    dissipation: jnp.ndarray
    q_low: jnp.ndarray
    q_high: jnp.ndarray

    def calc(self, model, state):
        q, qdot = state.q[self.q_index], state.u[self.u_index]
        k, d = self.stiffness, self.dissipation
        above, below = q > self.q_high, q < self.q_low
        x = jnp.where(above, q - self.q_high, jnp.where(below, q - self.q_low, 0.0))
        f_high = jnp.minimum(0.0, -k * x * (1 + d * qdot))
        f_low = jnp.maximum(0.0, -k * x * (1 - d * qdot))
        F, f = mobility_force(model, self.u_index, jnp.where(above, f_high, jnp.where(below, f_low, 0.0)))
        return F, f, 0.5 * k * x * x


class MobilityDiscreteForce(ForceElement):
    """Simbody's MobilityDiscreteForce: the value of a per-State variable applied to one mobility.

    The value is this element's one z variable (``zdot = 0``, so integration keeps it; set it with the
    handle's ``set_mobility_force(state, f)``); ``default_force`` is its initial value. No potential energy.
    """

    u_index: int = eqx.field(static=True)
    default_force: jnp.ndarray

    def calc(self, model, state):
        raise NotImplementedError("MobilityDiscreteForce reads its value from State.z: use calc_with_z")

    def num_z(self) -> int:
        return 1

    def default_z(self, dtype):
        return jnp.reshape(self.default_force, (1,)).astype(dtype)

    def calc_with_z(self, model, state, z):
        F, f = mobility_force(model, self.u_index, z[0])
        return F, f, jnp.zeros((), f.dtype)


class GlobalDamper(ForceElement):
    """Mobility forces ``-c u`` on every mobility; no potential energy. Needs Velocity."""

    groupable = True

    damping: jnp.ndarray

    def calc(self, model, state):
        f = -self.damping * state.u
        return no_body_forces(model, f.dtype), f, jnp.zeros((), f.dtype)
