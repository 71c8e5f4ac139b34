"""Declaring a public operator: the stage it needs and whether it is a compiled entry point, at its definition.

Every Model, MobilizedBody and Constraint method that reads a realized State is written as

    @stage_operator(Stage.Position, jit=True)
    def calc_m(self, state):
        return mass_matrix.calc_m(self, state.position)

``stage_operator(stage)`` checks, while tracing, that the method's ``state`` argument
is realized to ``stage`` and raises StageViolation naming the method and the
stage to realize first (free at run time). The body then reads the caches it
needs (``state.position``, ``state.velocity``, ...), which the check guarantees
are there. The stage is stated here only: the decorator appends "Requires <stage>." to the method's
docstring (``help(Model.calc_m)`` shows it), and no docstring restates it by hand
(tests/test_architecture.py checks both).

Before the body runs, ``check_operands`` checks on the host (at call time, or once per trace inside a
``jit``) that every State, Model and MobilizedBody/Constraint handle among the arguments belongs to the
owner's system (their SystemSignature, jaxbody._dynamics.state), and, for a Model method, that the State's
shapes, dtype and Euler/quaternion mode are the model's. A handle method whose result depends on a Model's
numbers takes that Model as a required parameter named ``model`` (``method(state, <Simbody's arguments>,
model)``; no fallback to the System's realized model): the decorator checks that it is a Model and that every
State among the arguments fits it, naming the body or constraint. These checks read static data only, so they
cost nothing at run time; they replace the wrong numbers a foreign index or shape would otherwise give.

``jit=True`` makes the method its own ``eqx.filter_jit`` entry point: called
eagerly it compiles once per topology and argument shapes (array leaves are
traced; handles, task lists and flags are static); inside a caller's ``jax.jit``,
``vmap`` or ``grad`` it is inlined. Each trace of an entry point calls the trace hook, if one is set
(``set_trace_hook``): the tests install a counter there to prove that repeated
eager calls do not retrace; by default nothing is recorded.
"""

from __future__ import annotations

import functools
import inspect

import equinox as eqx

from jaxbody._api.memory import suggest_tiling
from jaxbody._dynamics.state import State, require
from jaxbody._dynamics.state_checks import describe_other
from jaxbody._kernels import backend
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument

_trace_hook = [None]


def set_trace_hook(hook) -> None:
    """Call ``hook(name)`` at each trace of an entry point from now on (None: stop). ``name`` is the method's
    ``__qualname__``, naming its defining class (``"Model.realize"``, ``"ModelDynamics.calc_m"``). The call
    happens inside traced Python, so once per trace. For tests (tests/api/test_entry_points.py)."""
    _trace_hook[0] = hook


def _with_stage_in_docstring(doc: str | None, stage: Stage | None) -> str | None:
    """The docstring with the declared stage appended as its last paragraph ("Requires Position.")."""
    if stage is None:
        return doc
    text = inspect.cleandoc(doc) if doc else ""
    return f"{text}\n\nRequires {stage.name}." if text else f"Requires {stage.name}."


def stage_operator(stage: Stage | None = None, *, jit: bool = False):
    """Decorate a method whose parameter ``state`` must be realized to ``stage`` (None: no requirement).

    ``jit=True``: also an ``eqx.filter_jit`` entry point (see the module docstring). A ``state`` of None is
    accepted where the method allows it (Instance-stage getters that may read the model instead).
    """

    def decorate(method):
        parameters = list(inspect.signature(method).parameters)
        position = parameters.index("state") if "state" in parameters else None
        model_at = parameters.index("model") if "model" in parameters else None
        name = method.__qualname__

        @functools.wraps(method)
        def checked(*args, **kwargs):
            if model_at is not None:
                model = kwargs["model"] if "model" in kwargs else args[model_at] if len(args) > model_at else None
                check_model_argument(method.__name__, args[0]._label(), model)
            check_operands(method.__name__, args[0], args[1:], kwargs)
            if stage is not None:
                state = kwargs["state"] if "state" in kwargs else args[position] if len(args) > position else None
                if state is not None:
                    require(state, stage, method.__name__)
            if jit and _trace_hook[0] is not None:
                _trace_hook[0](name)
            return method(*args, **kwargs)

        checked.__doc__ = _with_stage_in_docstring(method.__doc__, stage)
        checked.__jaxbody_operator__ = True
        checked.__jaxbody_stage__ = stage
        return compiled_entry_point(checked) if jit else checked

    return decorate


