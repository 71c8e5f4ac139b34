"""OpenSim's ExpressionBasedBushingForce: a bushing (jaxbody._dynamics.force_elements.bushing's coordinates:
body-fixed X-Y-Z angles ``theta`` of R_FM, then ``delta`` = p_FM in F) whose stiffness generalized forces are six
expressions (OpenSim's grammar, jaxbody._math.lepton) of ``theta_x theta_y theta_z delta_x delta_y delta_z``.

Generalized forces ``f = -(Mx, My, Mz, Fx, Fy, Fz)(theta, delta) - damping * qdot`` (damping (6,): rotational,
then translational, OpenSim's diagonal damping matrix); body forces as LinearBushing's (OpenSim's
TwoFrameLinker::convertInternalForceToForcesOnFrames). No potential energy and no z (OpenSim keeps none).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.force_elements.bushing import TwoFrameBushing
from jaxbody._dynamics.forces import no_mobility_forces
from jaxbody._math import lepton

#: The variables of an ExpressionBasedBushingForce's expressions, in coordinate order.
DEFLECTIONS = ("theta_x", "theta_y", "theta_z", "delta_x", "delta_y", "delta_z")


class ExpressionBasedBushingForce(TwoFrameBushing):
    """OpenSim ExpressionBasedBushingForce between frame F (X_B1F on body1) and M (X_B2M on body2).

    expressions: six static trees (Mx, My, Mz, Fx, Fy, Fz) over DEFLECTIONS; damping (6,) (N m s/rad, N s/m).
    """

    damping: jnp.ndarray
    expressions: tuple = eqx.field(static=True, default=())

    def calc(self, model, state):
        q, qdot, frames = self.calc_q_and_q_dot(state)
        values = dict(zip(DEFLECTIONS, q))
        stiffness = jnp.stack([lepton.evaluate(e, values) for e in self.expressions])
        F = self.body_forces_of(model, -stiffness - self.damping * qdot, frames)
        return F, no_mobility_forces(model, F.dtype), jnp.zeros((), F.dtype)
