"""``jb.Force.*``: host-side constructors of force elements, Simbody's argument order.

Each call validates its arguments, registers the element with a
GeneralForceSubsystem and returns a handle; ``realize_topology()`` turns the
handle into the traced element of ``jaxbody._dynamics.forces``. Every body and
matter subsystem given must belong to the force subsystem's MultibodySystem
(InvalidArgument naming the element, the body and both systems otherwise).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.arguments import integer
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


def _check_forces(forces, element):
    if not isinstance(forces, GeneralForceSubsystem):
        raise InvalidArgument(f"{element}: first argument must be a jb.GeneralForceSubsystem, got {type(forces).__name__}")


def _describe_system(forces) -> str:
    """The force subsystem's system, as error messages name it."""
    matter = forces.system._matter
    return matter._describe() if matter is not None else "a system without a matter subsystem"


def _check_matter(forces, matter, element):
    _check_forces(forces, element)
    if not isinstance(matter, SimbodyMatterSubsystem):
        raise InvalidArgument(f"{element} needs the SimbodyMatterSubsystem as second argument, got {type(matter).__name__}")
    if matter.system is not forces.system:
        raise InvalidArgument(
            f"{element}: the matter subsystem is of {matter._describe()}, but the force subsystem belongs to "
            f"{_describe_system(forces)}; "
            "pass the matter subsystem of the force subsystem's own system"
        )


def _check_mobod(forces, mobod, element, what="body"):
    """``mobod`` is a MobilizedBody of the force subsystem's system (else InvalidArgument naming both systems)."""
    _check_forces(forces, element)
    if not isinstance(mobod, MobilizedBody):
        raise InvalidArgument(f"{element}: {what} must be a jb.MobilizedBody, got {type(mobod).__name__}")
    if mobod.matter.system is not forces.system:
        raise InvalidArgument(
            f"{element}: {what} {mobod.name!r} belongs to {mobod.matter._describe()}, but the force subsystem "
            f"belongs to {_describe_system(forces)}; a force element can only act on bodies of its own system"
        )


def _check_which_u(mobod, which_u, element) -> int:
    which_u = integer(which_u, f"{element}: which_u")
    if not 0 <= which_u < mobod.get_num_u():
        raise InvalidArgument(f"{element}: {mobod.name}: u index {which_u} out of range 0..{mobod.get_num_u() - 1}")
    return which_u


def _check_spring_coordinate(mobod, which_q, element) -> int:
    """``which_q`` is a coordinate of ``mobod`` with qdot = u on the same index, in every orientation mode.

    MobilityLinearSpring (like Simbody's) reads q[which_q] and applies its force to u[which_q]; that is the
    generalized force of the potential only where qdot_i = u_i (Simbody requires it). Checked numerically:
    row which_q of N(q) at a generic q must be the unit row e_which_q.
    """
    which_q = integer(which_q, f"{element}: which_q")
    proto = mobod.mobilizer_prototype
    n = min(proto.nu, mobod.get_num_q())
    if not 0 <= which_q < n:
        raise InvalidArgument(
            f"{element}: {mobod.name}: q index {which_q} out of range 0..{n - 1} ({proto.simbody_name}: "
            f"{mobod.get_num_q()} q, {proto.nu} u; the spring needs an index below both)"
        )
    modes = {False: proto.with_euler(False), True: proto.with_euler(True)}
    for euler, m in modes.items():
        q0 = np.asarray(m.default_q(), dtype=float) + 0.1 * np.sin(np.arange(1.0, m.nq_alloc + 1.0))
        qdot = np.asarray(m.multiply_by_n(jnp.tile(jnp.asarray(q0), (m.nu, 1)), jnp.eye(m.nu)))  # row j: N e_j
        if not np.allclose(qdot[:, which_q], np.eye(m.nu)[which_q], atol=1e-6):
            mode = f" in {'Euler-angle' if euler else 'quaternion'} mode" if modes[False] != modes[True] else ""
            raise InvalidArgument(
                f"{element} on {mobod.name!r}: q[{which_q}] of {mobod.name!r} ({proto.simbody_name}) does not have qdot = u[{which_q}]"
                f"{mode}, which a mobility spring needs (Simbody's requirement); use a coordinate whose rate is its "
                "speed (Pin, Slider, Gimbal, Translation, ...) or a TwoPointLinearSpring"
            )
    return which_q


class ForceHandle:
    """A registered force element; ``index`` is its position in ``model.forces``."""

    def __init__(self, forces: GeneralForceSubsystem, build):
        _check_forces(forces, "force element")
        self._build = build
        self.index = forces._add(self)


