"""Event detection, localization and firing inside a step (catalogue 6.4), lane-wise.

Localization brackets the earliest sign change of the triggered witnesses on the step's Hermite
interpolant: Simbody's secant with an Illinois bias, kept 10% away from the bracket ends, bisection when an
end value is zero or the bracket is at the minimum window, until ``tHigh - tLow <= window``. The event time
is tHigh; its derivative is the implicit-function one, ``dt/dp = -(dw/dp) / (dw/dt)`` on the interpolant
(the iterations themselves are not differentiated).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics import prescribed
from jaxbody._dynamics.state_stages import NO_STAGE_DIFFERENCE, lowest_stage_difference
from jaxbody._integrators import events as ev
from jaxbody._integrators.control import hermite
from jaxbody._integrators.methods import with_y
from jaxbody._integrators.run import EventRecord
from jaxbody._realize import realize
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument

MAX_LOCALIZE_ITERATIONS = 100


def triggered_items(items):
    return [it for it in items if ev.is_triggered(it)]


def scheduled_items(items):
    return [it for it in items if ev.is_scheduled(it)]


def witnesses(items, model, realized):
    """(n triggered,) witness values at a state realized at least to their ``witness_stage``."""
    trig = triggered_items(items)
    if not trig:
        return jnp.zeros((0,), realized.q.dtype)
    return jnp.stack([_scalar(it.witness(model, realized), realized.q.dtype, it, "witness") for it in trig])


def armed_scheduled_times(items, model, state, last_time):
    """(n scheduled,) each scheduled item's next time, or inf where it is not later than the item's last firing
    (``last_time``: (n items,), -inf before any): Simbody's rule, a time that is not in the future fires once and
    is not re-armed until the function returns a later time. NaN stays NaN (the stepper reports it)."""
    times = next_scheduled_times(items, model, state)
    sched_pos = [i for i, it in enumerate(items) if ev.is_scheduled(it)]
    if not sched_pos:
        return times
    last = last_time[np.array(sched_pos)]
    return jnp.where(jnp.isnan(times) | (times > last), times, jnp.inf)


def next_scheduled_times(items, model, state):
    """(n scheduled,) each scheduled item's next time after state.t."""
    sched = scheduled_items(items)
    if not sched:
        return jnp.zeros((0,), state.q.dtype)
    return jnp.stack([_scalar(it.next_event_time(model, state), state.q.dtype, it, "next_event_time")
                      for it in sched])


def _scalar(value, dtype, item, what):
    """A user function's value as a scalar of ``dtype``; anything else is named (its shape is static)."""
    value = jnp.asarray(value, dtype)
    if value.shape != ():
        raise InvalidArgument(f"event {item.label}: {what} must return a scalar, got shape {value.shape}")
    return value


def _trigger_info(items, dtype):
    info = [it.calc_event_trigger_info() for it in triggered_items(items)]
    rising = jnp.asarray(np.array([i[0] for i in info], bool))
    falling = jnp.asarray(np.array([i[1] for i in info], bool))
    window = jnp.asarray(np.array([i[2] for i in info], float), dtype)
    return rising, falling, window


def detect(items, w0, w1):
    rising, falling, _ = _trigger_info(items, w0.dtype)
    return ev.transitions(w0, w1, rising, falling)


def witness_stage(items) -> Stage:
    """The latest ``required_stage`` of the triggered items: how far a state is realized for their witnesses."""
    return max((it.required_stage for it in triggered_items(items)), default=Stage.Time)


def witness_on_interpolant(items, model, base, step, t):
    """Witnesses at time t on the step's Hermite interpolant (prescribed, realized to ``witness_stage``)."""
    t0, y0, f0, t1, y1, f1 = step
    s = prescribed.prescribe(model, with_y(base, t, hermite(t0, y0, f0, t1, y1, f1, t)))
    return witnesses(items, model, realize(model, s, witness_stage(items)))


