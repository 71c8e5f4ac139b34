"""``jb.Force.*``: host-side constructors of force elements, Simbody's argument order.

Each call validates its arguments, registers the element with a
GeneralForceSubsystem and returns a handle; ``realize_topology()`` turns the
handle into the traced element of ``jaxbody._dynamics.forces``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.mobilized_body import MobilizedBody
from jaxbody._api.system import GeneralForceSubsystem, SimbodyMatterSubsystem
from jaxbody._dynamics import forces as fe
from jaxbody.errors import InvalidArgument


def _vec3(x, what):
    a = np.asarray(x, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise InvalidArgument(f"{what} must be 3 finite numbers, got {x!r}")
    return jnp.asarray(a)


def _scalar(x, what, nonnegative=False):
    a = np.asarray(x, dtype=float)
    if a.shape != () or not np.isfinite(a) or (nonnegative and a < 0):
        raise InvalidArgument(f"{what} must be a finite{' non-negative' if nonnegative else ''} number, got {x!r}")
    return jnp.asarray(a)


def _check_forces(forces):
    if not isinstance(forces, GeneralForceSubsystem):
        raise InvalidArgument(f"first argument must be a jb.GeneralForceSubsystem, got {type(forces).__name__}")


def _check_mobod(mobod, what):
    if not isinstance(mobod, MobilizedBody):
        raise InvalidArgument(f"{what} must be a jb.MobilizedBody, got {type(mobod).__name__}")


class ForceHandle:
    """A registered force element; ``index`` is its position in ``model.forces``."""

    def __init__(self, forces: GeneralForceSubsystem, build):
        _check_forces(forces)
        self._build = build
        self.index = forces._add(self)


class Force:
    """Namespace of Simbody's force elements (``Force::UniformGravity`` -> ``jb.Force.UniformGravity``)."""

    @staticmethod
    def UniformGravity(forces, matter, gravity, zero_height=0.0) -> ForceHandle:
        """Gravity vector ``gravity`` (m/s^2, in G) on every body."""
        if not isinstance(matter, SimbodyMatterSubsystem):
            raise InvalidArgument("UniformGravity needs the SimbodyMatterSubsystem as second argument")
        g, h = _vec3(gravity, "UniformGravity gravity"), _scalar(zero_height, "zero_height")
        return ForceHandle(forces, lambda: fe.UniformGravity(gravity=g, zero_height=h))

    @staticmethod
    def Gravity(forces, matter, direction, magnitude=None, zero_height=0.0) -> ForceHandle:
        """``Gravity(forces, matter, down, g)`` or ``Gravity(forces, matter, g_vector)``."""
        if not isinstance(matter, SimbodyMatterSubsystem):
            raise InvalidArgument("Gravity needs the SimbodyMatterSubsystem as second argument")
        d = np.asarray(_vec3(direction, "Gravity direction"))
        if magnitude is None:
            magnitude, d = np.linalg.norm(d), (d / np.linalg.norm(d) if np.linalg.norm(d) > 0 else np.array([0.0, -1.0, 0.0]))
        elif np.linalg.norm(d) == 0:
            raise InvalidArgument("Gravity direction must not be zero")
        else:
            d = d / np.linalg.norm(d)
        down, g, h = jnp.asarray(d), _scalar(magnitude, "Gravity magnitude", True), _scalar(zero_height, "zero_height")
        return ForceHandle(forces, lambda: fe.Gravity(down=down, magnitude=g, zero_height=h))

    @staticmethod
    def MobilityLinearSpring(forces, mobod, which_q, stiffness, q0) -> ForceHandle:
        """``-K (q - q0)`` on the mobility of the same index (assumes qdot = u for that coordinate)."""
        _check_mobod(mobod, "MobilityLinearSpring mobod")
        mobod._check_q_index(which_q)
        k, x0 = _scalar(stiffness, "stiffness", True), _scalar(q0, "q0")
        return ForceHandle(
            forces,
            lambda: fe.MobilityLinearSpring(
                q_index=mobod.q_start + which_q, u_index=mobod.u_start + which_q, stiffness=k, q0=x0
            ),
        )

    @staticmethod
    def MobilityLinearDamper(forces, mobod, which_u, damping) -> ForceHandle:
        _check_mobod(mobod, "MobilityLinearDamper mobod")
        mobod._check_u_index(which_u)
        c = _scalar(damping, "damping", True)
        return ForceHandle(forces, lambda: fe.MobilityLinearDamper(u_index=mobod.u_start + which_u, damping=c))

    @staticmethod
    def MobilityConstantForce(forces, mobod, which_u, force) -> ForceHandle:
        _check_mobod(mobod, "MobilityConstantForce mobod")
        mobod._check_u_index(which_u)
        f = _scalar(force, "force")
        return ForceHandle(forces, lambda: fe.MobilityConstantForce(u_index=mobod.u_start + which_u, force=f))

    @staticmethod
    def GlobalDamper(forces, matter, damping) -> ForceHandle:
        c = _scalar(damping, "damping", True)
        return ForceHandle(forces, lambda: fe.GlobalDamper(damping=c))

    @staticmethod
    def ConstantForce(forces, mobod, station, force) -> ForceHandle:
        _check_mobod(mobod, "ConstantForce body")
        s, f = _vec3(station, "station"), _vec3(force, "force")
        return ForceHandle(forces, lambda: fe.ConstantForce(body=mobod.index, station=s, force=f))

    @staticmethod
    def ConstantTorque(forces, mobod, torque) -> ForceHandle:
        _check_mobod(mobod, "ConstantTorque body")
        t = _vec3(torque, "torque")
        return ForceHandle(forces, lambda: fe.ConstantTorque(body=mobod.index, torque=t))

    @staticmethod
    def TwoPointLinearSpring(forces, body1, station1, body2, station2, stiffness, rest_length) -> ForceHandle:
        _check_mobod(body1, "TwoPointLinearSpring body1")
        _check_mobod(body2, "TwoPointLinearSpring body2")
        s1, s2 = _vec3(station1, "station1"), _vec3(station2, "station2")
        k, x0 = _scalar(stiffness, "stiffness", True), _scalar(rest_length, "rest_length", True)
        return ForceHandle(
            forces,
            lambda: fe.TwoPointLinearSpring(
                body1=body1.index, body2=body2.index, station1=s1, station2=s2, stiffness=k, rest_length=x0
            ),
        )
