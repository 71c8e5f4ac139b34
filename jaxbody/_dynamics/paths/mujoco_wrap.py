"""An MJCF spatial tendon as a path (jaxbody._dynamics.paths.base.Path): sites, sphere and cylinder wrap geoms
(with or without a side site) and pulleys, with MuJoCo 4.0's length (``mj_tendon``).

The tendon is a sequence of segments, each from one site to the next, or site - geom - site. A segment's
length is the straight distance between its sites, or, when it wraps (MuJoCo's ``mju_wrap``, see
jaxbody._dynamics.paths.mujoco_wrap_points), ``|x0 - w0| + arc + |w1 - x1|`` with the tangent points w0, w1 on
the geom and ``arc = r theta`` (sphere) or ``sqrt((r theta)^2 + (z1 - z0)^2)`` (cylinder, heights in the geom
frame). A pulley divides the length of every segment after it (up to the next pulley) by its divisor:
``L = sum_k len_k / divisor_k`` (m).

Derivatives (jaxbody._dynamics.paths.mujoco_wrap_points): the circle wrap's tangent points are differentiable,
so every derivative of L is exact wherever the wrap's discrete choice does not switch, and the first equals
MuJoCo's ``ten_J`` (the points being a stationary point of the length); an inside wrap's point is held on the
geom for derivatives as MuJoCo's ``ten_J`` holds it (its higher derivatives omit the point's motion).

Leaves: the sites' stations (n_site, 3) in their bodies' frames, the geoms' poses in their bodies' frames
(n_geom, 3) and (n_geom, 3, 3), radii (n_geom,), the pulley divisors. Static: bodies, the segment structure,
geom kinds. Needs Position. Cost: O(segments), 20 Newton steps per inside wrap.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.paths.base import Path
from jaxbody._dynamics.paths.mujoco_wrap_points import wrap_points
from jaxbody._math.spatial import safe_norm


class MujocoSpatialPath(Path):
    """An MJCF spatial tendon (module doc). ``segments``: static tuple of ``(site0, site1, geom, side, pulley)``
    indices into the site and geom arrays (geom, side: -1 for none; pulley: index into ``divisors`` or -1)."""

    site_bodies: tuple = eqx.field(static=True)   # (n_site,) body index of each site
    geom_bodies: tuple = eqx.field(static=True)   # (n_geom,) body index of each wrap geom
    cylinders: tuple = eqx.field(static=True)     # (n_geom,) True: cylinder, False: sphere
    segments: tuple = eqx.field(static=True)
    site_stations: jnp.ndarray                    # (n_site, 3) m, in the site's body frame
    geom_positions: jnp.ndarray                   # (n_geom, 3) m, in the geom's body frame
    geom_rotations: jnp.ndarray                   # (n_geom, 3, 3) R_BG
    geom_radii: jnp.ndarray                       # (n_geom,) m
    divisors: jnp.ndarray                         # (n_pulley,) dimensionless

    def depends_on_q(self) -> bool:
        return False

    def calc_length_from_poses(self, R_GB, p_GB, q) -> jnp.ndarray:
        b = jnp.asarray(self.site_bodies, dtype=int)
        sites = p_GB[b] + jnp.einsum("kij,kj->ki", R_GB[b], self.site_stations)
        total = 0.0
        for site0, site1, geom, side, pulley in self.segments:
            x0, x1 = sites[site0], sites[site1]
            length = safe_norm(x1 - x0)
            if geom >= 0:
                length = self._wrapped_length(R_GB, p_GB, geom, x0, x1, None if side < 0 else sites[side], length)
            total = total + (length if pulley < 0 else length / self.divisors[pulley])
        return total

    def _wrapped_length(self, R_GB, p_GB, g, x0, x1, side, straight):
        """One site - geom - site segment's length (module doc); ``straight`` where it does not wrap."""
        body = self.geom_bodies[g]
        R = R_GB[body] @ self.geom_rotations[g]
        p = p_GB[body] + R_GB[body] @ self.geom_positions[g]
        r = self.geom_radii[g]
        local = lambda x: R.T @ (x - p)  # noqa: E731
        wraps, w0, w1, theta = wrap_points(local(x0), local(x1), None if side is None else local(side), r,
                                           self.cylinders[g])
        w0, w1, theta = (jnp.where(wraps, x, 0.0) for x in (w0, w1, theta))   # finite where it does not wrap
        arc = safe_norm(jnp.stack([r * theta, w1[2] - w0[2]])) if self.cylinders[g] else r * theta
        wrapped = safe_norm(p + R @ w0 - x0) + arc + safe_norm(x1 - p - R @ w1)
        return jnp.where(wraps, wrapped, straight)
