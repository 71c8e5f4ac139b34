"""WrapTorus (OpenSim 4.6 WrapTorus::wrapLine): a torus in W's x-y plane, centred at W's origin, whose tube of radius
``inner_radius`` (m) runs round a circle of radius ``outer_radius`` (m). A segment wraps the tube's inner side: the
path runs through the hole.

OpenSim's construction:

1. the point of the line p1-p2 "closest" to the circle, by MINPACK lmdif from the line parameter 0 (OpenSim's
   findClosestPoint; ``lmdif_1d``), once from p1 toward p2 and once from p2 toward p1, keeping the nearer result
   (with a quadrant: the one on the quadrant's side; neither: NO_WRAP). OpenSim's residual is the derivative of the
   squared distance to a circle of twice the outer radius (a factor 2 in calcCircleResids), reproduced as written;
   the distances that pick the pass use the outer radius;
2. a cylinder of radius ``inner_radius`` and length 10000 with quadrant +x (toward the torus axis), placed at the
   circle point in that direction with its axis along the circle's tangent, wraps the segment
   (``WrapCylinder.wrap_line``, with OpenSim's multi-wrap tangency loop when the path has several wrap objects);
3. its tangent points return to W; the surface length is the cylinder's helix length.

OpenSim reports any segment whose closest point exists as ``wrapped`` (never mandatory), so every segment in the
range competes on length change. Not reproduced: when the cylinder does not wrap (an end inside it, or the
quadrant's side missed), OpenSim still reports ``wrapped`` with no wrap points and the previous wrap's tangent
points (a history dependence); here that segment is NO_WRAP.

Derivatives: the closest-point parameter by the implicit function theorem (:func:`circle_parameter`) on the
stationarity of OpenSim's squared residual (a root of the residual, or, for a line passing near the torus axis
where the residual has no root, the minimum of its size that lmdif stops at); lmdif stops when its step is below
1e-4 of the parameter, so the derivative is that of the point it converges to. The rest by autodiff. Cost per
segment: two lmdif replays of lmdif_1d.STEPS scalar steps and one cylinder wrap.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._dynamics.paths import ellipsoid_math as em
from jaxbody._dynamics.paths import lmdif_1d
from jaxbody._dynamics.paths import wrap_math as wm
from jaxbody._dynamics.paths.wrap_cylinder import WrapCylinder
from jaxbody._dynamics.paths.wrap_objects import WrapLine, WrapObject

#: WrapTorus.cpp: CYL_LENGTH, and findClosestPoint's lmdif settings (ftol, xtol, step_factor, max_iter).
CYLINDER_LENGTH = 10000.0
FTOL = 1e-4
XTOL = 1e-4
STEP_FACTOR = 0.2
MAX_FUNCTION_CALLS = 500


def circle_residual(u, x):
    """WrapTorus::calcCircleResids: at line parameter u (m from x[:3] toward x[3:6]), the residual for the circle of
    radius x[6] about W's z axis, in OpenSim's order of operations."""
    p1, p2, r = x[:3], x[3:6], x[6]
    d = p2 - p1
    mag = jnp.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    n = d / mag
    c2 = 2.0 * (p1[0] * n[0] + p1[1] * n[1] + p1[2] * n[2])
    c3 = p1[0] * n[0] + p1[1] * n[1]
    c4 = n[0] * n[0] + n[1] * n[1]
    c5 = p1[0] * p1[0] + p1[1] * p1[1]
    return c2 + 2.0 * u - 2.0 * r * (2.0 * c4 * u + 2.0 * c3) / jnp.sqrt(u * u * c4 + 2.0 * c3 * u + c5)


def _lmdif_parameter(x):
    u, _ = lmdif_1d.solve(lambda u: circle_residual(u, x), jnp.zeros((), x.dtype), FTOL, XTOL, STEP_FACTOR,
                          MAX_FUNCTION_CALLS)
    return u


@jax.custom_jvp
def circle_parameter(x):
    """OpenSim's findClosestPoint line parameter (m from x[:3] toward x[3:6]) for the circle of radius x[6]: where
    lmdif stops on :func:`circle_residual`, differentiated implicitly through :func:`_stationarity`."""
    return _lmdif_parameter(x)


def _stationarity(u, x):
    """d/du of residual^2 / 2: zero where lmdif stops (a root of the residual, or a local minimum of its size
    where the residual has no root nearby)."""
    return circle_residual(u, x) * jax.grad(circle_residual)(u, x)


@circle_parameter.defjvp
def _circle_parameter_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    u = _lmdif_parameter(x)
    du_g, dx_g = jax.grad(_stationarity, argnums=(0, 1))(u, x)
    return u, -jnp.dot(dx_g, dx) / jnp.where(du_g != 0.0, du_g, 1.0)


def closest_circle_point(p1, p2, radius, quadrant):
    """(found, c (3,)): OpenSim's findClosestPoint: the circle point (W, m) nearest the better of the two passes."""
    axis, sign = quadrant
    x1 = jnp.concatenate([p1, p2, radius[None]])
    x2 = jnp.concatenate([p2, p1, radius[None]])
    u = jax.vmap(circle_parameter)(jnp.stack([x1, x2]))

    def point(a, b, u):
        d = b - a
        mag = jnp.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        return a + u * (d / mag)

    a1, a2 = point(p1, p2, u[0]), point(p2, p1, u[1])

    def distance(a):
        rho = jnp.sqrt(a[0] * a[0] + a[1] * a[1])
        return em.safe_sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] + radius * radius - 2.0 * radius * rho)

    nearer_first = distance(a1) < distance(a2)
    if sign == 0:
        found, first = jnp.asarray(True), nearer_first
    else:
        on1, on2 = wm.dsign(a1[axis]) == sign, wm.dsign(a2[axis]) == sign
        found, first = on1 | on2, jnp.where(on1 & on2, nearer_first, on1)
    a = jnp.where(first, a1, a2)
    mag = jnp.sqrt(a[0] * a[0] + a[1] * a[1])
    safe = jnp.where(mag > 0.0, mag, 1.0)
    return found, jnp.stack([a[0] * radius / safe, a[1] * radius / safe, jnp.zeros_like(radius)])


