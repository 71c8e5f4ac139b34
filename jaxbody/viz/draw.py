"""Drawing placed decorations (``matter.calc_decorative_geometry``) on a matplotlib 3D Axes, host-side numpy.

Ground is shown with the system's up direction (``system.get_up_direction()``) along matplotlib's vertical
axis: a proper rotation ``R_VG`` maps Ground coordinates to the plot's, and the axes are labelled with the
Ground axes they show. Spheres, ellipsoids, cylinders (Simbody's axis y) and bricks are drawn as shaded surfaces, lines
and frames (x red, y green, z blue) as line segments, and a mesh, which jaxbody does not read, as a marker
at its origin (one note on the Axes says how many meshes are markers and names the first).
"""

from __future__ import annotations

import os

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
FRAME_COLORS = ("tab:red", "tab:green", "tab:blue")
DEFAULT_SHAPE_COLOR = (0.55, 0.65, 0.8)
DEFAULT_LINE_COLOR = (0.3, 0.3, 0.3)
DEFAULT_SHAPE_OPACITY = 0.8
RESOLUTION = 12  # points around a sphere or cylinder


def view_rotation(up) -> np.ndarray:
    """R_VG (3, 3): a proper rotation taking Ground coordinates to plot coordinates with ``up`` (a signed axis,
    (3,)) along the plot's z. The other two plot axes show the next Ground axes in cyclic order."""
    up = np.asarray(up, dtype=float)
    a = int(np.argmax(np.abs(up)))
    sign = 1.0 if up[a] > 0 else -1.0
    e = np.eye(3)
    rows = [e[(a + 1) % 3], e[(a + 2) % 3]] if sign > 0 else [e[(a + 2) % 3], e[(a + 1) % 3]]
    return np.stack(rows + [sign * e[a]])


def axis_labels(R_VG) -> list[str]:
    """The Ground axis each plot axis shows, e.g. ['z (m)', 'x (m)', 'y (m, up)']."""
    labels = []
    for k, row in enumerate(np.asarray(R_VG)):
        a = int(np.argmax(np.abs(row)))
        sign = "-" if row[a] < 0 else ""
        labels.append(f"{sign}{AXIS_NAMES[a]} (m{', up' if k == 2 else ''})")
    return labels


def _color(geometry, default):
    rgb = np.asarray(geometry.color, dtype=float)
    return tuple(default) if np.any(rgb < 0) else tuple(np.clip(rgb, 0, 1))


def _alpha(geometry, default):
    opacity = float(geometry.opacity)
    return default if opacity < 0 else opacity


def _to_view(R_VG, R_GD, p_GD, points_D):
    """Points (..., 3) given in D -> plot coordinates (..., 3)."""
    return (points_D @ R_GD.T + p_GD) @ R_VG.T


def _sphere_points(radius):
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, RESOLUTION + 1), np.linspace(0, np.pi, RESOLUTION // 2 + 1))
    return radius * np.stack([np.cos(u) * np.sin(v), np.cos(v), np.sin(u) * np.sin(v)], -1)


def _cylinder_points(radius, half_height):
    u, y = np.meshgrid(np.linspace(0, 2 * np.pi, RESOLUTION + 1), [-half_height, half_height])
    return np.stack([radius * np.cos(u), y, radius * np.sin(u)], -1)


def _surface_points(geometry):
    """A (rows, columns, 3) grid on the surface of a sphere, ellipsoid or cylinder, in D."""
    if isinstance(geometry, DecorativeSphere):
        return _sphere_points(float(geometry.radius))
    if isinstance(geometry, DecorativeEllipsoid):
        return _sphere_points(1.0) * np.asarray(geometry.radii, float)
    return _cylinder_points(float(geometry.radius), float(geometry.half_height))


def _brick_faces(half_lengths):
    corners = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float) * half_lengths
    faces = [[0, 1, 3, 2], [4, 5, 7, 6], [0, 1, 5, 4], [2, 3, 7, 6], [0, 2, 6, 4], [1, 3, 7, 5]]
    return corners[np.array(faces)]


