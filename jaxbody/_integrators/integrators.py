"""Simbody's Integrator classes: a method (catalogue 6.3) plus immutable IntegratorSettings, bound to a Model.

``jb.RungeKuttaMersonIntegrator(system_or_model, accuracy=1e-6)`` holds no run-time data: the TimeStepper
carries the step state (jaxbody._integrators.stepper), so integrators are pure and reusable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import equinox as eqx

from jaxbody._integrators import methods
from jaxbody._integrators.settings import DEFAULT_TIME_SCALE, IntegratorSettings
from jaxbody.errors import InvalidArgument


@dataclasses.dataclass(frozen=True)
class Method:
    """name: Simbody's; order: of the propagated solution; error_order: p of the error estimate (None: fixed
    step, no error control); attempt(model, base, t0, y0, f0, h, settings) -> (y1, err, stage evaluations).
    error_from_projected_ydot: Simbody's ExplicitEuler step: always project (no error estimate projected), then
    ``err = y1 - (y0 + h/2 (ydot0 + ydot1))`` with ydot1 at the projected y1 (the stepper computes it)."""

    name: str
    order: int
    error_order: int | None
    attempt: Callable
    linear_interpolation: bool = False
    error_from_projected_ydot: bool = False


def _rk(tableau):
    def attempt(model, base, t0, y0, f0, h, settings):
        return methods.rk_attempt(tableau, model, base, t0, y0, f0, h)
    return attempt


def _plain(fn):
    def attempt(model, base, t0, y0, f0, h, settings):
        return fn(model, base, t0, y0, f0, h)
    return attempt


def _verlet(model, base, t0, y0, f0, h, settings):
    return methods.verlet_attempt(model, base, t0, y0, f0, h, settings.accuracy)


METHODS = {
    "ExplicitEuler": Method("ExplicitEuler", 1, 2, _plain(methods.explicit_euler_attempt), linear_interpolation=True,
                            error_from_projected_ydot=True),
    "RungeKutta2": Method("RungeKutta2", 2, 2, _rk(methods.RUNGE_KUTTA_2)),
    "RungeKutta3": Method("RungeKutta3", 3, 3, _rk(methods.RUNGE_KUTTA_3)),
    "RungeKutta": Method("RungeKutta", 4, None, _rk(methods.RUNGE_KUTTA_4)),
    "RungeKuttaMerson": Method("RungeKuttaMerson", 4, 4, _rk(methods.RUNGE_KUTTA_MERSON)),
    "RungeKuttaFeldberg": Method("RungeKuttaFeldberg", 4, 4, _rk(methods.RUNGE_KUTTA_FELDBERG)),
    "SemiExplicitEuler": Method("SemiExplicitEuler", 1, None, _plain(methods.semi_explicit_euler_attempt),
                                linear_interpolation=True),
    "SemiExplicitEuler2": Method("SemiExplicitEuler2", 1, 2, _plain(methods.semi_explicit_euler2_attempt),
                                 linear_interpolation=True),
    "Verlet": Method("Verlet", 2, 3, _verlet),
}


def _model_of(system_or_model):
    """The Model of a MultibodySystem (realize_topology) or the Model itself, and the system's time scale."""
    if hasattr(system_or_model, "realize_topology"):
        return system_or_model.realize_topology(), system_or_model.get_default_time_scale()
    if hasattr(system_or_model, "topology") and hasattr(system_or_model, "realize"):
        return system_or_model, DEFAULT_TIME_SCALE
    raise InvalidArgument(f"an integrator needs a jb.MultibodySystem or jb.Model, got {type(system_or_model).__name__}")


class Integrator(eqx.Module):
    """Base of Simbody's integrators: ``model`` (pytree), ``settings`` and ``method`` (static)."""

    model: object
    settings: IntegratorSettings = eqx.field(static=True)
    method: Method = eqx.field(static=True)

    def __init__(self, system_or_model, step_size=None, *, method: str, **settings):
        model, time_scale = _model_of(system_or_model)
        m = METHODS[method]
        if step_size is not None:  # Simbody's (system, h) constructors
            key = "fixed_step_size" if m.error_order is None else "initial_step_size"
            settings.setdefault(key, float(step_size))
        settings.setdefault("time_scale", time_scale)
        try:
            self.settings = IntegratorSettings(**settings)
        except TypeError as exc:
            raise InvalidArgument(f"{m.name}Integrator: {exc}") from None
        if m.error_order is None and self.settings.fixed_step_size is None:
            raise InvalidArgument(f"{m.name}Integrator is fixed-step: give step_size (or fixed_step_size)")
        self.model = model
        self.method = m

    def get_method_name(self) -> str:
        return self.method.name

    def get_method_min_order(self) -> int:
        return self.method.order

    def method_has_error_control(self) -> bool:
        return self.method.error_order is not None and self.settings.fixed_step_size is None

    def with_settings(self, **changes) -> Integrator:
        """A copy with some settings changed (Simbody's set...), built by the class's own constructor."""
        settings = dataclasses.replace(self.settings, **changes)
        kwargs = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)}
        if type(self) is Integrator:  # the subclasses name their method themselves
            kwargs["method"] = self.method.name
        return type(self)(self.model, **kwargs)