class Force:
    """Namespace of Simbody's force elements (``Force::UniformGravity`` -> ``jb.Force.UniformGravity``)."""

    @staticmethod
    def UniformGravity(forces, matter, gravity, zero_height=0.0) -> ForceHandle:
        """Gravity vector ``gravity`` (m/s^2, in G) on every body."""
        _check_matter(forces, matter, "UniformGravity")
        g, h = _vec3(gravity, "UniformGravity gravity"), _scalar(zero_height, "UniformGravity zero_height")
        return ForceHandle(forces, lambda: fe.UniformGravity(gravity=g, zero_height=h))

    @staticmethod
    def Gravity(forces, matter, direction, magnitude=None, zero_height=0.0) -> ForceHandle:
        """``Gravity(forces, matter, down, g)`` or ``Gravity(forces, matter, g_vector)``."""
        _check_matter(forces, matter, "Gravity")
        d = np.asarray(_vec3(direction, "Gravity direction"))
        if magnitude is None:
            magnitude, d = np.linalg.norm(d), (d / np.linalg.norm(d) if np.linalg.norm(d) > 0 else np.array([0.0, -1.0, 0.0]))
        elif np.linalg.norm(d) == 0:
            raise InvalidArgument("Gravity direction must not be zero")
        else:
            d = d / np.linalg.norm(d)
        down, g, h = jnp.asarray(d), _scalar(magnitude, "Gravity magnitude", True), _scalar(zero_height, "Gravity zero_height")
        return ForceHandle(forces, lambda: fe.Gravity(down=down, magnitude=g, zero_height=h))

    @staticmethod
    def MobilityLinearSpring(forces, mobod, which_q, stiffness, q0) -> ForceHandle:
        """``-K (q - q0)`` on the mobility of the same index; q[which_q] must have qdot = u[which_q] (checked)."""
        _check_mobod(forces, mobod, "MobilityLinearSpring")
        label = f"MobilityLinearSpring on {mobod.name!r}"
        which_q = _check_spring_coordinate(mobod, which_q, "MobilityLinearSpring")
        k, x0 = _scalar(stiffness, f"{label}: stiffness", True), _scalar(q0, f"{label}: q0")
        return ForceHandle(
            forces,
            lambda: fe.MobilityLinearSpring(
                q_index=mobod.q_start + which_q, u_index=mobod.u_start + which_q, stiffness=k, q0=x0
            ),
        )

    @staticmethod
    def MobilityLinearDamper(forces, mobod, which_u, damping) -> ForceHandle:
        _check_mobod(forces, mobod, "MobilityLinearDamper")
        label = f"MobilityLinearDamper on {mobod.name!r}"
        which_u = _check_which_u(mobod, which_u, label)
        c = _scalar(damping, f"{label}: damping", True)
        return ForceHandle(forces, lambda: fe.MobilityLinearDamper(u_index=mobod.u_start + which_u, damping=c))

    @staticmethod
    def MobilityConstantForce(forces, mobod, which_u, force) -> ForceHandle:
        _check_mobod(forces, mobod, "MobilityConstantForce")
        label = f"MobilityConstantForce on {mobod.name!r}"
        which_u = _check_which_u(mobod, which_u, label)
        f = _scalar(force, f"{label}: force")
        return ForceHandle(forces, lambda: fe.MobilityConstantForce(u_index=mobod.u_start + which_u, force=f))

    @staticmethod
    def GlobalDamper(forces, matter, damping) -> ForceHandle:
        _check_matter(forces, matter, "GlobalDamper")
        c = _scalar(damping, "GlobalDamper damping", True)
        return ForceHandle(forces, lambda: fe.GlobalDamper(damping=c))

    @staticmethod
    def ConstantForce(forces, mobod, station, force) -> ForceHandle:
        _check_mobod(forces, mobod, "ConstantForce")
        s, f = _vec3(station, f"ConstantForce on {mobod.name!r}: station"), _vec3(force, f"ConstantForce on {mobod.name!r}: force")
        return ForceHandle(forces, lambda: fe.ConstantForce(body=mobod.index, station=s, force=f))

    @staticmethod
    def ConstantTorque(forces, mobod, torque) -> ForceHandle:
        _check_mobod(forces, mobod, "ConstantTorque")
        t = _vec3(torque, f"ConstantTorque on {mobod.name!r}: torque")
        return ForceHandle(forces, lambda: fe.ConstantTorque(body=mobod.index, torque=t))

    @staticmethod
    def TwoPointLinearSpring(forces, body1, station1, body2, station2, stiffness, rest_length) -> ForceHandle:
        _check_mobod(forces, body1, "TwoPointLinearSpring", "body1")
        _check_mobod(forces, body2, "TwoPointLinearSpring", "body2")
        label = f"TwoPointLinearSpring between {body1.name!r} and {body2.name!r}"
        s1, s2 = _vec3(station1, f"{label}: station1"), _vec3(station2, f"{label}: station2")
        k, x0 = _scalar(stiffness, f"{label}: stiffness", True), _scalar(rest_length, f"{label}: rest_length", True)
        return ForceHandle(
            forces,
            lambda: fe.TwoPointLinearSpring(
                body1=body1.index, body2=body2.index, station1=s1, station2=s2, stiffness=k, rest_length=x0
            ),
        )
