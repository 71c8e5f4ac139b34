"""OpenSim's actuators and passive forces as jaxbody force elements: the ForceSet builders of
jaxbody.io.osim_forces for this family (``BUILDERS``), with OpenSim 4.6's defaults for absent fields.

==============================  ===========================================================================
OpenSim                         jaxbody
==============================  ===========================================================================
CoordinateActuator              Force.CoordinateActuator on the coordinate's mobility (optimal_force, default 1)
ActivationCoordinateActuator    Force.ActivationCoordinateActuator (activation_time_constant 0.01 s,
                                default_activation 0.5)
==============================  ===========================================================================

Each actuator reads one control named after it (``model.get_control_index(name)``).
"""

from __future__ import annotations

from jaxbody._api.force import Force
from jaxbody.io.osim_force_context import ForceContext
from jaxbody.io.osim_xml import numbers


def _number(context: ForceContext, element, field: str, default: float) -> float:
    return numbers(context.doc, element, field, context.owner(element), 1, default=[default])[0]


def coordinate_actuator(context: ForceContext, element):
    c = context.coordinate(element)
    return Force.CoordinateActuator(context.forces, c.body, c.q_index, _number(context, element, "optimal_force", 1.0),
                                    name=element.get("name"))


def activation_coordinate_actuator(context: ForceContext, element):
    c = context.coordinate(element)
    return Force.ActivationCoordinateActuator(
        context.forces, c.body, c.q_index, _number(context, element, "optimal_force", 1.0),
        _number(context, element, "activation_time_constant", 0.01), _number(context, element, "default_activation", 0.5),
        name=element.get("name"))


BUILDERS = {
    "CoordinateActuator": coordinate_actuator,
    "ActivationCoordinateActuator": activation_coordinate_actuator,
}