class ExplicitEulerIntegrator(Integrator):
    """Simbody's ExplicitEulerIntegrator (catalogue 6.3): 1st order, no stage beyond f0; error estimate from the ydot
    at the projected step end (order 2 in Simbody's norm), so its error control is cheap but crude. Linear
    interpolation to report times.

    ``ExplicitEulerIntegrator(system_or_model, step_size=None, **settings)``: settings as jb.IntegratorSettings.
    """

    def __init__(self, system_or_model, step_size=None, **settings):
        super().__init__(system_or_model, step_size, method="ExplicitEuler", **settings)


class RungeKutta2Integrator(Integrator):
    """Simbody's RungeKutta2Integrator (catalogue 6.3): 2nd order (Heun: two stages), the Euler step's difference as
    error estimate (order 2), error control.

    ``RungeKutta2Integrator(system_or_model, step_size=None, **settings)``: settings as jb.IntegratorSettings.
    """

    def __init__(self, system_or_model, step_size=None, **settings):
        super().__init__(system_or_model, step_size, method="RungeKutta2", **settings)


class RungeKutta3Integrator(Integrator):
    """Simbody's RungeKutta3Integrator (catalogue 6.3): 3rd order (three stages), embedded error estimate (order 3),
    error control.

    ``RungeKutta3Integrator(system_or_model, step_size=None, **settings)``: settings as jb.IntegratorSettings.
    """

    def __init__(self, system_or_model, step_size=None, **settings):
        super().__init__(system_or_model, step_size, method="RungeKutta3", **settings)


class RungeKuttaIntegrator(Integrator):
    """Simbody's RungeKuttaIntegrator (catalogue 6.3): the classic 4th-order Runge-Kutta (four stages) with a fixed
    step: no error estimate; give ``step_size`` (or ``fixed_step_size``). The same tableau as ``jb.step_rk4``.

    ``RungeKuttaIntegrator(system_or_model, step_size=None, **settings)``: settings as jb.IntegratorSettings.
    """

    def __init__(self, system_or_model, step_size=None, **settings):
        super().__init__(system_or_model, step_size, method="RungeKutta", **settings)


class RungeKuttaMersonIntegrator(Integrator):
    """Simbody's RungeKuttaMersonIntegrator (catalogue 6.3): 4th order, five stages, Merson's error estimate 0.2 (y1
    - y*), error control: Simbody's default integrator (the one OpenSim's Manager uses).

    ``RungeKuttaMersonIntegrator(system_or_model, step_size=None, **settings)``: settings as jb.IntegratorSettings.
    """

    def __init__(self, system_or_model, step_size=None, **settings):
        super().__init__(system_or_model, step_size, method="RungeKuttaMerson", **settings)


class RungeKuttaFeldbergIntegrator(Integrator):
    """Simbody's RungeKuttaFeldbergIntegrator (catalogue 6.3): Fehlberg's 4(5) pair, six stages: a 4th-order step
    with the 5th-order solution's difference as its error estimate, error control.

    ``RungeKuttaFeldbergIntegrator(system_or_model, step_size=None, **settings)``: settings as jb.IntegratorSettings.
    """

    def __init__(self, system_or_model, step_size=None, **settings):
        super().__init__(system_or_model, step_size, method="RungeKuttaFeldberg", **settings)


class SemiExplicitEulerIntegrator(Integrator):
    """Simbody's SemiExplicitEulerIntegrator (catalogue 6.3): symplectic Euler (u first, then q with the new u), 1st
    order, fixed step: no error estimate; give ``step_size``. The same step as ``jb.step_semi_explicit_euler``.

    ``SemiExplicitEulerIntegrator(system_or_model, step_size=None, **settings)``: settings as jb.IntegratorSettings.
    """

    def __init__(self, system_or_model, step_size=None, **settings):
        super().__init__(system_or_model, step_size, method="SemiExplicitEuler", **settings)


class SemiExplicitEuler2Integrator(Integrator):
    """Simbody's SemiExplicitEuler2Integrator (catalogue 6.3): symplectic Euler with step doubling: one step of h
    against two of h/2 for the error estimate (order 2), error control.

    ``SemiExplicitEuler2Integrator(system_or_model, step_size=None, **settings)``: settings as jb.IntegratorSettings.
    """

    def __init__(self, system_or_model, step_size=None, **settings):
        super().__init__(system_or_model, step_size, method="SemiExplicitEuler2", **settings)


class VerletIntegrator(Integrator):
    """Simbody's VerletIntegrator (catalogue 6.3): Simbody's velocity Verlet: q1 = q0 + h qdot0 + h^2/2 qdotdot0, u1
    by functional iteration of the trapezoid rule (at most 10 iterations); 2nd order, error estimate of order 3,
    error control.

    ``VerletIntegrator(system_or_model, step_size=None, **settings)``: settings as jb.IntegratorSettings.
    """

    def __init__(self, system_or_model, step_size=None, **settings):
        super().__init__(system_or_model, step_size, method="Verlet", **settings)

__all__ = [
    "METHODS",
    "ExplicitEulerIntegrator",
    "Integrator",
    "Method",
    "RungeKutta2Integrator",
    "RungeKutta3Integrator",
    "RungeKuttaFeldbergIntegrator",
    "RungeKuttaIntegrator",
    "RungeKuttaMersonIntegrator",
    "SemiExplicitEuler2Integrator",
    "SemiExplicitEulerIntegrator",
    "VerletIntegrator",
]