def _operands(args, kwargs):
    for x in list(args) + list(kwargs.values()):
        if isinstance(x, (list, tuple)) and not isinstance(x, State):
            yield from x
        else:
            yield x


def _is_model(x) -> bool:
    return callable(getattr(x, "_check_state", None))


def check_model_argument(operation: str, who: str, model) -> None:
    """A handle method's ``model`` parameter must be given a Model (it is required: nothing falls back to the
    System's realized model); ``who`` names the handle in the error."""
    if not _is_model(model):
        raise InvalidArgument(
            f"{operation}: {who} needs the Model whose numbers to use as its model argument (the "
            f"system's realize_topology(), or one from jb.replace_parameters), got {type(model).__name__}"
        )


def check_operands(operation: str, owner, args, kwargs) -> None:
    """Raise InvalidArgument unless every State, Model and handle in ``args``/``kwargs`` belongs to ``owner``'s
    system (``owner``: a Model, MobilizedBody or Constraint, each with ``_system_signature()`` and
    ``_label()``); a Model also checks each State's shapes, dtype and mode (``Model._check_state``), and so does
    a Model given to a handle's method, naming the handle.

    Host-side and static: States carry their system's signature (``State.system``), handles reach theirs
    through their matter subsystem. A State without a signature (built by hand) is checked by shape only.
    """
    own = owner._system_signature()
    check_state = getattr(owner, "_check_state", None)
    for x in _operands(args, kwargs):
        if isinstance(x, State):
            if check_state is not None:
                check_state(x, operation)
            elif x.system is not None and own is not None and x.system != own:
                raise InvalidArgument(
                    f"{operation}: {owner._label()} belongs to {own}, but the state was made by the model of "
                    f"{describe_other(x.system, own)}. Use the handles of the state's own system "
                    "(matter.get_mobilized_body(i), matter.get_constraint(i)) or a state of this system's model."
                )
            elif x.q.ndim != 1:
                raise InvalidArgument(
                    f"{operation}: {owner._label()} reads one state, got a batch (q shape {x.q.shape}): "
                    "map over the batch with jax.vmap"
                )
        elif hasattr(x, "_system_signature") and x is not owner:
            theirs = x._system_signature()
            if theirs is not None and own is not None and theirs != own:
                raise InvalidArgument(
                    f"{operation}: {x._label()} belongs to {describe_other(theirs, own)}, not to {own} "
                    f"of {owner._label()}. Handles, models and states must come from one system."
                )
    if check_state is None:
        operands = list(_operands(args, kwargs))
        for model in filter(_is_model, operands):
            for state in (x for x in operands if isinstance(x, State)):
                model._check_state(state, f"{operation} of {owner._label()}")


def entry_point(function, name: str):
    """``function`` as a compiled entry point named ``name`` (System methods): ``eqx.filter_jit``, its traces
    reported to the trace hook (``set_trace_hook``)."""

    @functools.wraps(function)
    def reported(*args, **kwargs):
        if _trace_hook[0] is not None:
            _trace_hook[0](name)
        return function(*args, **kwargs)

    return compiled_entry_point(reported)


def compiled_entry_point(function):
    """``eqx.filter_jit(function)`` whose compilation cache is also keyed on the tree backend in force
    (jaxbody._kernels.backend), so ``jb.set_backend`` takes effect at the next eager call."""

    @eqx.filter_jit
    def keyed(tree_backend, *args, **kwargs):
        with backend.use_backend(tree_backend):
            return function(*args, **kwargs)

    @functools.wraps(function)
    def call(*args, **kwargs):
        return keyed(backend.get_backend(), *args, **kwargs)

    return suggest_tiling(call, function)  # an out-of-memory batch: OutOfMemory suggesting jb.tiled_vmap
