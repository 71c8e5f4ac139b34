"""OpenSim's ``GeometryPath::computeMomentArm`` route (its MomentArmSolver), for comparison with ``-dL/du``.

OpenSim lights up the coordinate's speed alone (u = e_j), projects u onto the velocity constraints, and
takes the resulting coupling vector ``c = u_projected / u_projected[j]`` against the generalized force of a
unit tension: ``moment arm = c . (-dL/du)``. Without constraints touching coordinate j, c = e_j and this is
``-dL/du_j`` (jaxbody._dynamics.paths.base.Path.calc_moment_arms). OpenSim unlocks the coordinate of interest
first: pass its lock's constraint index in ``unlocked`` (load_osim names it ``"<coordinate>/locked"``).
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._typing import Stage

#: OpenSim's MomentArmSolver projects u to this accuracy (``projectU(state, 1e-10)``).
PROJECTION_ACCURACY = 1e-10


def compute_moment_arm(model, state, path, coordinate_u: int, unlocked=()) -> jnp.ndarray:
    """Moment arm (m, scalar) of ``path`` about the coordinate whose speed is ``u[coordinate_u]``, as OpenSim's
    computeMomentArm. Needs only q of ``state``. Cost: one u projection and one path gradient."""
    pos = model.realize(state, Stage.Position)
    lit = state.set_u(jnp.zeros_like(state.u).at[coordinate_u].set(1.0))
    if unlocked:
        lit = lit.set_constraint_enabled(lit.constraint_enabled.at[jnp.asarray(unlocked)].set(False))
    projected, _ = model.project_u(lit, accuracy=PROJECTION_ACCURACY)
    coupling = projected.u / projected.u[coordinate_u]
    return jnp.dot(coupling, path.calc_moment_arms(model, pos))
