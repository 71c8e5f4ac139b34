"""An OpenSim 3.x document (``<OpenSimDocument Version=...>`` from 20101 to 30499: OpenSim 2.x and 3.x) upgraded in
memory to the OpenSim 4.x layout that load_osim reads.

The rules are the ones OpenSim 4.6 applies when it opens such a file (the ``updateFromXMLNode`` steps of Model,
Body, PhysicalFrame, Joint, Coordinate and the constraints), restated here. Numbers are copied as text (inertia excepted, see below), so the upgraded model is the one
OpenSim 4.6 builds from the file:

* Ground: the BodySet's ``<Body name="ground">`` becomes the model's ``<Ground name="ground">``.
* Inertia: a body's ``inertia_xx .. inertia_yz`` become ``<inertia>`` = [Ixx Iyy Izz Ixy Ixz Iyz] (kg m^2, about
  the mass center in the body frame); a missing moment is 1 and a missing product 0, and each is rounded to six
  significant digits, as in OpenSim (Body::updateFromXMLNode writes them with ``ostream <<``).
* Joints: each body's ``<Joint><SomeJoint>`` moves to the model's JointSet. Its ``parent_body`` P (default
  ground) and the owning body B become two PhysicalOffsetFrames of the joint, ``P_offset`` on P at
  ``location_in_parent`` / ``orientation_in_parent`` and ``B_offset`` on B at ``location`` / ``orientation``
  (m; body-fixed X-Y-Z angles in rad), named by ``socket_parent_frame`` and ``socket_child_frame``.
  ``CoordinateSet/objects`` becomes ``coordinates`` (``motion_type``, which OpenSim 4 derives, is dropped).
  ``<reverse>true`` is refused: OpenSim 4 swaps the two frames, which makes a reversed mobilizer.
* CustomJoint: a TransformAxis's ``<function><F/></function>`` becomes ``<F name="function"/>``.
* Constraints: ``isDisabled`` becomes ``isEnforced`` (negated). PointConstraint and ConstantDistanceConstraint
  ``body_1``/``body_2``, PointOnLineConstraint ``line_body``/``follower_body`` become the sockets of the same
  names (their point and direction fields are unchanged); WeldConstraint ``body_1``/``body_2`` with
  ``location_body_k``/``orientation_body_k`` become ``socket_frame1``/``socket_frame2``: the body itself, or a
  PhysicalOffsetFrame ``<body>_offset`` of the constraint where the offset is not zero.
  CoordinateCouplerConstraint's fields are the same in both layouts.
* Functions: 2.x's ``NaturalCubicSpline`` is read as a SimmSpline by jaxbody.io.opensim_functions, as OpenSim.
* Geometry: ``VisibleObject/GeometrySet/DisplayGeometry`` of Ground and the bodies becomes
  ``attached_geometry/Mesh`` (``<body>_geom_<k>``; scale = the geometry's times the VisibleObject's; color).
  Where the VisibleObject's or the geometry's ``transform`` (rX rY rZ tx ty tz) is not zero, the mesh sits on
  a PhysicalOffsetFrame of the body (``<body>_geom_frame``, ``<body>_geom_frame_<k>``).
* Paths (AbstractPathPoint, ConditionalPathPoint, MovingPathPoint, Muscle): OpenSim 2.x's type names
  (MusclePoint, MuscleViaPoint, MovingMusclePoint, MusclePointSet, MuscleWrap, MuscleWrapSet) become PathPoint,
  ConditionalPathPoint, MovingPathPoint, PathPointSet, PathWrap, PathWrapSet, and a muscle's bare
  PathPointSet / PathWrapSet (documents up to 20301) moves into a ``<GeometryPath>``. In each path point,
  ``body`` becomes ``socket_parent_frame`` (``/bodyset/<body>``, ground ``/ground``); a ConditionalPathPoint's
  ``coordinate`` becomes ``socket_coordinate`` and a MovingPathPoint's
  ``x_coordinate`` .. ``z_coordinate`` become ``socket_x_coordinate`` .. (``/jointset/<joint>/<coordinate>``;
  the bare name where no joint has that coordinate); its ``XAttachment`` .. (before 30000) become ``x_location``
  .. and its ``location``, which OpenSim 4's MovingPathPoint does not have, is dropped (an axis without a
  function is at 0, as in OpenSim 4). PathWrap (``wrap_object``, ``method``, ``range``) and the wrap objects'
  geometry (``xyz_body_rotation``, ``translation``, ``quadrant``, ``active``, sizes) are the same in both
  layouts; a wrap object's ``VisibleObject`` (drawing only, which OpenSim 4 turns into an Appearance) is
  dropped.

Each new element carries the line of the element it comes from, so errors still name a line of the file.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from jaxbody.errors import InvalidArgument
from jaxbody.io.osim_xml import OsimDocument, element_error, flag, numbers, text

#: Document versions upgraded here: OpenSim 2.1 (20101) up to the first OpenSim 4.0 layout change (30500).
OLDEST, FIRST_4X_LAYOUT = 20101, 30500

INERTIA = (("inertia_xx", "1"), ("inertia_yy", "1"), ("inertia_zz", "1"),
           ("inertia_xy", "0"), ("inertia_xz", "0"), ("inertia_yz", "0"))

#: constraint type -> (3.x body field, 4.x socket) pairs; WeldConstraint is handled apart (offset frames).
CONSTRAINT_BODIES = {
    "PointConstraint": (("body_1", "socket_body_1"), ("body_2", "socket_body_2")),
    "ConstantDistanceConstraint": (("body_1", "socket_body_1"), ("body_2", "socket_body_2")),
    "PointOnLineConstraint": (("line_body", "socket_line_body"), ("follower_body", "socket_follower_body")),
}


def upgrade(doc: OsimDocument) -> None:
    """Rewrite ``doc.root`` (a 3.x ``<Model>``) in place to the 4.x layout; see the module docstring."""
    if not OLDEST <= doc.version < FIRST_4X_LAYOUT:
        raise InvalidArgument(
            f"{doc.source}: OpenSim document version {doc.version}: load_osim reads OpenSim 4.x files and upgrades "
            f"versions {OLDEST} to {FIRST_4X_LAYOUT - 1} (OpenSim 2.x and 3.x); open and save this one with "
            "OpenSim 4 (Model(path).printToXML(new_path)) to convert it")
    root = doc.root
    body_set = root.find("BodySet")
    bodies = [] if body_set is None else body_set.findall("objects/Body")
    joint_set = _child(doc, None, "JointSet", root)
    joint_objects = _child(doc, joint_set, "objects", root)
    root.insert(len(root) if body_set is None else list(root).index(body_set) + 1, joint_set)
    for body in bodies:
        _geometry(doc, body)
        if body.get("name") == "ground":
            body_set.find("objects").remove(body)
            body.tag = "Ground"
            root.insert(list(root).index(body_set), body)
            continue
        _inertia(doc, body)
        holder = _take(body, "Joint")
        joint_objects.extend([_joint(doc, joint, body.get("name")) for joint in ([] if holder is None else holder)])
    for constraint in root.findall("ConstraintSet/objects/*"):
        _constraint(doc, constraint)
    _paths(doc, {c.get("name"): j.get("name") for j in joint_objects for c in j.findall("coordinates/Coordinate")})


def _child(doc, parent, tag, source, value=None, **attrib) -> ET.Element:
    """A new element ``tag`` (text ``value``), appended to ``parent`` unless None, with ``source``'s line."""
    element = ET.Element(tag, attrib)
    element.text = value
    doc.lines[element] = doc.line(source)
    if parent is not None:
        parent.append(element)
    return element


