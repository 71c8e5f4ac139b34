"""OpenSim's ``GeometryPath::computeMomentArm`` route (its MomentArmSolver), for comparison with ``-dL/du``.

OpenSim lights up the coordinate's speed alone (u = e_j), projects u onto the velocity constraints, and
takes the resulting coupling vector ``c = u_projected / u_projected[j]`` against the generalized forces of a
unit tension along the path (``f = J^T F`` of the path's body forces F, plus its mobility forces):
``moment arm = c . f``. Without constraints touching coordinate j, c = e_j and this is ``f_j``; where the
path's forces are the length's gradient (path points, spheres, function-based paths) f is ``-dL/du``
(jaxbody._dynamics.paths.base.Path.calc_moment_arms), while over a cylinder or an ellipsoid OpenSim's tangent
points approximate the shortest path and f is OpenSim's, not ``-dL/du``. OpenSim unlocks the coordinate of
interest first: pass its lock's constraint index in ``unlocked`` (load_osim names it ``"<coordinate>/locked"``).
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._dynamics import jacobians
from jaxbody._typing import Stage

#: OpenSim's MomentArmSolver projects u to this accuracy (``projectU(state, 1e-10)``).
PROJECTION_ACCURACY = 1e-10


def calc_coupling_vector(model, state, coordinate_u: int, unlocked=()) -> jnp.ndarray:
    """OpenSim's MomentArmSolver::computeCouplingVector (nu,): u = e_j projected onto the velocity constraints,
    divided by its j-th entry (j = ``coordinate_u``, may be traced, so it vmaps over coordinates). Needs only q of
    ``state``. Cost: one u projection."""
    lit = state.set_u(jnp.zeros_like(state.u).at[coordinate_u].set(1.0))
    if unlocked:
        lit = lit.set_constraint_enabled(lit.constraint_enabled.at[jnp.asarray(unlocked)].set(False))
    projected, _ = model.project_u(lit, accuracy=PROJECTION_ACCURACY)
    return projected.u / projected.u[coordinate_u]


def calc_unit_tension_generalized_forces(model, state, path) -> jnp.ndarray:
    """Generalized forces (nu,) of a unit tension along ``path`` (OpenSim's addInEquivalentForces, then
    ``J^T``): for coordinate j without constraints, OpenSim's moment arm about it. Needs only q of ``state``.
    Cost: one path evaluation and one inward tree scan."""
    pos = model.realize(state, Stage.Position)
    F, f = path.calc_tension_forces(model, pos, 1.0)
    return jacobians.multiply_by_system_jacobian_transpose(model, pos.position, F) + f


def compute_moment_arm(model, state, path, coordinate_u: int, unlocked=()) -> jnp.ndarray:
    """Moment arm (m, scalar; dimensionless about a translational coordinate) of ``path`` about the coordinate
    whose speed is ``u[coordinate_u]``, as OpenSim's computeMomentArm: the coupling vector against the
    generalized forces of a unit tension. Needs only q of ``state``. Cost: one u projection and one path
    evaluation."""
    coupling = calc_coupling_vector(model, state, coordinate_u, unlocked)
    return jnp.dot(coupling, calc_unit_tension_generalized_forces(model, state, path))
