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

from . import articulated, kinematics, mobilizer_batch, prescribed
from ._typing import Stage
from .state import AccelerationCache, DynamicsCache, State


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
    pos, vel, dyn = state.position, state.velocity, state.dynamics
    with jax.named_scope("realize_acceleration"):
        udot, A_GB, tau = articulated.calc_tree_accelerations(
            model, pos, vel, (dyn.P, dyn.D_inv, dyn.G, dyn.udot_known), dyn.mobility_forces, dyn.body_forces,
            dyn.udot_prescribed,
        )
        qdotdot = mobilizer_batch.calc_qdotdot(model.topology, model.parameters, state.q, state.u, udot)
    return AccelerationCache(udot=udot, qdotdot=qdotdot, A_GB=A_GB, tau=tau)


def realize(model, state: State, stage: Stage = Stage.Acceleration) -> State:
    """Return ``state`` realized through ``stage`` (Time and earlier need no work)."""
    stage = Stage(stage)
    if stage >= Stage.Position and state.position is None:
        state = dataclasses.replace(state, position=kinematics.realize_position(model, state.q))
    if stage >= Stage.Velocity and state.velocity is None:
        state = dataclasses.replace(
            state, velocity=kinematics.realize_velocity(model, state.position, state.q, state.u)
        )
    if stage >= Stage.Dynamics and state.dynamics is None:
        state = dataclasses.replace(state, dynamics=realize_dynamics(model, state))
    if stage >= Stage.Acceleration and state.acceleration is None:
        state = dataclasses.replace(state, acceleration=realize_acceleration(model, state))
    return state
