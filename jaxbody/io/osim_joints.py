"""OpenSim joints as jaxbody mobilized bodies, and the map from OpenSim coordinate names to q indices.

Each joint becomes the Simbody mobilizer OpenSim 4.6 builds for it (``<Type>Joint::extendAddToSystem``), with
``X_PF`` = the parent frame's pose in its base body and ``X_BM`` = the child frame's pose in the child body:

==================  ===========================  =========================================================
OpenSim joint       jaxbody mobilizer            coordinate k -> q index of the mobilizer
==================  ===========================  =========================================================
WeldJoint           Weld                         (no coordinates)
PinJoint            Pin (about the common z)     k
SliderJoint         Slider (along the common x)  k
UniversalJoint      Universal (x, then new y)    k
PlanarJoint         Planar (rz, tx, ty)          k
GimbalJoint         Gimbal (body-fixed x-y-z)    k
BallJoint           Ball (Euler mode, x-y-z)     k
FreeJoint           Free (Euler mode: 3 angles,  k
                    3 translations)
CustomJoint         FunctionBased                position of the coordinate among the SpatialTransform's
                                                 coordinates in order of first appearance (rotation1,
                                                 rotation2, rotation3, translation1..3) -- OpenSim's
                                                 CustomJoint::constructCoordinates reorders the joint's
                                                 ``<coordinates>`` to that order
==================  ===========================  =========================================================

OpenSim runs Simbody in Euler-angle mode (Model.cpp: ``setUseEulerAngles(true)``), so the importer does too.
A CustomJoint's six TransformAxis give the FunctionBased functions and axes; a missing function is OpenSim's
default (LinearFunction(1, 0) of its one coordinate, else Constant(0)). Two known differences from OpenSim, each
warned: a rotation that is a nonzero constant before a coordinate-driven rotation (``_warn_constant_rotations``),
and rotations coupled to the coordinates so that Simbody's HDot is not the derivative of its H, as on
Rajagopal's walker knee (``_warn_coupled_rotation_rates``).
"""

from __future__ import annotations

import dataclasses
import warnings

import jax.numpy as jnp

from jaxbody._api.mobilized_body import MobilizedBody
from jaxbody._math.spatial import Transform
from jaxbody.io.opensim_functions import OsimFunction, parse_function
from jaxbody.io.osim_frames import GROUND, FrameRegistry
from jaxbody.io.osim_xml import OsimDocument, element_error, flag, names, numbers, text

#: OpenSim joint type -> (jaxbody factory name, number of coordinates); CustomJoint is handled apart.
JOINTS = {
    "WeldJoint": ("Weld", 0), "PinJoint": ("Pin", 1), "SliderJoint": ("Slider", 1),
    "UniversalJoint": ("Universal", 2), "PlanarJoint": ("Planar", 3), "GimbalJoint": ("Gimbal", 3),
    "BallJoint": ("Ball", 3), "FreeJoint": ("Free", 6),
}

AXES = ("rotation1", "rotation2", "rotation3", "translation1", "translation2", "translation3")


@dataclasses.dataclass(frozen=True)
class CoordinateInfo:
    """One OpenSim coordinate: its mobilized body and q index in it, and its metadata.

    default_value (rad or m; the default State's q), default_speed (u), range (2,) (min, max), clamped
    (OpenSim keeps the value in range when set), locked (OpenSim holds it at its value), prescribed.
    """

    name: str
    joint: str
    body: MobilizedBody
    q_index: int
    default_value: float
    default_speed: float
    range: tuple
    clamped: bool
    locked: bool
    prescribed: bool


def coordinate_elements(joint) -> dict:
    """The joint's ``<Coordinate>`` elements by name, in file order."""
    holder = joint.find("coordinates")
    return {} if holder is None else {c.get("name"): c for c in holder if c.tag == "Coordinate"}


