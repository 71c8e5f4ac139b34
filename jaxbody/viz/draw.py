"""Placed decorations (``matter.calc_decorative_geometry``) as flat polygons and segments, host-side numpy.

Ground is shown with the system's up direction (``system.get_up_direction()``) vertical: a proper rotation
``R_VG`` maps Ground coordinates to view coordinates (z up), and an orthographic camera at an elevation and
azimuth above the view's horizontal plane gives screen coordinates (x right, y up, z toward the viewer).
Spheres, ellipsoids, cylinders (Simbody's axis y), bricks and meshes become faces of up to four vertices with
outward winding; lines and frames (x red, y green, z blue) become segments. A mesh is read through a
``jaxbody.viz.meshes.MeshLibrary``; one that cannot be read is drawn as a sphere.

Placements over T samples come from ``jaxbody.viz.placement``.
"""

from __future__ import annotations

import numpy as np

from jaxbody._api.decorative_geometry import (
    DecorativeBrick,
    DecorativeCylinder,
    DecorativeEllipsoid,
    DecorativeFrame,
    DecorativeLine,
    DecorativeMesh,
    DecorativeSphere,
)

AXIS_NAMES = "xyz"
FRAME_COLORS = ((0.84, 0.15, 0.16), (0.17, 0.63, 0.17), (0.12, 0.47, 0.71))
DEFAULT_SHAPE_COLOR = (0.55, 0.65, 0.8)
DEFAULT_MESH_COLOR = (0.75, 0.75, 0.78)
DEFAULT_LINE_COLOR = (0.25, 0.25, 0.25)
DEFAULT_SHAPE_OPACITY = 1.0
RESOLUTION = 8  # points around a sphere or cylinder
ELEVATION, AZIMUTH = 20.0, -60.0  # degrees, the camera's default direction in the view frame


def view_rotation(up) -> np.ndarray:
    """R_VG (3, 3): a proper rotation taking Ground coordinates to view coordinates with ``up`` (a signed axis,
    (3,)) along the view's z. The other two view axes show the next Ground axes in cyclic order."""
    up = np.asarray(up, dtype=float)
    a = int(np.argmax(np.abs(up)))
    sign = 1.0 if up[a] > 0 else -1.0
    e = np.eye(3)
    rows = [e[(a + 1) % 3], e[(a + 2) % 3]] if sign > 0 else [e[(a + 2) % 3], e[(a + 1) % 3]]
    return np.stack(rows + [sign * e[a]])


def axis_labels(R_VG) -> list[str]:
    """The Ground axis each view axis shows, e.g. ['z (m)', 'x (m)', 'y (m, up)']."""
    labels = []
    for k, row in enumerate(np.asarray(R_VG)):
        a = int(np.argmax(np.abs(row)))
        sign = "-" if row[a] < 0 else ""
        labels.append(f"{sign}{AXIS_NAMES[a]} (m{', up' if k == 2 else ''})")
    return labels


def screen_rotation(R_VG, elevation=ELEVATION, azimuth=AZIMUTH) -> np.ndarray:
    """R_SG (3, 3): Ground coordinates -> screen (x right, y up, z toward the viewer) for a camera at
    ``elevation`` above the view's horizontal plane and ``azimuth`` about its vertical (degrees)."""
    el, az = np.radians(elevation), np.radians(azimuth)
    R_SV = np.array([[-np.sin(az), np.cos(az), 0.0],
                     [-np.sin(el) * np.cos(az), -np.sin(el) * np.sin(az), np.cos(el)],
                     [np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)]])
    return R_SV @ np.asarray(R_VG, float)


def rgb(geometry, default) -> np.ndarray:
    """The geometry's color (3,), or ``default`` where it is Simbody's "renderer default"."""
    color = np.asarray(geometry.color, float)
    return np.asarray(default, float) if np.any(color < 0) else np.clip(color, 0, 1)


def opacity(geometry, default) -> float:
    value = float(geometry.opacity)
    return default if value < 0 else value


def _quads(grid) -> np.ndarray:
    """Faces (F, 4, 3) of a (rows, columns, 3) surface grid."""
    return np.stack([grid[:-1, :-1], grid[:-1, 1:], grid[1:, 1:], grid[1:, :-1]], axis=2).reshape(-1, 4, 3)