def _cylinder_frame(c):
    """(R, p): OpenSim's cylinderToTorus for the circle point c: rows of R are the cylinder's axes in W (x toward the
    torus axis, y = -z_W, z = x cross y along the circle), p the torus origin in the cylinder frame."""
    x_axis, _ = wm.normalize_or_zero(-c)
    y_axis = jnp.asarray([0.0, 0.0, -1.0], c.dtype)
    R = jnp.stack([x_axis, y_axis, jnp.cross(x_axis, y_axis)])
    return R, R @ (-c)


class WrapTorus(WrapObject):
    """``inner_radius``: the tube's radius (m); ``outer_radius``: the radius of the circle the tube runs round (m),
    larger than ``inner_radius``. Both are Model leaves."""

    inner_radius: jnp.ndarray
    outer_radius: jnp.ndarray

    def wrap_line(self, p1, p2, single_wrap: bool) -> WrapLine:
        found, c = closest_circle_point(p1, p2, self.outer_radius, self.quadrant)
        R, p = _cylinder_frame(c)
        cylinder = WrapCylinder(body=self.body, R_BW=jnp.eye(3, dtype=p1.dtype), p_BW=jnp.zeros(3, p1.dtype),
                                quadrant=(0, 1), active=True, name=self.name, radius=self.inner_radius,
                                length=jnp.asarray(CYLINDER_LENGTH, p1.dtype))
        line = cylinder.wrap_line(R @ p1 + p, R @ p2 + p, single_wrap)
        wraps = found & ((line.code == wm.WRAPPED) | (line.code == wm.MANDATORY_WRAP))
        code = jnp.where(wraps, wm.WRAPPED, wm.NO_WRAP)
        return WrapLine(code, R.T @ (line.r1 - p), R.T @ (line.r2 - p), jnp.where(wraps, line.length, 0.0))
