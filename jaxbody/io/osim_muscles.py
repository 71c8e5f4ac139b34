"""OpenSim's muscles as jaxbody force elements: the ForceSet builders of jaxbody.io.osim_forces for this family
(``BUILDERS``), each muscle's path through ``ForceContext.path`` (a GeometryPath, jaxbody.io.osim_paths, or a
FunctionBasedPath, jaxbody.io.osim_function_paths).

==========================  ==============================================================================
OpenSim                     jaxbody
==========================  ==============================================================================
Thelen2003Muscle            Force.Thelen2003Muscle: every property (FmaxTendonStrain, KshapeActive, ... in
                            snake_case), OpenSim 4.6 defaults for absent ones; default_activation 0.05 and
                            default_fiber_length 0.1 m unless given (as OpenSim)
DeGrooteFregly2016Muscle    Force.DeGrooteFregly2016Muscle: "explicit" or "implicit" tendon dynamics
                            (implicit: a second control, implicitderiv_normalized_tendon_force), or
                            ignore_tendon_compliance
Millard2012EquilibriumMuscle  Force.Millard2012EquilibriumMuscle: its four curve elements' properties
                            (fitted optional ones when absent), fiber_damping, ignore_tendon_compliance,
                            ignore_activation_dynamics; OpenSim's finalize-time curve adjustments
RigidTendonMuscle           Force.RigidTendonMuscle: max_contraction_velocity and its three curves
                            (SimmSpline or NaturalCubicSpline knots; OpenSim's default SimmSplines when
                            absent); a curve of another function type is skipped (Unsupported)
==========================  ==============================================================================

OpenSim 3.x names: ``pennation_angle`` (before 2.3.2) is read as ``pennation_angle_at_optimal``. min_control
and max_control are not modelled (OpenSim does not clamp a muscle's excitation when it computes its force; the
bounds are for controllers). ``ignore_activation_dynamics`` on a Thelen2003Muscle and ``ignore_tendon_compliance``
on it have no jaxbody counterpart yet: such a muscle is skipped with that reason. A path over a wrap object
jaxbody does not compute is skipped too.
"""

from __future__ import annotations

from jaxbody._api.force import Force
from jaxbody.io.osim_force_context import ForceContext, Unsupported
from jaxbody.io.osim_xml import flag, numbers, text

#: Thelen2003Muscle's jaxbody parameter -> its OpenSim property names (4.x first, then older ones).
THELEN_FIELDS = {
    "max_contraction_velocity": ("max_contraction_velocity",),
    "activation_time_constant": ("activation_time_constant",),
    "deactivation_time_constant": ("deactivation_time_constant",),
    "minimum_activation": ("minimum_activation",),
    "maximum_pennation_angle": ("maximum_pennation_angle",),
    "fmax_tendon_strain": ("FmaxTendonStrain",),
    "fmax_muscle_strain": ("FmaxMuscleStrain",),
    "k_shape_active": ("KshapeActive",),
    "k_shape_passive": ("KshapePassive",),
    "af": ("Af",),
    "flen": ("Flen",),
    "fv_linear_extrap_threshold": ("fv_linear_extrap_threshold",),
}

DEGROOTE_FIELDS = ("max_contraction_velocity", "activation_time_constant", "deactivation_time_constant",
                   "active_force_width_scale", "fiber_damping", "passive_fiber_strain_at_one_norm_force",
                   "tendon_strain_at_one_norm_force", "activation_dynamics_smoothing")


def _value(context: ForceContext, element, names: tuple[str, ...], default=None):
    """The first present of the fields ``names`` as one number; ``default`` when none is (None: required)."""
    child = context.field(element, *names)
    if child is None:
        if default is None:
            raise context.error(element, f"missing <{names[0]}>")
        return default
    return numbers(context.doc, element, child.tag, context.owner(element), 1)[0]


def _given(context: ForceContext, element, fields: dict) -> dict:
    """{parameter: value} of the properties present in the file (the builders supply OpenSim's defaults)."""
    out = {}
    for parameter, names in fields.items():
        if context.field(element, *names) is not None:
            out[parameter] = _value(context, element, names)
    return out


def _muscle_basics(context: ForceContext, element):
    """(name, path, max_isometric_force, optimal_fiber_length, tendon_slack_length, pennation_angle_at_optimal)."""
    return (element.get("name"), context.path(element), _value(context, element, ("max_isometric_force",), 1000.0),
            _value(context, element, ("optimal_fiber_length",), 0.1), _value(context, element, ("tendon_slack_length",), 0.2),
            _value(context, element, ("pennation_angle_at_optimal", "pennation_angle"), 0.0))


def _ignored(context: ForceContext, element, *switches: str):
    owner = context.owner(element)
    for switch in switches:
        if flag(context.doc, element, switch, owner, False):
            raise Unsupported(f"{switch} true is not modelled for {element.tag}")


