"""Visual records of an imported model (``jaxbody.io.load_urdf / load_mjcf / load_osim``'s ``.visuals``) turned
into Simbody decorations on the imported bodies.

A visual record is an object or a mapping with:

    body      name of the body it is fixed to (a key of the import's ``.bodies``; ``body_name`` also accepted)
    X_BV      its frame V in the body frame: a jb.Transform, a 4x4 homogeneous matrix or None (identity)
              (``transform`` also accepted)
    kind      "sphere", "box", "cylinder", "capsule" or "mesh"
    size      sphere (radius,); box (hx, hy, hz) half lengths; cylinder and capsule (radius, half_length)
              along V's z axis (URDF's and MJCF's convention; Simbody's cylinder is along y, so it is
              turned); mesh (sx, sy, sz) scale factors (optional)
    mesh      the mesh file name (kind "mesh"; ``filename`` also accepted)
    rgba      optional (r, g, b, a) in [0, 1]

A capsule becomes a cylinder and a sphere at each end.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from jaxbody._api.decorative_geometry import (
    DecorativeBrick,
    DecorativeCylinder,
    DecorativeMesh,
    DecorativeSphere,
)
from jaxbody._math.spatial import Rotation, Transform
from jaxbody.errors import InvalidArgument

KINDS = ("sphere", "box", "cylinder", "capsule", "mesh")
_MISSING = object()


def _field(record, *names, default=_MISSING):
    for name in names:
        value = record.get(name, _MISSING) if isinstance(record, Mapping) else getattr(record, name, _MISSING)
        if value is not _MISSING:
            return value
    if default is _MISSING:
        raise InvalidArgument(f"visual record {record!r} has no {' or '.join(names)}")
    return default


def _transform(X, body) -> Transform:
    if X is None:
        return Transform()
    if isinstance(X, Transform):
        return X
    H = np.asarray(X, dtype=float)
    if H.shape != (4, 4):
        raise InvalidArgument(f"visual on {body}: X_BV must be a jb.Transform or a 4x4 matrix, got shape {H.shape}")
    return Transform(H[:3, :3], H[:3, 3])


def visual_decorations(visual) -> tuple[str, list]:
    """(body name, [(X_BD, geometry), ...]) for one visual record."""
    body = _field(visual, "body", "body_name")
    kind = str(_field(visual, "kind")).lower()
    X_BV = _transform(_field(visual, "X_BV", "transform", default=None), body)
    size = np.atleast_1d(np.asarray(_field(visual, "size", default=()), dtype=float))
    if kind not in KINDS:
        raise InvalidArgument(f"visual on {body}: kind must be one of {KINDS}, got {kind!r}")
    need = {"sphere": 1, "box": 3, "cylinder": 2, "capsule": 2}.get(kind, 0)
    if size.size < need:
        raise InvalidArgument(f"visual {kind} on {body} needs {need} size value(s), got {size.tolist()}")
    turn = Transform(Rotation.about_x(np.pi / 2))  # Simbody's cylinder axis y onto V's z
    if kind == "sphere":
        placed = [(X_BV, DecorativeSphere(size[0]))]
    elif kind == "box":
        placed = [(X_BV, DecorativeBrick(size[:3]))]
    elif kind == "cylinder":
        placed = [(X_BV * turn, DecorativeCylinder(size[0], size[1]))]
    elif kind == "capsule":
        radius, half = size[:2]
        placed = [(X_BV * turn, DecorativeCylinder(radius, half))]
        placed += [(X_BV * Transform(np.array([0.0, 0.0, s * half])), DecorativeSphere(radius)) for s in (-1, 1)]
    else:
        scale = size[:3] if size.size >= 3 else np.ones(3)
        placed = [(X_BV, DecorativeMesh(str(_field(visual, "mesh", "filename")), scale))]
    rgba = _field(visual, "rgba", default=None)
    if rgba is not None:
        rgba = np.asarray(rgba, dtype=float)
        placed = [(X, g.set_color(rgba[:3]).set_opacity(rgba[3] if rgba.size > 3 else 1.0)) for X, g in placed]
    return body, placed


def add_visual_decorations(bodies, visuals) -> int:
    """Add every visual record as body decorations; returns the number of decorations added.

    Args:
        bodies: name -> MobilizedBody (the import's ``.bodies``).
        visuals: the import's ``.visuals``.
    """
    count = 0
    for visual in visuals:
        name, placed = visual_decorations(visual)
        if name not in bodies:
            raise InvalidArgument(f"visual on {name!r}: no body of that name (bodies: {sorted(bodies)})")
        for X_BD, geometry in placed:
            bodies[name].add_body_decoration(X_BD, geometry)
            count += 1
    return count


__all__ = ["add_visual_decorations", "visual_decorations", "KINDS"]
