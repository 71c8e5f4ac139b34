"""The interface every path implements (OpenSim's AbstractGeometryPath), and the derived quantities all paths share.

A path is a curve between body-fixed (or coordinate-dependent) points. Its geometry is one function,
``calc_length_from_poses(R_GB, p_GB, q) -> L``: the length (m) given every body's pose in Ground
(R_GB (nbodies, 3, 3), p_GB (nbodies, 3)) and the coordinates q (nq,) (a MovingPathPoint's location, a
ConditionalPathPoint's activity and a function-based path read q directly). Everything else follows from it
by differentiation, so it is exact for every path type, wrapped or not:

* ``calc_lengthening_speed``: ``dL/dt``, one forward-mode derivative of the geometry along
  ``(dR_GB = [w_GB] R_GB, dp_GB = v_GB, dq = qdot)``. For a shortest path around a wrap object this equals
  OpenSim's sum of segment speeds (its tangent points move with the wrap body; the envelope theorem makes the
  sliding of the tangent points contribute nothing).
* ``calc_tension_forces``: the body and mobility forces whose power is ``-T dL/dt`` for a tension T >= 0
  pulling the path's ends together: body forces (nbodies, 2, 3) at each body origin Bo in Ground (moment,
  force) from the geometry's gradient with respect to each body's pose, and mobility forces (nu,)
  ``-T N^T dL/dq`` for the explicit q dependence (moving path points). On a straight-segment path these
  are OpenSim's forces along each segment applied at the path points (GeometryPath::addInEquivalentForces).
* ``calc_moment_arms``: ``-dL/du`` (nu,), exact by autodiff (the generalized force of a unit tension when the
  path's forces are the length's gradient, as here by default); with
  ``u = qdot`` (OpenSim's coordinates) it is ``-dL/dq``, the moment arm about each coordinate (m, or
  dimensionless for a translational coordinate).

Stages: length and tension forces need Position (``state.position``); the lengthening speed needs
Velocity (``state.velocity``). Cost: the geometry once (length), once in forward mode (speed), once in
reverse mode plus one inward tree scan (moment arms); O(points + wrap objects) each.
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbody._dynamics import jacobians
from jaxbody._math import spatial
from jaxbody._topology import mobilizer_groups


def _vee_of_skew_part(A):
    """``(A_21 - A_12, A_02 - A_20, A_10 - A_01)``: twice the axial vector of A's skew-symmetric part."""
    return jnp.stack([A[..., 2, 1] - A[..., 1, 2], A[..., 0, 2] - A[..., 2, 0], A[..., 1, 0] - A[..., 0, 1]], -1)


def q_forces_to_mobility(model, state, f_q) -> jnp.ndarray:
    """``N(q)^T f_q`` (nu,): generalized forces conjugate to q (nq,) as mobility forces (equal power for every u)."""
    return mobilizer_groups.multiply_by_n_transpose(model.topology, model.parameters, state.q, f_q)


class Path(eqx.Module):
    """Interface: a path's geometry ``calc_length_from_poses``; length, speed, forces and moment arms derive from it.

    Subclasses keep every number a user may sweep or differentiate (stations, wrap radii, ...) as an array
    leaf and every index (bodies, coordinates) static.
    """

    def depends_on_q(self) -> bool:
        """Whether the geometry reads q directly (static; False skips the mobility-force pass)."""
        return True

    @abc.abstractmethod
    def calc_length_from_poses(self, R_GB, p_GB, q) -> jnp.ndarray:
        """Path length (m, scalar) from body poses in G (R_GB (nbodies, 3, 3), p_GB (nbodies, 3)) and q (nq,)."""

    def calc_length(self, model, state) -> jnp.ndarray:
        """Path length (m, scalar). Needs Position. Cost: the geometry once."""
        pos = state.position
        return self.calc_length_from_poses(pos.R_GB, pos.p_GB, state.q)

    def calc_lengthening_speed(self, model, state) -> jnp.ndarray:
        """``dL/dt`` (m/s, scalar; positive when the path lengthens). Needs Velocity. Cost: one forward-mode pass."""
        pos, vel = state.position, state.velocity
        w, v = vel.V_GB[:, 0], vel.V_GB[:, 1]
        R_dot = spatial.skew(w) @ pos.R_GB
        _, speed = jax.jvp(self.calc_length_from_poses, (pos.R_GB, pos.p_GB, state.q), (R_dot, v, vel.qdot))
        return speed

    def calc_length_gradient(self, model, state):
        """``(G, g_q)``: dL as body spatial gradients G (nbodies, 2, 3) and dL/dq (nq,), so that
        ``dL/dt = sum_b G_b . V_GB_b + g_q . qdot``. Needs Position. Cost: one reverse-mode pass."""
        pos = state.position
        dR, dp, dq = jax.grad(self.calc_length_from_poses, argnums=(0, 1, 2))(pos.R_GB, pos.p_GB, state.q)
        # dL = sum_ij dR_ij ([w] R)_ij = tr(dR R^T [w]^T) = w . vee(dR R^T - R dR^T) (per body)
        angular = _vee_of_skew_part(dR @ jnp.swapaxes(pos.R_GB, -1, -2))
        return jnp.stack([angular, dp], axis=1), dq

    def calc_tension_forces(self, model, state, tension):
        """``(body_forces (nbodies, 2, 3) at Bo in G, mobility_forces (nu,))`` of a tension (N, >= 0 pulls the ends
        together) along the path: power ``-tension dL/dt``. Needs Position. Cost: one reverse-mode pass."""
        G, g_q = self.calc_length_gradient(model, state)
        if not self.depends_on_q():
            return -tension * G, jnp.zeros_like(state.u, dtype=G.dtype) * tension
        return -tension * G, -tension * q_forces_to_mobility(model, state, g_q)

    def calc_forces_of_tension(self, model, state, tension_of):
        """Length, lengthening speed and the forces of a tension that depends on them, in one evaluation of the
        path: ``tension_of(length, speed) -> (tension (N), aux)``; returns ``(body_forces (nbodies, 2, 3) at Bo
        in G, mobility_forces (nu,), aux)`` as :meth:`calc_tension_forces`. Needs Velocity. Cost: that of
        :meth:`calc_length`, :meth:`calc_lengthening_speed` and :meth:`calc_tension_forces` (a path whose
        geometry is costly overrides this to share it among the three)."""
        tension, aux = tension_of(self.calc_length(model, state), self.calc_lengthening_speed(model, state))
        return (*self.calc_tension_forces(model, state, tension), aux)

    def calc_moment_arms(self, model, state) -> jnp.ndarray:
        """``-dL/du`` (nu,) by autodiff; the moment arm about each coordinate when ``u = qdot``. Needs Position.
        Cost: one reverse-mode pass and one inward tree scan."""
        G, g_q = self.calc_length_gradient(model, state)
        arms = -jacobians.multiply_by_system_jacobian_transpose(model, state.position, G)
        if not self.depends_on_q():
            return arms
        return arms - q_forces_to_mobility(model, state, g_q)
