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
from jaxbody._dynamics import articulated, kinematics, prescribed, tendon_armature
from jaxbody._dynamics.force_elements.custom import DiscreteForces
from jaxbody._dynamics.force_groups import calc_force_contributions, calc_forces_and_z_dot
from jaxbody._dynamics.state import AccelerationCache, DynamicsCache, State
from jaxbody._kernels import backend
from jaxbody._kernels import tree as kernel_tree
from jaxbody._kernels.layout import generic_inputs_from_caches
from jaxbody._topology import mobilizer_groups
from jaxbody._typing import Stage


def calc_force_element_sums(model, state: State):
    """Sum of every enabled force element plus the State's applied forces, with gravity also kept apart.

    The applied forces (``State.set_mobility_forces``, ``set_body_forces``) count unconditionally unless the
    model has a DiscreteForces element, which then owns them (and can be disabled). Returns body_forces
    (nbodies, 2, 3), mobility_forces (nu,), potential_energy, the gravity elements' weights (nbodies, 3) at the
    mass centers, the body forces without them and every element's dz/dt (nz,) (each element's forces and
    dz/dt from one evaluation). Requires Velocity.
    """
    gravity = [i for i, e in enumerate(model.forces) if hasattr(e, "calc_weights")]
    others = [i for i in range(len(model.forces)) if i not in gravity]
    F, f, pe, zdot = calc_forces_and_z_dot(model, state, others)  # the gravity elements have no z
    if not any(isinstance(e, DiscreteForces) for e in model.forces):
        F, f = F + state.body_forces.at[0].set(0.0), f + state.mobility_forces
    F_gravity, _, pe_gravity = calc_force_contributions(model, state, gravity)
    weights = jnp.zeros((model.topology.nbodies, 3), state.q.dtype)
    for i in gravity:
        weights = weights + jnp.where(state.force_enabled[i], model.forces[i].calc_weights(model), 0.0)
    return F + F_gravity, f, pe + pe_gravity, weights, F, zdot


def realize_dynamics(model, state: State) -> DynamicsCache:
    """Forces, the known udots, and RBDA pass 2's inertia part (the articulated-body inertias)."""
    with jax.named_scope("realize_dynamics"):
        F, f, pe, weights, F_without_gravity, zdot = calc_force_element_sums(model, state)
        methods = prescribed.calc_motion_methods(model, state)
        known = prescribed.calc_udot_known_bodies(model, state, methods)
        udot_p = prescribed.calc_known_udot(model, state, methods)
        abi = articulated.aba_inertias_inward(model, state.position, known)
    return DynamicsCache(body_forces=F, mobility_forces=f, potential_energy=pe, articulated=abi,
                         udot_prescribed=udot_p, zdot=zdot, gravity_weights=weights,
                         body_forces_without_gravity=F_without_gravity)


def calc_tree_accelerations(model, state: State) -> articulated.TreeAccelerations:
    """Forward dynamics ignoring constraints (udot, A_GB, motion_forces) at a state realized through Dynamics.

    On the compiled kernels when they apply (jaxbody._kernels.backend.runs_compiled; the GENERIC mobilizers'
    X_FM, H_FM and HDot_FM u come from the Position and Velocity caches, not evaluated again), else by the JAX
    path's articulated passes; the two agree to round-off. Tendon armature (jaxbody._dynamics.tendon_armature) is added
    by ``with_tendon_armature``. Cost: O(n), plus nt tree solves with nt armature tendons.
    """
    dyn = state.dynamics
    topo = model.topology
    if backend.runs_compiled(topo, state.q.dtype):
        known = dyn.articulated.udot_known.astype(state.q.dtype)
        tree = articulated.TreeAccelerations(*kernel_tree.tree_accelerations(
            topo, model.parameters, state.q, state.u, dyn.mobility_forces, dyn.body_forces_without_gravity,
            dyn.gravity_weights, known, dyn.udot_prescribed,
            generic_inputs_from_caches(topo, state.position, state.velocity)))
    else:
        tree = articulated.calc_tree_accelerations(
            model, state.position, state.velocity, dyn.articulated, dyn.mobility_forces, dyn.body_forces,
            dyn.udot_prescribed)
    return with_tendon_armature(model, state, dyn.articulated, tree)


def with_tendon_armature(model, state: State, abi: articulated.ArticulatedInertias,
                         tree: articulated.TreeAccelerations) -> articulated.TreeAccelerations:
    """The one place forward dynamics adds tendon armature: ``tree`` (a tree solve at ``state``'s q and u, known
    udots as ``abi`` has them) corrected by jaxbody._dynamics.tendon_armature with the same M^-1 operator (the
    compiled kernels' or the JAX articulated solve, ``solve_rows``); ``tree`` unchanged without armature tendons."""
    if not model.tendon_armatures:
        return tree
    return tendon_armature.correct_tree_accelerations(model, state.position, state.velocity, state.q, state.u,
                                                      tree, solve_rows(model, state, abi))


