"""The System's event interface (Simbody catalogue 6.4): handlers and reporters, and the calls a TimeStepper
makes on them, usable by hand too. Items are JAX functions (jaxbody._integrators.events); the System only
keeps them, in the order added, and counts host-side calls (Simbody's event counters). A TimeStepper run counts
its own calls per lane in ``run.events``; the counter getters read those when given ``run=``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._constraints.projection import ProjectOptions, project
from jaxbody._dynamics.state_stages import lowest_stage_difference
from jaxbody._integrators import event_step
from jaxbody._integrators import events as ev
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument

CAUSES = ("Initialization", "TimeAdvanced", "Signaled", "Triggered", "Scheduled", "Termination")


class SystemEvents:
    """Mixed into MultibodySystem."""

    def __init__(self):
        self._event_items: list = []
        self._has_time_advanced_events = False
        self._reset_event_counters()

    def _reset_event_counters(self):
        self._num_handle_event_calls = 0
        self._num_report_event_calls = 0
        self._num_calls_that_changed_stage = [0] * event_step.NUM_STAGE_SLOTS

    def set_has_time_advanced_events(self, has_them: bool):
        """Whether time advancing is an event (default False): a TimeStepper made afterwards calls
        handleEvents(TimeAdvanced) -- every TimeAdvancedEventHandler -- after each accepted step. This is the
        documented Simbody behaviour; Simbody 3.9's integrators read the flag but never act on it."""
        if not isinstance(has_them, (bool, np.bool_)):
            raise InvalidArgument(f"set_has_time_advanced_events needs a bool, got {has_them!r}")
        self._has_time_advanced_events = bool(has_them)

    def has_time_advanced_events(self) -> bool:
        return self._has_time_advanced_events

    def add_event_handler(self, handler) -> int:
        """Add a TriggeredEventHandler, ScheduledEventHandler, PeriodicEventHandler, InitializationEventHandler
        or TimeAdvancedEventHandler; returns its EventId."""
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
        ids = [i for i, it in enumerate(self._event_items) if ev.is_scheduled(it) and ev.is_handler(it) == handlers]
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
        """Apply the listed handlers in order (for Initialization or TimeAdvanced with no ids: every handler of
        that cause, as Simbody's generic call), then project q and u (accuracy: default 1e-4 as Simbody's
        project). Returns (state, should_terminate). Counts one handle-events call and, on concrete values,
        one call that changed the lowest Stage the handlers modified (Simbody's handleEvents)."""
        self._check_cause(cause)
        self._num_handle_event_calls += 1
        model = self.realize_topology()
        terminate = jnp.zeros((), bool)
        if not event_ids and cause in event_step.GENERIC_CAUSES:
            event_ids = [i for i, it in enumerate(self._event_items) if ev.cause_of(it) == cause]
        before = state
        for i in event_ids:
            item = self._item(i)
            if not ev.is_handler(item):
                raise InvalidArgument(f"EventId {i} ({item.label}) is a reporter, not a handler")
            state, term = ev.apply_handler(item, model, model.realize(state, Stage.Acceleration))
            terminate = terminate | term
        lowest = lowest_stage_difference(before, state)
        if not isinstance(lowest, jax.core.Tracer):  # traced (under jit): a compiled run counts in run.events
            self._num_calls_that_changed_stage[int(lowest)] += 1
        options = ProjectOptions() if accuracy is None else ProjectOptions(accuracy=float(accuracy))
        state, _ = project(model, state.drop_caches(), options)
        return state, terminate

    def report_events(self, state, cause: str, event_ids):
        """[report values] of the listed reporters at ``state``. Counts one report-events call."""
        self._check_cause(cause)
        self._num_report_event_calls += 1
        self._num_calls_that_changed_stage[int(Stage.Report)] += 1
        model = self.realize_topology()
        realized = model.realize(state, Stage.Acceleration)
        out = []
        for i in event_ids:
            item = self._item(i)
            if ev.is_handler(item):
                raise InvalidArgument(f"EventId {i} ({item.label}) is a handler, not a reporter")
            out.append(item.report(model, realized))
        return out

    def get_num_handle_event_calls(self, run=None):
        """handle_events calls on this system, or with ``run`` (an IntegratorRun) that run's handleEvents calls
        (an int32 array, per lane under vmap)."""
        return self._num_handle_event_calls if run is None else run.events.handle_event_calls

    def get_num_report_event_calls(self, run=None):
        """report_events calls on this system, or with ``run`` that run's reportEvents calls (per lane)."""
        return self._num_report_event_calls if run is None else run.events.report_event_calls

    def get_num_handler_calls_that_changed_stage(self, stage, run=None):
        """handleEvents calls whose lowest modified Stage was ``stage`` (report-events calls count at
        Stage.Report; ``"Infinity"``: calls that changed nothing, Simbody's Stage::Infinity). On this system's
        eager calls, or with ``run`` on that run's calls (an int32 array, per lane under vmap)."""
        if isinstance(stage, str) and stage == "Infinity":
            slot = event_step.NO_CHANGE
        elif isinstance(stage, (Stage, int)) and not isinstance(stage, bool) and 0 <= int(stage) < len(Stage):
            slot = int(stage)
        else:
            raise InvalidArgument(f"stage must be a jb.Stage or 'Infinity', got {stage!r}")
        if run is None:
            return self._num_calls_that_changed_stage[slot]
        return run.events.calls_that_changed_stage[..., slot]

    def _item(self, i):
        if not (isinstance(i, int) and 0 <= i < len(self._event_items)):
            raise InvalidArgument(f"no event with EventId {i!r} (this system has {len(self._event_items)})")
        return self._event_items[i]

    @staticmethod
    def _check_cause(cause):
        if cause not in CAUSES:
            raise InvalidArgument(f"event cause must be one of {CAUSES}, got {cause!r}")


__all__ = ["CAUSES", "SystemEvents"]
