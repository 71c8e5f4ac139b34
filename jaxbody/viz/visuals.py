"""Visual records of an imported model (``jaxbody.io.load_urdf / load_mjcf / load_osim``'s ``.visuals``) turned
into Simbody decorations on the imported bodies.

A visual record is an object or a mapping with:

    body      name of the body it is fixed to (a key of the import's ``.bodies``; ``body_name`` also accepted)
    X_BV      its frame V in the body frame: a jb.Transform, a 4x4 homogeneous matrix or None (identity);
              or ``transform``; or ``R`` (3, 3) and ``p`` (3,) fields
    kind      sphere, box (or brick), ellipsoid, cylinder, capsule or mesh (any case)
    size      sphere (radius,); box (hx, hy, hz) half lengths; ellipsoid (rx, ry, rz); cylinder and capsule
              (radius, half_length) along V's ``cylinder_axis``; mesh (sx, sy, sz) scale factors (optional)
    mesh      the mesh file name (kind mesh; ``mesh_file`` or ``filename`` also accepted)
    rgba      optional (r, g, b[, a]) in [0, 1] (``color`` also accepted)

Cylinders and capsules lie along V's z in URDF and MJCF (``cylinder_axis="z"``, the default) and along y in
OpenSim, as in Simbody (``cylinder_axis="y"``); Simbody's DecorativeCylinder is along y, so a z cylinder is
turned. A capsule becomes a cylinder and a sphere at each end.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np

from jaxbody._api.decorative_geometry import (
    DecorativeBrick,
    DecorativeCylinder,
    DecorativeEllipsoid,
    DecorativeMesh,
    DecorativeSphere,
)
from jaxbody._math.spatial import Rotation, Transform
from jaxbody.errors import InvalidArgument

KINDS = ("sphere", "box", "brick", "ellipsoid", "cylinder", "capsule", "mesh")
SIZES = {"sphere": 1, "box": 3, "brick": 3, "ellipsoid": 3, "cylinder": 2, "capsule": 2, "mesh": 0}
_MISSING = object()


def _field(record, *names, default=_MISSING):
    for name in names:
        value = record.get(name, _MISSING) if isinstance(record, Mapping) else getattr(record, name, _MISSING)
        if value is not _MISSING:
            return value
    if default is _MISSING:
        raise InvalidArgument(f"visual record {record!r} has no {' or '.join(names)}")
    return default


def _transform(visual, body) -> Transform:
    X = _field(visual, "X_BV", "transform", default=None)
    if X is None and _field(visual, "R", default=None) is not None:
        return Transform(np.asarray(_field(visual, "R"), float), np.asarray(_field(visual, "p"), float))
    if X is None:
        return Transform()
    if isinstance(X, Transform):
        return X
    H = np.asarray(X, dtype=float)
    if H.shape != (4, 4):
        raise InvalidArgument(f"visual on {body}: X_BV must be a jb.Transform or a 4x4 matrix, got shape {H.shape}")
    return Transform(H[:3, :3], H[:3, 3])


def visual_decorations(visual, cylinder_axis="z") -> tuple[str, list]:
    """(body name, [(X_BD, geometry), ...]) for one visual record (see the module docstring)."""
    body = _field(visual, "body", "body_name")
    kind = str(_field(visual, "kind")).lower()
    if kind not in KINDS:
        raise InvalidArgument(f"visual on {body}: kind must be one of {KINDS}, got {kind!r}")
    if cylinder_axis not in ("y", "z"):
        raise InvalidArgument(f"cylinder_axis must be 'y' (OpenSim, Simbody) or 'z' (URDF, MJCF), got {cylinder_axis!r}")
    X_BV = _transform(visual, body)
    size = np.atleast_1d(np.asarray(_field(visual, "size", default=()), dtype=float))
    if size.size < SIZES[kind]:
        raise InvalidArgument(f"visual {kind} on {body} needs {SIZES[kind]} size value(s), got {size.tolist()}")
    # Simbody's cylinder axis y onto V's axis.
    X_VA = Transform(Rotation.about_x(np.pi / 2)) if cylinder_axis == "z" else Transform()
    axis = np.eye(3)[1 if cylinder_axis == "y" else 2]
    if kind == "sphere":
        placed = [(X_BV, DecorativeSphere(size[0]))]
    elif kind in ("box", "brick"):
        placed = [(X_BV, DecorativeBrick(size[:3]))]
    elif kind == "ellipsoid":
        placed = [(X_BV, DecorativeEllipsoid(size[:3]))]
    elif kind == "cylinder":
        placed = [(X_BV * X_VA, DecorativeCylinder(size[0], size[1]))]
    elif kind == "capsule":
        radius, half = size[:2]
        placed = [(X_BV * X_VA, DecorativeCylinder(radius, half))]
        placed += [(X_BV * Transform(s * half * axis), DecorativeSphere(radius)) for s in (-1, 1)]
    else:
        scale = size[:3] if size.size >= 3 else np.ones(3)
        placed = [(X_BV, DecorativeMesh(str(_field(visual, "mesh", "mesh_file", "filename")), scale))]
    rgba = _field(visual, "rgba", "color", default=None)
    if rgba is not None:
        rgba = np.asarray(rgba, dtype=float)
        placed = [(X, g.set_color(rgba[:3]).set_opacity(rgba[3] if rgba.size > 3 else 1.0)) for X, g in placed]
    return body, placed


def add_visual_decorations(bodies, visuals, cylinder_axis="z", on_error="raise") -> int:
    """Add every visual record as body decorations; returns the number of decorations added.

    Args:
        bodies: name -> MobilizedBody (the import's ``.bodies``).
        visuals: the import's ``.visuals``.
        cylinder_axis: "z" for URDF and MJCF records, "y" for OpenSim's.
        on_error: "raise" (InvalidArgument naming the body) or "warn" (skip that record with a warning).
    """
    if on_error not in ("raise", "warn"):
        raise InvalidArgument(f"on_error must be 'raise' or 'warn', got {on_error!r}")
    count = 0
    for visual in visuals:
        try:
            name, placed = visual_decorations(visual, cylinder_axis)
            if name not in bodies:
                raise InvalidArgument(f"visual on {name!r}: no body of that name (bodies: {sorted(bodies)})")
        except InvalidArgument as e:
            if on_error == "raise":
                raise
            warnings.warn(f"visual skipped: {e}", stacklevel=2)
            continue
        for X_BD, geometry in placed:
            bodies[name].add_body_decoration(X_BD, geometry)
            count += 1
    return count


__all__ = ["add_visual_decorations", "visual_decorations", "KINDS"]