def coordinate_order(doc: OsimDocument, joint, owner: str) -> list[str]:
    """Coordinate names in q order (see the module table)."""
    declared = list(coordinate_elements(joint))
    if joint.tag != "CustomJoint":
        return declared
    order = []
    for axis in _transform_axes(doc, joint, owner):
        order += [n for n in names(doc, axis, "coordinates", owner) if n not in order]
    unknown = [n for n in order if n not in declared]
    if unknown:
        raise element_error(doc, joint, owner, f"SpatialTransform uses coordinates {unknown} not in <coordinates>")
    unused = [n for n in declared if n not in order]
    if unused:
        raise element_error(doc, joint, owner, f"coordinates {unused} drive no TransformAxis")
    return order


def _transform_axes(doc, joint, owner):
    st = joint.find("SpatialTransform")
    if st is None:
        raise element_error(doc, joint, owner, "CustomJoint needs a <SpatialTransform>")
    by_name = {a.get("name"): a for a in st if a.tag == "TransformAxis"}
    missing = [n for n in AXES if n not in by_name]
    if missing:
        raise element_error(doc, st, owner, f"missing TransformAxis {missing}")
    return [by_name[n] for n in AXES]


def _axis_function(doc, axis, coords, owner) -> OsimFunction:
    known = [child for child in axis if child.tag not in ("coordinates", "axis")]
    if not known:
        if len(coords) > 1:
            raise element_error(doc, axis, owner, "several coordinates need a function")
        return OsimFunction("LinearFunction" if coords else "Constant", len(coords),
                            (lambda x: x[0]) if coords else (lambda x: 0.0 * x.sum()))
    function = parse_function(doc, known[0], owner)
    if len(coords) < function.min_args:
        raise element_error(doc, known[0], owner, f"{function.kind} needs {function.min_args} coordinate(s), got {coords}")
    return function


def _warn_constant_rotations(functions, indices, owner):
    """Warn where OpenSim's dynamics are not its kinematics': a rotation function without coordinates and with a
    nonzero value before a coordinate-driven rotation. Simbody 3.9's FunctionBased builds H_FM as if that angle
    were 0 (so OpenSim's V_GB, M and udot there are not the derivatives of its X_GB); jaxbody's are exact."""
    for i in range(2):
        value = float(functions[i].evaluate(jnp.zeros(0))) if not indices[i] else 0.0
        if value != 0.0 and any(indices[j] for j in range(i + 1, 3)):
            warnings.warn(
                f"{owner}: {AXES[i]} is the nonzero constant {value} before a coordinate-driven rotation; OpenSim "
                "(Simbody 3.9 FunctionBased) computes velocities as if it were 0, inconsistently with its own "
                "transform: jaxbody's exact velocities, M and udot will differ from OpenSim's", stacklevel=4,
            )


def _warn_coupled_rotation_rates(indices, owner):
    """Warn where OpenSim's velocity terms are not the derivatives of its kinematics: Simbody 3.9's FunctionBased
    HDot (MobilizedBodyImpl.h, buildHdot) takes the rates of the first one and two rotation frames from the first
    one and two mobilities' u (all of them for a one-coordinate joint), where the exact HDot (jaxbody's) uses
    the rates of the rotation angles. With D_i the coordinates rotation i depends on, the two differ when
    rotation2 is driven and (D_0 holds a coordinate other than the first, or D_2 holds the first), or when
    rotation3 is driven and D_0 or D_1 holds a coordinate past the second (``hdot="simbody"`` in
    jaxbody._mobilizers.function_based is Simbody's formula; tests/io/test_osim_rajagopal_family.py shows it is
    the whole difference). Not called with ``load_osim(..., custom_joint_hdot="simbody")``."""
    d0, d1, d2 = (set(i) for i in indices[:3])
    if (d1 and (d0 - {0} or 0 in d2)) or (d2 and (d0 | d1) - {0, 1}):
        warnings.warn(
            f"{owner}: its rotations are driven by coordinates in a way Simbody 3.9's FunctionBased HDot does "
            f"not differentiate exactly (rotation1..3 depend on coordinates {[sorted(d) for d in (d0, d1, d2)]}); "
            "OpenSim's velocity-dependent forces are not those of its own kinematics, jaxbody's are exact, so udot "
            "at nonzero speeds differs from OpenSim's (Rajagopal2016's walker knee: 3.7e-3); "
            "load_osim(..., custom_joint_hdot='simbody') reproduces OpenSim's", stacklevel=4,
        )


