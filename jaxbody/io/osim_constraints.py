"""OpenSim constraints as exact jaxbody constraints (the Simbody constraint OpenSim 4.6 builds for each).

==============================  ===============================================================================
OpenSim                         jaxbody
==============================  ===============================================================================
CoordinateCouplerConstraint     Constraint.CoordinateCoupler over (independent..., dependent) with
                                ``perr = scale_factor * f(q_independent) - q_dependent`` (OpenSim's
                                CompoundFunction)
PointConstraint                 Constraint.Ball(body_1, location_body_1, body_2, location_body_2)
ConstantDistanceConstraint      Constraint.Rod(body_1, location_body_1, body_2, location_body_2, constant_distance)
PointOnLineConstraint           Constraint.PointOnLine(line_body, line_direction_vec (normalized), point_on_line,
                                follower_body, point_on_follower)
WeldConstraint                  Constraint.Weld(base of frame1, frame1 in it, base of frame2, frame2 in it)
==============================  ===============================================================================

As in OpenSim, the locations of the point constraints are in the socket frame's *base body* (OpenSim passes
them to Simbody unchanged, even when the socket names an offset frame). ``isEnforced`` false gives a
constraint disabled by default.
"""

from __future__ import annotations

from jaxbody._api.constraint import Constraint
from jaxbody._math.spatial import Transform
from jaxbody.io.opensim_functions import parse_function_holder
from jaxbody.io.osim_frames import FrameRegistry
from jaxbody.io.osim_xml import OsimDocument, element_error, flag, names, numbers, text

SUPPORTED = ("CoordinateCouplerConstraint", "PointConstraint", "ConstantDistanceConstraint", "PointOnLineConstraint",
             "WeldConstraint")


def _coupler(doc, element, matter, coordinates, owner):
    independent = names(doc, element, "independent_coordinate_names", owner)
    dependent = text(doc, element, "dependent_coordinate_name", owner)
    holder = element.find("coupled_coordinates_function")
    if holder is None:
        raise element_error(doc, element, owner, "missing <coupled_coordinates_function>")
    function = parse_function_holder(doc, holder, owner)
    if len(independent) < max(function.min_args, 1):
        raise element_error(doc, element, owner, f"{function.kind} needs {function.min_args} independent coordinate(s)")
    unknown = [n for n in [*independent, dependent] if n not in coordinates]
    if unknown:
        raise element_error(doc, element, owner, f"unknown coordinate(s) {unknown}")
    scale = numbers(doc, element, "scale_factor", owner, 1, default=[1.0])[0]
    used = [coordinates[n] for n in [*independent, dependent]]

    def perr(q, params):
        return scale * function.evaluate(q[:-1]) - q[-1]

    return Constraint.CoordinateCoupler(matter, perr, [c.body for c in used], [c.q_index for c in used], name=element.get("name"))


def _socket_body(doc, frames, mobods, element, socket, owner):
    path = frames.resolve(f"/constraintset/{element.get('name')}", text(doc, element, f"socket_{socket}", owner), element, owner)
    base = frames.in_base(path, owner)
    return mobods[base.base], base


def add_constraint(doc: OsimDocument, frames: FrameRegistry, element, matter, mobods: dict, coordinates: dict) -> Constraint:
    """The jaxbody constraint of one ConstraintSet element (``coordinates``: name -> osim_joints.CoordinateInfo)."""
    owner = f"{element.tag} {element.get('name')!r}"
    kind = element.tag
    if kind == "CoordinateCouplerConstraint":
        constraint = _coupler(doc, element, matter, coordinates, owner)
    elif kind in ("PointConstraint", "ConstantDistanceConstraint"):
        (b1, _), (b2, _) = (_socket_body(doc, frames, mobods, element, s, owner) for s in ("body_1", "body_2"))
        p1, p2 = (numbers(doc, element, f"location_body_{i}", owner, 3) for i in (1, 2))
        if kind == "PointConstraint":
            constraint = Constraint.Ball(b1, p1, b2, p2, name=element.get("name"))
        else:
            distance = numbers(doc, element, "constant_distance", owner, 1)[0]
            constraint = Constraint.Rod(b1, p1, b2, p2, distance, name=element.get("name"))
    elif kind == "PointOnLineConstraint":
        (line, _), (follower, _) = (_socket_body(doc, frames, mobods, element, s, owner) for s in ("line_body", "follower_body"))
        constraint = Constraint.PointOnLine(  # normalizes the direction, as OpenSim
            line, numbers(doc, element, "line_direction_vec", owner, 3), numbers(doc, element, "point_on_line", owner, 3),
            follower, numbers(doc, element, "point_on_follower", owner, 3), name=element.get("name"),
        )
    elif kind == "WeldConstraint":
        (b1, f1), (b2, f2) = (_socket_body(doc, frames, mobods, element, s, owner) for s in ("frame1", "frame2"))
        constraint = Constraint.Weld(b1, Transform(f1.R, f1.p), b2, Transform(f2.R, f2.p), name=element.get("name"))
    else:
        raise element_error(doc, element, owner, f"unsupported constraint type <{kind}> (supported: {', '.join(SUPPORTED)})")
    if not flag(doc, element, "isEnforced", owner, True):
        constraint.set_disabled_by_default(True)
    return constraint
