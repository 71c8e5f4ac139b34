"""Simbody's event handlers and reporters (catalogue 6.4) as JAX functions of the realized State.

A handler returns a modified State, or ``(State, terminate)``; a reporter returns any pytree of arrays (what it
reports), which the stepper records per lane. Triggered items have a witness ``w(model, state)`` (scalar,
state realized to the item's ``required_stage``, Acceleration unless said) and fire on its sign changes; scheduled items fire at times they compute
from the state (strictly after the state's time; periodic ones at exact multiples ``k * interval``).
Cause handlers run on one of Simbody's generic causes instead: ``InitializationEventHandler`` when a TimeStepper
initializes, ``TimeAdvancedEventHandler`` after every successful step of a system with time-advanced events
(``system.set_has_time_advanced_events(True)``); Simbody delivers these causes to its subsystems' handleEvents.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import jax.numpy as jnp

from jaxbody._dynamics.state import State
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument

_DIRECTIONS = ("rising", "falling", "both")


@dataclasses.dataclass(frozen=True, eq=False)
class _Triggered:
    """``required_stage``: Simbody's requiredStage, the stage the witness reads (Time ... Acceleration); the
    stepper realizes the states it evaluates witnesses on only that far while it localizes an event (a witness
    of q alone: Stage.Position spares the constrained dynamics on every localization iteration)."""

    witness: Callable
    trigger_on: str = "both"
    localization_window: float = 0.1
    name: str = ""
    required_stage: Stage = dataclasses.field(default=Stage.Acceleration, kw_only=True)

    def __post_init__(self):
        if not callable(self.witness):
            raise InvalidArgument(f"event {self.label}: the witness must be a function (model, state) -> scalar")
        if not (isinstance(self.required_stage, Stage) and Stage.Time <= self.required_stage <= Stage.Acceleration):
            raise InvalidArgument(f"event {self.label}: required_stage must be a jb.Stage from Time to Acceleration, "
                                  f"got {self.required_stage!r}")
        if self.trigger_on not in _DIRECTIONS:
            raise InvalidArgument(f"event {self.label}: trigger_on must be one of {_DIRECTIONS}, got {self.trigger_on!r}")
        if not (math.isfinite(self.localization_window) and self.localization_window > 0):
            raise InvalidArgument(
                f"event {self.label}: localization_window must be positive, got {self.localization_window}")

    @property
    def label(self) -> str:
        return self.name or type(self).__name__

    def calc_event_trigger_info(self):
        """Simbody's EventTriggerInfo: (trigger_on_rising, trigger_on_falling, required_localization_window)."""
        return (self.trigger_on in ("rising", "both"), self.trigger_on in ("falling", "both"), self.localization_window)


@dataclasses.dataclass(frozen=True, eq=False)
class _Scheduled:
    next_event_time: Callable
    name: str = ""

    def __post_init__(self):
        if not callable(self.next_event_time):
            raise InvalidArgument(f"event {self.label}: next_event_time must be a function (model, state) -> t")

    @property
    def label(self) -> str:
        return self.name or type(self).__name__


def _periodic_next_time(interval):
    def next_time(model, state):
        """Smallest ``k * interval`` strictly after state.t (k integer), computed from k, never accumulated."""
        t = state.t
        k = jnp.floor(t / interval) + 1
        k = jnp.where((k - 1) * interval > t, k - 1, k)
        return k * interval
    return next_time


def _check_handler(fn, label, what):
    if not callable(fn):
        raise InvalidArgument(f"event {label}: {what} must be a function (model, state) -> ...")


@dataclasses.dataclass(frozen=True, eq=False)
class TriggeredEventHandler(_Triggered):
    """Fires when ``witness`` changes sign as ``trigger_on`` allows; ``handle(model, state) -> State or
    (State, terminate)`` gets the state at the localized event time (realized to Acceleration).
    localization_window: relative to the time scale and the accuracy (Simbody's default 0.1).
    required_stage (keyword): the stage the witness needs (Simbody's requiredStage; default Acceleration),
    so localization realizes no further, e.g. ``jb.Stage.Position`` for a witness of q."""

    handle: Callable = None

    def __post_init__(self):
        super().__post_init__()
        _check_handler(self.handle, self.label, "handle")


@dataclasses.dataclass(frozen=True, eq=False)
class TriggeredEventReporter(_Triggered):
    """Like TriggeredEventHandler, but ``report(model, state) -> pytree`` only observes."""

    report: Callable = None

    def __post_init__(self):
        super().__post_init__()
        _check_handler(self.report, self.label, "report")