def _body_path(name: str) -> str:
    """The 4.x component path of a 3.x body name (bodies live in the BodySet; ground is the model's Ground)."""
    return "/ground" if name == "ground" else f"/bodyset/{name}"


def _take(element, field: str):
    """Remove and return ``element``'s child ``field`` (None when absent)."""
    child = element.find(field)
    if child is not None:
        element.remove(child)
    return child


def _take_numbers(doc, element, field: str, owner: str, defaults: str = "0 0 0") -> str:
    """The text of ``element``'s child ``field``, checked to be as many finite numbers as ``defaults`` has, then
    removed (``defaults`` where absent). The text is copied, not reformatted, so no digit changes."""
    numbers(doc, element, field, owner, len(defaults.split()), default=[float(v) for v in defaults.split()])
    child = _take(element, field)
    return child.text.strip() if child is not None and child.text and child.text.strip() else defaults


def _is_zero(values: str) -> bool:
    return not any(float(v) for v in values.split())


def _offset_frame(doc, holder, name: str, parent_socket: str, translation: str, orientation: str, source):
    """A PhysicalOffsetFrame ``name`` on the frame ``parent_socket`` names, appended to ``holder``."""
    frame = _child(doc, holder, "PhysicalOffsetFrame", source, name=name)
    _child(doc, frame, "socket_parent", source, parent_socket)
    _child(doc, frame, "translation", source, translation)
    _child(doc, frame, "orientation", source, orientation)
    return frame


