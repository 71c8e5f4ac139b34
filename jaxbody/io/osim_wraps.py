"""OpenSim 4.x wrap objects (each body's ``<WrapObjectSet>``) and a path's ``<PathWrapSet>`` as jaxbody records.

Supported: WrapSphere (``radius``), WrapCylinder (``radius``, ``length``), WrapEllipsoid (``dimensions``, with
the PathWrap's ``method``: hybrid, midpoint or axial), WrapTorus (``inner_radius``, ``outer_radius``; OpenSim's
defaults 0.01 and 0.05, outer > inner > 0), with ``active``, ``xyz_body_rotation`` (body-fixed X-Y-Z, rad),
``translation`` and ``quadrant``. Another wrap type raises :class:`UnsupportedWrap` (load_osim then leaves that
path out, naming it in a warning). A PathWrap naming a wrap object that no body has, or an unknown method, raises
InvalidArgument naming the force.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.paths.wrap_cylinder import WrapCylinder
from jaxbody._dynamics.paths.wrap_ellipsoid import METHODS, WrapEllipsoid
from jaxbody._dynamics.paths.wrap_objects import QUADRANTS, PathWrap
from jaxbody._dynamics.paths.wrap_sphere import WrapSphere
from jaxbody._dynamics.paths.wrap_torus import WrapTorus
from jaxbody._dynamics.paths.wrapping import wrap_range
from jaxbody.errors import InvalidArgument
from jaxbody.io.osim_frames import GROUND, rotation_xyz
from jaxbody.io.osim_xml import OsimDocument, element_error, flag, numbers, objects, text

SUPPORTED = ("WrapSphere", "WrapCylinder", "WrapEllipsoid", "WrapTorus")


class UnsupportedWrap(InvalidArgument):
    """A path wraps over an object type jaxbody does not compute; the message names
    the file, line and wrap object, ``reason`` says what is missing."""

    def __init__(self, where: str, reason: str):
        super().__init__(f"{where}: {reason}")
        self.reason = reason


def wrap_elements(doc: OsimDocument) -> dict:
    """``{wrap object name: (body path, element)}`` over Ground's and every body's WrapObjectSet."""
    holders = [(GROUND, doc.root.find("Ground"))] + [(f"/bodyset/{b.get('name')}", b) for b in objects(doc, "BodySet")]
    out = {}
    for path, body in holders:
        found = None if body is None else body.find("WrapObjectSet/objects")
        for w in [] if found is None else list(found):
            out[w.get("name")] = (path, w)
    return out


def build_wrap_object(doc: OsimDocument, bodies, body_path: str, element, method: str = "hybrid"):
    """The wrap object of ``element`` on the body at ``body_path`` (UnsupportedWrap for other types), for a
    PathWrap of ``method`` (read by the ellipsoid only, as in OpenSim)."""
    owner = f"{element.tag} {element.get('name')!r}"
    if element.tag not in SUPPORTED:
        raise UnsupportedWrap(f"{doc.source}: line {doc.line(element)}: {owner}",
                              f"jaxbody computes {', '.join(SUPPORTED)} wraps, not {element.tag}")
    quadrant = text(doc, element, "quadrant", owner, default="all").strip()
    if quadrant.lower() not in {k.lower() for k in QUADRANTS} and quadrant != "Unassigned":
        raise element_error(doc, element, owner, f"unknown quadrant {quadrant!r} (OpenSim: all, x, -x, y, -y, z, -z)")
    common = dict(
        body=bodies[body_path].index,
        R_BW=jnp.asarray(rotation_xyz(numbers(doc, element, "xyz_body_rotation", owner, 3, default=[0, 0, 0]))),
        p_BW=jnp.asarray(np.array(numbers(doc, element, "translation", owner, 3, default=[0, 0, 0]))),
        quadrant=QUADRANTS.get(quadrant.lower(), (0, 0)),
        active=flag(doc, element, "active", owner, True), name=element.get("name"))
    if element.tag == "WrapEllipsoid":
        dimensions = numbers(doc, element, "dimensions", owner, 3, default=[0.05, 0.05, 0.05])
        if min(dimensions) <= 0:
            raise element_error(doc, element, owner, f"dimensions must be positive, got {dimensions}")
        return WrapEllipsoid(**common, dimensions=jnp.asarray(np.array(dimensions, float)), method=method)
    if element.tag == "WrapTorus":
        inner = numbers(doc, element, "inner_radius", owner, 1, default=[0.01])[0]
        outer = numbers(doc, element, "outer_radius", owner, 1, default=[0.05])[0]
        if not 0 < inner < outer:
            raise element_error(doc, element, owner,
                                f"needs 0 < inner_radius < outer_radius, got inner {inner}, outer {outer}")
        return WrapTorus(**common, inner_radius=jnp.asarray(inner), outer_radius=jnp.asarray(outer))
    radius = numbers(doc, element, "radius", owner, 1)[0]
    if radius <= 0:
        raise element_error(doc, element, owner, f"radius must be positive, got {radius}")
    if element.tag == "WrapSphere":
        return WrapSphere(**common, radius=jnp.asarray(radius))
    length = numbers(doc, element, "length", owner, 1, default=[1.0])[0]
    if length <= 0:
        raise element_error(doc, element, owner, f"length must be positive, got {length}")
    return WrapCylinder(**common, radius=jnp.asarray(radius), length=jnp.asarray(length))


def build_path_wraps(doc: OsimDocument, bodies, element, owner: str, n_points: int) -> tuple:
    """The PathWrapSet of GeometryPath ``element`` as PathWrap records, in order."""
    holder = element.find("PathWrapSet/objects")
    available = wrap_elements(doc)
    wraps = []
    for pw in [] if holder is None else list(holder):
        name = text(doc, pw, "wrap_object", owner)
        if name not in available:
            raise element_error(doc, pw, owner, f"wrap_object {name!r} is in no body's WrapObjectSet")
        body_path, w = available[name]
        start, end = (int(v) for v in numbers(doc, pw, "range", owner, 2, default=[-1, -1]))
        first, last = wrap_range(start, end, n_points)
        if not (0 <= first <= last < n_points):
            raise element_error(doc, pw, owner, f"range {start} {end} is outside the path's {n_points} points")
        method = text(doc, pw, "method", owner, default="hybrid").strip()
        method = "hybrid" if method == "Unassigned" else method
        if method not in {m for base in METHODS for m in (base, base.capitalize(), base.upper())}:
            raise element_error(doc, pw, owner, f"unknown wrap method {method!r} (OpenSim: hybrid, midpoint, axial)")
        wraps.append(PathWrap(build_wrap_object(doc, bodies, body_path, w, method.lower()), first, last))
    return tuple(wraps)