def geometry_points(geometry) -> np.ndarray:
    """Points (n, 3) in Ground that bound ``geometry`` as drawn (for axis limits)."""
    R, p = np.asarray(geometry.transform.R, float), np.asarray(geometry.transform.p, float)
    if isinstance(geometry, (DecorativeSphere, DecorativeEllipsoid, DecorativeCylinder)):
        local = _surface_points(geometry).reshape(-1, 3)
    elif isinstance(geometry, DecorativeBrick):
        local = _brick_faces(np.asarray(geometry.half_lengths, float)).reshape(-1, 3)
    elif isinstance(geometry, DecorativeLine):
        local = np.stack([np.asarray(geometry.point1, float), np.asarray(geometry.point2, float)])
    elif isinstance(geometry, DecorativeFrame):
        local = np.vstack([np.zeros(3), float(geometry.axis_length) * np.eye(3)])
    else:  # a mesh, or a type a renderer does not know: its origin
        local = np.zeros((1, 3))
    return local @ R.T + p


def draw_geometry(ax, geometry, R_VG) -> None:
    """Draw one placed decoration (transform X_GD, body id 0) on the 3D Axes ``ax``."""
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    R, p = np.asarray(geometry.transform.R, float), np.asarray(geometry.transform.p, float)
    color = _color(geometry, DEFAULT_SHAPE_COLOR)
    alpha = _alpha(geometry, DEFAULT_SHAPE_OPACITY)
    if isinstance(geometry, (DecorativeSphere, DecorativeEllipsoid, DecorativeCylinder)):
        pts = _to_view(R_VG, R, p, _surface_points(geometry))
        ax.plot_surface(pts[..., 0], pts[..., 1], pts[..., 2], color=color, alpha=alpha, linewidth=0, shade=True)
    elif isinstance(geometry, DecorativeBrick):
        faces = _to_view(R_VG, R, p, _brick_faces(np.asarray(geometry.half_lengths, float)))
        ax.add_collection3d(Poly3DCollection(faces, facecolor=color, edgecolor="k", linewidths=0.3, alpha=alpha))
    elif isinstance(geometry, DecorativeLine):
        pts = _to_view(R_VG, R, p, np.stack([np.asarray(geometry.point1, float), np.asarray(geometry.point2, float)]))
        ax.plot(pts[:, 0], pts[:, 1], pts[:, 2], color=_color(geometry, DEFAULT_LINE_COLOR), lw=2,
                alpha=_alpha(geometry, 1.0))
    elif isinstance(geometry, DecorativeFrame):
        pts = _to_view(R_VG, R, p, np.vstack([np.zeros(3), float(geometry.axis_length) * np.eye(3)]))
        for k in range(3):
            ax.plot(*pts[[0, k + 1]].T, color=FRAME_COLORS[k], lw=1.2)
    elif isinstance(geometry, DecorativeMesh):
        origin = _to_view(R_VG, R, p, np.zeros(3))
        ax.scatter(*origin, marker="D", s=30, color=color)


def set_limits(ax, points_V, margin=0.1) -> None:
    """Equal-scale cube limits around ``points_V`` (n, 3) in plot coordinates."""
    lo, hi = points_V.min(0), points_V.max(0)
    center, half = (lo + hi) / 2, max(float((hi - lo).max()) / 2, 1e-3) * (1 + margin)
    ax.set_xlim(center[0] - half, center[0] + half)
    ax.set_ylim(center[1] - half, center[1] + half)
    ax.set_zlim(center[2] - half, center[2] + half)
    ax.set_box_aspect((1, 1, 1))


def draw_scene(ax, geometry_list, R_VG, limits_points=None) -> None:
    """Draw every decoration, label the axes with Ground's and set equal limits (around ``limits_points`` (n, 3)
    in Ground if given, else around the geometry)."""
    for geometry in geometry_list:
        draw_geometry(ax, geometry, R_VG)
    meshes = [g for g in geometry_list if isinstance(g, DecorativeMesh)]
    if meshes:
        first = os.path.basename(meshes[0].filename)
        ax.text2D(0.0, 0.97, f"{len(meshes)} mesh(es) ({first}, ...) drawn as markers: jaxbody does not read mesh files",
                  transform=ax.transAxes, fontsize=7)
    if limits_points is None:
        limits_points = np.vstack([geometry_points(g) for g in geometry_list]) if geometry_list else np.zeros((1, 3))
    set_limits(ax, np.asarray(limits_points) @ R_VG.T)
    xlabel, ylabel, zlabel = axis_labels(R_VG)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_zlabel(zlabel)
