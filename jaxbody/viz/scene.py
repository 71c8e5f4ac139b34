"""A scene over time: the decorations of T samples drawn on one 2D matplotlib Axes with an orthographic camera.

``Scene(placed, body_origins, R_VG, meshes)`` prepares once what stays fixed (faces in each decoration's frame,
colors, the camera framing, a ground grid, a scale bar and the Ground axes), then ``draw(k)`` updates a
polygon collection to sample ``k`` (faces turned away from the camera dropped, the rest shaded and sorted far
to near), the lines and frames drawn over them, and the limits to that sample's view. Drawing on a reused Agg figure keeps a frame to milliseconds.

The camera is framed on the bodies over the whole run, robust to outliers: body origins (Ground's left out)
and the centers of shapes (with their bounding radii) are projected to the screen, points further from the median than
``OUTLIER`` robust standard deviations (and than the model's own size in the first sample) are left out, and
the view is the box around the rest plus a margin. It stays fixed, unless the model travels further than its
own size (a falling or walking model), when it follows the model's box sample by sample at a fixed size.
"""

from __future__ import annotations

import numpy as np

from jaxbody.viz.draw import (
    AXIS_NAMES,
    axis_labels,
    line_style,
    screen_rotation,
    segments,
    shape_faces,
    shape_style,
)

OUTLIER = 5.0  # robust standard deviations (1.4826 MAD) from the median beyond which a point is left out
MARGIN = 0.06  # fraction of the view added on each side
FOLLOW = 1.5  # follow the model when the run's box is this many times larger than one sample's
LIGHT = np.array([-0.35, 0.45, 0.82])  # screen frame, toward the viewer, upper left
GRID_COLOR = (0.82, 0.82, 0.82)


def nice(x) -> float:
    """The largest of 1, 2, 5 x 10^k not above ``x`` (x > 0)."""
    power = 10.0 ** np.floor(np.log10(x))
    return float(max(m for m in (1, 2, 5) if m * power <= x * (1 + 1e-9)) * power)


def frame_view(points, radii, margin=MARGIN):
    """Camera framing from screen points (T, n, 2) with radii (n,): (centers (T, 2), half width, inlier (T, n)).

    See the module docstring; the model's size is the first sample's box, and a sample with no inlier point
    keeps the run's center."""
    points, radii = np.asarray(points, float), np.asarray(radii, float)
    lo0, hi0 = (points[0] - radii[:, None]).min(0), (points[0] + radii[:, None]).max(0)
    flat = points.reshape(-1, 2)
    median = np.median(flat, 0)
    sigma = 1.4826 * np.median(np.abs(flat - median), 0)
    tolerance = np.maximum(OUTLIER * sigma, (hi0 - lo0).max())
    inlier = np.all(np.abs(points - median) <= tolerance, -1)
    lo = np.where(inlier[..., None], points - radii[:, None], np.inf).min(1)
    hi = np.where(inlier[..., None], points + radii[:, None], -np.inf).max(1)
    seen = inlier.any(1)
    run_lo, run_hi = lo[seen].min(0), hi[seen].max(0)
    half = max(float((run_hi - run_lo).max()) / 2, 1e-3)
    centers = np.broadcast_to((run_lo + run_hi) / 2, (len(points), 2)).copy()
    half_sample = max(float((hi[seen] - lo[seen]).max()) / 2, 1e-3)
    if half > FOLLOW * half_sample:
        centers[seen] = (lo[seen] + hi[seen]) / 2
        half = half_sample
    return centers, half * (1 + 2 * margin), inlier


