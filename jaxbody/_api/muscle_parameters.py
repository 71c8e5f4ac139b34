"""Host-side checks and defaults of the muscle builders (``jb.Force.Thelen2003Muscle``, ...): each returns the
muscle model's parameters Module (array leaves) after checking every number, and raises InvalidArgument naming
the muscle and the property otherwise (OpenSim's own checks in ``extendFinalizeFromProperties``, plus the
muscle-level ones every model needs: positive lengths and forces, pennation below 90 degrees)."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.muscles.degroote2016 import DEGROOTE2016_DEFAULTS, DeGrooteFregly2016Parameters
from jaxbody._dynamics.muscles.thelen2003 import THELEN2003_DEFAULTS, Thelen2003Parameters
from jaxbody.errors import InvalidArgument

_SIGNIFICANT = 1e-14  # SimTK::SignificantReal


def _number(name: str, field: str, value) -> float:
    a = np.asarray(value, dtype=float)
    if a.shape != () or not np.isfinite(a):
        raise InvalidArgument(f"muscle {name!r}: {field} must be a finite number, got {value!r}")
    return float(a)


def _require(name: str, field: str, value: float, ok: bool, rule: str) -> None:
    if not ok:
        raise InvalidArgument(f"muscle {name!r}: {field} must be {rule}, got {value!r}")


def _common(name: str, values: dict) -> None:
    for field in ("max_isometric_force", "optimal_fiber_length", "tendon_slack_length", "max_contraction_velocity",
                  "activation_time_constant", "deactivation_time_constant"):
        _require(name, field, values[field], values[field] > 0, "positive")
    phi = values["pennation_angle_at_optimal"]
    _require(name, "pennation_angle_at_optimal", phi, 0 <= phi <= math.pi / 2 - _SIGNIFICANT,
             "in [0, pi/2) rad (a fiber at 90 degrees to its tendon transmits no force)")


def _module(cls, values: dict):
    return cls(**{k: jnp.asarray(v) for k, v in values.items()})


def thelen2003_parameters(name: str, **given) -> Thelen2003Parameters:
    """Thelen2003Parameters from OpenSim's property values (``given``; the rest OpenSim 4.6's defaults)."""
    values = {**THELEN2003_DEFAULTS, **given}
    missing = [f for f in Thelen2003Parameters.__dataclass_fields__ if f not in values]
    if missing:
        raise InvalidArgument(f"muscle {name!r}: missing {', '.join(missing)}")
    values = {k: _number(name, k, values[k]) for k in Thelen2003Parameters.__dataclass_fields__}
    _common(name, values)
    for field in ("fmax_tendon_strain", "fmax_muscle_strain", "k_shape_active", "k_shape_passive", "af"):
        _require(name, field, values[field], values[field] > 0, "positive")
    _require(name, "flen", values["flen"], values["flen"] > 1.0, "greater than 1")
    _require(name, "fv_linear_extrap_threshold", values["fv_linear_extrap_threshold"],
             values["fv_linear_extrap_threshold"] > 1.0 / values["flen"], "greater than 1/flen")
    _require(name, "minimum_activation", values["minimum_activation"], 0.01 <= values["minimum_activation"] < 1,
             "in [0.01, 1)")
    _require(name, "maximum_pennation_angle", values["maximum_pennation_angle"],
             0 <= values["maximum_pennation_angle"] <= math.pi / 2, "in [0, pi/2] rad")
    return _module(Thelen2003Parameters, values)


def degroote2016_parameters(name: str, **given) -> DeGrooteFregly2016Parameters:
    """DeGrooteFregly2016Parameters from OpenSim's property values (the rest OpenSim 4.6's defaults)."""
    values = {**DEGROOTE2016_DEFAULTS, **given}
    missing = [f for f in DeGrooteFregly2016Parameters.__dataclass_fields__ if f not in values]
    if missing:
        raise InvalidArgument(f"muscle {name!r}: missing {', '.join(missing)}")
    values = {k: _number(name, k, values[k]) for k in DeGrooteFregly2016Parameters.__dataclass_fields__}
    _common(name, values)
    _require(name, "active_force_width_scale", values["active_force_width_scale"],
             values["active_force_width_scale"] >= 1, "at least 1")
    _require(name, "fiber_damping", values["fiber_damping"], values["fiber_damping"] >= 0, "non-negative")
    for field in ("passive_fiber_strain_at_one_norm_force", "tendon_strain_at_one_norm_force",
                  "activation_dynamics_smoothing"):
        _require(name, field, values[field], values[field] > 0, "positive")
    return _module(DeGrooteFregly2016Parameters, values)


def check_default(name: str, field: str, value, low: float, high: float = math.inf) -> float:
    """A default state value within [low, high] (InvalidArgument naming the muscle otherwise)."""
    v = _number(name, field, value)
    _require(name, field, v, low <= v <= high, f"in [{low}, {high}]")
    return v
