"""Build-time errors. Each names the offending body or argument.

Traced code never raises on values; see README ("NaN behaviour").
"""


class JaxbodyError(Exception):
    """Base class of every jaxbody error."""


class InvalidInertia(JaxbodyError, ValueError):
    """Mass negative or not finite, or an inertia that no rigid body can have."""


class InvalidArgument(JaxbodyError, ValueError):
    """Wrong vector length, non-finite number, zero-norm quaternion, bad rotation matrix."""


class UnknownParent(JaxbodyError, ValueError):
    """A mobilized body's parent is not a body of the same matter subsystem."""


class TopologyFrozen(JaxbodyError, RuntimeError):
    """The system was already frozen by realize_topology(); it cannot be changed."""


class StageViolation(JaxbodyError, RuntimeError):
    """An operator needs a stage the State has not been realized to."""


class OutOfMemory(JaxbodyError, MemoryError):
    """A compiled call ran out of device memory (XLA's RESOURCE_EXHAUSTED); the message suggests jb.tiled_vmap."""
