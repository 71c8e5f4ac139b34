"""Simbody's TimeStepper (catalogue 6.5) over an Integrator: ``initialize``, ``step_to``, ``simulate``.

One step attempt (``_attempt``) is Simbody's takeOneStep iteration: choose t1 (never past the next report,
scheduled event or final time), run the method, skip projection if the error is already beyond
``2^p accuracy``, else project q then u with the error estimate (attemptDAEStep), compute the weighted error
norm, adjust h (ExplicitEuler: always project, then Simbody's estimate from the projected ydot); an accepted
step then detects triggered events, localizes them, and fires triggered and scheduled handlers/reporters, then
the TimeAdvanced handlers when the system has time-advanced events. ``step_to`` repeats attempts in one
``lax.while_loop`` (each lane of a vmap stops on its own; finished lanes wait) bounded by
``internal_step_limit``; with ``differentiable=True`` the loop is a ``lax.scan`` of that length whose
iterations are ``jax.checkpoint``-ed (reverse mode, memory bounded by the limit), skipping finished
iterations with ``lax.cond``. Step sizes and accept/reject decisions carry no gradient (the derivative is that
of the discrete map with the step sequence held fixed); event times carry the implicit-function derivative.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics import prescribed
from jaxbody._dynamics.state import State
from jaxbody._dynamics.state_checks import check_state
from jaxbody._integrators import control, event_step, events as ev
from jaxbody._integrators.integrators import Integrator
from jaxbody._integrators.methods import join_y, realize_ydot, with_y
from jaxbody._integrators.run import IntegratorRun, IntegratorStats
from jaxbody.errors import InvalidArgument

#: A stop (report, scheduled event, final time) before t0 + this fraction of the step shortens the step to it.
STOP_SHRINK_FRACTION = 0.95
#: A stop within this fraction of the step stretches the step to land on it (Simbody's 1.001).
STOP_STRETCH_FRACTION = 1.001


def _where(c, a, b):
    return jax.tree_util.tree_map(lambda x, y: jnp.where(c, x, y), a, b)


def _nan_like(x):
    return jnp.full_like(x, jnp.nan) if jnp.issubdtype(x.dtype, jnp.inexact) else x


def _stopped(run: IntegratorRun, flag: int) -> IntegratorRun:
    """The run terminated where it is, with ``flag`` added to its status."""
    return eqx.tree_at(lambda r: (r.terminated, r.stats.status), run,
                       (jnp.ones((), bool), run.stats.status | flag))


def _concrete(x):
    """``x`` as a float64 NumPy array, or None when it is (or holds) a tracer."""
    try:
        return np.asarray(x, np.float64)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        return None


def _check_report_times(times, t_reported, what):
    """Concrete report times: a scalar or 1-d, finite, strictly increasing, not before the run's last report."""
    t = _concrete(times)
    if t is None:
        return
    if t.ndim > 1:
        raise InvalidArgument(f"{what}: report times must be a scalar or a 1-d array, got shape {t.shape}")
    t = np.atleast_1d(t)
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise InvalidArgument(f"{what}: report times must be finite; entry {bad[0]} is {t[bad[0]]}")
    back = np.flatnonzero(np.diff(t) <= 0)
    if back.size:
        i = back[0] + 1
        raise InvalidArgument(f"{what}: report times must be strictly increasing; entry {i} ({t[i]}) follows {t[i - 1]}")
    start = _concrete(t_reported)
    if start is not None and t.size and t[0] < start:
        raise InvalidArgument(
            f"{what}: report time {t[0]} is before the run's time {float(start)}: a run only goes forward "
            "(initialize a new one to start again)")


