"""OpenSim 4.x frames: Ground, Bodies and PhysicalOffsetFrames by component path, and each frame's pose in its base.

A component's path is ``/ground``, ``/ground/<frame>``, ``/bodyset/<body>``, ``/bodyset/<body>/<frame>``,
``/jointset/<joint>/<frame>``, ``/constraintset/<constraint>/<frame>`` or ``/<frame>`` (the model's own
components); a socket's path is absolute or relative to the component that holds it (``..`` goes up one
level), as OpenSim's ComponentPath. A PhysicalOffsetFrame's pose in its parent is
``(R = Rx(a) Ry(b) Rz(c), p)`` from ``<orientation>a b c</orientation>`` (body-fixed X-Y-Z, rad) and
``<translation>``; its pose in its base frame (a Body or Ground) composes its parents' (findTransformInBaseFrame).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxbody.io.osim_xml import OsimDocument, element_error, numbers, objects, text

GROUND = "/ground"


@dataclasses.dataclass(frozen=True)
class FrameInBase:
    """A frame's base (``/ground`` or ``/bodyset/<body>``) and its pose in it: R (3, 3), p (3,) in m."""

    base: str
    R: np.ndarray
    p: np.ndarray


def rotation_xyz(angles) -> np.ndarray:
    """R = Rx(a) Ry(b) Rz(c) for body-fixed X-Y-Z angles (a, b, c) in rad."""
    a, b, c = angles
    ca, sa, cb, sb, cc, sc = np.cos(a), np.sin(a), np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    Rx = np.array([[1, 0, 0], [0, ca, -sa], [0, sa, ca]])
    Ry = np.array([[cb, 0, sb], [0, 1, 0], [-sb, 0, cb]])
    Rz = np.array([[cc, -sc, 0], [sc, cc, 0], [0, 0, 1]])
    return Rx @ Ry @ Rz


def join(holder_path: str, socket_path: str) -> str:
    """The absolute path of ``socket_path`` seen from the component at ``holder_path``."""
    parts = [] if socket_path.startswith("/") else [p for p in holder_path.split("/") if p]
    for piece in socket_path.split("/"):
        if piece in ("", "."):
            continue
        if piece == "..":
            if parts:
                parts.pop()
        else:
            parts.append(piece)
    return "/" + "/".join(parts)


class FrameRegistry:
    """Every physical frame of a document by absolute path, with lookups that name the asking component."""

    def __init__(self, doc: OsimDocument):
        self.doc = doc
        self.elements: dict[str, object] = {}   # path -> element (None for Ground)
        self.elements[GROUND] = None
        self._add_offsets(doc.root.find("components"), "")  # frames owned by the model itself: /<name>
        ground = doc.root.find("Ground")
        if ground is not None:
            self._add_offsets(ground.find("components"), GROUND)
        for body in objects(doc, "BodySet"):
            path = f"/bodyset/{body.get('name')}"
            self.elements[path] = body
            self._add_offsets(body.find("components"), path)
        for joint in objects(doc, "JointSet"):
            self._add_offsets(joint.find("frames"), f"/jointset/{joint.get('name')}")
        for constraint in objects(doc, "ConstraintSet"):
            self._add_offsets(constraint.find("frames"), f"/constraintset/{constraint.get('name')}")
        for force in objects(doc, "ForceSet"):
            self._add_offsets(force.find("frames"), f"/forceset/{force.get('name')}")
        self._cache: dict[str, FrameInBase] = {}

    def _add_offsets(self, holder, owner_path):
        if holder is None:
            return
        for frame in holder:
            if frame.tag == "PhysicalOffsetFrame":
                path = f"{owner_path}/{frame.get('name')}"
                self.elements[path] = frame
                self._add_offsets(frame.find("components"), path)

    def resolve(self, holder_path: str, socket_path: str, element, owner: str) -> str:
        """Absolute path of the frame a socket names, else InvalidArgument naming ``owner`` and ``element``'s line."""
        path = join(holder_path, socket_path)
        if path not in self.elements:
            raise element_error(self.doc, element, owner, f"frame {socket_path!r} not found (looked for {path})")
        return path

    def in_base(self, path: str, owner: str) -> FrameInBase:
        """Pose of the frame at ``path`` in its base Body or Ground."""
        if path not in self._cache:
            element = self.elements[path]
            if element is None or element.tag == "Body":
                self._cache[path] = FrameInBase(path, np.eye(3), np.zeros(3))
            else:
                self._cache[path] = None  # cycle guard
                socket = text(self.doc, element, "socket_parent", f"frame {path}")
                parent = self.in_base(self.resolve(path, socket, element, f"frame {path}"), owner)
                if parent is None:
                    raise element_error(self.doc, element, owner, f"frame {path} is its own ancestor")
                R = rotation_xyz(numbers(self.doc, element, "orientation", f"frame {path}", 3, default=[0, 0, 0]))
                p = np.asarray(numbers(self.doc, element, "translation", f"frame {path}", 3, default=[0, 0, 0]))
                self._cache[path] = FrameInBase(parent.base, parent.R @ R, parent.p + parent.R @ p)
        return self._cache[path]

