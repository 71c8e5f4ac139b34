"""Support functions and surface curvatures of the convex shapes, for the GJK/EPA tracker (``gjk.py``).

A shape is a *core* swept by a radius (as in ``convex.py``): Sphere = its center swept by its radius, Capsule =
its axis segment swept by its radius; Ellipsoid, Cylinder (finite), Brick and ConvexMesh have radius 0. For one
surface at pose ``X_GS`` (R (3, 3), p (3,)), ``convex_support(shape, R, p)`` gives a ``Support``:

* ``core(d)``: a point of the core, in G, farthest along the direction d (3,) (any length, nonzero): Simbody's
  ``calcSupportPoint``. Where the farthest set is a face or an edge (a brick or mesh face, a cylinder's cap or
  side line, a capsule axis perpendicular to d) it returns one point of it (a corner; a cap's center).
* ``radius`` (scalar) m swept around the core; ``center`` (3,) a point inside the core (G); ``size`` (scalar)
  m an upper bound of the core's extent from ``center`` (scales the tolerances).

``curvature_tensor(shape, R, p, point, normal)``: the surface's curvature as a symmetric (3, 3) matrix in G on
the tangent plane of its outward unit ``normal`` at the surface ``point`` (Weingarten map; 0 along the normal):
ellipsoid: ``P H P / |grad f|`` of ``f = sum x_i^2 / a_i^2``; sphere and capsule ``P / radius`` (a capsule as
its end sphere, as the other capsule trackers); a cylinder's side ``t t^T / radius`` (t the circumferential
direction), its caps 0; bricks and meshes 0 (flat faces). Everything is single-surface (no pair axis): the
trackers vmap over pairs. Lengths in meters, curvatures in 1/m.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxbody._math import spatial


class Support(NamedTuple):
    """One surface for GJK/EPA (see the module docstring)."""

    core: Callable
    radius: jnp.ndarray
    center: jnp.ndarray
    size: jnp.ndarray


def _sign(x):
    """+1 for x >= 0, -1 otherwise (a support point on a tie)."""
    return jnp.where(x >= 0, 1.0, -1.0)


def _hull_vertices(mesh):
    """Static indices of a ConvexMesh's hull vertices (those of its faces; all if it has none)."""
    if len(mesh.faces):
        return np.unique(np.asarray(mesh.faces, dtype=np.int64))
    return np.arange(mesh.vertices.shape[-2])


def convex_support(shape, R, p) -> Support:
    """The ``Support`` of one surface of kind ``type(shape).kind`` (leaves without a surface axis) at (R, p)."""
    kind = type(shape).kind
    zero = jnp.zeros((), p.dtype)
    local = lambda core_S: (lambda d: p + R @ core_S(R.T @ d))  # noqa: E731
    if kind == "Sphere":
        return Support(lambda d: p, shape.radius + zero, p, zero)
    if kind == "Capsule":
        h = shape.half_length
        return Support(lambda d: p + h * _sign(d @ R[:, 2]) * R[:, 2], shape.radius + zero, p, h + zero)
    if kind == "Ellipsoid":
        a2 = shape.radii ** 2

        def ellipsoid(d):
            scaled = a2 * d
            return scaled / jnp.sqrt(jnp.maximum(d @ scaled, jnp.finfo(d.dtype).tiny))

        return Support(local(ellipsoid), zero, p, jnp.max(shape.radii))
    if kind == "Cylinder":
        r, h = shape.radius, shape.half_length

        def cylinder(d):
            rho = spatial.safe_norm(d[:2])
            radial = jnp.where(rho > 0, r * d[:2] / jnp.where(rho > 0, rho, 1.0), 0.0)
            return jnp.concatenate([radial, (h * _sign(d[2]))[None]])

        return Support(local(cylinder), zero, p, jnp.sqrt(r * r + h * h))
    if kind == "Brick":
        half = shape.half_lengths
        return Support(local(lambda d: _sign(d) * half), zero, p, spatial.safe_norm(half))
    if kind == "ConvexMesh":
        v = shape.vertices[_hull_vertices(shape)]
        v_G = p + v @ R.T
        center = jnp.mean(v_G, 0)
        return Support(lambda d: v_G[jnp.argmax(v_G @ d)], zero, center, jnp.max(spatial.safe_norm(v_G - center)))
    raise ValueError(f"no support function for contact shape {kind}")


def _tangent_projector(normal):
    return jnp.eye(3, dtype=normal.dtype) - jnp.outer(normal, normal)


def curvature_tensor(shape, R, p, point, normal):
    """Curvature (3, 3) in G of one surface at ``point`` (3,) with outward unit ``normal`` (3,) (module docstring)."""
    kind = type(shape).kind
    P = _tangent_projector(normal)
    if kind in ("Sphere", "Capsule"):
        return P / shape.radius
    if kind == "Ellipsoid":
        inv2 = 1.0 / shape.radii ** 2
        x_S = R.T @ (point - p)
        grad_norm = 2 * spatial.safe_norm(x_S * inv2)
        H = R @ jnp.diag(2 * inv2) @ R.T / jnp.where(grad_norm > 0, grad_norm, 1.0)
        return P @ H @ P
    if kind == "Cylinder":
        z = R[:, 2]
        side = jnp.abs(normal @ z) < 1e-6
        t = jnp.cross(z, normal)
        return jnp.where(side, jnp.outer(t, t) / shape.radius, jnp.zeros((3, 3), normal.dtype))
    return jnp.zeros((3, 3), normal.dtype)


def principal_curvatures(K, normal):
    """(kmax, kmin) (2,) of a symmetric tangent-plane curvature ``K`` (3, 3) at the unit ``normal`` (3,)."""
    helper = jnp.where(jnp.abs(normal[0]) < 0.9, jnp.eye(3, dtype=normal.dtype)[0], jnp.eye(3, dtype=normal.dtype)[1])
    t1 = jnp.cross(normal, helper)
    t1 = t1 / spatial.safe_norm(t1)
    t2 = jnp.cross(normal, t1)
    a, b, c = t1 @ K @ t1, t1 @ K @ t2, t2 @ K @ t2
    disc = 0.25 * (a - c) ** 2 + b * b
    positive = disc > 0
    root = jnp.where(positive, jnp.sqrt(jnp.where(positive, disc, 1.0)), 0.0)
    mean = 0.5 * (a + c)
    return jnp.stack([mean + root, mean - root])
