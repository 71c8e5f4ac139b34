"""URDF ``<visual>`` elements -> jaxbody.io.Visual records on the body each link was mounted on.

Visuals carry no dynamics, so a visual (or a ``<material>`` colour) that cannot be read (e.g. a mesh ``scale``
with 4 numbers, a geometry without a shape) is skipped with one warning naming each, as urdfdom-based tools
draw the rest of the robot.
"""

from __future__ import annotations

import warnings

import numpy as np

from jaxbody.errors import InvalidArgument
from jaxbody.io._xml import Node
from jaxbody.io.imported import Visual, homogeneous
from jaxbody.io.urdf_parse import _floats, _origin


def _material_colors(robot: Node, skipped: list[str]) -> dict[str, np.ndarray]:
    colors = {}
    for m in robot.findall("material"):
        color = m.find("color")
        if color is not None and "name" in m.attrib:
            try:
                colors[m.attrib["name"]] = _floats(color, "rgba", 4, np.ones(4), m)
            except InvalidArgument as e:
                skipped.append(str(e))
    return colors


def _geometry(geometry: Node, where: Node) -> tuple[str, np.ndarray, str | None]:
    """(kind, size as Visual documents it, mesh file name) of a URDF <geometry>."""
    for shape in geometry.children:
        if shape.tag == "box":
            return "box", 0.5 * _floats(shape, "size", 3, np.zeros(3), where), None
        if shape.tag == "sphere":
            return "sphere", _floats(shape, "radius", 1, [0.0], where), None
        if shape.tag in ("cylinder", "capsule"):
            r = _floats(shape, "radius", 1, [0.0], where)[0]
            return shape.tag, np.array([r, 0.5 * _floats(shape, "length", 1, [0.0], where)[0]]), None
        if shape.tag == "mesh":
            return "mesh", _floats(shape, "scale", 3, np.ones(3), where), shape.attrib.get("filename")
    raise InvalidArgument(f"URDF {where.where()}: <geometry> (line {geometry.line}) has no box, sphere, cylinder, "
                          f"capsule or mesh")


def urdf_visuals(robot: Node, host: dict, X_host: dict) -> list[Visual]:
    """Every link's visuals, placed on the body the link was fused into (``X_host[link]`` = link in body)."""
    skipped: list[str] = []
    colors = _material_colors(robot, skipped)
    visuals = []
    for link in robot.findall("link"):
        for v in link.findall("visual"):
            try:
                visuals.append(_visual(v, link, host, X_host, colors))
            except InvalidArgument as e:
                skipped.append(str(e))
    if skipped:
        warnings.warn(f"URDF: {len(skipped)} visual(s)/material(s) that cannot be read were skipped (visuals carry "
                      f"no dynamics): {'; '.join(skipped)}", stacklevel=3)
    return visuals


def _visual(v: Node, link: Node, host: dict, X_host: dict, colors: dict) -> Visual:
    """One <visual> of ``link`` as a Visual on its body; InvalidArgument naming the link and line if unreadable."""
    geometry = v.find("geometry")
    if geometry is None:
        raise InvalidArgument(f"URDF {link.where()}: <visual> (line {v.line}) has no <geometry>")
    kind, size, mesh = _geometry(geometry, link)
    R, p = _origin(v, link)
    material = v.find("material")
    rgba = None
    if material is not None:
        color = material.find("color")
        rgba = _floats(color, "rgba", 4, np.ones(4), link) if color is not None else colors.get(
            material.attrib.get("name"))
    R_h, p_h = X_host[link.attrib["name"]]
    return Visual(host[link.attrib["name"]], homogeneous(R_h @ R, R_h @ p + p_h), kind, size, mesh, rgba)