def add_custom_joint(doc, joint, parent, X_PF, body, X_BM, order, owner, hdot):
    """A FunctionBased mobilized body from a CustomJoint's SpatialTransform, with ``hdot`` ("exact" or "simbody",
    jaxbody._mobilizers.function_based) as its HDot formula."""
    axes, functions, indices = [], [], []
    for axis in _transform_axes(doc, joint, owner):
        coords = names(doc, axis, "coordinates", owner)
        functions.append(_axis_function(doc, axis, coords, f"{owner} {axis.get('name')}"))
        indices.append([order.index(c) for c in coords])
        axes.append(numbers(doc, axis, "axis", f"{owner} {axis.get('name')}", 3, default=[1, 0, 0]))
    _warn_constant_rotations(functions, indices, owner)
    if hdot == "exact":
        _warn_coupled_rotation_rates(indices, owner)
    return MobilizedBody.FunctionBased(
        parent, X_PF, body, X_BM, len(order), functions, indices,
        rotation_axes=axes[:3], translation_axes=axes[3:], name=joint.get("name"), hdot=hdot,
    )


def add_joint(doc: OsimDocument, frames: FrameRegistry, joint, mobods: dict, rigid_bodies: dict, hdot: str):
    """Add one joint's mobilized body; returns (body path, MobilizedBody, [CoordinateInfo]) or None when its parent
    body is not in the tree yet (``mobods``: body path -> MobilizedBody, Ground included); ``hdot``: a
    CustomJoint's HDot formula (``add_custom_joint``)."""
    owner = f"{joint.tag} {joint.get('name')!r}"
    joint_path = f"/jointset/{joint.get('name')}"
    paths = [frames.resolve(joint_path, text(doc, joint, f"socket_{s}_frame", owner), joint, owner) for s in ("parent", "child")]
    parent_frame, child_frame = (frames.in_base(p, owner) for p in paths)
    if parent_frame.base not in mobods:
        return None
    if child_frame.base == GROUND or child_frame.base in mobods:
        raise element_error(doc, joint, owner, f"child {child_frame.base} is already in the tree: reversed joints and "
                            "kinematic loops closed by joints are not supported (use a constraint)")
    order = coordinate_order(doc, joint, owner)
    X_PF, X_BM = Transform(parent_frame.R, parent_frame.p), Transform(child_frame.R, child_frame.p)
    parent, body = mobods[parent_frame.base], rigid_bodies[child_frame.base]
    if joint.tag == "CustomJoint":
        mobod = add_custom_joint(doc, joint, parent, X_PF, body, X_BM, order, owner, hdot)
    elif joint.tag in JOINTS:
        factory, n = JOINTS[joint.tag]
        if len(order) != n:
            raise element_error(doc, joint, owner, f"{joint.tag} needs {n} coordinate(s), got {order}")
        mobod = getattr(MobilizedBody, factory)(parent, X_PF, body, X_BM, name=joint.get("name"))
    else:
        raise element_error(doc, joint, owner, f"unsupported joint type <{joint.tag}> (supported: "
                            f"{', '.join([*JOINTS, 'CustomJoint'])})")
    elements = coordinate_elements(joint)
    coordinates = [_coordinate(doc, elements[name], joint.get("name"), mobod, k) for k, name in enumerate(order)]
    return child_frame.base, mobod, coordinates


def _coordinate(doc, element, joint_name, mobod, k) -> CoordinateInfo:
    owner = f"coordinate {element.get('name')!r}"
    value_range = numbers(doc, element, "range", owner, 2, default=[-10.0, 10.0])  # OpenSim's default
    return CoordinateInfo(
        name=element.get("name"), joint=joint_name, body=mobod, q_index=k,
        default_value=numbers(doc, element, "default_value", owner, 1, default=[0.0])[0],
        default_speed=numbers(doc, element, "default_speed_value", owner, 1, default=[0.0])[0],
        range=tuple(value_range), clamped=flag(doc, element, "clamped", owner, False),
        locked=flag(doc, element, "locked", owner, False), prescribed=flag(doc, element, "prescribed", owner, False),
    )
