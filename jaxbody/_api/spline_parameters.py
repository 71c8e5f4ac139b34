"""Host-side checks of the SimmSpline-curve forces' numbers (``jb.Force.RigidTendonMuscle``, ``jb.Force.Ligament``):
each returns array leaves after checking every number, and raises InvalidArgument naming the force and the
property otherwise (OpenSim's own checks, plus what the formulas need: positive lengths, increasing knots)."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.muscles import default_splines
from jaxbody._dynamics.muscles.rigid_tendon import RigidTendonParameters
from jaxbody._dynamics.muscles.simm_spline import SimmSplineCurve
from jaxbody.errors import InvalidArgument


def positive(kind: str, name: str, field: str, value, allow_zero: bool = False) -> float:
    """``value`` as a finite float > 0 (>= 0 with ``allow_zero``); InvalidArgument naming ``kind name`` otherwise."""
    a = np.asarray(value, dtype=float)
    if a.shape != () or not np.isfinite(a) or a < 0 or (a == 0 and not allow_zero):
        rule = "non-negative" if allow_zero else "positive"
        raise InvalidArgument(f"{kind} {name!r}: {field} must be a finite {rule} number, got {value!r}")
    return float(a)


def spline_curve(kind: str, name: str, field: str, curve) -> SimmSplineCurve:
    """A SimmSplineCurve from ``(x, y)`` (or a SimmSplineCurve): matching lengths >= 2, finite, x increasing."""
    if isinstance(curve, SimmSplineCurve):
        x, y = curve.x, curve.y
    else:
        try:
            x, y = curve
        except (TypeError, ValueError):
            raise InvalidArgument(f"{kind} {name!r}: {field} must be (x, y) knots, got {curve!r}") from None
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.ndim != 1 or x.shape != y.shape or x.size < 2 or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise InvalidArgument(f"{kind} {name!r}: {field} needs finite x and y of one length >= 2, got shapes "
                              f"{x.shape} and {y.shape}")
    if np.any(np.diff(x) <= 0):
        raise InvalidArgument(f"{kind} {name!r}: {field} x must be strictly increasing, got {x.tolist()}")
    return SimmSplineCurve(jnp.asarray(x), jnp.asarray(y))


def rigid_tendon_parameters(name: str, max_isometric_force, optimal_fiber_length, tendon_slack_length,
                            pennation_angle_at_optimal, max_contraction_velocity=10.0, active_force_length_curve=None,
                            passive_force_length_curve=None, force_velocity_curve=None) -> RigidTendonParameters:
    """RigidTendonParameters from OpenSim's property values; absent curves are OpenSim 4.6's default SimmSplines."""
    kind = "muscle"
    phi = np.asarray(pennation_angle_at_optimal, dtype=float)
    if phi.shape != () or not (0.0 <= phi < math.pi / 2):
        raise InvalidArgument(f"muscle {name!r}: pennation_angle_at_optimal must be in [0, pi/2) rad, got "
                              f"{pennation_angle_at_optimal!r}")
    curves = {"active_force_length_curve": (active_force_length_curve, default_splines.ACTIVE_FORCE_LENGTH),
              "passive_force_length_curve": (passive_force_length_curve, default_splines.PASSIVE_FORCE_LENGTH),
              "force_velocity_curve": (force_velocity_curve, default_splines.FORCE_VELOCITY)}
    return RigidTendonParameters(
        max_isometric_force=jnp.asarray(positive(kind, name, "max_isometric_force", max_isometric_force)),
        optimal_fiber_length=jnp.asarray(positive(kind, name, "optimal_fiber_length", optimal_fiber_length)),
        tendon_slack_length=jnp.asarray(positive(kind, name, "tendon_slack_length", tendon_slack_length, True)),
        pennation_angle_at_optimal=jnp.asarray(float(phi)),
        max_contraction_velocity=jnp.asarray(positive(kind, name, "max_contraction_velocity",
                                                      max_contraction_velocity)),
        **{field: spline_curve(kind, name, field, default if given is None else given)
           for field, (given, default) in curves.items()})
