"""Host-side checks and defaults of the muscle builders (``jb.Force.Thelen2003Muscle``, ...): each returns the
muscle model's parameters Module (array leaves) after checking every number, and raises InvalidArgument naming
the muscle and the property otherwise (OpenSim's own checks in ``extendFinalizeFromProperties``, plus the
muscle-level ones every model needs: positive lengths and forces, pennation below 90 degrees)."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.muscles import millard_curves as mc
from jaxbody._dynamics.muscles.degroote2016 import DEGROOTE2016_DEFAULTS, DeGrooteFregly2016Parameters
from jaxbody._dynamics.muscles.millard2012 import MILLARD2012_DEFAULTS, Millard2012Parameters
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


MILLARD_CURVE_DEFAULTS = {
    "active_force_length_curve": dict(min_norm_active_fiber_length=0.47 - 0.0259, transition_norm_fiber_length=0.73,
                                      max_norm_active_fiber_length=1.8123, shallow_ascending_slope=0.8616,
                                      minimum_value=0.1),
    "force_velocity_curve": dict(concentric_slope_at_vmax=0.0, concentric_slope_near_vmax=0.25, isometric_slope=5.0,
                                 eccentric_slope_at_vmax=0.0, eccentric_slope_near_vmax=0.15,
                                 max_eccentric_velocity_force_multiplier=1.4, concentric_curviness=0.6,
                                 eccentric_curviness=0.9),
    "fiber_force_length_curve": dict(strain_at_zero_force=0.0, strain_at_one_norm_force=0.7),
    "tendon_force_length_curve": dict(strain_at_one_norm_force=0.049),
}
"""OpenSim 4.6's defaults of the four curves' properties (optional ones are fitted: millard_curves)."""

_MIN_DAMPING = 0.001  # OpenSim's MIN_NONZERO_DAMPING_COEFFICIENT: smaller damping means no damping


def millard2012_parameters(name: str, curves: dict, rigid_tendon: bool, **given):
    """(Millard2012Parameters, damped) from OpenSim's property values, with the adjustments OpenSim makes when it
    finalizes the muscle: damping below 0.001 is 0 (and the fiber velocity then comes from the inverse
    force-velocity curve); an elastic undamped muscle gets fal's minimum_value at least 0.1 and force-velocity
    end slopes at least half the near-vmax slopes; otherwise fal's minimum_value and the end slopes are 0.
    ``curves``: {curve field: {property: value}} overriding MILLARD_CURVE_DEFAULTS."""
    unknown = set(curves) - set(MILLARD_CURVE_DEFAULTS)
    if unknown:
        raise InvalidArgument(f"muscle {name!r}: unknown curve(s) {sorted(unknown)}; expected "
                              f"{sorted(MILLARD_CURVE_DEFAULTS)}")
    values = {**MILLARD2012_DEFAULTS, **given}
    scalars = [f for f in Millard2012Parameters.__dataclass_fields__ if not f.endswith("_curve")]
    missing = [f for f in scalars if f not in values]
    if missing:
        raise InvalidArgument(f"muscle {name!r}: missing {', '.join(missing)}")
    values = {k: _number(name, k, values[k]) for k in scalars}
    _common(name, values)
    _require(name, "fiber_damping", values["fiber_damping"], values["fiber_damping"] >= 0, "non-negative")
    damped = values["fiber_damping"] >= _MIN_DAMPING
    values["fiber_damping"] = values["fiber_damping"] if damped else 0.0
    props = {c: {**MILLARD_CURVE_DEFAULTS[c], **{k: _number(name, f"{c}.{k}", v) for k, v in curves.get(c, {}).items()}}
             for c in MILLARD_CURVE_DEFAULTS}
    fpe, fse, fal, fv = (props["fiber_force_length_curve"], props["tendon_force_length_curve"],
                         props["active_force_length_curve"], props["force_velocity_curve"])
    fitted = (("fiber_force_length_curve", fpe, mc.fiber_force_length_defaults(fpe["strain_at_zero_force"],
                                                                           fpe["strain_at_one_norm_force"])),
              ("tendon_force_length_curve", fse, mc.tendon_force_length_defaults(fse["strain_at_one_norm_force"])))
    for curve, given_props, optional in fitted:
        present = [k for k in optional if k in given_props]
        if present and len(present) != len(optional):
            raise InvalidArgument(f"muscle {name!r}: {curve} needs all or none of {', '.join(optional)} "
                                  f"(OpenSim fits them together); got only {', '.join(present)}")
        if not present:
            given_props.update(optional)
    for side in ("concentric", "eccentric"):
        near = fv[f"{side}_slope_near_vmax"]
        _require(name, f"force_velocity_curve.{side}_slope_near_vmax", near, near >= 1.4901161193847656e-08,
                 "at least sqrt(machine epsilon)")
        if not rigid_tendon and not damped:
            fv[f"{side}_slope_at_vmax"] = max(fv[f"{side}_slope_at_vmax"], 0.5 * near)
        else:
            fv[f"{side}_slope_at_vmax"] = min(fv[f"{side}_slope_at_vmax"], 0.0)
    if not rigid_tendon and not damped:
        _require(name, "minimum_activation", values["minimum_activation"], values["minimum_activation"] >= 0.01,
                 "at least 0.01 for an elastic tendon without fiber damping")
        fal["minimum_value"] = max(fal["minimum_value"], 0.1)
    else:
        values["minimum_activation"] = min(max(values["minimum_activation"], 0.0), 1.0)
        fal["minimum_value"] = min(fal["minimum_value"], 0.0)
    return Millard2012Parameters(
        **{k: jnp.asarray(v) for k, v in values.items()},
        active_force_length_curve=mc.ActiveForceLengthCurve(**{k: jnp.asarray(v) for k, v in fal.items()}),
        force_velocity_curve=mc.ForceVelocityCurve(**{k: jnp.asarray(v) for k, v in fv.items()}),
        fiber_force_length_curve=mc.FiberForceLengthCurve(**{k: jnp.asarray(v) for k, v in fpe.items()}),
        tendon_force_length_curve=mc.TendonForceLengthCurve(**{k: jnp.asarray(v) for k, v in fse.items()}),
    ), damped
