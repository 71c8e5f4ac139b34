"""MuJoCo's actuator transmissions that are not a joint or a fixed tendon (``mj_transmission``, MuJoCo 4.0), each
giving one actuator's ``actuator_length`` (scalar) and its ``actuator_moment`` row as mobility forces (nu,) in
jaxbody's u (the generalized force of a unit actuator force; MuJoCo's row in qvel for hinge and slide joints).

* ``PathTransmission`` (a tendon transmission on a spatial tendon): ``length = L``, ``moment = dL/du`` of the
  tendon's path (jaxbody._dynamics.paths.mujoco_wrap); the actuator's scalar gear multiplies both (the caller).
* ``SiteTransmission`` with gear g = (g_t, g_r) (6,) (its own leaf):
  without a refsite: ``length = 0``; the moment is the generalized force of the force ``R_GS g_t`` at the site and
  the torque ``R_GS g_r`` on its body (S the site's frame);
  with a refsite F: ``length = g_t . R_GF^T (p_S - p_F) + g_r . rotvec(R_GF^T R_GS)`` (the relative rotation as
  MuJoCo's subQuat, angle in [0, pi]); the moment is the generalized force of the force ``R_GF g_t`` at the site
  and its opposite at the refsite, the torque ``R_GF g_r`` on the site's body and its opposite on the refsite's,
  with the mobilities that move both sites together (the common ancestors of both bodies, ``common_u``)
  zeroed, as MuJoCo's common-ancestor rule does. This moment is MuJoCo's, not the derivative of the length
  (it ignores the rotation of F).

Stations and rotations are in their bodies' frames (m); bodies and the zeroed mobilities are static. Needs
Position. Cost: O(nbodies) per transmission (one inward scan).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics import jacobians
from jaxbody._dynamics.forces import station_force, station_location
from jaxbody._math.spatial import quaternion_from_rotation


def relative_rotation_vector(R):
    """Rotation vector (3,) of R (3, 3), angle in [0, pi] times the unit axis (MuJoCo's mju_quat2Vel of R's
    quaternion); zero-safe for gradients."""
    quat = quaternion_from_rotation(R)   # w >= 0
    w, v = quat[0], quat[1:]
    s2 = jnp.sum(v * v)
    small = s2 < 1e-24
    s = jnp.sqrt(jnp.where(small, 1.0, s2))
    return v * jnp.where(small, 2.0 / w, 2.0 * jnp.arctan2(s, w) / s)


class PathTransmission(eqx.Module):
    """Actuator ``row`` on a spatial tendon's ``path`` (module doc)."""

    row: int = eqx.field(static=True)
    path: eqx.Module

    def length_and_moment(self, model, state):
        G, _ = self.path.calc_length_gradient(model, state)
        return (self.path.calc_length(model, state),
                jacobians.multiply_by_system_jacobian_transpose(model, state.position, G))


class SiteTransmission(eqx.Module):
    """Actuator ``row`` on a site, with or without a refsite (module doc; ``ref_body`` -1: none)."""

    row: int = eqx.field(static=True)
    body: int = eqx.field(static=True)
    ref_body: int = eqx.field(static=True)
    common_u: tuple = eqx.field(static=True)   # mobilities zeroed (with a refsite)
    gear: jnp.ndarray                          # (6,) translation, rotation
    station: jnp.ndarray                       # (3,) m, site origin in its body
    rotation: jnp.ndarray                      # (3, 3) R_BS
    ref_station: jnp.ndarray                   # (3,) m (unused without a refsite)
    ref_rotation: jnp.ndarray                  # (3, 3) R_BF

    def length_and_moment(self, model, state):
        pos, nb = state.position, model.topology.nbodies
        p_S = station_location(pos, self.body, self.station)
        R_GS = pos.R_GB[self.body] @ self.rotation
        if self.ref_body < 0:
            F = station_force(nb, self.body, pos.R_GB, self.station, R_GS @ self.gear[:3])
            F = F.at[self.body, 0].add(R_GS @ self.gear[3:])
            return jnp.zeros((), p_S.dtype), jacobians.multiply_by_system_jacobian_transpose(model, pos, F)
        p_F = station_location(pos, self.ref_body, self.ref_station)
        R_GF = pos.R_GB[self.ref_body] @ self.ref_rotation
        length = self.gear[:3] @ (R_GF.T @ (p_S - p_F)) + self.gear[3:] @ relative_rotation_vector(R_GF.T @ R_GS)
        force, torque = R_GF @ self.gear[:3], R_GF @ self.gear[3:]
        F = (station_force(nb, self.body, pos.R_GB, self.station, force)
             - station_force(nb, self.ref_body, pos.R_GB, self.ref_station, force))
        F = F.at[self.body, 0].add(torque).at[self.ref_body, 0].add(-torque)
        moment = jacobians.multiply_by_system_jacobian_transpose(model, pos, F)
        return length, moment.at[np.array(self.common_u, dtype=int)].set(0.0)
