"""OpenSim's actuators and passive forces as jaxbody force elements: the ForceSet builders of
jaxbody.io.osim_forces for this family (``BUILDERS``), with OpenSim 4.6's defaults for absent fields and
OpenSim's rules for the 3.x layout (noted per row).

==============================  ===========================================================================
OpenSim                         jaxbody
==============================  ===========================================================================
CoordinateActuator              Force.CoordinateActuator on the coordinate's mobility (optimal_force 1)
ActivationCoordinateActuator    Force.ActivationCoordinateActuator (activation_time_constant 0.01 s,
                                default_activation 0.5)
PointActuator                   Force.PointActuator (``body`` a body name; point 0, direction (1, 0, 0))
TorqueActuator                  Force.TorqueActuator (``bodyA``, ``bodyB``: body names or paths; axis z,
                                torque_is_global true)
SpringGeneralizedForce          Force.SpringGeneralizedForce (stiffness, rest_length, viscosity 0)
CoordinateLimitForce            Force.CoordinateLimitForce, rotational as OpenSim's coordinate motion type
PointToPointSpring              Force.TwoPointLinearSpring (Simbody's, as OpenSim builds it) between the
                                socket bodies' base bodies, points in them (3.x: ``body1``, ``body2``)
BushingForce                    Force.LinearBushing (Simbody's) between the socket frames (3.x: ``body_1``
                                with ``location_body_1``, ``orientation_body_1``, likewise 2)
ExpressionBasedCoordinateForce  Force.ExpressionBasedCoordinateForce
ExpressionBasedBushingForce     Force.ExpressionBasedBushingForce between the socket frames (3.x as above)
==============================  ===========================================================================

Each actuator reads one control named after it (``model.get_control_index(name)``); every force handle is
named with its OpenSim name. A coordinate is rotational (CoordinateLimitForce's degrees) as OpenSim's
Coordinate::getMotionType decides: Pin, Universal, Gimbal and Ball coordinates, the first of a Planar and the
first three of a Free joint, and a CustomJoint coordinate that drives a rotation axis through a
LinearFunction of slope +-1 (a missing function is one).
"""

from __future__ import annotations

import numpy as np

from jaxbody._api.force import Force
from jaxbody._math.spatial import Transform
from jaxbody.io.osim_force_context import ForceContext
from jaxbody.io.osim_frames import rotation_xyz
from jaxbody.io.osim_joints import AXES
from jaxbody.io.osim_xml import flag, numbers, objects, text

_ROTATIONAL_JOINTS = {"PinJoint": 1, "UniversalJoint": 2, "GimbalJoint": 3, "BallJoint": 3, "SliderJoint": 0,
                      "PlanarJoint": 1, "FreeJoint": 3, "WeldJoint": 0}


def _number(context: ForceContext, element, field: str, default: float) -> float:
    return numbers(context.doc, element, field, context.owner(element), 1, default=[default])[0]


def _vec3(context: ForceContext, element, field: str, default) -> list[float]:
    return numbers(context.doc, element, field, context.owner(element), 3, default=default)


def _flag(context: ForceContext, element, field: str, default: bool) -> bool:
    return flag(context.doc, element, field, context.owner(element), default)


def _text(context: ForceContext, element, field: str, default=None) -> str:
    return text(context.doc, element, field, context.owner(element), default=default)


def is_rotational(context: ForceContext, coordinate) -> bool:
    """OpenSim's ``getMotionType() == Rotational`` for a coordinate (module docstring)."""
    joint = next(j for j in objects(context.doc, "JointSet") if j.get("name") == coordinate.joint)
    if joint.tag != "CustomJoint":
        return coordinate.q_index < _ROTATIONAL_JOINTS.get(joint.tag, 0)
    rotational = None
    for axis in joint.find("SpatialTransform"):
        if axis.tag != "TransformAxis" or coordinate.name not in (axis.findtext("coordinates") or "").split():
            continue
        function = next((c for c in axis if c.tag not in ("coordinates", "axis")), None)
        if function is not None and function.tag == "function":
            function = next(iter(function), None)
        if function is None:
            slope = 1.0
        elif function.tag == "LinearFunction":
            slope = abs(float((function.findtext("coefficients") or "1").split()[0]))
        else:
            slope = None
        if slope == 1.0:
            rotational = AXES.index(axis.get("name")) < 3
        elif rotational is None:
            rotational = False  # Coupled: OpenSim's w = 1
    return bool(rotational)


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


def point_actuator(context: ForceContext, element):
    body = context.body(element, _text(context, element, "body"), "body")
    return Force.PointActuator(
        context.forces, body, _vec3(context, element, "point", [0, 0, 0]), _vec3(context, element, "direction", [1, 0, 0]),
        _number(context, element, "optimal_force", 1.0), _flag(context, element, "point_is_global", False),
        _flag(context, element, "force_is_global", False), name=element.get("name"))


