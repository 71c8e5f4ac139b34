"""Declaring a public operator: the stage it needs and whether it is a compiled entry point, at its definition.

Every Model, MobilizedBody and Constraint method that reads a realized State is written as

    @operator(Stage.Position, jit=True)
    def calc_m(self, state):
        return mass_matrix.calc_m(self, state.position)

``operator(stage)`` checks, while tracing, that the method's ``state`` argument
is realized to ``stage`` and raises StageViolation naming the method and the
stage to realize first (free at run time). The body then reads the caches it
needs (``state.position``, ``state.velocity``, ...), which the check guarantees
are there.

``jit=True`` makes the method its own ``eqx.filter_jit`` entry point: called
eagerly it compiles once per topology and argument shapes (array leaves are
traced; handles, task lists and flags are static); inside a caller's ``jax.jit``,
``vmap`` or ``grad`` it is inlined. Each trace of an entry point is counted in
``trace_count(name)``, which the tests use to prove that repeated eager calls
do not retrace.
"""

from __future__ import annotations

import collections
import functools
import inspect

import equinox as eqx

from jaxbody._dynamics.state import require
from jaxbody._typing import Stage

_TRACES: collections.Counter = collections.Counter()


def trace_count(name: str) -> int:
    """How many times the entry point ``name`` (its ``__qualname__``: the defining class, e.g. ``"Model.realize"``, ``"ModelDynamics.calc_m"``) was traced."""
    return _TRACES[name]


def count_trace(name: str) -> None:
    """Record one trace of ``name`` (called from inside traced Python, so it runs once per trace)."""
    _TRACES[name] += 1


def operator(stage: Stage | None = None, *, jit: bool = False):
    """Decorate a method whose parameter ``state`` must be realized to ``stage`` (None: no requirement).

    ``jit=True``: also an ``eqx.filter_jit`` entry point (see the module docstring). A ``state`` of None is
    accepted where the method allows it (Instance-stage getters that may read the model instead).
    """

    def decorate(method):
        position = list(inspect.signature(method).parameters).index("state") if stage is not None else None
        name = method.__qualname__

        @functools.wraps(method)
        def checked(*args, **kwargs):
            if stage is not None:
                state = kwargs["state"] if "state" in kwargs else args[position] if len(args) > position else None
                if state is not None:
                    require(state, stage, method.__name__)
            if jit:
                count_trace(name)
            return method(*args, **kwargs)

        return eqx.filter_jit(checked) if jit else checked

    return decorate


def entry_point(function, name: str):
    """``function`` as a compiled entry point named ``name`` (System methods): ``eqx.filter_jit`` plus trace counting."""

    @functools.wraps(function)
    def counted(*args, **kwargs):
        count_trace(name)
        return function(*args, **kwargs)

    return eqx.filter_jit(counted)