def localize(items, model, base, step, w0, w1, candidates, accuracy, time_scale):
    """(t_low, t_high, fired (n triggered,), iterations): the bracket of the earliest triggered transition."""
    # The iterations are not differentiated (while_loop): nothing inside carries a tangent.
    model, base, step, w0, w1 = _no_gradient((model, base, step, w0, w1))
    t0, t1 = step[0], step[3]
    rising, falling, rel_window = _trigger_info(items, w0.dtype)
    min_window = jnp.finfo(w0.dtype).eps ** (7 / 8) * jnp.maximum(1.0, jnp.abs(t1))
    window = jnp.maximum(jnp.min(jnp.where(candidates, accuracy * time_scale * rel_window, jnp.inf)), min_window)

    def cond(c):
        t_lo, t_hi, _, _, _, _, it = c
        return (t_hi - t_lo > window) & (it < MAX_LOCALIZE_ITERATIONS)

    def body(c):
        t_lo, t_hi, w_lo, w_hi, bias, last_side, it = c
        dt = t_hi - t_lo
        denom = w_hi - bias * w_lo
        x = w_hi / jnp.where(denom == 0, 1.0, denom)
        t_est = jnp.min(jnp.where(candidates, t_hi - x * dt, jnp.inf))
        margin = jnp.maximum(0.1 * dt, min_window / 2)
        t_mid = jnp.clip(t_est, t_lo + margin, t_hi - margin)
        bisect = jnp.any(candidates & ((w_lo == 0) | (w_hi == 0))) | (dt <= min_window) | ~jnp.isfinite(t_est)
        t_mid = jnp.where(bisect, t_lo + dt / 2, t_mid)
        w_mid = witness_on_interpolant(items, model, base, step, t_mid)
        hit = jnp.any(candidates & ev.transitions(w_lo, w_mid, rising, falling))  # event in (t_lo, t_mid]
        side = jnp.where(hit, 2, 1).astype(jnp.int32)
        bias = jnp.where(side == last_side, jnp.where(hit, bias * 0.5, bias * 2.0), 1.0)
        t_lo, w_lo = jnp.where(hit, t_lo, t_mid), jnp.where(hit, w_lo, w_mid)
        t_hi, w_hi = jnp.where(hit, t_mid, t_hi), jnp.where(hit, w_mid, w_hi)
        return t_lo, t_hi, w_lo, w_hi, bias, side, it + 1

    one = jnp.ones((), w0.dtype)
    init = (t0, t1, w0, w1, one, jnp.zeros((), jnp.int32), jnp.zeros((), jnp.int32))
    t_lo, t_hi, w_lo, w_hi, _, _, it = jax.lax.while_loop(cond, body, init)
    fired = candidates & ev.transitions(w_lo, w_hi, rising, falling)
    fired = jnp.where(jnp.any(fired), fired, candidates)
    return t_lo, t_hi, fired, it


def _no_gradient(tree):
    return jax.tree_util.tree_map(lambda x: jax.lax.stop_gradient(x) if eqx.is_inexact_array(x) else x, tree)


def event_time_with_derivative(items, model, base, step, t_event, fired):
    """t_event (value unchanged) carrying ``-(dw/dp)/(dw/dt)`` of the first fired witness."""
    t_event = jax.lax.stop_gradient(t_event)
    index = jnp.argmax(fired)
    w, dwdt = jax.jvp(lambda t: witness_on_interpolant(items, model, base, step, t)[index], (t_event,),
                      (jnp.ones_like(t_event),))
    dwdt = jax.lax.stop_gradient(dwdt)
    safe = jnp.where(dwdt == 0, 1.0, dwdt)
    return t_event - jnp.where(dwdt == 0, 0.0, (w - jax.lax.stop_gradient(w)) / safe)


def init_record(items, model, realized, max_reports: int) -> EventRecord:
    n = len(items)
    dtype = realized.q.dtype
    reports = []
    for it in items:
        if ev.is_handler(it):
            reports.append(None)
            continue
        shape = jax.eval_shape(lambda s, it=it: it.report(model, s), realized)
        reports.append(jax.tree_util.tree_map(lambda x: jnp.zeros((max_reports,) + x.shape, x.dtype), shape))
    zero = jnp.zeros((), jnp.int32)
    return EventRecord(count=jnp.zeros((n,), jnp.int32), first_time=jnp.full((n,), jnp.inf, dtype),
                       last_time=jnp.full((n,), -jnp.inf, dtype), report_times=jnp.zeros((n, max_reports), dtype),
                       reports=tuple(reports), handle_event_calls=zero, report_event_calls=zero,
                       calls_that_changed_stage=jnp.zeros((NUM_STAGE_SLOTS,), jnp.int32))


