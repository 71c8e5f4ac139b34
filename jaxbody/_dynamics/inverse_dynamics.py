"""Inverse dynamics and related O(n) force recursions (catalogue 4.6).

Built on the system-Jacobian operators: accelerations are ``J udot + Jdot u``
and mobility forces are ``J^T`` of body forces.
"""

from __future__ import annotations

from jaxbody._dynamics import jacobians
from jaxbody._math import spatial
from jaxbody._topology import mobilizer_groups, tree_scan
from jaxbody._typing import BodySpatialVecs, Mobilities


def calc_body_acceleration_from_udot(model, pos, vel, udot: Mobilities) -> BodySpatialVecs:
    """A_GB = J udot + Jdot u (nbodies, 2, 3) at Bo in G. Cost: one outward scan."""
    topo = model.topology
    Hu = spatial.unflat(spatial.matvec(pos.H_PB_G, mobilizer_groups.per_body_u(topo, udot)))
    return tree_scan.shift_outward(topo, pos.p_PB_G, Hu + vel.mobilizer_coriolis)


def calc_residual_force_ignoring_constraints(
    model, pos, vel, mobility_forces: Mobilities, body_forces: BodySpatialVecs, udot: Mobilities
) -> Mobilities:
    """``M udot + c - f - J^T F`` (nu,): the mobility forces still needed to produce udot (M includes the
    armature: ``armature * udot``).

    Cost: one outward and one inward scan (recursive Newton-Euler).
    """
    A = calc_body_acceleration_from_udot(model, pos, vel, udot)
    inertial = spatial.unflat(spatial.matvec(pos.Mk_G, spatial.flat(A))) + vel.gyroscopic
    rotors = model.parameters.armature * udot
    return jacobians.multiply_by_system_jacobian_transpose(model, pos, inertial - body_forces) + rotors - mobility_forces


def calc_tree_equivalent_mobility_forces(model, pos, vel, body_forces: BodySpatialVecs) -> Mobilities:
    """``J^T F - c`` (nu,): applied body forces plus velocity-induced inertial forces, in u space."""
    return jacobians.multiply_by_system_jacobian_transpose(model, pos, body_forces - vel.centrifugal)