class Scene:
    """The decorations of T samples (``placed``: ``jaxbody.viz.placement.Placed`` records), their bodies'
    origins ``body_origins`` (T, nb, 3) in Ground, the view rotation R_VG and a MeshLibrary ``meshes``;
    ``fallback_radius``: the sphere drawn for a mesh that cannot be read (m)."""

    def __init__(self, placed, body_origins, R_VG, meshes, fallback_radius):
        self.R_SG = screen_rotation(R_VG)
        self.R_VG = np.asarray(R_VG, float)
        faces, owners, cull, colors, lines, line_colors, widths = [], [], [], [], [], [], []
        rotations, origins, radii, self.missing = [], [], [], []
        for record in placed:
            geometry_d = record.geometry
            segs = segments(record)
            if segs is not None:
                for k in range(segs.shape[1]):
                    color, alpha, width = line_style(geometry_d, k)
                    lines.append(segs[:, k])
                    line_colors.append([*color, alpha])
                    widths.append(width)
                continue
            shape = shape_faces(geometry_d, meshes, fallback_radius)
            if shape is None:
                continue
            local, is_mesh = shape
            if hasattr(geometry_d, "filename") and not is_mesh:
                self.missing.append(geometry_d.filename)
            R, p = record.R, record.p
            color, alpha = shape_style(geometry_d, is_mesh)
            owners.append(np.full(len(local), len(rotations)))
            faces.append(local)
            cull.append(np.full(len(local), alpha >= 1.0))
            colors.append(np.broadcast_to([*color, alpha], (len(local), 4)))
            rotations.append(R)
            origins.append(p)
            radii.append(float(np.linalg.norm(local.reshape(-1, 3), axis=1).max()))
        n_samples = len(np.asarray(body_origins))
        self.faces = np.concatenate(faces) if faces else np.zeros((0, 4, 3))
        self.owner = np.concatenate(owners).astype(int) if owners else np.zeros(0, int)
        self.cull = np.concatenate(cull) if cull else np.zeros(0, bool)
        self.face_colors = np.concatenate(colors) if colors else np.zeros((0, 4))
        self.R_GD = np.stack(rotations, 1) if rotations else np.zeros((n_samples, 0, 3, 3))
        self.p_GD = np.stack(origins, 1) if origins else np.zeros((n_samples, 0, 3))
        self.lines = np.stack(lines, 1) if lines else np.zeros((n_samples, 0, 2, 3))
        self.line_colors = np.asarray(line_colors).reshape(-1, 4)
        self.line_widths = np.asarray(widths, float)

        body_origins = np.asarray(body_origins, float).reshape(n_samples, -1, 3)
        points = np.concatenate([body_origins, self.p_GD], 1)
        point_radii = np.concatenate([np.zeros(body_origins.shape[1]), radii])
        self.centers, self.half, inlier = frame_view(points @ self.R_SG[:2].T, np.minimum(point_radii, 1e9))
        kept = points[inlier] if inlier.any() else points.reshape(-1, 3)
        self.grid = self._grid(kept @ self.R_VG.T)

    def _grid(self, points_V):
        """Segments (n, 2, 3) in Ground of a grid on the view's horizontal plane through Ground's origin."""
        self.step = nice(self.half / 2)
        lo = np.floor(points_V[:, :2].min(0) / self.step - 1) * self.step
        hi = np.ceil(points_V[:, :2].max(0) / self.step + 1) * self.step
        segs = []
        for axis in (0, 1):
            for value in np.arange(lo[axis], hi[axis] + self.step / 2, self.step):
                a, b = np.zeros(3), np.zeros(3)
                a[axis] = b[axis] = value
                a[1 - axis], b[1 - axis] = lo[1 - axis], hi[1 - axis]
                segs.append([a, b])
        return np.asarray(segs) @ self.R_VG  # view -> Ground

    def items(self, k):
        """Sample ``k``: faces (N, 4, 2) in screen x, y sorted far to near with their colors (N, 4) (those turned
        away from the camera dropped, the rest shaded), and the segments (L, 2, 2)."""
        R_SD = np.einsum("ij,djk->dik", self.R_SG, self.R_GD[k])
        p_SD = self.p_GD[k] @ self.R_SG.T
        verts = np.einsum("fij,fvj->fvi", R_SD[self.owner], self.faces) + p_SD[self.owner][:, None]
        normal = np.cross(verts[:, 2] - verts[:, 0], verts[:, 3] - verts[:, 1])
        keep = ~self.cull | (normal[:, 2] > 0)
        verts, normal = verts[keep], normal[keep]
        norm = np.maximum(np.linalg.norm(normal, axis=1), 1e-300)
        shade = 0.4 + 0.6 * np.abs(normal @ (LIGHT / np.linalg.norm(LIGHT))) / norm
        colors = self.face_colors[keep].copy()
        colors[:, :3] *= shade[:, None]
        order = np.argsort(verts[:, :, 2].mean(1), kind="stable")
        return verts[order, :, :2], colors[order], (self.lines[k] @ self.R_SG[:2].T)

    def setup(self, ax):
        """Add the moving artists to the 2D Axes ``ax`` (axis off, equal scale) and return them: the grid, the
        faces (a PolyCollection) and, on top, the lines and frames (a LineCollection)."""
        from matplotlib.collections import LineCollection, PolyCollection

        ax.set_axis_off()
        ax.set_aspect("equal", adjustable="box")
        grid = self.grid @ self.R_SG.T
        ax.add_collection(LineCollection(grid[:, :, :2], colors=[GRID_COLOR], linewidths=0.6, zorder=0))
        faces = PolyCollection(np.zeros((0, 4, 2)), zorder=1, antialiaseds=False, linewidths=0)
        lines = LineCollection(np.zeros((0, 2, 2)), colors=self.line_colors, linewidths=self.line_widths, zorder=2)
        ax.add_collection(faces)
        ax.add_collection(lines)
        return faces, lines

    def annotate(self, ax) -> None:
        """Add the fixed overlay to the Axes ``ax`` (axes-fraction coordinates): a scale bar, Ground's axes
        (the up one marked) and a note on meshes drawn as spheres."""
        ax.set_axis_off()
        bar = nice(self.half * 0.4)
        fraction = bar / (2 * self.half)
        ax.plot([0.04, 0.04 + fraction], [0.03, 0.03], color="k", lw=2, transform=ax.transAxes, zorder=3)
        ax.text(0.04 + fraction / 2, 0.045, f"{bar:g} m (grid {self.step:g} m)", ha="center", va="bottom",
                fontsize=8, transform=ax.transAxes, zorder=3)
        names = [label.split(" ")[0].lstrip("-") for label in axis_labels(self.R_VG)]
        up = names[2]
        for i in range(3):
            tip = 0.06 * self.R_SG[:2, i]
            ax.annotate("", xy=(0.9 + tip[0], 0.08 + tip[1]), xytext=(0.9, 0.08), xycoords="axes fraction",
                        arrowprops=dict(arrowstyle="-|>", color="k", lw=1), zorder=3)
            ax.text(0.9 + 1.35 * tip[0], 0.08 + 1.35 * tip[1], AXIS_NAMES[i] + (" (up)" if AXIS_NAMES[i] == up else ""),
                    fontsize=8, ha="center", va="center", transform=ax.transAxes, zorder=3)
        if self.missing:
            ax.text(0.0, 1.0, f"{len(self.missing)} mesh(es) ({self.missing[0].split('/')[-1]}, ...) not found or "
                    f"not readable: drawn as spheres", fontsize=7, va="top", transform=ax.transAxes, zorder=3)

    def draw(self, ax, artists, k) -> None:
        """Put sample ``k`` into the ``artists`` from ``setup`` and frame ``ax`` on it."""
        faces, lines = artists
        verts, colors, segs = self.items(k)
        faces.set_verts(verts)
        faces.set_facecolor(colors)
        lines.set_segments(segs)
        (x, y), half = self.centers[k], self.half
        ax.set_xlim(x - half, x + half)
        ax.set_ylim(y - half, y + half)


__all__ = ["Scene", "frame_view", "nice"]
