"""MobilizedBody mixin: adopting a Motion, locking, and per-body motion queries (catalogue 3.1-3.2).

Topology-stage choices (``adopt_motion``, ``clear_motion``, ``lock_by_default``,
``set_motion_disabled_by_default``) are host-side and must precede
``system.realize_topology()``. Locks and Motion enabling are Instance-stage State
variables: ``lock``/``lock_at``/``unlock`` and ``disable_motion``/``enable_motion``
return new States (dropping every cache) and work under jit and vmap; the lock level
argument is a Python int (``jb.Motion.Position`` etc.), the values are arrays.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._api.stage_operator import stage_operator
from jaxbody._dynamics import prescribed
from jaxbody._dynamics.motion import Motion, check_level
from jaxbody._dynamics.state import State
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument


class MobilizedBodyMotion:
    """Motion and lock API of MobilizedBody (Simbody names, snake_case)."""

    _motion: Motion | None = None
    _default_lock_level: int = Motion.NoLevel
    _motion_disabled_by_default: bool = False

    # -- topology stage ----------------------------------------------------------

    def _check_can_drive(self, what):
        self.matter.system._check_not_frozen(f"{what} on {self.name}")
        if self.is_ground() or self.get_num_u() == 0:
            raise InvalidArgument(f"{self.name}: {what} needs a mobilizer with mobilities (not Ground or a Weld)")

    def adopt_motion(self, motion: Motion) -> "MobilizedBodyMotion":
        """Drive every mobility of this body with ``motion`` (replacing any earlier Motion). Before realize_topology."""
        self._check_can_drive("adopt_motion")
        if not isinstance(motion, Motion):
            raise InvalidArgument(f"{self.name}: adopt_motion needs a jb.Motion (e.g. jb.Motion.Sinusoid(...)), got {type(motion).__name__}")
        self._motion = motion._bind(self)
        return self

    def clear_motion(self) -> "MobilizedBodyMotion":
        """Remove this body's Motion (its mobilities become free). Before realize_topology."""
        self.matter.system._check_not_frozen(f"clear_motion on {self.name}")
        self._motion = None
        return self

    def has_motion(self) -> bool:
        return self._motion is not None

    def get_motion(self) -> Motion:
        if self._motion is None:
            raise InvalidArgument(f"{self.name} has no Motion")
        return self._motion

    def set_motion_disabled_by_default(self, disabled: bool = True) -> "MobilizedBodyMotion":
        """Whether the default State has this body's Motion disabled (Simbody's Motion::setDisabledByDefault).
        Before realize_topology."""
        self.matter.system._check_not_frozen(f"set_motion_disabled_by_default on {self.name}")
        self._motion_disabled_by_default = bool(disabled)
        return self

    def is_motion_disabled_by_default(self) -> bool:
        return self._motion_disabled_by_default

    def lock_by_default(self, level=Motion.Position) -> "MobilizedBodyMotion":
        """Lock this body in the default State (values from the default q and u = 0); NoLevel clears it."""
        self._check_can_drive("lock_by_default")
        self._default_lock_level = Motion.NoLevel if level == Motion.NoLevel else check_level(level)
        return self

    def get_locked_by_default_level(self) -> int:
        """Simbody's getLockByDefaultLevel: the default lock level, Motion.NoLevel (-1) when not locked."""
        return self._default_lock_level

    def is_locked_by_default(self) -> bool:
        """Whether the default State locks this body (lock_by_default with a level)."""
        return self._default_lock_level != Motion.NoLevel

    # -- locks (State, Instance stage) --------------------------------------------------

    def _q_all(self):
        return slice(self.q_start, self.q_start + self.mobilizer_prototype.nq_alloc)

    def _locks(self, state: State, level, lock_q=None, lock_u=None) -> State:
        return state.set_locks(
            state.lock_level.at[self.index].set(level),
            state.lock_q if lock_q is None else state.lock_q.at[self._q_slice(state)].set(lock_q),
            state.lock_u if lock_u is None else state.lock_u.at[self._u_slice()].set(lock_u),
        )

    @stage_operator()
    def lock(self, state: State, level=Motion.Position) -> State:
        """Lock at the current q (Position; u set to 0), the current u (Velocity) or udot = 0 (Acceleration)."""
        level = check_level(level)
        if self.get_num_u() == 0:
            return state
        if level == Motion.Position:
            state = state.set_u(state.u.at[self._u_slice()].set(0.0))
            return self._locks(state, level, lock_q=self.get_q_as_vector(state))
        if level == Motion.Velocity:
            return self._locks(state, level, lock_u=self.get_u_as_vector(state))
        return self._locks(state, level, lock_u=jnp.zeros(self.get_num_u(), state.u.dtype))

    @stage_operator()
    def lock_at(self, state: State, value, level=Motion.Position) -> State:
        """Lock at ``value``: q (Position; sets q, and u = 0), u (Velocity; sets u) or udot (Acceleration).

        ``value``: a vector of the body's nq in use (Position) or nu, or a scalar for a one-q, one-u mobilizer.
        """
        level = check_level(level)
        n = self.get_num_q(state) if level == Motion.Position else self.get_num_u()
        value = jnp.asarray(value, state.q.dtype)
        if value.ndim == 0 and self.get_num_q(state) == 1 and self.get_num_u() == 1:
            value = value[None]
        if value.shape != (n,):
            raise InvalidArgument(f"{self.name}: lock_at value must have length {n} at this level, got shape {value.shape}")
        if level == Motion.Position:
            state = self.set_q_from_vector(state, value)
            state = state.set_u(state.u.at[self._u_slice()].set(0.0))
            return self._locks(state, level, lock_q=value)
        if level == Motion.Velocity:
            return self._locks(self.set_u_from_vector(state, value), level, lock_u=value)
        return self._locks(state, level, lock_u=value)

    @stage_operator()
    def unlock(self, state: State) -> State:
        """Remove this body's lock (its Motion, if any, takes over again)."""
        return state.set_locks(state.lock_level.at[self.index].set(Motion.NoLevel), state.lock_q, state.lock_u)

    @stage_operator()
    def is_locked(self, state: State):
        """bool array: whether this body is locked in ``state``."""
        return state.lock_level[self.index] != Motion.NoLevel

    @stage_operator()
    def get_lock_level(self, state: State):
        """int array: the lock level, or Motion.NoLevel (-1)."""
        return state.lock_level[self.index]

    @stage_operator()
    def get_lock_value_as_vector(self, state: State):
        """The locked q (Position, nq in use), u (Velocity) or udot (Acceleration); empty if unlocked.

        The length depends on the level, so this needs a concrete State (inside jit read
        ``state.lock_q`` / ``state.lock_u`` with get_lock_level).
        """
        try:
            level = int(state.lock_level[self.index])
        except Exception:  # a tracer: the length would be data dependent
            raise InvalidArgument(
                f"{self.name}: get_lock_value_as_vector needs a concrete State; under jit read state.lock_q / state.lock_u"
            ) from None
        if level == Motion.NoLevel:
            return jnp.zeros(0, state.q.dtype)
        if level == Motion.Position:
            return state.lock_q[self._q_slice(state)]
        return state.lock_u[self._u_slice()]

    # -- Motion enabling (State, Instance stage) ---------------------------------------------

    def _check_has_motion(self, what):
        if not self.has_motion():
            raise InvalidArgument(f"{self.name}: {what} needs an adopted Motion (adopt_motion before realize_topology)")

    @stage_operator()
    def disable_motion(self, state: State) -> State:
        """A new State in which this body's Motion is off (Simbody's Motion::disable): its mobilities are free
        unless locked. Drops every cache; no recompilation."""
        self._check_has_motion("disable_motion")
        return state.set_motion_enabled(state.motion_enabled.at[self.index].set(False))

    @stage_operator()
    def enable_motion(self, state: State) -> State:
        """A new State in which this body's Motion drives it again (Simbody's Motion::enable)."""
        self._check_has_motion("enable_motion")
        return state.set_motion_enabled(state.motion_enabled.at[self.index].set(True))

    @stage_operator()
    def is_motion_disabled(self, state: State):
        """bool array: whether this body's Motion is disabled in ``state`` (Simbody's Motion::isDisabled)."""
        self._check_has_motion("is_motion_disabled")
        return ~state.motion_enabled[self.index]

    # -- per-body motion queries -----------------------------------------------------------

    def _methods(self, state: State):
        model = self.matter.system._model
        if model is None:
            raise InvalidArgument(f"{self.name}: motion methods need the realized topology (system.realize_topology())")
        return prescribed.calc_motion_methods(model, state)[self.index]

    @stage_operator()
    def get_q_motion_method(self, state: State):
        """Motion.Zero / Prescribed / Free (int array) for this body's q in ``state``."""
        return self._methods(state)[0]

    @stage_operator()
    def get_u_motion_method(self, state: State):
        return self._methods(state)[1]

    @stage_operator()
    def get_udot_motion_method(self, state: State):
        return self._methods(state)[2]

    @stage_operator(Stage.Acceleration)
    def get_tau_as_vector(self, state: State):
        """(nu,) this mobilizer's prescribed-motion forces motion_forces (zero if free)."""
        return state.acceleration.motion_forces[self._u_slice()]

    @stage_operator()
    def get_one_tau(self, state: State, which: int):
        self._check_u_index(which)
        return self.get_tau_as_vector(state)[which]


__all__ = ["MobilizedBodyMotion"]
