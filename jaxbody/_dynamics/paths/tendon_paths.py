"""MJCF tendons' length functions as paths (jaxbody._dynamics.paths.base.Path): a spatial tendon through sites and a
fixed tendon, for MuJoCo's tendon armature (jaxbody._dynamics.tendon_armature).

* ``StationPath``: straight segments through stations fixed on bodies (an MJCF spatial tendon through sites, no
  wrapping geoms or pulleys): ``L = sum_k |p_{k+1} - p_k|`` (m) with p_k = p_GB + R_GB s_k in Ground.
* ``CoordinatePath``: ``L = sum_i c_i q_i`` over chosen q slots (an MJCF fixed tendon over hinge and slide
  joints, q = MuJoCo's qpos; units of the joints' coordinates).

Every station and coefficient is a Model leaf; body and q indices are static. Needs Position. Cost: O(points).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.paths.base import Path
from jaxbody._math.spatial import safe_norm


class StationPath(Path):
    """Straight segments through body-fixed stations (module doc)."""

    bodies: tuple = eqx.field(static=True)   # (n,) body index of each station, n >= 2
    stations: jnp.ndarray                    # (n, 3) m, each in its body's frame

    def depends_on_q(self) -> bool:
        return False

    def calc_length_from_poses(self, R_GB, p_GB, q) -> jnp.ndarray:
        b = jnp.asarray(self.bodies)
        points = p_GB[b] + jnp.einsum("kij,kj->ki", R_GB[b], self.stations)
        return jnp.sum(safe_norm(points[1:] - points[:-1]))


class CoordinatePath(Path):
    """A linear combination of coordinates (module doc)."""

    q_indices: tuple = eqx.field(static=True)   # (n,) slots of q
    coefficients: jnp.ndarray                   # (n,)

    def calc_length_from_poses(self, R_GB, p_GB, q) -> jnp.ndarray:
        return self.coefficients @ q[jnp.asarray(self.q_indices)]
