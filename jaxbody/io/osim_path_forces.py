"""OpenSim's non-muscle forces along a GeometryPath as jaxbody force elements: the ForceSet builders of
jaxbody.io.osim_forces for this family (``BUILDERS``).

============  ====================================================================================
OpenSim       jaxbody
============  ====================================================================================
Ligament      Force.Ligament: resting_length, pcsa_force, force_length_curve (a SimmSpline or
              NaturalCubicSpline; OpenSim's default when absent; another function type is skipped)
PathSpring    Force.PathSpring: resting_length, stiffness, dissipation (OpenSim's NaN defaults: required)
PathActuator  Force.PathActuator: optimal_force (1 when absent); its control is named after it
============  ====================================================================================

Each force's path is a GeometryPath or a FunctionBasedPath (``ForceContext.path``). A path over a wrap object
jaxbody does not compute is skipped (Unsupported) with a warning naming the force.
"""

from __future__ import annotations

from jaxbody._api.force import Force
from jaxbody.io.osim_force_context import ForceContext
from jaxbody.io.osim_muscles import spline_knots
from jaxbody.io.osim_xml import numbers


def _path(context: ForceContext, element):
    return context.path(element)


def _number(context: ForceContext, element, field: str, default: float | None) -> float:
    if element.find(field) is None:
        if default is None:
            raise context.error(element, f"missing <{field}>")
        return default
    return numbers(context.doc, element, field, context.owner(element), 1)[0]


def ligament(context: ForceContext, element):
    return Force.Ligament(context.forces, element.get("name"), _path(context, element),
                          _number(context, element, "resting_length", 0.0), _number(context, element, "pcsa_force", 0.0),
                          spline_knots(context, element, "force_length_curve"))


def path_spring(context: ForceContext, element):
    return Force.PathSpring(context.forces, element.get("name"), _path(context, element),
                            *(_number(context, element, f, None) for f in ("resting_length", "stiffness", "dissipation")))


def path_actuator(context: ForceContext, element):
    return Force.PathActuator(context.forces, element.get("name"), _path(context, element),
                              _number(context, element, "optimal_force", 1.0))


BUILDERS = {"Ligament": ligament, "PathSpring": path_spring, "PathActuator": path_actuator}
