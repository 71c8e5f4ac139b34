"""Argument checks shared by the ``jb.Force.*`` builders: every error is an InvalidArgument naming the element
and the body (host-side, on concrete numbers, before anything is built)."""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from jaxbody._api.arguments import integer
from jaxbody._api.mobilized_body import MobilizedBody
from jaxbody._api.system import GeneralForceSubsystem, SimbodyMatterSubsystem
from jaxbody.errors import InvalidArgument


def vec3(x, what):
    a = np.asarray(x, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise InvalidArgument(f"{what} must be 3 finite numbers, got {x!r}")
    return jnp.asarray(a)


def scalar(x, what, nonnegative=False):
    a = np.asarray(x, dtype=float)
    if a.shape != () or not np.isfinite(a) or (nonnegative and a < 0):
        raise InvalidArgument(f"{what} must be a finite{' non-negative' if nonnegative else ''} number, got {x!r}")
    return jnp.asarray(a)


def check_forces(forces, element):
    if not isinstance(forces, GeneralForceSubsystem):
        raise InvalidArgument(f"{element}: first argument must be a jb.GeneralForceSubsystem, got {type(forces).__name__}")


def describe_system(forces) -> str:
    """The force subsystem's system, as error messages name it."""
    matter = forces.system._matter
    return matter._describe() if matter is not None else "a system without a matter subsystem"


def check_matter(forces, matter, element):
    check_forces(forces, element)
    if not isinstance(matter, SimbodyMatterSubsystem):
        raise InvalidArgument(f"{element} needs the SimbodyMatterSubsystem as second argument, got {type(matter).__name__}")
    if matter.system is not forces.system:
        raise InvalidArgument(
            f"{element}: the matter subsystem is of {matter._describe()}, but the force subsystem belongs to "
            f"{describe_system(forces)}; "
            "pass the matter subsystem of the force subsystem's own system"
        )


def check_mobod(forces, mobod, element, what="body"):
    """``mobod`` is a MobilizedBody of the force subsystem's system (else InvalidArgument naming both systems)."""
    check_forces(forces, element)
    if not isinstance(mobod, MobilizedBody):
        raise InvalidArgument(f"{element}: {what} must be a jb.MobilizedBody, got {type(mobod).__name__}")
    if mobod.matter.system is not forces.system:
        raise InvalidArgument(
            f"{element}: {what} {mobod.name!r} belongs to {mobod.matter._describe()}, but the force subsystem "
            f"belongs to {describe_system(forces)}; a force element can only act on bodies of its own system"
        )


def check_which_u(mobod, which_u, element) -> int:
    which_u = integer(which_u, f"{element}: which_u")
    if not 0 <= which_u < mobod.get_num_u():
        raise InvalidArgument(f"{element}: {mobod.name}: u index {which_u} out of range 0..{mobod.get_num_u() - 1}")
    return which_u


def check_spring_coordinate(mobod, which_q, element) -> int:
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
    try:
        failing_mode = _mode_without_rate(proto, which_q)
    except TypeError:  # a prototype with array parameters is not hashable: checked without the cache
        failing_mode = _mode_without_rate.__wrapped__(proto, which_q)
    if failing_mode is not None:
        euler, both = failing_mode
        mode = f" in {'Euler-angle' if euler else 'quaternion'} mode" if both else ""
        raise InvalidArgument(
            f"{element} on {mobod.name!r}: q[{which_q}] of {mobod.name!r} ({proto.simbody_name}) does not have "
            f"qdot = u[{which_q}]"
            f"{mode}, which a mobility spring needs (Simbody's requirement); use a coordinate whose rate is its "
            "speed (Pin, Slider, Gimbal, Translation, ...) or a TwoPointLinearSpring"
        )
    return which_q


@functools.lru_cache(maxsize=1024)
def _mode_without_rate(proto, which_q: int):
    """None when row ``which_q`` of N(q) at a generic q is the unit row e_which_q in both orientation modes of the
    mobilizer prototype ``proto``, else (euler, whether the two modes differ) of the first mode where it is not.
    Cached by prototype value (equal prototypes have the same N): an imported robot's stops share one check."""
    modes = {False: proto.with_euler(False), True: proto.with_euler(True)}
    for euler, m in modes.items():
        q0 = np.asarray(m.default_q(), dtype=float) + 0.1 * np.sin(np.arange(1.0, m.nq_alloc + 1.0))
        qdot = np.asarray(m.multiply_by_n(jnp.tile(jnp.asarray(q0), (m.nu, 1)), jnp.eye(m.nu)))  # row j: N e_j
        if not np.allclose(qdot[:, which_q], np.eye(m.nu)[which_q], atol=1e-6):
            return euler, modes[False] != modes[True]
    return None




def vec6(x, what, nonnegative=True):
    """Six finite (non-negative) numbers, as a jnp array."""
    a = np.asarray(x, dtype=float)
    if a.shape != (6,) or not np.all(np.isfinite(a)) or (nonnegative and np.any(a < 0)):
        raise InvalidArgument(f"{what} must be 6 finite{' non-negative' if nonnegative else ''} numbers, got {x!r}")
    return jnp.asarray(a)


def positive(x, what):
    """A finite number > 0, as a jnp scalar."""
    a = scalar(x, what)
    if not a > 0:
        raise InvalidArgument(f"{what} must be positive, got {x!r}")
    return a


def direction_vector(x, what):
    """A nonzero finite 3-vector, as a jnp array kept as given: the element normalizes it (forces.safe_direction),
    so its length stays a differentiable leaf (InvalidArgument for a zero-length one)."""
    d = vec3(x, what)
    if not np.linalg.norm(np.asarray(d)) > 0:
        raise InvalidArgument(f"{what} must not be the zero vector (it gives the direction)")
    return d
