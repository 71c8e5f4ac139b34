"""MultibodySystem mixin: Simbody's System conveniences (default state, realize/prescribe entry points,
display and scale hints) and its statistics counters.

Counters are host-side Python integers counting *calls of this system's
entry points* (``system.realize``, ``system.realize_model``,
``system.prescribe_q`` / ``prescribe_u`` / ``prescribe``, ``system.project`` /
``project_q`` / ``project_u``) and the stages those
calls actually computed. A call made inside ``jax.jit`` / ``vmap`` / ``scan``
counts once per *trace*, not once per execution or per batch lane; calls of
the Model's methods (``model.realize``, what the integrators use) are not
counted. This keeps the counters exact for eager use and free of any cost in
compiled code.

Projection outcomes follow Simbody's System::projectQ/projectU: a call that
fails counts in ``get_num_failed_project_q_calls``; a successful one that
changed q counts in ``get_num_q_projections``, and one given an error estimate
in ``get_num_q_error_estimate_projections`` (the same for u). The outcome is
data, so these counters are updated by eager calls only (concrete results; a
batched result counts each lane); inside ``jit``/``vmap`` read the
ProjectResults every projection returns instead (the pure form: ``success``,
iterations and error norms per lane).
"""

from __future__ import annotations

import math

import jax
import numpy as np

from jaxbody._api.model_constraints import project_options
from jaxbody._dynamics.state_checks import check_state
from jaxbody._integrators.settings import DEFAULT_TIME_SCALE
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument

_AXES = {"x": 0, "y": 1, "z": 2}