def solve_rows(model, state: State, abi: articulated.ArticulatedInertias):
    """``G (k, nu) -> TreeAccelerations`` with a leading axis k: the tree solve at u = 0 of each row of G as mobility
    force (M^-1 g, its body accelerations and prescribed forces: the articulated solve's linear map) at ``state``'s
    q, known udots from ``abi``. On the compiled kernels (one call over the k rows, the GENERIC mobilizers' X_FM
    and H_FM from the Position cache) when they apply, else k JAX articulated solves."""
    topo, dtype = model.topology, state.q.dtype
    if backend.runs_compiled(topo, dtype):
        known = abi.udot_known.astype(dtype)
        zero_u = jnp.zeros((topo.nu,), dtype)
        no_F, no_W = jnp.zeros((topo.nbodies, 2, 3), dtype), jnp.zeros((topo.nbodies, 3), dtype)
        generic = generic_inputs_from_caches(topo, state.position)  # at u = 0: HDot_FM u = 0

        def solve(G):
            row = lambda g: kernel_tree.tree_accelerations(  # noqa: E731
                topo, model.parameters, state.q, zero_u, g, no_F, no_W, known, zero_u, generic)
            return articulated.TreeAccelerations(*jax.vmap(row)(G))

        return solve
    return jax.vmap(lambda g: articulated.multiply_by_m_inv_with_accelerations(model, state.position, abi, g))


def constraint_operators(model, state: State, abi: articulated.ArticulatedInertias) -> ConstraintOperators:
    """The constraint operators at a State realized to Velocity. On the compiled kernels, ``M^-1 G^T`` and its
    rows' body accelerations and prescribed forces are one kernel call over the m rows (``solve_rows``), else the
    JAX path's m articulated solves with ``abi``; with tendon armature either is corrected to
    ``(M + J^T A J)^-1 G^T`` (jaxbody._dynamics.tendon_armature.corrected_solve_rows)."""
    rows = None
    if backend.runs_compiled(model.topology, state.q.dtype) or model.tendon_armatures:
        rows = solve_rows(model, state, abi)
    if model.tendon_armatures:
        rows = tendon_armature.corrected_solve_rows(model, state.position, state.q, rows)
    return ConstraintOperators(model, state.t, state.q, state.u, state.position, state.velocity, abi,
                               state.constraint_enabled, rows)


def realize_acceleration(model, state: State) -> AccelerationCache:
    """Forward dynamics: the tree's ABA solution, then (with constraints) the multipliers' correction of it.

    Cost without constraints: RBDA passes 2 (forces) and 3, O(n). With m constraint equations: one
    linearization of the constraint equations, m inward sweeps for G, m articulated solves for M^-1 G^T,
    an m x m pseudo-inverse (Simbody catalogue 4.5).
    """
    pos, vel, dyn = state.position, state.velocity, state.dynamics
    topo, prm = model.topology, model.parameters
    with jax.named_scope("realize_acceleration"):
        tree = calc_tree_accelerations(model, state)
        if not model.constraints.m:
            qdotdot = mobilizer_groups.calc_qdotdot(topo, prm, state.q, state.u, tree.udot)
            return AccelerationCache(udot=tree.udot, qdotdot=qdotdot, A_GB=tree.A_GB, motion_forces=tree.motion_forces)
        ops = constraint_operators(model, state, dyn.articulated)
        solved = solve_constrained_accelerations(ops, tree)
        # qdotdot = N udot + NDot u, with NDot u from the linearization at udot = 0.
        qdotdot = mobilizer_groups.multiply_by_n(topo, prm, state.q, solved.udot) + ops.linearization.motion.qdotdot
    return AccelerationCache(qdotdot=qdotdot, **solved._asdict())


def realize(model, state: State, stage: Stage = Stage.Acceleration) -> State:
    """Return ``state`` realized through ``stage`` (Time and earlier need no work)."""
    stage = Stage(stage)
    cset = model.constraints
    if stage >= Stage.Position and state.get_system_stage() < Stage.Position:
        pos = kinematics.realize_position(model, state.q)
        if cset.mp:
            mask = equations.row_mask(model, state.constraint_enabled)[: cset.mp]
            pos = dataclasses.replace(
                pos, position_errors=equations.position_errors(model, state.t, state.q, pos) * mask
            )
        state = dataclasses.replace(state, position=pos)
    if stage >= Stage.Velocity and state.get_system_stage() < Stage.Velocity:
        vel = kinematics.realize_velocity(model, state.position, state.q, state.u)
        if cset.mp + cset.mv:
            mask = equations.row_mask(model, state.constraint_enabled)[: cset.mp + cset.mv]
            verr = equations.velocity_errors_from_cache(model, state.t, state.q, state.u, state.position, vel)
            vel = dataclasses.replace(vel, velocity_errors=verr * mask)
        state = dataclasses.replace(state, velocity=vel)
    if stage >= Stage.Dynamics and state.get_system_stage() < Stage.Dynamics:
        state = dataclasses.replace(state, dynamics=realize_dynamics(model, state))
    if stage >= Stage.Acceleration and state.get_system_stage() < Stage.Acceleration:
        state = dataclasses.replace(state, acceleration=realize_acceleration(model, state))
    return state
