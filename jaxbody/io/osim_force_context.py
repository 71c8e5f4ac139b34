"""What an OpenSim ForceSet builder reads: the document, frames, bodies, coordinates and subsystems of the model
being imported, with look-ups that name the force and its line on failure (jaxbody.io.osim_forces walks the
ForceSet and calls one builder per element).

A builder is ``builder(context, element) -> ForceHandle``: it reads ``element`` (one ``<ForceSet><objects>``
child, already in the 4.x layout or read through ``field`` below, which knows the 3.x names), builds the jaxbody
force element on ``context.forces`` and returns its handle. A builder that meets an option jaxbody does not
model raises ``Unsupported(reason)``; the element is then listed in ``skipped`` with that reason.
"""

from __future__ import annotations

import dataclasses
import functools

from jaxbody._api.mobilized_body import MobilizedBody
from jaxbody._api.system import GeneralForceSubsystem, SimbodyMatterSubsystem
from jaxbody._dynamics.paths.geometry_path import GeometryPath
from jaxbody.io.osim_contact_geometry import read_contact_geometry
from jaxbody.io.osim_frames import GROUND, FrameInBase, FrameRegistry
from jaxbody.io.osim_function_paths import build_function_based_path
from jaxbody.io.osim_joints import CoordinateInfo
from jaxbody.io.osim_paths import build_geometry_path
from jaxbody.io.osim_wraps import UnsupportedWrap
from jaxbody.io.osim_xml import OsimDocument, element_error, text


class Unsupported(Exception):
    """Raised by a builder for an element it cannot build faithfully; the message says why."""


@dataclasses.dataclass
class ForceContext:
    """The model a ForceSet builder adds to: ``doc``, ``frames``, ``matter``, ``forces`` (the
    GeneralForceSubsystem), ``mobods`` (frame path ``/bodyset/<name>`` or ``/ground`` -> MobilizedBody) and
    ``coordinates`` (name -> CoordinateInfo); ``paths`` (force name -> GeometryPath or FunctionBasedPath) holds
    the paths built so far."""

    doc: OsimDocument
    frames: FrameRegistry
    matter: SimbodyMatterSubsystem
    forces: GeneralForceSubsystem
    mobods: dict
    coordinates: dict
    paths: dict = dataclasses.field(default_factory=dict)

    @functools.cached_property
    def contact_geometry(self) -> dict:
        """The ContactGeometrySet (name -> ContactGeometryRecord, jaxbody.io.osim_contact_geometry), read once."""
        return read_contact_geometry(self.doc, self.frames)

    @staticmethod
    def owner(element) -> str:
        """``"<Tag> 'name'"``, as errors name a force."""
        return f"{element.tag} {element.get('name')!r}"

    def error(self, element, message: str):
        """An InvalidArgument naming the file, the element's line, the force and ``message``."""
        return element_error(self.doc, element, self.owner(element), message)

    def field(self, element, name: str, *old_names: str):
        """The child ``name`` of ``element``, or the first present of its OpenSim 3.x names ``old_names``."""
        for n in (name, *old_names):
            child = element.find(n)
            if child is not None:
                return child
        return None

    def coordinate(self, element, field: str = "coordinate") -> CoordinateInfo:
        """The coordinate named by ``element``'s ``field`` (InvalidArgument naming the force if unknown)."""
        name = text(self.doc, element, field, self.owner(element))
        if name not in self.coordinates:
            raise self.error(element, f"unknown coordinate {name!r} in <{field}>")
        return self.coordinates[name]

    def body(self, element, name: str, field: str) -> MobilizedBody:
        """The body named ``name`` (a body name, ``ground``, or a frame path) read from ``element``'s ``field``."""
        path = GROUND if name in ("ground", GROUND) else (name if name.startswith("/") else f"/bodyset/{name}")
        if path not in self.mobods:
            raise self.error(element, f"unknown body {name!r} in <{field}>")
        return self.mobods[path]

    def socket_frame(self, element, socket: str) -> tuple[MobilizedBody, FrameInBase]:
        """The body and the pose in it of the frame ``element``'s ``socket_<socket>`` names (relative to the force)."""
        owner = self.owner(element)
        path = self.frames.resolve(f"/forceset/{element.get('name')}", text(self.doc, element, f"socket_{socket}", owner),
                                   element, owner)
        base = self.frames.in_base(path, owner)
        return self.mobods[base.base], base

    def geometry_path(self, element, path_element) -> GeometryPath:
        """The GeometryPath ``path_element`` of the force ``element`` (jaxbody.io.osim_paths), built once and kept
        in ``paths``; Unsupported (with the reason) for a wrap object type jaxbody does not compute."""
        name = element.get("name")
        if name not in self.paths:
            try:
                self.paths[name] = build_geometry_path(self.doc, self.frames, self.mobods, self.coordinates,
                                                       path_element, self.owner(element), f"/forceset/{name}")
            except UnsupportedWrap as e:
                raise Unsupported(e.reason) from None
        return self.paths[name]

    def path(self, element):
        """The path of the force ``element``: its ``<GeometryPath>`` (a direct child, or inside the 3.x ``<path>``)
        or its ``<FunctionBasedPath>`` (jaxbody.io.osim_function_paths), built once and kept in ``paths``;
        Unsupported (with the reason) for a path jaxbody does not compute."""
        holder = element.find("path")
        children = list(element) + ([] if holder is None else list(holder))
        found = [c for c in children if c.tag in ("GeometryPath", "FunctionBasedPath")]
        if not found:
            other = [child.tag for child in element if child.get("name") == "path"]
            if other:
                raise Unsupported(f"<{other[0]}> paths are not imported (only GeometryPath and FunctionBasedPath)")
            raise self.error(element, "missing <GeometryPath>")
        if found[0].tag == "GeometryPath":
            return self.geometry_path(element, found[0])
        name = element.get("name")
        if name not in self.paths:
            self.paths[name] = build_function_based_path(self.doc, self.coordinates, found[0], self.owner(element))
        return self.paths[name]
