"""``jb.SemiExplicitEulerTimeStepper``: Simbody's time stepper for unilateral contact and friction.

    stepper = jb.SemiExplicitEulerTimeStepper(system)       # gathers matter's adopted unilateral contacts
    stepper.set_restitution_model("newton")
    state, report = stepper.step(state, 1e-3)               # pure, jit/vmap/grad-able
    final, trajectory, reports = stepper.simulate(state, 1e-3, 1000)

Settings are Simbody's (SemiExplicitEulerTimeStepper.h) with its defaults: accuracy 1e-2, constraint
tolerance 1e-3, Poisson restitution, Simultaneous induced impacts (Sequential and Mixed available, 5 rounds),
Bilateral position projection, capture,
min-COR and transition velocities 0 ("use 2 x constraint tolerance"). Impulse solver: PLUS by default
(Simbody's PLUSImpulseSolver: Newton tolerance 1e-10, 20 iterations; jaxbody._integrators.plus_impulse_solver)
or PGS (``set_impulse_solver_type(ImpulseSolverType.PGS)``: Simbody's PGSImpulseSolver, SOR 1.2, tolerance 1e-6,
100 iterations). ``initialize``/``step_to``/``get_state`` keep Simbody's
stateful interface on the host; ``step`` and ``simulate`` are the functional core (Simbody catalogue 2.20).
Motions and locks (per State) are honoured, which Simbody's stepper leaves as a TODO: the state is prescribed
before and after each step, and mobilities with known udot take no impulse (their Motion or lock reacts).
The stepper's ``contacts`` (a UnilateralContactSet pytree) hold the coefficients and geometry as array
leaves: pass a modified copy (``eqx.tree_at``) as ``contacts=`` to sweep or differentiate them.

A stepper owns its Model: ``SemiExplicitEulerTimeStepper(system, model)`` steps ``model`` (of ``system``), and
``SemiExplicitEulerTimeStepper(system)`` the System's realized one (``system.realize_topology()``); it is
``stepper.model``. ``step``, ``simulate`` and ``calc_contact_kinematics`` use it unless given ``model=`` (to sweep
or differentiate a Model, e.g. one from ``jb.replace_parameters``), which must be of the stepper's system and,
unless ``contacts=`` is given too, of its dtype (the stepper's contacts were built for it); the State must fit
the Model in use. Models are never mixed: every check names what does not fit.
"""

from __future__ import annotations

import enum

import jax
import jax.numpy as jnp

from jaxbody._api.stage_operator import check_model_argument, entry_point
from jaxbody._api.unilateral import build_contact_set, check_contact_set
from jaxbody._constraints.unilateral.contact_set import calc_contact_kinematics
from jaxbody._dynamics.state_checks import check_state, describe_other
from jaxbody._integrators import semi_explicit_euler_time_stepper as seets
from jaxbody._integrators.fixed_step import step_counts
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument

_RESTITUTION = ("poisson", "newton", "none")


class ImpulseSolverType(enum.Enum):
    """Simbody's SemiExplicitEulerTimeStepper::ImpulseSolverType (also ``SemiExplicitEulerTimeStepper.PLUS``)."""

    PLUS = "plus"
    PGS = "pgs"


_PROJECTION = ("bilateral", "unilateral", "none")


def _step(model, contacts, options, state, h):
    return seets.step(model, contacts, options, state, h)


