"""Pure realization of a State through Simbody's stages: Position -> Velocity -> Dynamics -> Acceleration.

``realize(model, state, stage)`` returns a new State whose caches up to
``stage`` are filled; caches that are already valid are reused, never
recomputed. Forces at the Dynamics stage are the model's force elements plus
the applied forces stored on the State (``State.set_mobility_forces`` and
``State.set_body_forces``, Simbody's DiscreteForces). Known udots (locks and
Motions, jaxbody._dynamics.prescribed) are evaluated at Dynamics and enter the
articulated-body inertias and the tree forward dynamics there (catalogue 3.3).
Realizing does not copy prescribed q or u into the State: that is
``model.prescribe`` (Simbody's prescribeQ/prescribeU).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from jaxbody._constraints import equations
from jaxbody._constraints.multipliers import (
    ConstraintOperators,
    solve_constrained_accelerations,
)
from jaxbody._dynamics import articulated, kinematics, prescribed
from jaxbody._dynamics.forces import force_z_slices
from jaxbody._dynamics.state import AccelerationCache, DynamicsCache, State
from jaxbody._topology import mobilizer_groups
from jaxbody._typing import Stage


def calc_force_element_sums(model, state: State):
    """Sum of every force element plus the State's applied forces.

    Returns body_forces (nbodies, 2, 3), mobility_forces (nu,), potential_energy.
    Requires Velocity.
    """
    F = state.body_forces.at[0].set(0.0)
    f = state.mobility_forces
    pe = jnp.zeros((), state.q.dtype)
    for element, z_slice in zip(model.forces, force_z_slices(model.forces)):
        Fe, fe, pe_e = element.calc_with_z(model, state, state.z[z_slice])
        F, f, pe = F + Fe, f + fe, pe + pe_e
    return F, f, pe


def calc_z_dot(model, state: State):
    """dz/dt (nz,): every force element's state-variable derivatives in ``State.z`` order. Requires Velocity."""
    parts = [e.calc_z_dot(model, state, state.z[s]) for e, s in zip(model.forces, force_z_slices(model.forces))]
    return jnp.concatenate(parts) if parts else jnp.zeros((0,), state.q.dtype)


def realize_dynamics(model, state: State) -> DynamicsCache:
    """Forces, the known udots, and RBDA pass 2's inertia part (the articulated-body inertias)."""
    with jax.named_scope("realize_dynamics"):
        F, f, pe = calc_force_element_sums(model, state)
        methods = prescribed.calc_motion_methods(model, state)
        known = prescribed.calc_udot_known_bodies(model, state, methods)
        udot_p = prescribed.calc_known_udot(model, state, methods)
        abi = articulated.aba_inertias_inward(model, state.position, known)
        zdot = calc_z_dot(model, state)
    return DynamicsCache(body_forces=F, mobility_forces=f, potential_energy=pe, articulated=abi,
                         udot_prescribed=udot_p, zdot=zdot)


def realize_acceleration(model, state: State) -> AccelerationCache:
    """Forward dynamics: the tree's ABA solution, then (with constraints) the multipliers' correction of it.

    Cost without constraints: RBDA passes 2 (forces) and 3, O(n). With m constraint equations: one
    linearization of the constraint equations, m inward sweeps for G, m articulated solves for M^-1 G^T,
    an m x m pseudo-inverse (Simbody catalogue 4.5).
    """
    pos, vel, dyn = state.position, state.velocity, state.dynamics
    topo, prm = model.topology, model.parameters
    with jax.named_scope("realize_acceleration"):
        tree = articulated.calc_tree_accelerations(
            model, pos, vel, dyn.articulated, dyn.mobility_forces, dyn.body_forces, dyn.udot_prescribed
        )
        if not model.constraints.m:
            qdotdot = mobilizer_groups.calc_qdotdot(topo, prm, state.q, state.u, tree.udot)
            return AccelerationCache(udot=tree.udot, qdotdot=qdotdot, A_GB=tree.A_GB, tau=tree.tau)
        ops = ConstraintOperators(model, state.t, state.q, state.u, pos, vel, dyn.articulated, state.constraint_enabled)
        solved = solve_constrained_accelerations(ops, tree)
        # qdotdot = N udot + NDot u, with NDot u from the linearization at udot = 0.
        qdotdot = mobilizer_groups.multiply_by_n(topo, prm, state.q, solved.udot) + ops.linearization.motion.qdotdot
    return AccelerationCache(qdotdot=qdotdot, **solved._asdict())


def realize(model, state: State, stage: Stage = Stage.Acceleration) -> State:
    """Return ``state`` realized through ``stage`` (Time and earlier need no work)."""
    stage = Stage(stage)
    cset = model.constraints
    if stage >= Stage.Position and state.position is None:
        pos = kinematics.realize_position(model, state.q)
        if cset.mp:
            mask = equations.row_mask(model, state.constraint_enabled)[: cset.mp]
            pos = dataclasses.replace(
                pos, position_errors=equations.position_errors(model, state.t, state.q, pos) * mask
            )
        state = dataclasses.replace(state, position=pos)
    if stage >= Stage.Velocity and state.velocity is None:
        vel = kinematics.realize_velocity(model, state.position, state.q, state.u)
        if cset.mp + cset.mv:
            mask = equations.row_mask(model, state.constraint_enabled)[: cset.mp + cset.mv]
            verr = equations.velocity_errors_from_cache(model, state.t, state.q, state.u, state.position, vel)
            vel = dataclasses.replace(vel, velocity_errors=verr * mask)
        state = dataclasses.replace(state, velocity=vel)
    if stage >= Stage.Dynamics and state.dynamics is None:
        state = dataclasses.replace(state, dynamics=realize_dynamics(model, state))
    if stage >= Stage.Acceleration and state.acceleration is None:
        state = dataclasses.replace(state, acceleration=realize_acceleration(model, state))
    return state
