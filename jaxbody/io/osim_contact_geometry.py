"""OpenSim's ContactGeometrySet read without OpenSim: each geometry's type, base body, pose in it and size
(jaxbody.io.osim_contact builds the contact forces on them; ``ForceContext.contact_geometry`` reads the set once
per import).

ContactHalfSpace, ContactSphere (``radius``), ContactEllipsoid (``radii``), ContactMesh (``filename``), each fixed
on ``socket_frame`` at ``location`` with ``orientation`` (body-fixed X-Y-Z, rad; OpenSim 3.x: ``body_name``): its
pose in the base body is ``X_BF X_FP`` (OpenSim's findTransformInBaseFrame times the geometry's own transform).
An unknown geometry type, a frame not in the file or a size that is not positive raises InvalidArgument naming
the element and its line.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxbody.io.osim_frames import rotation_xyz
from jaxbody.io.osim_xml import element_error, numbers, objects, text

#: geometry tag -> the property holding its size
GEOMETRY_SIZES = {"ContactHalfSpace": None, "ContactSphere": "radius", "ContactEllipsoid": "radii",
                  "ContactMesh": "filename"}
_SET = "/contactgeometryset/"


@dataclasses.dataclass(frozen=True)
class ContactGeometryRecord:
    """One ContactGeometry: ``name``, ``kind`` (its tag), ``base`` (the base body's path, ``/ground`` or
    ``/bodyset/<body>``), ``R`` (3, 3), ``p`` (3,) its frame in the base body (m), ``size`` (radius (1,),
    radii (3,) or None), ``mesh_file`` (ContactMesh, as written), ``line`` (its line in the file)."""

    name: str
    kind: str
    base: str
    R: np.ndarray
    p: np.ndarray
    size: np.ndarray | None
    mesh_file: str | None
    line: int


def read_contact_geometry(doc, frames) -> dict[str, ContactGeometryRecord]:
    """Every geometry of the model's ContactGeometrySet by name (see the module docstring)."""
    out = {}
    for element in objects(doc, "ContactGeometrySet"):
        name, kind = element.get("name"), element.tag
        owner = f"{kind} {name!r}"
        if kind not in GEOMETRY_SIZES:
            raise element_error(doc, element, owner, f"unknown contact geometry type (jaxbody reads "
                                f"{', '.join(GEOMETRY_SIZES)})")
        socket = text(doc, element, "socket_frame", owner, default="")
        if not socket:  # OpenSim 3.x: <body_name>
            body = text(doc, element, "body_name", owner)
            socket = "/ground" if body == "ground" else f"/bodyset/{body}"
        frame = frames.in_base(frames.resolve(f"{_SET}{name}", socket, element, owner), owner)
        R_FP = rotation_xyz(numbers(doc, element, "orientation", owner, 3, default=[0, 0, 0]))
        p_FP = np.asarray(numbers(doc, element, "location", owner, 3, default=[0, 0, 0]))
        size_field = GEOMETRY_SIZES[kind]
        size = mesh = None
        if kind == "ContactMesh":
            mesh = text(doc, element, "filename", owner)
        elif size_field is not None:
            size = np.asarray(numbers(doc, element, size_field, owner, 1 if kind == "ContactSphere" else 3))
            if np.any(size <= 0):
                raise element_error(doc, element, owner, f"{size_field} must be positive, got {size.tolist()}")
        out[name] = ContactGeometryRecord(name, kind, frame.base, frame.R @ R_FP, frame.p + frame.R @ p_FP,
                                          size, mesh, doc.line(element))
    return out


def geometry_record(doc, element, owner, geometry, reference) -> ContactGeometryRecord:
    """The record of ``geometry`` (read_contact_geometry's dict) that the socket path ``reference`` names."""
    name = reference[len(_SET):] if reference.startswith(_SET) else reference.split("/")[-1]
    if name not in geometry:
        raise element_error(doc, element, owner, f"contact geometry {reference!r} is not in the ContactGeometrySet")
    return geometry[name]