class TimeStepper(eqx.Module):
    """``TimeStepper(system_or_model, integrator, events=None, max_reports=64, differentiable=False,
    time_advanced_events=None)``.

    events: handlers/reporters (default: the system's, ``system.add_event_handler``). max_reports: buffer
    length per reporter. time_advanced_events: run TimeAdvanced handlers (and count a handleEvents call) after
    every accepted step; default: the system's ``has_time_advanced_events()`` (False for a Model), read here
    as Simbody's Integrator reads it at initialize. All methods are pure, jit/vmap-able, and return new
    IntegratorRun values.
    """

    integrator: Integrator
    events: tuple = eqx.field(static=True)
    max_reports: int = eqx.field(static=True)
    differentiable: bool = eqx.field(static=True)
    time_advanced_events: bool = eqx.field(static=True)

    def __init__(self, system, integrator: Integrator, events=None, max_reports: int = 64, differentiable=False,
                 time_advanced_events=None):
        if not isinstance(integrator, Integrator):
            raise InvalidArgument(f"TimeStepper needs a jb integrator, got {type(integrator).__name__}")
        if events is None:
            events = tuple(system.get_event_handlers()) if hasattr(system, "get_event_handlers") else ()
        for item in events:
            if not isinstance(item, ev.EVENT_ITEM_TYPES):
                raise InvalidArgument(f"TimeStepper: {item!r} is not an event handler or reporter")
        if isinstance(max_reports, bool) or not isinstance(max_reports, (int, np.integer)) or max_reports < 0:
            raise InvalidArgument(f"TimeStepper: max_reports must be a nonnegative int, got {max_reports!r}")
        reporters = [it.label for it in events if not ev.is_handler(it)]
        if reporters and max_reports < 1:
            raise InvalidArgument(f"TimeStepper: max_reports={max_reports} leaves no room for the reports of "
                                  f"{', '.join(reporters)}: give max_reports >= 1 (reports kept per reporter)")
        if time_advanced_events is None:
            time_advanced_events = system.has_time_advanced_events() if hasattr(system, "has_time_advanced_events") \
                else False
        self.integrator = integrator
        self.events = tuple(events)
        self.max_reports = int(max_reports)
        self.differentiable = bool(differentiable)
        self.time_advanced_events = bool(time_advanced_events)

    # -- initialize --------------------------------------------------------------------------------------

    def initialize(self, state: State) -> IntegratorRun:
        """Prescribe and project q and u (ForceProjection, not local, accuracy = constraint tolerance), call
        the Initialization handlers (Simbody's handleEvents(Initialization), counted even without handlers),
        realize Acceleration; the run starts at ``state.t`` with the initial step size and zeroed statistics."""
        model, settings, items = self.integrator.model, self.integrator.settings, self.events
        check_state(model, state, "TimeStepper.initialize")
        t0 = _concrete(state.t)
        if settings.final_time is not None and t0 is not None and not settings.final_time >= float(t0):
            raise InvalidArgument(f"TimeStepper.initialize: final_time ({settings.final_time}) is before the "
                                  f"state's time ({float(t0)}): the run could not advance")
        state = state.drop_caches()
        opts = control.projection_options(settings, local=False, force=True)
        state, _, _, _ = control.project_with_error(model, state, jnp.zeros_like(join_y(state)), opts)
        ydot, realized = realize_ydot(model, state)
        record = event_step.init_record(items, model, realized, self.max_reports)
        init_mask = np.array([ev.cause_of(it) == "Initialization" for it in items], bool)
        state, terminate, record, _ = event_step.fire(
            items, model, realized, jnp.asarray(init_mask), state.t, record, causes=("Initialization",),
            generic_call=True)
        if init_mask.any():
            ydot, realized = realize_ydot(model, state)
        state = realized.drop_caches()
        stats = IntegratorStats.zeros()
        stats = eqx.tree_at(lambda s: s.realizations, stats, jnp.ones((), jnp.int32))
        return IntegratorRun(
            state=state, ydot=ydot, h=jnp.asarray(settings.initial_step_in_use, ydot.dtype), t_prev=state.t,
            y_prev=join_y(state), ydot_prev=ydot, witness=event_step.witnesses(items, model, realized),
            terminated=terminate, stats=stats, events=record, t_reported=state.t)

    # -- one attempt -------------------------------------------------------------------------------------

    def _attempt(self, run: IntegratorRun, t_report) -> IntegratorRun:
        model, settings, method = self.integrator.model, self.integrator.settings, self.integrator.method
        items = self.events
        s0, f0 = run.state, run.ydot
        t0, y0 = s0.t, join_y(s0)
        sched_times = event_step.armed_scheduled_times(items, model, s0, run.events.last_time)
        final = jnp.inf if settings.final_time is None else settings.final_time
        # a time not in the future (armed, never fired) fires at the end of this step; it does not shorten it
        t_stop = jnp.minimum(jnp.min(jnp.where(sched_times > t0, sched_times, jnp.inf), initial=jnp.inf), final)
        if not settings.allow_interpolation:
            t_stop = jnp.minimum(t_stop, t_report)
        h = jax.lax.stop_gradient(run.h)
        # Simbody's rule: a stop within 95 % of the step is taken early; one within 100.1 % is stretched to.
        early, stretch = STOP_SHRINK_FRACTION * h, STOP_STRETCH_FRACTION * h
        t1 = jnp.where(t_stop < t0 + early, t_stop, jnp.where(t_stop > t0 + stretch, t0 + h, t_stop))
        limited = t1 == t_stop
        y1, err, n_evals = method.attempt(model, s0, t0, y0, f0, t1 - t0, settings)
        s1 = with_y(s0, t1, y1)
        opts = control.projection_options(settings)
        controlled = method.error_order is not None and settings.fixed_step_size is None
        if not controlled or method.error_from_projected_ydot:
            s1, _, ok, n_proj = control.project_with_error(model, s1, jnp.zeros_like(err), opts)
            h_new, accepted, failed = h, jnp.ones((), bool), ~ok
        else:
            norm = control.calc_error_norm(model, s0, y0, y1, err, settings.use_infinity_norm)
            try_project = norm <= 2.0**method.error_order * settings.accuracy
            s1p, err_p, ok, n_proj = control.project_with_error(model, s1, err, opts)
            s1, err = _where(try_project, s1p, s1), jnp.where(try_project, err_p, err)
            n_proj = jnp.where(try_project, n_proj, 0)
            h_new, accepted, failed = self._adjust(s0, y0, join_y(s1), err, h, limited, try_project & ~ok)
        f1, r1 = realize_ydot(model, s1)
        if controlled and method.error_from_projected_ydot:
            # Simbody's ExplicitEuler: the unprojected y1 against the explicit trapezoid with the projected ydot1.
            err = y1 - (y0 + (t1 - t0) / 2 * (f0 + f1))
            h_new, accepted, failed = self._adjust(s0, y0, join_y(r1), err, h, limited, ~ok)
        h_new, accepted = jax.lax.stop_gradient((h_new, accepted))
        y1 = join_y(r1)
        stats = run.stats
        stats = IntegratorStats(
            steps_attempted=stats.steps_attempted + 1, steps_taken=stats.steps_taken + accepted,
            error_test_failures=stats.error_test_failures + (~accepted & ~failed),
            projection_failures=stats.projection_failures + failed,
            realizations=stats.realizations + n_evals + accepted, projections=stats.projections + n_proj,
            step_limit_reached=stats.step_limit_reached, status=stats.status)
        new = IntegratorRun(state=r1.set_time(t1), ydot=f1, h=h_new, t_prev=t0, y_prev=y0, ydot_prev=f0,
                            witness=run.witness, terminated=run.terminated, stats=stats, events=run.events,
                            t_reported=run.t_reported)
        if event_step.triggered_items(items) or event_step.scheduled_items(items) or self.time_advanced_events:
            new = self._events_after_step(new, run, r1, sched_times, accepted)
        new = _where(accepted, new, eqx.tree_at(lambda r: (r.h, r.stats), run, (h_new, stats)))
        if event_step.scheduled_items(items):  # a NaN next time would make t NaN: stop the lane and say why
            new = _where(jnp.any(jnp.isnan(sched_times)), _stopped(run, IntegratorStats.BAD_EVENT_TIME), new)
        return new

    def _adjust(self, s0, y0, y1, err, h, limited, failed):
        """(h_new, accepted, failed): Simbody's error norm and step-size rule; a failed projection halves h."""
        settings, p = self.integrator.settings, self.integrator.method.error_order
        norm = control.calc_error_norm(self.integrator.model, s0, y0, y1, err, settings.use_infinity_norm)
        h_new, accepted = control.adjust_step_size(h, norm, p, settings.accuracy, limited, settings.step_bounds)
        return jnp.where(failed, 0.5 * h, h_new), accepted & ~failed, failed

    def _events_after_step(self, new: IntegratorRun, old: IntegratorRun, r1, sched_times, accepted):
        """Detect, localize and fire events on the accepted step old.state -> new.state (r1 realized)."""
        model, settings, items = self.integrator.model, self.integrator.settings, self.events
        trig_pos = [i for i, it in enumerate(items) if ev.is_triggered(it)]
        sched_pos = [i for i, it in enumerate(items) if ev.is_scheduled(it)]
        base = old.state
        step = (old.state.t, join_y(old.state), old.ydot, new.state.t, join_y(new.state), new.ydot)
        w1 = event_step.witnesses(items, model, r1)
        t_event, realized = new.state.t, r1
        fired = jnp.zeros((len(items),), bool)
        evals = jnp.zeros((), jnp.int32)
        if trig_pos:
            candidates = event_step.detect(items, old.witness, w1) & accepted

            def located(_):
                _, t_hi, fired_trig, it = event_step.localize(
                    items, model, base, step, old.witness, w1, candidates, settings.accuracy, settings.time_scale)
                t_e = event_step.event_time_with_derivative(items, model, base, step, t_hi, fired_trig)
                s = control.interpolated_state(model, base, *step, t_e, control.projection_options(settings, False))
                return t_e, realize_ydot(model, s)[1], fired_trig, it + 1

            def not_located(_):
                return t_event, r1, jnp.zeros_like(candidates), jnp.zeros((), jnp.int32)

            t_event, realized, fired_trig, evals = jax.lax.cond(jnp.any(candidates), located, not_located, None)
            fired = fired.at[np.array(trig_pos)].set(fired_trig)
        if sched_pos:
            fired = fired.at[np.array(sched_pos)].set(accepted & (t_event >= sched_times))
        causes = ("Triggered", "Scheduled")
        if self.time_advanced_events:
            causes += ("TimeAdvanced",)
            advanced_pos = [i for i, it in enumerate(items) if ev.cause_of(it) == "TimeAdvanced"]
            if advanced_pos:
                fired = fired.at[np.array(advanced_pos)].set(accepted)
        state, terminate, record, changed = event_step.fire(items, model, realized, fired, t_event, new.events,
                                                            causes=causes, generic_call=accepted)
        opts = control.projection_options(settings, local=False)

        def after_handlers(s):
            return control.project_with_error(model, s, jnp.zeros_like(new.ydot), opts)[0].drop_caches()

        any_event = jnp.any(fired)
        # One realize after either branch (realize_ydot prescribes, which drops caches anyway): the dynamics
        # are traced once, not once per branch.
        ydot, r = realize_ydot(model, jax.lax.cond(changed, after_handlers, State.drop_caches, state))
        stats = eqx.tree_at(lambda s: s.realizations, new.stats, new.stats.realizations + evals + any_event)
        return eqx.tree_at(
            lambda n: (n.state, n.ydot, n.witness, n.terminated, n.events, n.stats), new,
            (r.drop_caches(), ydot, event_step.witnesses(items, model, r), new.terminated | terminate, record, stats))

    # -- step_to / simulate --------------------------------------------------------------------------------

    def step_to(self, run: IntegratorRun, t_report):
        """Advance to ``t_report`` (s), not before the run's last report time. Returns (run, state at t_report)
        -- the state where the run stopped if a handler terminated it or the step limit was reached (see
        run.terminated, run.stats). A non-finite or earlier time raises when concrete; traced, it sets
        ``run.stats.status`` (BAD_REPORT_TIME) and the state is NaN (as every later one of that run)."""
        settings = self.integrator.settings
        _check_report_times(t_report, run.t_reported, "TimeStepper.step_to")
        t_report = jnp.asarray(t_report, run.ydot.dtype)
        bad = ~jnp.isfinite(t_report) | (t_report < run.t_reported)
        run = _where(bad, _stopped(run, IntegratorStats.BAD_REPORT_TIME), run)
        limit = settings.internal_step_limit

        def active(c):
            r, n = c
            return (~r.terminated) & (r.state.t < t_report) & (n < limit)

        def body(c):
            r, n = c
            return self._attempt(r, t_report), n + 1

        start = (run, jnp.zeros((), jnp.int32))
        if self.differentiable:
            step = jax.checkpoint(lambda c: jax.lax.cond(active(c), body, lambda c: c, c))
            (run, n), _ = jax.lax.scan(lambda c, _: (step(c), None), start, None, length=limit)
        else:
            run, n = jax.lax.while_loop(active, body, start)
        hit_limit = (~run.terminated) & (run.state.t < t_report) & (n >= limit)
        run = eqx.tree_at(lambda r: (r.terminated, r.stats.step_limit_reached, r.t_reported), run,
                          (run.terminated | hit_limit, run.stats.step_limit_reached | hit_limit,
                           jnp.where(bad, run.t_reported, t_report)))
        reported = self._report_state(run, t_report)
        return run, _where(run.stats.status != 0, jax.tree_util.tree_map(_nan_like, reported), reported)

    def _report_state(self, run: IntegratorRun, t_report) -> State:
        settings, model = self.integrator.settings, self.integrator.model
        if not settings.allow_interpolation:
            return run.state
        opts = control.projection_options(settings) if settings.project_interpolated_states else None
        if self.integrator.method.linear_interpolation:
            d = (t_report - run.t_prev) / jnp.where(run.state.t > run.t_prev, run.state.t - run.t_prev, 1.0)
            y1 = join_y(run.state)
            s = prescribed.prescribe(model, with_y(run.state, t_report, run.y_prev + d * (y1 - run.y_prev)))
            if opts is not None:
                s, _, _, _ = control.project_with_error(model, s, jnp.zeros_like(y1), opts)
            interp = s.drop_caches()
        else:
            interp = control.interpolated_state(model, run.state, run.t_prev, run.y_prev, run.ydot_prev, run.state.t,
                                                join_y(run.state), run.ydot, t_report, opts)
            interp = interp.drop_caches()
        return _where(run.state.t > t_report, interp, run.state)

    def simulate(self, state_or_run, report_times):
        """Initialize (if given a State) and step to each report time in turn.

        Returns (final IntegratorRun, states): a State pytree with a leading axis len(report_times) (caches
        dropped). One compiled loop; under vmap every lane takes its own steps. Report times must be finite,
        strictly increasing and not before the run's time: concrete ones are checked here (InvalidArgument);
        traced ones per lane as in ``step_to`` (a NaN or decreasing time sets ``run.stats.status`` and makes
        that row and every later one NaN; a repeated time repeats its row).
        """
        run = self.initialize(state_or_run) if isinstance(state_or_run, State) else state_or_run
        _check_report_times(report_times, run.t_reported, "TimeStepper.simulate")
        times = jnp.asarray(report_times, run.ydot.dtype)

        def one(r, t):
            r, s = self.step_to(r, t)
            return r, s

        return jax.lax.scan(one, run, times)


__all__ = ["TimeStepper"]