def thelen2003_muscle(context: ForceContext, element):
    _ignored(context, element, "ignore_tendon_compliance", "ignore_activation_dynamics")
    name, path, f_iso, l_opt, l_slack, phi = _muscle_basics(context, element)
    return Force.Thelen2003Muscle(
        context.forces, name, path, f_iso, l_opt, l_slack, phi,
        default_activation=_value(context, element, ("default_activation",), 0.05),
        default_fiber_length=_value(context, element, ("default_fiber_length",), 0.1),
        **_given(context, element, THELEN_FIELDS))


def degroote2016_muscle(context: ForceContext, element):
    owner = context.owner(element)
    mode = text(context.doc, element, "tendon_compliance_dynamics_mode", owner, default="explicit")
    rigid = flag(context.doc, element, "ignore_tendon_compliance", owner, False)
    if mode not in ("explicit", "implicit"):
        raise context.error(element, f"tendon_compliance_dynamics_mode must be 'explicit' or 'implicit', got {mode!r}")
    if flag(context.doc, element, "ignore_passive_fiber_force", owner, False):
        raise Unsupported("ignore_passive_fiber_force true is not modelled")
    name, path, f_iso, l_opt, l_slack, phi = _muscle_basics(context, element)
    return Force.DeGrooteFregly2016Muscle(
        context.forces, name, path, f_iso, l_opt, l_slack, phi,
        default_activation=_value(context, element, ("default_activation",), 0.5),
        default_normalized_tendon_force=_value(context, element, ("default_normalized_tendon_force",), 0.5),
        ignore_tendon_compliance=rigid,
        ignore_activation_dynamics=flag(context.doc, element, "ignore_activation_dynamics", owner, False),
        tendon_compliance_dynamics_mode=mode, **_given(context, element, {f: (f,) for f in DEGROOTE_FIELDS}))


MILLARD_SCALARS = ("max_contraction_velocity", "activation_time_constant", "deactivation_time_constant",
                   "minimum_activation", "maximum_pennation_angle", "fiber_damping")
MILLARD_CURVES = {"ActiveForceLengthCurve": "active_force_length_curve", "ForceVelocityCurve": "force_velocity_curve",
                  "FiberForceLengthCurve": "fiber_force_length_curve",
                  "TendonForceLengthCurve": "tendon_force_length_curve"}


def millard2012_muscle(context: ForceContext, element):
    owner = context.owner(element)
    name, path, f_iso, l_opt, l_slack, phi = _muscle_basics(context, element)
    curves = {}
    for tag, field in MILLARD_CURVES.items():
        curve = element.find(tag)
        if curve is not None:
            curves[field] = {child.tag: numbers(context.doc, curve, child.tag, f"{owner}: {tag}", 1)[0]
                             for child in curve if child.tag != "Appearance"}
    return Force.Millard2012EquilibriumMuscle(
        context.forces, name, path, f_iso, l_opt, l_slack, phi,
        default_activation=_value(context, element, ("default_activation",), 0.05),
        default_fiber_length=_value(context, element, ("default_fiber_length",), 0.1),
        ignore_tendon_compliance=flag(context.doc, element, "ignore_tendon_compliance", owner, False),
        ignore_activation_dynamics=flag(context.doc, element, "ignore_activation_dynamics", owner, False),
        curves=curves, **_given(context, element, {f: (f,) for f in MILLARD_SCALARS}))


def spline_knots(context: ForceContext, element, field: str):
    """(x, y) of the SimmSpline property ``field`` of ``element`` (None when absent): OpenSim 4's
    ``<SimmSpline name="field">`` or the older ``<field><SimmSpline/></field>``; Unsupported for another
    function type."""
    named = [child for child in element if child.get("name") == field and child.tag != field]
    holder = element.find(field)
    if holder is not None:
        named += list(holder)
    if not named:
        return None
    if len(named) != 1:
        raise context.error(element, f"{field} must be exactly one function, got {len(named)}")
    spline = named[0]
    if spline.tag not in ("SimmSpline", "NaturalCubicSpline"):
        raise Unsupported(f"{field} <{spline.tag}> (only SimmSpline curves are modelled)")
    where = f"{context.owner(element)}: {field}"
    return numbers(context.doc, spline, "x", where), numbers(context.doc, spline, "y", where)


RIGID_TENDON_CURVES = ("active_force_length_curve", "passive_force_length_curve", "force_velocity_curve")


def rigid_tendon_muscle(context: ForceContext, element):
    name, path, f_iso, l_opt, l_slack, phi = _muscle_basics(context, element)
    return Force.RigidTendonMuscle(
        context.forces, name, path, f_iso, l_opt, l_slack, phi,
        max_contraction_velocity=_value(context, element, ("max_contraction_velocity",), 10.0),
        **{field: spline_knots(context, element, field) for field in RIGID_TENDON_CURVES})


BUILDERS = {
    "Thelen2003Muscle": thelen2003_muscle,
    "DeGrooteFregly2016Muscle": degroote2016_muscle,
    "Millard2012EquilibriumMuscle": millard2012_muscle,
    "RigidTendonMuscle": rigid_tendon_muscle,
}