@dataclasses.dataclass(frozen=True, eq=False)
class ScheduledEventHandler(_Scheduled):
    """``next_event_time(model, state) -> t`` (> state.t); the integrator stops exactly there and calls handle."""

    handle: Callable = None

    def __post_init__(self):
        super().__post_init__()
        _check_handler(self.handle, self.label, "handle")


@dataclasses.dataclass(frozen=True, eq=False)
class ScheduledEventReporter(_Scheduled):
    report: Callable = None

    def __post_init__(self):
        super().__post_init__()
        _check_handler(self.report, self.label, "report")


def PeriodicEventHandler(interval: float, handle: Callable, name: str = "") -> ScheduledEventHandler:
    """A ScheduledEventHandler at every multiple of ``interval`` (s)."""
    return ScheduledEventHandler(_periodic_next_time(_interval(interval, name)), name or "PeriodicEventHandler",
                                 handle=handle)


def PeriodicEventReporter(interval: float, report: Callable, name: str = "") -> ScheduledEventReporter:
    """A ScheduledEventReporter at every multiple of ``interval`` (s)."""
    return ScheduledEventReporter(_periodic_next_time(_interval(interval, name)), name or "PeriodicEventReporter",
                                  report=report)


def _interval(interval, name):
    if not (isinstance(interval, (int, float)) and math.isfinite(interval) and interval > 0):
        raise InvalidArgument(f"periodic event {name or ''} needs a positive finite interval, got {interval!r}")
    return float(interval)


@dataclasses.dataclass(frozen=True, eq=False)
class _CauseHandler:
    handle: Callable
    name: str = ""
    cause = ""

    def __post_init__(self):
        _check_handler(self.handle, self.label, "handle")

    @property
    def label(self) -> str:
        return self.name or type(self).__name__


@dataclasses.dataclass(frozen=True, eq=False)
class InitializationEventHandler(_CauseHandler):
    """``handle(model, state) -> State or (State, terminate)`` once, in ``TimeStepper.initialize`` after the
    initial projection (Simbody's Initialization cause; as in Simbody the state is not re-projected after it).
    A termination request makes the run start terminated (Simbody throws)."""

    cause = "Initialization"


@dataclasses.dataclass(frozen=True, eq=False)
class TimeAdvancedEventHandler(_CauseHandler):
    """``handle(model, state) -> State or (State, terminate)`` after every accepted step (after that step's
    triggered and scheduled handlers) when the system has time-advanced events (Simbody's TimeAdvanced cause);
    the stepper re-projects q and u if it ran."""

    cause = "TimeAdvanced"


EVENT_ITEM_TYPES = (TriggeredEventHandler, TriggeredEventReporter, ScheduledEventHandler, ScheduledEventReporter,
                    InitializationEventHandler, TimeAdvancedEventHandler)


def is_handler(item) -> bool:
    return isinstance(item, (TriggeredEventHandler, ScheduledEventHandler, _CauseHandler))


def is_triggered(item) -> bool:
    return isinstance(item, _Triggered)


def is_scheduled(item) -> bool:
    return isinstance(item, _Scheduled)


def cause_of(item) -> str:
    """The event cause under which an item runs: Triggered, Scheduled, Initialization or TimeAdvanced."""
    if isinstance(item, _CauseHandler):
        return item.cause
    return "Triggered" if is_triggered(item) else "Scheduled"


def apply_handler(item, model, state):
    """(state, terminate) after a handler; a reporter leaves the state alone."""
    if not is_handler(item):
        return state, jnp.zeros((), bool)
    out = item.handle(model, state)
    new_state, terminate = out if isinstance(out, tuple) and len(out) == 2 else (out, False)
    if not isinstance(new_state, State):
        got = f"an array of shape {out.shape}" if hasattr(out, "shape") else type(out).__name__
        raise InvalidArgument(f"event {item.label}: handle must return a State or (State, terminate), got {got} "
                              "(e.g. return state.set_u(...), not state.u)")
    return new_state, jnp.asarray(terminate, bool)


def transitions(w0, w1, rising, falling):
    """Per witness: did it change sign from w0 to w1 in a permitted direction (Simbody's transition mask)?"""
    up = ((w0 < 0) & (w1 >= 0)) | ((w0 == 0) & (w1 > 0))
    down = ((w0 > 0) & (w1 <= 0)) | ((w0 == 0) & (w1 < 0))
    return (up & rising) | (down & falling)


__all__ = [
    "EVENT_ITEM_TYPES", "InitializationEventHandler", "TimeAdvancedEventHandler", "cause_of", "is_scheduled",
    "PeriodicEventHandler", "PeriodicEventReporter", "ScheduledEventHandler", "ScheduledEventReporter",
    "TriggeredEventHandler", "TriggeredEventReporter", "apply_handler", "is_handler", "is_triggered", "transitions",
]