class SystemConveniences:
    """Mixed into MultibodySystem; needs ``realize_topology()`` from it and ``_reset_event_counters()`` from
    SystemEvents."""

    def __init__(self):
        self._up_direction = (1, 1)  # (axis, sign): Simbody's default YAxis
        self._use_uniform_background = False
        self._default_time_scale = DEFAULT_TIME_SCALE
        self._default_length_scale = 1.0
        self.reset_all_counters()

    # -- states and realization --------------------------------------------------------

    def get_default_state(self):
        """The Model's default State (realizes the topology if needed); counts a Model-stage realization."""
        state = self.realize_topology().default_state()
        self._count_stage(Stage.Model)
        return state

    def realize_model(self, state):
        """Simbody's realizeModel: the State's Instance variables (locks) back to the defaults, caches dropped."""
        self._count_stage(Stage.Model)
        return self.realize_topology().realize_model(state)

    def realize(self, state, stage: Stage = Stage.Acceleration):
        """``model.realize(state, stage)``, counted: one realize call, plus one per stage it computed."""
        stage = Stage(stage)
        before = state.get_system_stage()
        self._num_realize_calls += 1
        result = self.realize_topology().realize(state, stage)
        for s in range(before + 1, result.get_system_stage() + 1):
            self._count_stage(Stage(s))
        return result

    def prescribe_q(self, state):
        """``model.prescribe_q(state)``, counted."""
        self._num_prescribe_q_calls += 1
        return self.realize_topology().prescribe_q(state)

    def prescribe_u(self, state):
        """``model.prescribe_u(state)``, counted."""
        self._num_prescribe_u_calls += 1
        return self.realize_topology().prescribe_u(state)

    def prescribe(self, state):
        """prescribe_q then prescribe_u (each counted), Simbody's System::prescribe."""
        return self.prescribe_u(self.prescribe_q(state))

    # -- projection (jaxbody._constraints.projection; counted) ------------------------------------------

    def _model_for(self, state, operation):
        """The Model, after checking that ``state`` is one of its states (InvalidArgument otherwise)."""
        model = self.realize_topology()
        check_state(model, state, operation)
        return model

    def project(self, state, accuracy=None, options=None):
        """Simbody's System::project: prescribe q, project q, prescribe u, project u. Returns (state, ProjectResults).
        ``model.project`` with the same arguments, plus Simbody's projection counters.

        Weighted least squares over the free coordinates, quaternions normalized, failure reported in the
        results (never raised); differentiable. ``accuracy`` overrides ``options.accuracy`` (default 1e-4).
        """
        self._num_project_q_calls += 1
        self._num_project_u_calls += 1
        opts = project_options(accuracy, options)
        new_state, results = out = self._model_for(state, "project").project(state, options=opts)
        self._count_outcome("q", state.q, new_state.q, results.q_final_norm <= opts.accuracy, None)
        self._count_outcome("u", state.u, new_state.u, results.u_final_norm <= opts.accuracy, None)
        return out

    def project_q(self, state, accuracy=None, options=None, q_err_estimate=None):
        """Position projection only: ``model.project_q`` plus Simbody's counters. Returns (state, ProjectResults)."""
        self._num_project_q_calls += 1
        opts = project_options(accuracy, options)
        new_state, results = out = self._model_for(state, "project_q").project_q(state, options=opts,
                                                                                 q_err_estimate=q_err_estimate)
        self._count_outcome("q", state.q, new_state.q, results.success, q_err_estimate)
        return out

    def project_u(self, state, accuracy=None, options=None, u_err_estimate=None):
        """Velocity projection only: ``model.project_u`` plus Simbody's counters. Returns (state, ProjectResults)."""
        self._num_project_u_calls += 1
        opts = project_options(accuracy, options)
        new_state, results = out = self._model_for(state, "project_u").project_u(state, options=opts,
                                                                                 u_err_estimate=u_err_estimate)
        self._count_outcome("u", state.u, new_state.u, results.success, u_err_estimate)
        return out

    def _count_outcome(self, level, before, after, success, err_estimate):
        """Simbody's outcome counters for one projection at ``level`` ("q" or "u"): ``before``/``after`` the q or
        u on entry and exit, ``success`` whether that level reached the accuracy. Eager (concrete) calls only;
        each lane of a concrete batch counts once."""
        if any(isinstance(x, jax.core.Tracer) for x in (before, after, success)):
            return
        success = np.asarray(success, bool)
        changed = np.any(np.asarray(before) != np.asarray(after), axis=-1)
        self._num_failed_project_calls[level] += int(np.sum(~success))
        self._num_projections[level] += int(np.sum(success & changed))
        if err_estimate is not None:
            self._num_error_estimate_projections[level] += int(np.sum(success))

    # -- hints (not part of the Model; may be changed at any time) -------------------------

    def set_up_direction(self, direction):
        """Which Ground axis is "up" for visualizers: "+x", "-y", "z", ... (Simbody's CoordinateDirection)."""
        text = str(direction).strip().lower()
        sign = -1 if text.startswith("-") else 1
        axis = text.lstrip("+-")
        if axis not in _AXES:
            raise InvalidArgument(f"up direction must be one of +x, -x, +y, -y, +z, -z, got {direction!r}")
        self._up_direction = (_AXES[axis], sign)
        return self

    def get_up_direction(self) -> np.ndarray:
        """The up direction as a unit vector in Ground, (3,) (default +y)."""
        axis, sign = self._up_direction
        v = np.zeros(3)
        v[axis] = sign
        return v

    def set_use_uniform_background(self, use: bool):
        """Visualizer hint: a uniform background instead of a ground plane and sky (default False)."""
        self._use_uniform_background = bool(use)
        return self

    def get_use_uniform_background(self) -> bool:
        return self._use_uniform_background

    def set_default_time_scale(self, t_scale: float):
        """Expected time scale of interesting motion (s), default 0.1; must be positive and finite."""
        self._default_time_scale = _positive(t_scale, "default time scale")
        return self

    def get_default_time_scale(self) -> float:
        return self._default_time_scale

    def set_default_length_scale(self, l_scale: float):
        """Expected length scale (m), default 1; must be positive and finite."""
        self._default_length_scale = _positive(l_scale, "default length scale")
        return self

    def get_default_length_scale(self) -> float:
        return self._default_length_scale

    # -- statistics ----------------------------------------------------------------------------

    def _count_stage(self, stage: Stage):
        self._num_realizations[Stage(stage)] += 1

    def reset_all_counters(self):
        """Zero every counter."""
        self._num_realize_calls = 0
        self._num_prescribe_q_calls = 0
        self._num_prescribe_u_calls = 0
        self._num_project_q_calls = 0
        self._num_project_u_calls = 0
        self._num_realizations = {s: 0 for s in Stage}
        self._num_failed_project_calls = {"q": 0, "u": 0}
        self._num_projections = {"q": 0, "u": 0}
        self._num_error_estimate_projections = {"q": 0, "u": 0}
        self._reset_event_counters()  # SystemEvents' handleEvents/reportEvents counters

    def get_num_realize_calls(self) -> int:
        """Calls (or traces) of ``system.realize``."""
        return self._num_realize_calls

    def get_num_realizations_of_this_stage(self, stage: Stage) -> int:
        """How many times ``stage`` was computed by this system's entry points (Topology: realize_topology;
        Model: get_default_state / realize_model; Position..Acceleration: system.realize on a State whose
        cache for that stage was not valid)."""
        return self._num_realizations[Stage(stage)]

    def get_num_prescribe_q_calls(self) -> int:
        return self._num_prescribe_q_calls

    def get_num_prescribe_u_calls(self) -> int:
        return self._num_prescribe_u_calls

    def get_num_project_q_calls(self) -> int:
        """Calls (or traces) of ``system.project`` and ``system.project_q``."""
        return self._num_project_q_calls

    def get_num_project_u_calls(self) -> int:
        """Calls (or traces) of ``system.project`` and ``system.project_u``."""
        return self._num_project_u_calls

    def get_num_failed_project_q_calls(self) -> int:
        """Eager q projections that did not reach the accuracy (each failed lane of a batch counts)."""
        return self._num_failed_project_calls["q"]

    def get_num_failed_project_u_calls(self) -> int:
        return self._num_failed_project_calls["u"]

    def get_num_q_projections(self) -> int:
        """Eager successful q projections that changed q (quaternion normalization included)."""
        return self._num_projections["q"]

    def get_num_u_projections(self) -> int:
        return self._num_projections["u"]

    def get_num_q_error_estimate_projections(self) -> int:
        """Eager successful q projections that were given an integrator error estimate."""
        return self._num_error_estimate_projections["q"]

    def get_num_u_error_estimate_projections(self) -> int:
        return self._num_error_estimate_projections["u"]


def _positive(x, what):
    x = float(x)
    if not (math.isfinite(x) and x > 0):
        raise InvalidArgument(f"{what} must be positive and finite, got {x}")
    return x


__all__ = ["SystemConveniences"]
