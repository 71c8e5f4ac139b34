"""Simbody's Integrator settings (catalogue 6.2) as one immutable, hashable record, checked on the host.

An ``equinox.Module`` whose fields are all static (no leaves): its converters turn concrete 0-d arrays into
Python numbers before ``__check_init__`` validates, in ``dataclasses.replace`` too. Every field is static:
two rollouts with the same settings share compiled code, a change retraces.
"""

from __future__ import annotations

import functools
import math

import equinox as eqx
import jax

from jaxbody.errors import InvalidArgument

#: Simbody's System default time scale (s): the expected time for a significant change of the state.
DEFAULT_TIME_SCALE = 0.1


def _as_setting(value, what):
    """Concrete 0-d arrays (jnp.float64(1e-6)) are numbers: static floats; Python values pass unchanged."""
    if hasattr(value, "ndim") and not isinstance(value, (bool, int, float)):
        return _number(value, what)
    return value


def _setting(default, what):
    """A static field whose value is converted by ``_as_setting`` whenever the record is constructed."""
    return eqx.field(static=True, default=default, converter=functools.partial(_as_setting, what=what))


class IntegratorSettings(eqx.Module):
    """Integrator::set... in snake_case. Times in s; accuracy relative (Simbody's weighted norm).

    accuracy: local error per step (default 1e-3). constraint_tolerance: projection accuracy (default
    accuracy / 10). initial_step_size: default ``time_scale / 10`` (System default time scale 0.1 s).
    minimum_step_size, maximum_step_size: clamps on the step-size controller (default 0, inf).
    fixed_step_size: sets initial = minimum = maximum and turns error control off (required by the
    fixed-step methods). internal_step_limit: most step attempts per ``step_to`` (Simbody: unlimited;
    here bounded so a compiled loop can never hang; reaching it is reported per lane).
    use_infinity_norm: infinity instead of RMS error and projection norms. project_every_step: project
    q and u after every step (Simbody's ForceProjection), not only when the errors exceed the tolerance.
    allow_interpolation: step past report times and return Hermite-interpolated states (default False:
    land on them exactly). project_interpolated_states: project those states (LocalOnly).
    final_time: the integrator never steps past it (default: the last report time).
    """

    accuracy: float = _setting(1e-3, "accuracy")
    constraint_tolerance: float | None = _setting(None, "constraint_tolerance")
    initial_step_size: float | None = _setting(None, "initial_step_size")
    minimum_step_size: float = _setting(0.0, "minimum_step_size")
    maximum_step_size: float = _setting(math.inf, "maximum_step_size")
    fixed_step_size: float | None = _setting(None, "fixed_step_size")
    internal_step_limit: int = _setting(10_000, "internal_step_limit")
    use_infinity_norm: bool = _setting(False, "use_infinity_norm")
    project_every_step: bool = _setting(False, "project_every_step")
    allow_interpolation: bool = _setting(False, "allow_interpolation")
    project_interpolated_states: bool = _setting(True, "project_interpolated_states")
    final_time: float | None = _setting(None, "final_time")
    time_scale: float = _setting(DEFAULT_TIME_SCALE, "time_scale")

    def __check_init__(self):  # after the converters: every field is a Python value here
        _positive(self.accuracy, "accuracy")
        if self.constraint_tolerance is not None:
            _positive(self.constraint_tolerance, "constraint_tolerance")
        for name in ("initial_step_size", "fixed_step_size"):
            if getattr(self, name) is not None:
                _positive(getattr(self, name), name)
        _positive(self.time_scale, "time_scale")
        if not (self.minimum_step_size >= 0 and self.maximum_step_size > 0):
            raise InvalidArgument(
                f"minimum_step_size must be >= 0 and maximum_step_size > 0, got {self.minimum_step_size}, "
                f"{self.maximum_step_size}")
        if self.minimum_step_size > self.maximum_step_size:
            raise InvalidArgument(
                f"minimum_step_size {self.minimum_step_size} exceeds maximum_step_size {self.maximum_step_size}")
        if int(self.internal_step_limit) != self.internal_step_limit or self.internal_step_limit < 1:
            raise InvalidArgument(f"internal_step_limit must be a positive int, got {self.internal_step_limit}")

    @property
    def constraint_tolerance_in_use(self) -> float:
        return self.accuracy / 10 if self.constraint_tolerance is None else self.constraint_tolerance

    @property
    def initial_step_in_use(self) -> float:
        if self.fixed_step_size is not None:
            return self.fixed_step_size
        h = self.time_scale / 10 if self.initial_step_size is None else self.initial_step_size
        return min(max(h, self.minimum_step_size), self.maximum_step_size)

    @property
    def step_bounds(self) -> tuple[float, float]:
        """(minimum, maximum) step in use."""
        if self.fixed_step_size is not None:
            return self.fixed_step_size, self.fixed_step_size
        return self.minimum_step_size, self.maximum_step_size


def _number(x, what):
    """A concrete 0-d array as a Python number; traced or shaped values cannot be static settings."""
    if isinstance(x, jax.core.Tracer) or getattr(x, "ndim", 0) != 0:
        raise InvalidArgument(
            f"integrator setting {what} must be a concrete number (settings are static: one compiled rollout per "
            f"setting), got {x!r}")
    return x.item()


def _positive(x, what):
    if not (isinstance(x, (int, float)) and math.isfinite(x) and x > 0):
        raise InvalidArgument(f"integrator setting {what} must be a positive finite number, got {x!r}")


__all__ = ["IntegratorSettings"]
