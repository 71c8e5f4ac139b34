"""The System's event interface (Simbody catalogue 6.4): handlers and reporters, and the calls a TimeStepper
makes on them, usable by hand too. Items are JAX functions (jaxbody._integrators.events); the System only
keeps them, in the order added, and counts host-side calls (Simbody's event counters).
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._constraints.projection import ProjectOptions, project
from jaxbody._integrators import event_step
from jaxbody._integrators import events as ev
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument

CAUSES = ("Initialization", "TimeAdvanced", "Signaled", "Triggered", "Scheduled", "Termination")


class SystemEvents:
    """Mixed into MultibodySystem."""

    def __init__(self):
        self._event_items: list = []
        self._num_handle_event_calls = 0
        self._num_report_event_calls = 0

    def add_event_handler(self, handler) -> int:
        """Add a TriggeredEventHandler, ScheduledEventHandler or PeriodicEventHandler; returns its EventId."""
        if not ev.is_handler(handler):
            raise InvalidArgument(f"add_event_handler needs an event handler, got {type(handler).__name__}")
        self._event_items.append(handler)
        return len(self._event_items) - 1

    def add_event_reporter(self, reporter) -> int:
        """Add a TriggeredEventReporter, ScheduledEventReporter or PeriodicEventReporter; returns its EventId."""
        if not isinstance(reporter, (ev.TriggeredEventReporter, ev.ScheduledEventReporter)):
            raise InvalidArgument(f"add_event_reporter needs an event reporter, got {type(reporter).__name__}")
        self._event_items.append(reporter)
        return len(self._event_items) - 1

    def get_event_handlers(self) -> tuple:
        """Every handler and reporter, in EventId order (what a TimeStepper of this system uses)."""
        return tuple(self._event_items)

    def calc_event_trigger_info(self):
        """[(EventId, rising, falling, localization window)] of the triggered items."""
        return [(i, *it.calc_event_trigger_info()) for i, it in enumerate(self._event_items) if ev.is_triggered(it)]

    def calc_event_trigger_values(self, state):
        """(n triggered,) witness values (the state is realized to Acceleration here)."""
        model = self.realize_topology()
        return event_step.witnesses(self._event_items, model, model.realize(state, Stage.Acceleration))

    def _next_scheduled(self, state, handlers: bool):
        model = self.realize_topology()
        ids = [i for i, it in enumerate(self._event_items) if not ev.is_triggered(it) and ev.is_handler(it) == handlers]
        if not ids:
            return jnp.asarray(jnp.inf, state.t.dtype), []
        times = jnp.stack([jnp.asarray(self._event_items[i].next_event_time(model, state), state.t.dtype) for i in ids])
        t = jnp.min(times)
        return t, [i for i, ti in zip(ids, times) if bool(ti == t)]

    def calc_time_of_next_scheduled_event(self, state):
        """(time, [EventIds]) of the earliest scheduled handler(s) after state.t (inf, [] if none). Eager only."""
        return self._next_scheduled(state, handlers=True)

    def calc_time_of_next_scheduled_report(self, state):
        """(time, [EventIds]) of the earliest scheduled reporter(s) after state.t (inf, [] if none). Eager only."""
        return self._next_scheduled(state, handlers=False)

    def handle_events(self, state, cause: str, event_ids, accuracy: float | None = None):
        """Apply the listed handlers in order, then project q and u (accuracy: default 1e-4 as Simbody's
        project). Returns (state, should_terminate). Counts one handle-events call."""
        self._check_cause(cause)
        self._num_handle_event_calls += 1
        model = self.realize_topology()
        terminate = jnp.zeros((), bool)
        for i in event_ids:
            item = self._item(i)
            if not ev.is_handler(item):
                raise InvalidArgument(f"EventId {i} ({item.label}) is a reporter, not a handler")
            state, term = ev.apply_handler(item, model, model.realize(state, Stage.Acceleration))
            terminate = terminate | term
        options = ProjectOptions() if accuracy is None else ProjectOptions(accuracy=float(accuracy))
        state, _ = project(model, state.set_time(state.t), options)
        return state, terminate

    def report_events(self, state, cause: str, event_ids):
        """[report values] of the listed reporters at ``state``. Counts one report-events call."""
        self._check_cause(cause)
        self._num_report_event_calls += 1
        model = self.realize_topology()
        realized = model.realize(state, Stage.Acceleration)
        out = []
        for i in event_ids:
            item = self._item(i)
            if ev.is_handler(item):
                raise InvalidArgument(f"EventId {i} ({item.label}) is a handler, not a reporter")
            out.append(item.report(model, realized))
        return out

    def get_num_handle_event_calls(self) -> int:
        return self._num_handle_event_calls

    def get_num_report_event_calls(self) -> int:
        return self._num_report_event_calls

    def _item(self, i):
        if not (isinstance(i, int) and 0 <= i < len(self._event_items)):
            raise InvalidArgument(f"no event with EventId {i!r} (this system has {len(self._event_items)})")
        return self._event_items[i]

    @staticmethod
    def _check_cause(cause):
        if cause not in CAUSES:
            raise InvalidArgument(f"event cause must be one of {CAUSES}, got {cause!r}")


__all__ = ["CAUSES", "SystemEvents"]
