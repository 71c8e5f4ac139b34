"""OpenSim 4.x ``<GeometryPath>`` elements as jaxbody paths (jaxbody._dynamics.paths), read without OpenSim.

``build_geometry_path(doc, frames, bodies, coordinates, element, owner)`` turns one GeometryPath (the child of a
muscle, ligament or path actuator) into a :class:`GeometryPath`: its PathPointSet (PathPoint,
ConditionalPathPoint, MovingPathPoint with OpenSim's functions in JAX from jaxbody.io.opensim_functions), each
point in its body frame through its socket_parent_frame (PhysicalOffsetFrames composed), and its PathWrapSet
(jaxbody.io.osim_wraps). ``bodies`` maps
component paths (``/ground``, ``/bodyset/<name>``) to MobilizedBody handles and ``coordinates`` maps coordinate
names to CoordinateInfo, as load_osim builds them. Errors name the force (``owner``) and the file line.
"""

from __future__ import annotations

import warnings

import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.paths.geometry_path import GeometryPath
from jaxbody._dynamics.paths.path_points import PathPoints
from jaxbody.io.opensim_functions import parse_function_holder
from jaxbody.io.osim_wraps import UnsupportedWrap, build_path_wraps
from jaxbody.io.osim_xml import OsimDocument, element_error, numbers, objects, text

POINT_TYPES = ("PathPoint", "ConditionalPathPoint", "MovingPathPoint")


def _coordinate(doc, coordinates, point, socket, owner):
    """The CoordinateInfo a point's coordinate socket names (by its last path component), or None when absent."""
    path = text(doc, point, socket, owner, default="")
    if not path:
        return None
    name = path.rstrip("/").split("/")[-1]
    if name not in coordinates:
        raise element_error(doc, point, owner, f"{socket} {path!r} names no coordinate of the model")
    return coordinates[name]


def _q(info) -> int:
    return info.body.q_start + info.q_index


def _point_rows(doc, frames, bodies, coordinates, point, holder_path, owner):
    """(body index, R_BF, p_BF, location, condition (q, range) or None, moving ((f, q, range) or None per axis))."""
    name = f"{owner}: {point.tag} {point.get('name')!r}"
    socket = text(doc, point, "socket_parent_frame", name)
    frame = frames.in_base(frames.resolve(f"{holder_path}/{point.get('name')}", socket, point, name), name)
    body = bodies[frame.base].index
    condition, moving = None, [None, None, None]
    location = numbers(doc, point, "location", name, 3, default=[0.0, 0.0, 0.0])
    if point.tag == "ConditionalPathPoint":
        info = _coordinate(doc, coordinates, point, "socket_coordinate", name)
        if info is None:
            raise element_error(doc, point, name, "a ConditionalPathPoint needs a socket_coordinate (OpenSim never "
                                "activates one without)")
        condition = (_q(info), numbers(doc, point, "range", name, 2))
    elif point.tag == "MovingPathPoint":
        for k, axis in enumerate("xyz"):
            holder = point.find(f"{axis}_location")
            if holder is None:
                continue
            f = parse_function_holder(doc, holder, name)
            info = _coordinate(doc, coordinates, point, f"socket_{axis}_coordinate", name)
            moving[k] = (f, -1 if info is None else _q(info), (0.0, 0.0) if info is None else tuple(info.range))
    return body, frame.R, frame.p, location, condition, tuple(moving)


def build_path_points(doc: OsimDocument, frames, bodies, coordinates, element, owner: str, holder_path: str) -> PathPoints:
    """The PathPointSet of GeometryPath ``element`` as PathPoints (>= 2 points, else InvalidArgument)."""
    holder = element.find("PathPointSet/objects")
    points = [] if holder is None else [p for p in holder if p.tag in POINT_TYPES]
    unknown = [] if holder is None else [p for p in holder if p.tag not in POINT_TYPES]
    if unknown:
        raise element_error(doc, unknown[0], owner, f"unsupported path point type <{unknown[0].tag}> (supported: {', '.join(POINT_TYPES)})")
    if len(points) < 2:
        raise element_error(doc, element, owner, f"a path needs at least 2 path points, got {len(points)}")
    rows = [_point_rows(doc, frames, bodies, coordinates, p, f"{holder_path}/path", owner) for p in points]
    condition_q = tuple(-1 if r[4] is None else r[4][0] for r in rows)
    ranges = np.array([[0.0, 0.0] if r[4] is None else r[4][1] for r in rows])
    moving = tuple(() if all(m is None for m in r[5]) else tuple(None if m is None else m[0] for m in r[5]) for r in rows)
    moving_q = tuple(tuple(-1 if m is None else m[1] for m in r[5]) for r in rows)
    moving_range = np.array([[(0.0, 0.0) if m is None else m[2] for m in r[5]] for r in rows])
    return PathPoints(
        bodies=tuple(r[0] for r in rows), locations=jnp.asarray(np.array([r[3] for r in rows])),
        R_BF=jnp.asarray(np.array([r[1] for r in rows])), p_BF=jnp.asarray(np.array([r[2] for r in rows])),
        condition_q=condition_q, condition_range=jnp.asarray(ranges), moving=moving, moving_q=moving_q,
        moving_range=jnp.asarray(moving_range))


def force_paths(doc: OsimDocument, frames, bodies, coordinates, built: dict) -> dict:
    """``{force name: path}`` for every force of the ForceSet that has a ``<GeometryPath>`` or whose builder made a
    path, in file order: those in ``built`` (force name -> path, as the force builders made them) taken from it,
    the others' GeometryPaths built; a
    path over a wrap object type jaxbody does not compute yet is left out, named in one warning."""
    out, left_out = {}, []
    for force in objects(doc, "ForceSet"):
        element, name = force.find("GeometryPath"), force.get("name")
        if name in built:  # a GeometryPath or FunctionBasedPath its force's builder made
            out[name] = built[name]
        elif element is not None:
            try:
                out[name] = build_geometry_path(doc, frames, bodies, coordinates, element, f"{force.tag} {name!r}",
                                                f"/forceset/{name}")
            except UnsupportedWrap as e:
                left_out.append(f"{name} ({e.reason})")
    if left_out:
        warnings.warn(f"load_osim({doc.source}): {len(left_out)} path(s) not built: {'; '.join(left_out)}", stacklevel=3)
    return out


def build_geometry_path(doc: OsimDocument, frames, bodies, coordinates, element, owner: str,
                        holder_path: str = "") -> GeometryPath:
    """The GeometryPath ``element`` of the force ``owner`` (e.g. "Thelen2003Muscle 'biceps'"), whose component
    path is ``holder_path`` (``/forceset/<name>``; sockets relative to it resolve from there)."""
    points = build_path_points(doc, frames, bodies, coordinates, element, owner, holder_path)
    return GeometryPath(points, build_path_wraps(doc, bodies, element, owner, points.size))