def _inertia(doc, body) -> None:
    """``inertia_xx .. inertia_yz`` -> ``<inertia>``, each written as OpenSim writes it (C++ ``ostream <<``, six
    significant digits: OpenSim 4.6 rounds a 3.x body's inertia so, and so does this upgrade)."""
    owner = f"Body {body.get('name')!r}"
    components = [_take_numbers(doc, body, field, owner, default) for field, default in INERTIA]
    if body.find("inertia") is None:
        _child(doc, body, "inertia", body, " ".join(f"{float(v):g}" for v in components))


def _joint(doc, joint, child: str):
    """One 3.x joint element rewritten as a JointSet member connecting ``parent_body`` to body ``child``."""
    owner = f"{joint.tag} {joint.get('name')!r} of body {child!r}"
    parent = text(doc, joint, "parent_body", owner, default="ground")
    if flag(doc, joint, "reverse", owner, False):
        raise element_error(doc, joint, owner, "<reverse>true</reverse>: OpenSim 4 swaps the parent and child frames "
                            "of a reversed joint, which jaxbody does not build (write the joint from parent to child)")
    offsets = [_take_numbers(doc, joint, f, owner) for f in ("location_in_parent", "orientation_in_parent",
                                                             "location", "orientation")]
    for field in ("parent_body", "reverse"):
        _take(joint, field)
    _child(doc, joint, "socket_parent_frame", joint, f"{parent}_offset")
    _child(doc, joint, "socket_child_frame", joint, f"{child}_offset")
    frames = _child(doc, joint, "frames", joint)
    _offset_frame(doc, frames, f"{parent}_offset", _body_path(parent), *offsets[:2], joint)
    _offset_frame(doc, frames, f"{child}_offset", _body_path(child), *offsets[2:], joint)
    coordinate_set = _take(joint, "CoordinateSet")
    coordinates = _child(doc, joint, "coordinates", joint if coordinate_set is None else coordinate_set)
    for coordinate in [] if coordinate_set is None else coordinate_set.findall("objects/Coordinate"):
        _take(coordinate, "motion_type")
        coordinates.append(coordinate)
    for axis in joint.findall("SpatialTransform/TransformAxis"):
        _unwrap_function(axis)
    return joint


def _unwrap_function(axis) -> None:
    """``<function><F/></function>`` -> ``<F name="function"/>`` (an empty holder: OpenSim's default function)."""
    holder = axis.find("function")
    if holder is None:
        return
    position = list(axis).index(holder)
    axis.remove(holder)
    for function in holder:
        function.set("name", "function")
        axis.insert(position, function)


def _constraint(doc, constraint) -> None:
    owner = f"{constraint.tag} {constraint.get('name')!r}"
    if constraint.find("isDisabled") is not None:
        enforced = not flag(doc, constraint, "isDisabled", owner, False)
        disabled = _take(constraint, "isDisabled")
        _child(doc, constraint, "isEnforced", disabled, "true" if enforced else "false")
    for field, socket in CONSTRAINT_BODIES.get(constraint.tag, ()):
        body = text(doc, constraint, field, owner, default="ground")
        source = _take(constraint, field)
        _child(doc, constraint, socket, constraint if source is None else source, _body_path(body))
    if constraint.tag == "WeldConstraint":
        _weld_frames(doc, constraint, owner)


def _weld_frames(doc, constraint, owner: str) -> None:
    """WeldConstraint ``body_k`` + ``location_body_k``/``orientation_body_k`` -> ``socket_frame<k>``."""
    frames = None
    for k in (1, 2):
        body = text(doc, constraint, f"body_{k}", owner, default="ground")
        _take(constraint, f"body_{k}")
        offset = [_take_numbers(doc, constraint, f"{f}_body_{k}", owner) for f in ("location", "orientation")]
        if _is_zero(" ".join(offset)):
            _child(doc, constraint, f"socket_frame{k}", constraint, _body_path(body))
            continue
        frames = _child(doc, constraint, "frames", constraint) if frames is None else frames
        _offset_frame(doc, frames, f"{body}_offset", _body_path(body), *offset, constraint)
        _child(doc, constraint, f"socket_frame{k}", constraint, f"{body}_offset")