def _outward(faces) -> np.ndarray:
    """Faces of a convex shape around the origin, each reordered to wind outward (normal away from the origin)."""
    normal = np.cross(faces[:, 2] - faces[:, 0], faces[:, 3] - faces[:, 1])
    inward = np.einsum("fi,fi->f", normal, faces.mean(1)) < 0
    faces = faces.copy()
    faces[inward] = faces[inward][:, ::-1]
    return faces


def sphere_faces(radii) -> np.ndarray:
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, RESOLUTION + 1), np.linspace(0, np.pi, RESOLUTION // 2 + 1))
    grid = np.stack([np.cos(u) * np.sin(v), np.cos(v), np.sin(u) * np.sin(v)], -1) * np.asarray(radii, float)
    return _outward(_quads(grid))


def cylinder_faces(radius, half_height) -> np.ndarray:
    u = np.linspace(0, 2 * np.pi, RESOLUTION + 1)
    ring = np.stack([radius * np.cos(u), np.zeros_like(u), radius * np.sin(u)], -1)
    side = _quads(np.stack([ring - [0, half_height, 0], ring + [0, half_height, 0]]))
    fan = ring[:-1][np.arange(RESOLUTION)[::2, None] + np.arange(3)[None] - RESOLUTION * (np.arange(RESOLUTION)[
        ::2, None] + np.arange(3)[None] >= RESOLUTION)]  # quads (center, three ring points), (R/2, 3, 3)
    caps = [np.concatenate([np.broadcast_to([0, y, 0], (len(fan), 1, 3)), fan + [0, y, 0]], 1)
            for y in (-half_height, half_height)]
    return _outward(np.concatenate([side, *caps]))


def brick_faces(half_lengths) -> np.ndarray:
    corners = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float) * half_lengths
    faces = [[0, 1, 3, 2], [4, 5, 7, 6], [0, 1, 5, 4], [2, 3, 7, 6], [0, 2, 6, 4], [1, 3, 7, 5]]
    return _outward(corners[np.array(faces)])


def shape_faces(geometry, meshes, fallback_radius):
    """(faces (F, 4, 3) in the decoration's frame D, whether it is a readable mesh) of one shape decoration (a
    triangle repeats its last vertex); None for lines and frames."""
    size = lambda x: np.asarray(x, float)  # noqa: E731
    if isinstance(geometry, DecorativeSphere):
        return sphere_faces(size(geometry.radius) * np.ones(3)), False
    if isinstance(geometry, DecorativeEllipsoid):
        return sphere_faces(size(geometry.radii)), False
    if isinstance(geometry, DecorativeCylinder):
        return cylinder_faces(float(geometry.radius), float(geometry.half_height)), False
    if isinstance(geometry, DecorativeBrick):
        return brick_faces(size(geometry.half_lengths)), False
    if isinstance(geometry, DecorativeMesh):
        mesh = meshes(geometry.filename)
        if mesh is None:
            return sphere_faces(fallback_radius * np.ones(3)), False
        vertices, triangles = mesh
        return (np.asarray(vertices, float) * size(geometry.scale))[np.asarray(triangles)[:, [0, 1, 2, 2]]], True
    return None


def segments(placed) -> np.ndarray | None:
    """Segments (T, L, 2, 3) in Ground of a placed line (L = 1) or frame (L = 3, axes x, y, z); None otherwise
    (``placed``: a ``jaxbody.viz.placement.Placed``)."""
    if isinstance(placed.geometry, DecorativeLine):
        return placed.ends[:, None]
    if isinstance(placed.geometry, DecorativeFrame):
        tips = placed.p[:, None] + np.swapaxes(placed.R, 1, 2) * float(placed.geometry.axis_length)  # (T, 3, 3)
        return np.stack([np.broadcast_to(placed.p[:, None], tips.shape), tips], 2)
    return None


def line_style(geometry, k) -> tuple[np.ndarray, float, float]:
    """(color (3,), opacity, width in points) of segment ``k`` of a line or frame."""
    if isinstance(geometry, DecorativeFrame):
        return rgb(geometry, FRAME_COLORS[k]), opacity(geometry, 1.0), 1.2
    return rgb(geometry, DEFAULT_LINE_COLOR), opacity(geometry, 1.0), 2.5


def shape_style(geometry, is_mesh) -> tuple[np.ndarray, float]:
    default = DEFAULT_MESH_COLOR if isinstance(geometry, DecorativeMesh) and is_mesh else DEFAULT_SHAPE_COLOR
    return rgb(geometry, default), opacity(geometry, DEFAULT_SHAPE_OPACITY)


__all__ = ["view_rotation", "axis_labels", "screen_rotation", "shape_faces", "segments"]
