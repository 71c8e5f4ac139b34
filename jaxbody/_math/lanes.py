"""Batch-wide decisions under ``jax.vmap``.

``jax.lax.cond`` / ``lax.switch`` on a per-lane predicate become a select under vmap: every branch runs on every
lane. Where a branch is only an optimization (skipping work no lane needs, a cheaper route when no lane needs the
general one), the predicate can be reduced over the lanes first with :func:`any_lane`, so the batched program
keeps a real ``cond`` and each lane still gets its own result (the taken branch must be correct for every lane,
e.g. by selecting per lane inside it). Used by the contact broad phase (the full narrow phase only when some lane
overflows) and by OpenSim's multi-wrap passes (a pass only while some lane has not converged).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


@jax.custom_batching.custom_vmap
def any_lane(flag):
    """The bool scalar ``flag`` itself; under vmap, one unbatched bool: whether it is True in any lane. Cost: one
    reduction over the batch."""
    return flag


@any_lane.def_vmap
def _any_lane_rule(axis_size, in_batched, flag):
    del axis_size
    return (jnp.any(flag) if in_batched[0] else flag), False