def _simulate(model, contacts, options, state, h, n_steps, save_every):
    def inner(s, _):
        s, report = seets.step(model, contacts, options, s, h)
        return s, report

    def outer(s, _):
        s, reports = jax.lax.scan(inner, s, None, length=save_every)
        return s, (s, jax.tree_util.tree_map(lambda x: x[-1], reports))

    final, (trajectory, reports) = jax.lax.scan(outer, state.drop_caches(), None, length=n_steps // save_every)
    return final, trajectory, reports


def _kinematics(model, contacts, state):
    s = model.realize(state, Stage.Position)
    return calc_contact_kinematics(model, s.position, s.q, contacts)


_kinematics_entry = entry_point(_kinematics, "SemiExplicitEulerTimeStepper.calc_contact_kinematics")
_step_entry = entry_point(_step, "SemiExplicitEulerTimeStepper.step")
_simulate_entry = entry_point(_simulate, "SemiExplicitEulerTimeStepper.simulate")


def _choice(value, allowed, what) -> str:
    v = str(getattr(value, "name", value)).lower()
    v = {"norestitution": "none", "nopositionprojection": "none"}.get(v, v)
    if v not in allowed:
        raise InvalidArgument(f"{what} must be one of {allowed}, got {value!r}")
    return v


def _nonnegative(x, what) -> float:
    x = float(x)
    if not x >= 0:
        raise InvalidArgument(f"{what} must be nonnegative, got {x}")
    return x


class SemiExplicitEulerTimeStepper:
    """Velocity-level stepper with impulses for the system's adopted unilateral contacts."""

    ImpulseSolverType = ImpulseSolverType
    PLUS, PGS = ImpulseSolverType.PLUS, ImpulseSolverType.PGS

    def __init__(self, system, model=None):
        """``model``: the Model this stepper steps (a Model of ``system``); None: ``system.realize_topology()``."""
        matter = system.get_matter_subsystem()
        self.system = system
        if model is None:
            model = system.realize_topology()
        check_model_argument("SemiExplicitEulerTimeStepper", matter._describe(), model)
        if model.signature != matter._signature():
            raise InvalidArgument(f"SemiExplicitEulerTimeStepper: the model is of "
                                  f"{describe_other(model.signature, matter._signature())}, not of {matter._signature()}")
        self.model = model
        if self.model.get_num_constraints():
            raise InvalidArgument(
                f"SemiExplicitEulerTimeStepper: {matter._describe()} has {self.model.get_num_constraints()} bilateral "
                "constraint(s); they would enter udot but not the impulse problem (Simbody's stepper leaves "
                "unconditional constraints as a TODO), so jaxbody refuses them: use unilateral contacts only")
        self.contacts = build_contact_set(matter, self.model.default_q.dtype)
        self._accuracy, self._cons_tol = 1e-2, 1e-3
        self._restitution, self._projection = "poisson", "bilateral"
        self._induced, self._max_induced = "simultaneous", 5
        self._capture = self._min_cor = self._transition = 0.0
        self._tol, self._max_iters, self._early_exit = 1e-6, 100, False
        self._solver = "plus"
        self._state = None

    # -- Simbody's settings ---------------------------------------------------------------
    def set_accuracy(self, accuracy):
        self._accuracy = _nonnegative(accuracy, "accuracy")

    def get_accuracy_in_use(self) -> float:
        return self._accuracy

    def set_constraint_tolerance(self, tol):
        self._cons_tol = _nonnegative(tol, "constraint tolerance")

    def get_constraint_tolerance_in_use(self) -> float:
        return self._cons_tol

    def set_restitution_model(self, model):
        """"poisson" (default), "newton" or "none" (Simbody's Poisson, Newton, NoRestitution)."""
        self._restitution = _choice(model, _RESTITUTION, "restitution model")

    def get_restitution_model(self) -> str:
        return self._restitution

    def set_position_projection_method(self, method):
        """"bilateral" (default), "unilateral" or "none" (Simbody's NoPositionProjection)."""
        self._projection = _choice(method, _PROJECTION, "position projection method")

    def get_position_projection_method(self) -> str:
        return self._projection

    def set_induced_impact_model(self, model):
        """"simultaneous" (default: one solve of all proximal contacts), "sequential" or "mixed" (rounds)."""
        self._induced = _choice(model, ("simultaneous", "sequential", "mixed"), "induced impact model")

    def get_induced_impact_model(self) -> str:
        return self._induced

    def set_max_induced_impacts_per_step(self, max_induced: int):
        """Rounds of Sequential/Mixed impacts per step (Simbody's default 5; ignored by Simultaneous)."""
        if not isinstance(max_induced, int) or max_induced < 0:
            raise InvalidArgument(f"max induced impacts per step must be a nonnegative integer, got {max_induced!r}")
        self._max_induced = max_induced

    def get_max_induced_impacts_per_step(self) -> int:
        return self._max_induced

    def set_impulse_solver_type(self, solver):
        """``ImpulseSolverType.PLUS`` (default: exact active-set solve) or ``.PGS`` (iterative); or "plus"/"pgs"."""
        self._solver = _choice(solver, ("plus", "pgs"), "impulse solver type")

    def get_impulse_solver_type(self) -> str:
        return self._solver

    def set_pgs_convergence(self, tol=1e-6, max_iterations=100, early_exit=False):
        """PGS tolerance (RMS of the enforced residuals, m/s), the iteration bound, and whether to stop sweeping
        at convergence (faster; then ``step`` is not reverse-mode differentiable, forward mode still is)."""
        self._tol, self._max_iters = _nonnegative(tol, "tol"), int(max_iterations)
        self._early_exit = bool(early_exit)

    def set_default_impact_capture_velocity(self, v):
        self._capture = _nonnegative(v, "impact capture velocity")

    def set_default_impact_min_cor_velocity(self, v):
        self._min_cor = _nonnegative(v, "min-COR velocity")

    def set_default_friction_transition_velocity(self, v):
        self._transition = _nonnegative(v, "friction transition velocity")

    def get_default_impact_capture_velocity_in_use(self) -> float:
        return max(self._capture, 2 * self._cons_tol)

    def get_default_impact_min_cor_velocity_in_use(self) -> float:
        return max(self._min_cor, self.get_default_impact_capture_velocity_in_use())

    def get_default_friction_transition_velocity_in_use(self) -> float:
        return max(self._transition, 2 * self._cons_tol)

    def options(self) -> seets.StepperOptions:
        """The static options of a step. Simbody's calcCoefficientsOfFriction passes the *set* transition
        velocity (not the in-use one), so the static coefficient applies only at zero slip by default."""
        return seets.StepperOptions(
            self._restitution, self._projection, self._cons_tol, self.get_default_impact_capture_velocity_in_use(),
            self.get_default_impact_min_cor_velocity_in_use(), self._transition, self._tol, self._max_iters,
            self._early_exit, self._induced, self._max_induced, self._solver)

    # -- functional core --------------------------------------------------------------------
    def _operands(self, operation, state, model, contacts):
        """(Model, contacts) of a call: the stepper's own unless given, checked to fit each other and the State."""
        operation = f"SemiExplicitEulerTimeStepper.{operation}"
        if model is not None:
            check_model_argument(operation, "the stepper", model)
            if model.signature != self.model.signature:
                raise InvalidArgument(f"{operation}: the model is of {describe_other(model.signature, self.model.signature)}, "
                                      f"but this stepper steps {self.model.signature}")
            if contacts is None and model.default_q.dtype != self.model.default_q.dtype:
                raise InvalidArgument(
                    f"{operation}: the model is {model.default_q.dtype} but the stepper's contacts are "
                    f"{self.model.default_q.dtype}: build a stepper with this model "
                    "(SemiExplicitEulerTimeStepper(system, model)) or pass contacts= of its dtype")
        model = self.model if model is None else model
        check_state(model, state, operation)
        if contacts is None:
            return model, self.contacts
        check_contact_set(self.system.get_matter_subsystem(), contacts, operation)
        return model, contacts

    def calc_contact_kinematics(self, state, *, model=None, contacts=None):
        """Every contact's separation ``perr`` (nc,) (>= 0 when satisfied) and Jacobian rows ``G`` (nc, 3, nu)
        (normal, friction 1, friction 2: ``G u`` are the separation rate and slip velocities), with its
        coefficients, in UnilateralContactIndex order (a ContactKinematics). Realizes Position itself.
        ``model``/``contacts``: this stepper's unless given (module docstring)."""
        model, contacts = self._operands("calc_contact_kinematics", state, model, contacts)
        return _kinematics_entry(model, contacts, state)

    def step(self, state, h, *, model=None, contacts=None):
        """One step of size h (s): (new State, StepReport). Pure; works under jit, vmap and grad.
        ``model``/``contacts``: this stepper's unless given (module docstring)."""
        model, contacts = self._operands("step", state, model, contacts)
        return _step_entry(model, contacts, self.options(), state, jnp.asarray(h, state.q.dtype))

    def simulate(self, state, h, n_steps: int, save_every: int = 1, *, model=None, contacts=None):
        """``n_steps`` steps: (final State, trajectory States, StepReports of each saved step).
        ``model``/``contacts``: this stepper's unless given (module docstring)."""
        n_steps, save_every = step_counts(n_steps, save_every)
        model, contacts = self._operands("simulate", state, model, contacts)
        return _simulate_entry(model, contacts, self.options(), state, jnp.asarray(h, state.q.dtype), n_steps,
                               save_every)

    # -- Simbody's stateful interface ---------------------------------------------------------
    def initialize(self, state):
        self._state = state

    def get_state(self):
        if self._state is None:
            raise InvalidArgument("call initialize(state) first")
        return self._state

    def get_time(self):
        return self.get_state().t

    def step_to(self, time):
        """Advance the internal state by one step to ``time`` (Simbody's stepTo: a single step of t - t0)."""
        state = self.get_state()
        self._state, report = self.step(state, time - state.t)
        return report