def torque_actuator(context: ForceContext, element):
    a, b = (context.body(element, _text(context, element, f), f) for f in ("bodyA", "bodyB"))
    return Force.TorqueActuator(context.forces, a, b, _vec3(context, element, "axis", [0, 0, 1]),
                                _number(context, element, "optimal_force", 1.0),
                                _flag(context, element, "torque_is_global", True), name=element.get("name"))


def spring_generalized_force(context: ForceContext, element):
    c = context.coordinate(element)
    return Force.SpringGeneralizedForce(
        context.forces, c.body, c.q_index, *(_number(context, element, f, 0.0) for f in
                                             ("stiffness", "rest_length", "viscosity")), name=element.get("name"))


def coordinate_limit_force(context: ForceContext, element):
    c = context.coordinate(element)
    values = {f: _number(context, element, f, d) for f, d in (
        ("upper_stiffness", 1.0), ("upper_limit", 0.0), ("lower_stiffness", 1.0), ("lower_limit", 0.0),
        ("damping", 0.001), ("transition", 0.1))}
    return Force.CoordinateLimitForce(
        context.forces, c.body, c.q_index, **values, rotational=is_rotational(context, c),
        compute_dissipation_energy=_flag(context, element, "compute_dissipation_energy", False), name=element.get("name"))


def expression_based_coordinate_force(context: ForceContext, element):
    c = context.coordinate(element)
    return Force.ExpressionBasedCoordinateForce(context.forces, c.body, c.q_index,
                                                _text(context, element, "expression", "0.0"), name=element.get("name"))


def _two_bodies(context: ForceContext, element, new: tuple[str, str], old: tuple[str, str]):
    """The two socket bodies (4.x ``socket_<new>``, their base bodies) or the 3.x body names ``old``."""
    if element.find(f"socket_{new[0]}") is not None:
        return [context.socket_frame(element, s)[0] for s in new]
    return [context.body(element, _text(context, element, f), f) for f in old]


def point_to_point_spring(context: ForceContext, element):
    b1, b2 = _two_bodies(context, element, ("body1", "body2"), ("body1", "body2"))
    return Force.TwoPointLinearSpring(
        context.forces, b1, _vec3(context, element, "point1", [0, 0, 0]), b2, _vec3(context, element, "point2", [0, 0, 0]),
        _number(context, element, "stiffness", 1.0), _number(context, element, "rest_length", 0.0))


def _two_frames(context: ForceContext, element):
    """[(body, X_BF)] of a TwoFrameLinker's frames: 4.x sockets, or 3.x ``body_i`` with ``location_body_i`` and
    ``orientation_body_i`` (body-fixed X-Y-Z angles), OpenSim's upgrade of them."""
    if element.find("socket_frame1") is not None:
        out = []
        for s in ("frame1", "frame2"):
            body, frame = context.socket_frame(element, s)
            out.append((body, Transform(frame.R, frame.p)))
        return out
    return [(context.body(element, _text(context, element, f"body_{i}"), f"body_{i}"),
             Transform(rotation_xyz(_vec3(context, element, f"orientation_body_{i}", [0, 0, 0])),
                       np.asarray(_vec3(context, element, f"location_body_{i}", [0, 0, 0]))))
            for i in (1, 2)]


def bushing_force(context: ForceContext, element):
    (b1, X1), (b2, X2) = _two_frames(context, element)
    k = [*_vec3(context, element, "rotational_stiffness", [0, 0, 0]), *_vec3(context, element, "translational_stiffness", [0, 0, 0])]
    c = [*_vec3(context, element, "rotational_damping", [0, 0, 0]), *_vec3(context, element, "translational_damping", [0, 0, 0])]
    return Force.LinearBushing(context.forces, b1, X1, b2, X2, k, c)


def expression_based_bushing_force(context: ForceContext, element):
    (b1, X1), (b2, X2) = _two_frames(context, element)
    texts = {f"{w}_expression": _text(context, element, f"{w}_expression", "0.0") for w in ("Mx", "My", "Mz", "Fx", "Fy", "Fz")}
    return Force.ExpressionBasedBushingForce(
        context.forces, b1, X1, b2, X2, **texts, rotational_damping=_vec3(context, element, "rotational_damping", [0, 0, 0]),
        translational_damping=_vec3(context, element, "translational_damping", [0, 0, 0]), name=element.get("name"))


BUILDERS = {
    "CoordinateActuator": coordinate_actuator,
    "ActivationCoordinateActuator": activation_coordinate_actuator,
    "PointActuator": point_actuator,
    "TorqueActuator": torque_actuator,
    "SpringGeneralizedForce": spring_generalized_force,
    "CoordinateLimitForce": coordinate_limit_force,
    "PointToPointSpring": point_to_point_spring,
    "BushingForce": bushing_force,
    "ExpressionBasedCoordinateForce": expression_based_coordinate_force,
    "ExpressionBasedBushingForce": expression_based_bushing_force,
}
