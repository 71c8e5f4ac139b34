"""Per-state motion classification and prescribed values (catalogue 3.1-3.2; Simbody's Instance-stage pools).

Which q, u and udot are known depends on the model's Motions (static) and
on the State's locks (arrays), so everything here is a mask computation:
one compiled function serves any mix of locked and free states under vmap.

Methods are Simbody's ``Motion::Method`` values per body and level, shape
(nbodies, 3) for (q, u, udot):

* Ground and bodies without mobilities (Weld): Zero, Zero, Zero.
* Position lock: Prescribed, Zero, Zero.  Velocity lock: Free, Zero (all
  locked u zero) or Prescribed, Zero.  Acceleration lock: Free, Free, Zero or
  Prescribed.  A lock overrides the body's Motion.
* Motion at Position level: Prescribed x3; Velocity: Free, Prescribed,
  Prescribed; Acceleration: Free, Free, Prescribed.  No Motion, or one
  disabled in the State (``State.motion_enabled``): Free x3.

Prescribed values are returned unpacked (q or u slots, zero where not
prescribed): q at Time stage (needs t), u at Position stage (needs q), udot
at Velocity stage (needs q and u). Cost: O(n) elementwise work plus one
traced evaluation per attached Motion.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.motion import Motion
from jaxbody._topology import mobilizer_groups
from jaxbody._topology.topology import Topology

_Z, _P, _F = Motion.Zero, Motion.Prescribed, Motion.Free
_LEVEL_METHODS = {
    Motion.Position: (_P, _P, _P),
    Motion.Velocity: (_F, _P, _P),
    Motion.Acceleration: (_F, _F, _P),
}


class SlotMasks(NamedTuple):
    """Per-slot motion classification of one State, each a bool array: q masks (nq,), u and udot masks (nu,).

    Simbody's lists: free = method Free; known q/u = Prescribed or Zero; known udot = not Free. Unused q slots
    (Euler mode's fourth slot) are neither free nor known.
    """

    free_q: jnp.ndarray
    known_q: jnp.ndarray
    free_u: jnp.ndarray
    known_u: jnp.ndarray
    free_udot: jnp.ndarray
    known_udot: jnp.ndarray


@functools.lru_cache(maxsize=None)
def _static_methods(topo: Topology, motion_levels: tuple) -> np.ndarray:
    """(nbodies, 3) methods from the Motions alone (no locks)."""
    methods = np.full((topo.nbodies, 3), _F, np.int32)
    for body, level in motion_levels:
        methods[body] = _LEVEL_METHODS[level]
    methods[topo.body_nu == 0] = _Z
    return methods


def _motion_levels(model) -> tuple:
    return tuple((bm.body, bm.motion.level) for bm in model.motions)


def calc_motion_methods(model, state):
    """(nbodies, 3) int32: each body's (q, u, udot) Motion::Method in ``state``. Jit-safe."""
    topo = model.topology
    static = jnp.where(state.motion_enabled[:, None], jnp.asarray(_static_methods(topo, _motion_levels(model))), _F)
    level = state.lock_level
    nonzero = jnp.any(mobilizer_groups.per_body_u(topo, state.lock_u) != 0, -1)
    zero_or_prescribed = jnp.where(nonzero, _P, _Z)
    locked = jnp.stack(
        [
            jnp.where(level == Motion.Position, _P, _F),
            jnp.where(level == Motion.Position, _Z, jnp.where(level == Motion.Velocity, zero_or_prescribed, _F)),
            jnp.where(level == Motion.Acceleration, zero_or_prescribed, _Z),
        ],
        -1,
    ).astype(jnp.int32)
    methods = jnp.where((level != Motion.NoLevel)[:, None], locked, static)
    return jnp.where(jnp.asarray(topo.body_nu == 0)[:, None], _Z, methods)


def calc_slot_masks(model, state, methods=None):
    """Jit-safe SlotMasks of ``state`` (``methods``: calc_motion_methods(model, state) when already known)."""
    topo = model.topology
    q_body, q_in_use, u_body = topo.q_body, topo.q_in_use, topo.u_body
    m = calc_motion_methods(model, state) if methods is None else methods
    mq, mu, mudot = m[q_body, 0], m[u_body, 1], m[u_body, 2]
    in_use = jnp.asarray(q_in_use)
    known_q = in_use & ((mq == _P) | (mq == _Z))
    known_u = (mu == _P) | (mu == _Z)
    return SlotMasks(in_use & (mq == _F), known_q, mu == _F, known_u, mudot == _F, mudot != _F)


def calc_udot_known_bodies(model, state, methods=None):
    """(nbodies,) bool: bodies with mobilities whose udots are known (the ABA's prescribed bodies).

    ``methods``: calc_motion_methods(model, state) when the caller has it already.
    """
    has_u = jnp.asarray(model.topology.body_nu > 0)
    methods = calc_motion_methods(model, state) if methods is None else methods
    return has_u & (methods[:, 2] != _F)


# -- the Motions' values ------------------------------------------------------------------


def _motions_at(model, level):
    return [bm for bm in model.motions if bm.motion.level == level]


def _q_slots(topo, body):
    return np.arange(topo.q_start[body], topo.q_start[body] + topo.mobilizers[body].nq_in_use)


def _u_slots(topo, body):
    return np.arange(topo.u_start[body], topo.u_start[body] + topo.mobilizers[body].nu)


def _motion_values(model, level, t, q, u):
    """Values of the Motions at ``level``, scattered into a zero vector: q(t) (nq,) at Position level,
    u(t, q) (nu,) at Velocity level, udot(t, q, u) (nu,) at Acceleration level."""
    topo = model.topology
    position = level == Motion.Position
    out = jnp.zeros(topo.nq if position else topo.nu, jnp.result_type(t) if q is None else q.dtype)
    slots_of = _q_slots if position else _u_slots
    for bm in _motions_at(model, level):
        slots = slots_of(topo, bm.body)
        out = out.at[slots].set(bm.motion.calc_value(slots.size, t, q, u))
    return out


def _motion_q(model, t):
    return _motion_values(model, Motion.Position, t, None, None)


def _motion_u(model, t, q):
    return _motion_values(model, Motion.Velocity, t, q, None)


def _motion_udot(model, t, q, u):
    return _motion_values(model, Motion.Acceleration, t, q, u)


def _d_dt(f, t):
    """(f(t), df/dt) by forward mode."""
    return jax.jvp(f, (t,), (jnp.ones_like(t),))


def _per_slot_lock_level(model, state, which):
    q_body, u_body = model.topology.q_body, model.topology.u_body
    return state.lock_level[q_body if which == "q" else u_body]


def calc_prescribed_q(model, state):
    """(nq,) prescribed q at state.t: position-lock values, else position-level Motions' q(t); 0 elsewhere."""
    level = _per_slot_lock_level(model, state, "q")
    return jnp.where(level == Motion.Position, state.lock_q, _motion_q(model, state.t))


def calc_prescribed_u(model, state):
    """(nu,) prescribed u at (t, q): ``NInv(q) q̇_p`` for position-level Motions, u(t, q) for velocity-level
    ones, the locked u of velocity locks, 0 for position locks; 0 elsewhere."""
    topo, prm = model.topology, model.parameters
    t, q = state.t, state.q
    u = _motion_u(model, t, q)
    if _motions_at(model, Motion.Position):
        _, qdot_p = _d_dt(lambda s: _motion_q(model, s), t)
        u = u + mobilizer_groups.multiply_by_n_inv(topo, prm, q, qdot_p)
    level = _per_slot_lock_level(model, state, "u")
    return jnp.where(level == Motion.NoLevel, u, jnp.where(level == Motion.Velocity, state.lock_u, 0.0))


def calc_prescribed_udot(model, state):
    """(nu,) prescribed udot at (t, q, u).

    Position-level Motions: ``NInv(q) (q̈_p - NDot(q, u) u)``; velocity-level:
    ``du_p/dt = ∂u_p/∂t + ∂u_p/∂q N(q) u``; acceleration-level: the Motion's
    value; acceleration locks: the locked value; position and velocity locks: 0.
    """
    topo, prm = model.topology, model.parameters
    t, q, u = state.t, state.q, state.u
    udot = _motion_udot(model, t, q, u)
    if _motions_at(model, Motion.Velocity):
        qdot = mobilizer_groups.multiply_by_n(topo, prm, q, u)
        _, du = jax.jvp(lambda s, x: _motion_u(model, s, x), (t, q), (jnp.ones_like(t), qdot))
        udot = udot + du
    position_motions = _motions_at(model, Motion.Position)
    if position_motions:
        _, qddot_p = _d_dt(lambda s: _d_dt(lambda r: _motion_q(model, r), s)[1], t)
        rhs = qddot_p - mobilizer_groups.multiply_by_n_dot(topo, prm, q, u, u)
        on_motion = np.zeros(topo.nu, bool)
        for bm in position_motions:
            on_motion[_u_slots(topo, bm.body)] = True
        udot = udot + jnp.where(on_motion, mobilizer_groups.multiply_by_n_inv(topo, prm, q, rhs), 0.0)
    level = _per_slot_lock_level(model, state, "u")
    return jnp.where(level == Motion.NoLevel, udot, jnp.where(level == Motion.Acceleration, state.lock_u, 0.0))


def calc_known_udot(model, state, methods=None):
    """(nu,) the known udots (prescribed, locked or zero), zero on free mobilities. Needs q and u."""
    known = calc_slot_masks(model, state, methods).known_udot
    return jnp.where(known, calc_prescribed_udot(model, state), 0.0)


def prescribe_q(model, state):
    """State with every known q set to its prescribed value (Simbody's prescribeQ). Drops Position and later."""
    known_q = calc_slot_masks(model, state).known_q
    return state.set_q(jnp.where(known_q, calc_prescribed_q(model, state), state.q))


def prescribe_u(model, state):
    """State with every known u set (Simbody's prescribeU; uses the state's q). Drops Velocity and later."""
    known_u = calc_slot_masks(model, state).known_u
    return state.set_u(jnp.where(known_u, calc_prescribed_u(model, state), state.u))


def prescribe(model, state):
    """``prescribe_u(prescribe_q(state))``: Simbody's System::prescribe, what every integrator stage does
    before it realizes."""
    return prescribe_u(model, prescribe_q(model, state))


__all__ = [
    "prescribe", "SlotMasks", "calc_motion_methods", "calc_slot_masks", "calc_udot_known_bodies", "calc_prescribed_q",
    "calc_prescribed_u", "calc_prescribed_udot", "calc_known_udot", "prescribe_q", "prescribe_u",
]
