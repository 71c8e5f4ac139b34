"""Pure realization of a State through Simbody's stages: Position -> Velocity -> Dynamics -> Acceleration.

``realize(model, state, stage)`` returns a new State whose caches up to
``stage`` are filled; caches that are already valid are reused, never
recomputed. Forces at the Dynamics stage are the model's force elements plus
the applied forces stored on the State (``State.set_mobility_forces`` and
``State.set_body_forces``, Simbody's DiscreteForces). Known udots (locks and
Motions, jaxbody.prescribed) are evaluated at Dynamics and enter the
articulated-body inertias and the tree forward dynamics there (catalogue 3.3).
Realizing does not copy prescribed q or u into the State: that is
``model.prescribe`` (Simbody's prescribeQ/prescribeU).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from jaxbody._constraints import dynamics as constraint_dynamics
from jaxbody._dynamics import articulated, jacobians, kinematics, prescribed
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
    for element in model.forces:
        Fe, fe, pe_e = element.calc(model, state)
        F, f, pe = F + Fe, f + fe, pe + pe_e
    return F, f, pe


def realize_dynamics(model, state: State) -> DynamicsCache:
    with jax.named_scope("realize_dynamics"):
        F, f, pe = calc_force_element_sums(model, state)
        known = prescribed.calc_udot_known_bodies(model, state)
        P, D_inv, G = articulated.calc_articulated_body_inertias(model, state.position, known)
        udot_p = prescribed.calc_known_udot(model, state)
    return DynamicsCache(
        body_forces=F, mobility_forces=f, potential_energy=pe, P=P, D_inv=D_inv, G=G,
        udot_known=known, udot_prescribed=udot_p,
    )


def realize_acceleration(model, state: State) -> AccelerationCache:
    """Forward dynamics: the tree's ABA solution, then (with constraints) Lagrange multipliers (catalogue 4.5)."""
    pos, vel, dyn = state.position, state.velocity, state.dynamics
    abi = (dyn.P, dyn.D_inv, dyn.G, dyn.udot_known)
    with jax.named_scope("realize_acceleration"):
        udot, A_GB, tau = articulated.calc_tree_accelerations(
            model, pos, vel, abi, dyn.mobility_forces, dyn.body_forces, dyn.udot_prescribed
        )
        extra = {}
        if model.constraints.m:
            ops = constraint_dynamics.ConstraintOperators(
                model, state.t, state.q, state.u, pos, vel, abi, state.constraint_enabled
            )
            udot, lam, aerr, G = constraint_dynamics.solve_multipliers(ops, udot)
            A_GB = jacobians.multiply_by_system_jacobian(model, pos, udot) + vel.total_coriolis
            F_c, f_c = constraint_dynamics.constraint_forces_from_multipliers(
                model, state.t, state.q, state.u, pos, vel, lam
            )
            tau = constraint_dynamics.prescribed_motion_forces(model, pos, vel, dyn, udot, G.T @ lam)
            extra = dict(acceleration_errors=aerr, multipliers=lam, constraint_body_forces=F_c, constraint_mobility_forces=f_c)
        qdotdot = mobilizer_groups.calc_qdotdot(model.topology, model.parameters, state.q, state.u, udot)
    return AccelerationCache(udot=udot, qdotdot=qdotdot, A_GB=A_GB, tau=tau, **extra)


def realize(model, state: State, stage: Stage = Stage.Acceleration) -> State:
    """Return ``state`` realized through ``stage`` (Time and earlier need no work)."""
    stage = Stage(stage)
    cset = model.constraints
    if stage >= Stage.Position and state.position is None:
        pos = kinematics.realize_position(model, state.q)
        if cset.mp:
            mask = constraint_dynamics.row_mask(model, state.constraint_enabled)[: cset.mp]
            pos = dataclasses.replace(
                pos, position_errors=constraint_dynamics.position_errors(model, state.t, state.q, pos) * mask
            )
        state = dataclasses.replace(state, position=pos)
    if stage >= Stage.Velocity and state.velocity is None:
        vel = kinematics.realize_velocity(model, state.position, state.q, state.u)
        if cset.mp + cset.mv:
            mask = constraint_dynamics.row_mask(model, state.constraint_enabled)[: cset.mp + cset.mv]
            verr = constraint_dynamics.velocity_errors_from_cache(model, state.t, state.q, state.u, state.position, vel)
            vel = dataclasses.replace(vel, velocity_errors=verr * mask)
        state = dataclasses.replace(state, velocity=vel)
    if stage >= Stage.Dynamics and state.dynamics is None:
        state = dataclasses.replace(state, dynamics=realize_dynamics(model, state))
    if stage >= Stage.Acceleration and state.acceleration is None:
        state = dataclasses.replace(state, acceleration=realize_acceleration(model, state))
    return state