def _geometry(doc, body) -> None:
    """A body's ``VisibleObject`` -> ``attached_geometry`` Meshes; see the module docstring."""
    visible = _take(body, "VisibleObject")
    if visible is None:
        return
    name = body.get("name")
    owner = f"VisibleObject of Body {name!r}"
    outer_scale = numbers(doc, visible, "scale_factors", owner, 3, default=[1, 1, 1])
    outer = _transform_frame(doc, body, ("..", body), visible, f"{name}_geom_frame", owner)
    attached = body.find("attached_geometry")
    attached = _child(doc, body, "attached_geometry", visible) if attached is None else attached
    for k, display in enumerate(visible.findall("GeometrySet/objects/DisplayGeometry"), start=1):
        mesh_file = text(doc, display, "geometry_file", owner, default="-")
        if mesh_file == "-":
            continue
        socket, _ = _transform_frame(doc, display, outer, display, f"{name}_geom_frame_{k}", owner)
        scale = numbers(doc, display, "scale_factors", owner, 3, default=[1, 1, 1])
        mesh = _child(doc, attached, "Mesh", display, name=f"{name}_geom_{k}")
        _child(doc, mesh, "socket_frame", display, socket)
        _child(doc, mesh, "scale_factors", display, " ".join(repr(a * b) for a, b in zip(scale, outer_scale)))
        _child(doc, mesh, "mesh_file", display, mesh_file)
        appearance = _child(doc, mesh, "Appearance", display)
        _child(doc, appearance, "color", display, text(doc, display, "color", owner, default="1 1 1"))


def _transform_frame(doc, source, parent: tuple, holder, name: str, owner: str) -> tuple:
    """(socket seen from a mesh of the body, frame element) of the PhysicalOffsetFrame that ``holder``'s 3.x
    ``transform`` (rX rY rZ tx ty tz: body-fixed X-Y-Z angles in rad, then m) places on ``parent`` (its socket
    and element: the body, or a frame of it); ``parent`` itself where the transform is zero or absent."""
    transform = _take_numbers(doc, holder, "transform", owner, "0 0 0 0 0 0")
    if _is_zero(transform):
        return parent
    socket, element = parent
    components = element.find("components")
    components = _child(doc, element, "components", source) if components is None else components
    values = transform.split()
    frame = _offset_frame(doc, components, name, "..", " ".join(values[3:]), " ".join(values[:3]), source)
    return (f"../{name}" if socket == ".." else f"{socket}/{name}"), frame


#: OpenSim 2.x type names of path elements -> OpenSim 4's (Object::renameType in OpenSim's RegisterTypes).
PATH_TYPES = {"MusclePoint": "PathPoint", "MuscleViaPoint": "ConditionalPathPoint", "MovingMusclePoint": "MovingPathPoint",
              "MusclePointSet": "PathPointSet", "MuscleWrap": "PathWrap", "MuscleWrapSet": "PathWrapSet"}
#: the last document version whose muscles may hold their PathPointSet / PathWrapSet outside a GeometryPath.
BARE_PATH_SETS, ATTACHMENTS = 20301, 30000


def _paths(doc, joint_of: dict) -> None:
    """The GeometryPath rules of the module docstring; ``joint_of`` maps coordinate name -> joint name."""
    for element in doc.root.iter():
        element.tag = PATH_TYPES.get(element.tag, element.tag)
    for force in doc.root.findall("ForceSet/objects/*"):
        sets = [s for s in (force.find("PathPointSet"), force.find("PathWrapSet")) if s is not None]
        if sets and doc.version <= BARE_PATH_SETS and force.find("GeometryPath") is None:
            path = _child(doc, force, "GeometryPath", sets[0])
            for holder in sets:
                force.remove(holder)
                path.append(holder)
    for point in doc.root.findall(".//GeometryPath/PathPointSet/objects/*"):
        _path_point(doc, point, joint_of)
    for holder in doc.root.iter("WrapObjectSet"):
        for wrap in holder.findall("objects/*"):
            _take(wrap, "VisibleObject")


def _path_point(doc, point, joint_of: dict) -> None:
    """One path point's 3.x fields as 4.x sockets (renamed in place, so errors name the same lines)."""
    body = point.find("body")
    if body is not None:
        body.tag, body.text = "socket_parent_frame", _body_path((body.text or "").strip())
    if point.tag == "ConditionalPathPoint":
        _coordinate_socket(point.find("coordinate"), "socket_coordinate", joint_of)
    elif point.tag == "MovingPathPoint":
        for axis in "xyz":
            attachment = point.find(f"{axis.upper()}Attachment")
            if attachment is not None and doc.version < ATTACHMENTS:
                attachment.tag = f"{axis}_location"
            _coordinate_socket(point.find(f"{axis}_coordinate"), f"socket_{axis}_coordinate", joint_of)
        _take(point, "location")


def _coordinate_socket(field, socket: str, joint_of: dict) -> None:
    """A 3.x coordinate name field -> ``socket`` naming ``/jointset/<joint>/<coordinate>`` (or the bare name)."""
    if field is None:
        return
    name = (field.text or "").strip()
    field.tag, field.text = socket, f"/jointset/{joint_of[name]}/{name}" if name in joint_of else name
