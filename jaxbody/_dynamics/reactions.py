"""Mobilizer reaction forces (catalogue 4.6): the force each body's inboard mobilizer applies to it.

Reported as Simbody does: acting on the child body, as if applied at its
outboard frame origin Mo, expressed in Ground; it includes the mobility
forces acting across that mobilizer. Ground's entry is the total force its
imagined weld to the universe would have to supply, at the Ground origin.
Constraint forces count as applied forces (with their acting sign, the
negative of ``G^T lambda``), as in Simbody.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._dynamics import articulated
from jaxbody._math import spatial
from jaxbody._topology import tree_scan


def _at_mobilizer_frame(model, pos, F_Bo):
    """Shift forces at Bo to Mo: ``[t - p_BM_G x f ; f]`` with ``p_BM_G = R_GB p_BM``."""
    p_BM_G = spatial.matvec(pos.R_GB, model.parameters.p_BM)
    return jnp.stack([F_Bo[:, 0] - jnp.cross(p_BM_G, F_Bo[:, 1]), F_Bo[:, 1]], -2)


def _including_constraint_forces(dyn, acc):
    """The Dynamics cache with the constraints' acting forces added to the applied ones."""
    if acc.constraint_body_forces is None:
        return dyn
    return dataclasses.replace(
        dyn,
        body_forces=dyn.body_forces - acc.constraint_body_forces,
        mobility_forces=dyn.mobility_forces - acc.constraint_mobility_forces,
    )


def calc_mobilizer_reaction_forces(model, pos, vel, dyn, acc):
    """Articulated-body route: ``F_B = I_a A+ + bias_to_parent`` with ``A+`` the parent's acceleration shifted to
    Bo (jaxbody._dynamics.articulated's symbols).

    Needs the realized Acceleration stage. Returns (nbodies, 2, 3). Cost: one inward scan.
    """
    topo = model.topology
    dyn = _including_constraint_forces(dyn, acc)
    abi = dyn.articulated
    I_a = abi.I_A - spatial.matmul_t(abi.UDinv, spatial.matmul(abi.I_A, pos.H_PB_G))
    local_bias = articulated.articulated_bias(model, pos, abi.I_A, vel, dyn.body_forces, dyn.udot_prescribed)
    _, bias_to_parent = articulated.aba_forces_inward(model, pos, abi.UDinv, dyn.mobility_forces, local_bias)
    parent = jnp.asarray(topo.parent_or_ground)
    A_plus = spatial.shift_motion(acc.A_GB[parent], pos.p_PB_G)
    F_Bo = spatial.unflat(spatial.matvec(I_a, spatial.flat(A_plus)) + bias_to_parent)
    F = _at_mobilizer_frame(model, pos, F_Bo.at[0].set(0.0))
    return F.at[0].set(_ground_reaction(model, pos, F_Bo) - dyn.body_forces[0])


def _ground_reaction(model, pos, F_Bo):
    """Sum of the base bodies' reactions, moved to the Ground origin (forces acting on Ground itself, e.g.
    from constraints, are subtracted by the callers)."""
    topo = model.topology
    bases = [b for b in range(1, topo.nbodies) if topo.parent[b] == 0]
    if not bases:
        return jnp.zeros((2, 3), F_Bo.dtype)
    F = F_Bo[jnp.asarray(bases)]
    return jnp.sum(spatial.shift_force(F, pos.p_GB[jnp.asarray(bases)]), 0)


def calc_mobilizer_reaction_forces_using_free_body_method(model, pos, vel, dyn, acc):
    """Free-body route (slower, for testing): per body ``Mk A + b - F_applied + sum_children F_c``.

    Returns (nbodies, 2, 3), like calc_mobilizer_reaction_forces. Cost: one inward scan.
    """
    dyn = _including_constraint_forces(dyn, acc)
    local = spatial.unflat(spatial.matvec(pos.Mk_G, spatial.flat(acc.A_GB))) + vel.gyroscopic - dyn.body_forces
    F_Bo, ground = tree_scan.shift_inward(model.topology, pos.p_PB_G, local.at[0].set(0.0))
    return _at_mobilizer_frame(model, pos, F_Bo).at[0].set(ground - dyn.body_forces[0])