#: Slots of ``EventRecord.calls_that_changed_stage``: one per Stage, then Simbody's Stage::Infinity (no change).
NUM_STAGE_SLOTS = len(Stage) + 1
NO_CHANGE = NO_STAGE_DIFFERENCE

GENERIC_CAUSES = ("Initialization", "TimeAdvanced")


def fire(items, model, realized, fired, t_event, record: EventRecord, causes=("Triggered", "Scheduled"),
         generic_call=False):
    """Apply every fired handler and record every fired item, cause by cause in the order of ``causes``
    (Triggered, Scheduled, then a generic cause), within a cause in the order added, each handler seeing the
    state the previous ones left, realized to Acceleration. Counts Simbody's event counters: one handleEvents
    call per triggered/scheduled cause with a fired item, and one for a generic cause when ``generic_call``
    (bool; Simbody calls it even without handlers), each at the lowest stage that call modified; one
    reportEvents call when scheduled reporters fired.

    Returns (state (caches dropped), terminate, record, any handler fired).
    """
    state = realized
    terminate = jnp.zeros((), bool)
    changed = jnp.zeros((), bool)
    count, first, last = record.count, record.first_time, record.last_time
    times, reports = record.report_times, list(record.reports)
    n_handle, n_report, by_stage = record.handle_event_calls, record.report_event_calls, record.calls_that_changed_stage
    for cause in causes:
        group = [i for i, it in enumerate(items) if ev.cause_of(it) == cause]
        group_start = state
        handler_fired = jnp.zeros((), bool)
        report_fired = jnp.zeros((), bool)
        for i in group:
            it, f = items[i], fired[i]
            current = realize(model, state, Stage.Acceleration)
            if ev.is_handler(it):
                new, term = ev.apply_handler(it, model, current)
                new = new.drop_caches()
                state = jax.tree_util.tree_map(lambda a, b, f=f: jnp.where(f, a, b), new, state.drop_caches())
                terminate = terminate | (f & term)
                changed = changed | f
                handler_fired = handler_fired | f
            else:
                slot = jnp.minimum(count[i], times.shape[1] - 1)
                value = it.report(model, current)
                keep = f & (count[i] < times.shape[1])
                reports[i] = jax.tree_util.tree_map(
                    lambda buf, v, keep=keep, slot=slot: buf.at[slot].set(jnp.where(keep, v, buf[slot])), reports[i],
                    value)
                times = times.at[i, slot].set(jnp.where(keep, t_event, times[i, slot]))
                report_fired = report_fired | f
            count = count.at[i].add(f.astype(jnp.int32))
            first = first.at[i].set(jnp.where(f & ~jnp.isfinite(first[i]), t_event, first[i]))
            last = last.at[i].set(jnp.where(f, t_event, last[i]))
        # Simbody: triggered reporters run inside the Triggered handleEvents call, scheduled ones in reportEvents.
        if cause in GENERIC_CAUSES:
            called = jnp.asarray(generic_call, bool)
        else:
            called = handler_fired | (report_fired & (cause == "Triggered"))
        n_handle = n_handle + called
        by_stage = by_stage.at[lowest_stage_difference(group_start, state)].add(called.astype(jnp.int32))
        if cause == "Scheduled":
            n_report = n_report + report_fired
            by_stage = by_stage.at[int(Stage.Report)].add(report_fired.astype(jnp.int32))
    record = EventRecord(count=count, first_time=first, last_time=last, report_times=times, reports=tuple(reports),
                         handle_event_calls=n_handle, report_event_calls=n_report, calls_that_changed_stage=by_stage)
    return state.drop_caches(), terminate, record, changed


__all__ = [
    "GENERIC_CAUSES", "NO_CHANGE", "NUM_STAGE_SLOTS",
    "armed_scheduled_times", "detect", "event_time_with_derivative", "fire", "init_record", "localize", "next_scheduled_times",
    "scheduled_items", "triggered_items", "witness_stage", "witnesses",
]
