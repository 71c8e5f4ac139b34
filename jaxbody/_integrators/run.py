"""The carried data of a rollout: IntegratorRun (state, step size, statistics, event records), per lane."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.state import State


class IntegratorStats(eqx.Module):
    """Simbody's Integrator statistics (int32 arrays, per lane under vmap), since initialize.

    steps_attempted, steps_taken, error_test_failures; projection_failures (Simbody's convergence failures:
    the step is retried at half size); realizations (stage evaluations to Acceleration); projections
    (q and u projections that changed the state); step_limit_reached: an ``internal_step_limit`` stopped
    a ``step_to`` before its time (the lane is then terminated, never hangs); status: bit flags of bad inputs
    found while traced (eager calls raise instead): ``BAD_REPORT_TIME`` (a report time not finite, or before
    the run's last report time), ``BAD_EVENT_TIME`` (a scheduled item's next time was NaN). A flagged lane
    stops (terminated) where it was, and its reported states from then on are NaN, never stale.
    """

    BAD_REPORT_TIME = 1
    BAD_EVENT_TIME = 2

    steps_attempted: jnp.ndarray
    steps_taken: jnp.ndarray
    error_test_failures: jnp.ndarray
    projection_failures: jnp.ndarray
    realizations: jnp.ndarray
    projections: jnp.ndarray
    step_limit_reached: jnp.ndarray
    status: jnp.ndarray

    @staticmethod
    def zeros() -> IntegratorStats:
        z = jnp.zeros((), jnp.int32)
        return IntegratorStats(z, z, z, z, z, z, jnp.zeros((), bool), z)


class EventRecord(eqx.Module):
    """Per event item (handlers and reporters, in the order added): ``count`` (n,) int32 firings,
    ``first_time`` / ``last_time`` (n,) s (inf / -inf before any); ``reports``: per item, a reporter's values
    (leading axis max_reports, entries past count are zeros) or None; ``report_times`` (n, max_reports).

    Simbody's System event counters for this run (int32, per lane): ``handle_event_calls`` (the stepper's
    handleEvents calls: one at initialize, one per cause whose handlers fired on a step),
    ``report_event_calls`` (steps on which scheduled reporters fired), ``calls_that_changed_stage``
    (len(Stage) + 1,): per handleEvents call, +1 at the lowest Stage its handlers modified (the last slot,
    Simbody's Stage::Infinity: nothing changed); every reportEvents call counts at Stage.Report.
    """

    count: jnp.ndarray
    first_time: jnp.ndarray
    last_time: jnp.ndarray
    report_times: jnp.ndarray
    reports: tuple
    handle_event_calls: jnp.ndarray
    report_event_calls: jnp.ndarray
    calls_that_changed_stage: jnp.ndarray


class IntegratorRun(eqx.Module):
    """Where a rollout stands: ``state`` (t, q, u, z, ... at the last step end, caches dropped), ``ydot`` there,
    the next step size ``h``, the last step's start (t_prev, y_prev, ydot_prev) for interpolation,
    ``witness`` (n triggered,) values at ``state``, ``terminated`` (a handler asked, the step limit was
    reached, or ``stats.status`` flags a bad input), ``stats`` (IntegratorStats), ``events`` (EventRecord) and
    ``t_reported``, the last report time (``step_to`` never goes back before it)."""

    state: State
    ydot: jnp.ndarray
    h: jnp.ndarray
    t_prev: jnp.ndarray
    y_prev: jnp.ndarray
    ydot_prev: jnp.ndarray
    witness: jnp.ndarray
    terminated: jnp.ndarray
    stats: IntegratorStats
    events: EventRecord
    t_reported: jnp.ndarray

    def get_time(self):
        return self.state.t


__all__ = ["EventRecord", "IntegratorRun", "IntegratorStats"]
