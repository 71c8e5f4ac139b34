"""``jb.Force.*`` builders of gravity, mobility and constant-load elements (Simbody's argument order).

Each validates its arguments on the host (InvalidArgument naming the element and the body), registers a
handle with the GeneralForceSubsystem, and gives it a ``_build`` that ``realize_topology()`` calls to make
the traced element (``jaxbody._dynamics.force_elements``).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.force_checks import (
    check_matter,
    check_mobod,
    check_spring_coordinate,
    check_which_u,
    positive,
    scalar,
    vec3,
)
from jaxbody._api.force_handles import (
    ForceHandle,
    GravityHandle,
    MobilityDiscreteForceHandle,
)
from jaxbody._dynamics.force_elements import body, gravity, mobility
from jaxbody.errors import InvalidArgument


class BasicForces:
    """Gravity, mobility and constant-load builders of ``jb.Force``."""

    @staticmethod
    def UniformGravity(forces, matter, gravity_vector, zero_height=0.0) -> ForceHandle:
        """Gravity vector (m/s^2, in G) on every body; PE uses Simbody's ``m h0`` zero-height quirk."""
        check_matter(forces, matter, "UniformGravity")
        g = vec3(gravity_vector, "UniformGravity gravity")
        h = scalar(zero_height, "UniformGravity zero_height")
        return ForceHandle(forces, lambda: gravity.UniformGravity(gravity=g, zero_height=h), "UniformGravity")

    @staticmethod
    def Gravity(forces, matter, direction, magnitude=None, zero_height=0.0) -> GravityHandle:
        """``Gravity(forces, matter, down, g, zero_height)`` or ``Gravity(forces, matter, g_vector)``.

        A zero g_vector gives magnitude 0 along Simbody's default down (0, -1, 0). Exclude bodies, change
        direction, magnitude or zero height with the handle's setters (they return a new Model).
        """
        check_matter(forces, matter, "Gravity")
        d = np.asarray(vec3(direction, "Gravity direction"))
        n = np.linalg.norm(d)
        if magnitude is None:
            magnitude, d = n, (d / n if n > 0 else np.array([0.0, -1.0, 0.0]))
        elif n == 0:
            raise InvalidArgument("Gravity: the down direction must not be the zero vector")
        else:
            d = d / n
        down, g = jnp.asarray(d), scalar(magnitude, "Gravity magnitude", True)
        h = scalar(zero_height, "Gravity zero_height")

        def build():
            included = jnp.ones(matter.get_num_bodies()).at[0].set(0.0)
            return gravity.Gravity(down=down, magnitude=g, zero_height=h, included=included)

        return GravityHandle(forces, build, "Gravity")

    @staticmethod
    def MobilityLinearSpring(forces, mobod, which_q, stiffness, q0) -> ForceHandle:
        """``-K (q - q0)`` on the mobility of the same index; q[which_q] must have qdot = u[which_q] (checked)."""
        check_mobod(forces, mobod, "MobilityLinearSpring")
        label = f"MobilityLinearSpring on {mobod.name!r}"
        which_q = check_spring_coordinate(mobod, which_q, "MobilityLinearSpring")
        k, x0 = scalar(stiffness, f"{label}: stiffness", True), scalar(q0, f"{label}: q0")
        return ForceHandle(forces, lambda: mobility.MobilityLinearSpring(
            q_index=mobod.q_start + which_q, u_index=mobod.u_start + which_q, stiffness=k, q0=x0), label)

    @staticmethod
    def MobilityLinearDamper(forces, mobod, which_u, damping) -> ForceHandle:
        """``-c u[which_u]``."""
        check_mobod(forces, mobod, "MobilityLinearDamper")
        label = f"MobilityLinearDamper on {mobod.name!r}"
        which_u = check_which_u(mobod, which_u, label)
        c = scalar(damping, f"{label}: damping", True)
        return ForceHandle(forces, lambda: mobility.MobilityLinearDamper(u_index=mobod.u_start + which_u, damping=c), label)

    @staticmethod
    def MobilitySmoothCoulombFriction(forces, mobod, which_u, friction, transition_velocity) -> ForceHandle:
        """``-friction tanh(u[which_u] / transition_velocity)``: jaxbody's smooth Coulomb friction (Simbody has
        none; see jaxbody._dynamics.force_elements.mobility). friction >= 0 (N or N m), transition_velocity > 0
        (m/s or rad/s, the mobility's speed units)."""
        check_mobod(forces, mobod, "MobilitySmoothCoulombFriction")
        label = f"MobilitySmoothCoulombFriction on {mobod.name!r}"
        which_u = check_which_u(mobod, which_u, label)
        mu = scalar(friction, f"{label}: friction", True)
        v_t = positive(transition_velocity, f"{label}: transition_velocity")
        return ForceHandle(forces, lambda: mobility.MobilitySmoothCoulombFriction(
            u_index=mobod.u_start + which_u, friction=mu, transition_velocity=v_t), label)

    @staticmethod
    def MobilityConstantForce(forces, mobod, which_u, force) -> ForceHandle:
        """Constant generalized force on u[which_u]."""
        check_mobod(forces, mobod, "MobilityConstantForce")
        label = f"MobilityConstantForce on {mobod.name!r}"
        which_u = check_which_u(mobod, which_u, label)
        f = scalar(force, f"{label}: force")
        return ForceHandle(forces, lambda: mobility.MobilityConstantForce(u_index=mobod.u_start + which_u, force=f), label)

    @staticmethod
    def MobilityLinearStop(forces, mobod, which_q, stiffness, dissipation, q_low, q_high) -> ForceHandle:
        """Simbody's stop: one-sided springs beyond ``q_low`` / ``q_high`` with Hunt-Crossley-like dissipation."""
        check_mobod(forces, mobod, "MobilityLinearStop")
        label = f"MobilityLinearStop on {mobod.name!r}"
        which_q = check_spring_coordinate(mobod, which_q, "MobilityLinearStop")
        k, d = scalar(stiffness, f"{label}: stiffness", True), scalar(dissipation, f"{label}: dissipation", True)
        lo, hi = scalar(q_low, f"{label}: q_low"), scalar(q_high, f"{label}: q_high")
        if not lo <= hi:
            raise InvalidArgument(f"{label}: q_low ({float(lo)}) must not exceed q_high ({float(hi)})")
        return ForceHandle(forces, lambda: mobility.MobilityLinearStop(
            q_index=mobod.q_start + which_q, u_index=mobod.u_start + which_q, stiffness=k, dissipation=d,
            q_low=lo, q_high=hi), label)

    @staticmethod
    def MobilityDiscreteForce(forces, mobod, which_u, default_force=0.0) -> MobilityDiscreteForceHandle:
        """A per-State generalized force on u[which_u]: ``handle.set_mobility_force(state, f)``."""
        check_mobod(forces, mobod, "MobilityDiscreteForce")
        label = f"MobilityDiscreteForce on {mobod.name!r}"
        which_u = check_which_u(mobod, which_u, label)
        f = scalar(default_force, f"{label}: default_force")
        return MobilityDiscreteForceHandle(forces, lambda: mobility.MobilityDiscreteForce(
            u_index=mobod.u_start + which_u, default_force=f), label, num_z=1)

    @staticmethod
    def GlobalDamper(forces, matter, damping) -> ForceHandle:
        """``-c u`` on every mobility."""
        check_matter(forces, matter, "GlobalDamper")
        c = scalar(damping, "GlobalDamper damping", True)
        return ForceHandle(forces, lambda: mobility.GlobalDamper(damping=c), "GlobalDamper")

    @staticmethod
    def ConstantForce(forces, mobod, station, force) -> ForceHandle:
        """Force (in G) at a station (in B) of ``mobod``."""
        check_mobod(forces, mobod, "ConstantForce")
        label = f"ConstantForce on {mobod.name!r}"
        s, f = vec3(station, f"{label}: station"), vec3(force, f"{label}: force")
        return ForceHandle(forces, lambda: body.ConstantForce(body=mobod.index, station=s, force=f), label)

    @staticmethod
    def ConstantTorque(forces, mobod, torque) -> ForceHandle:
        """Torque (in G) on ``mobod``."""
        check_mobod(forces, mobod, "ConstantTorque")
        label = f"ConstantTorque on {mobod.name!r}"
        t = vec3(torque, f"{label}: torque")
        return ForceHandle(forces, lambda: body.ConstantTorque(body=mobod.index, torque=t), label)
