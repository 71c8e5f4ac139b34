"""SimbodyMatterSubsystem mixin: Simbody's matter-level bookkeeping that has no other home.

``get_ground`` is Simbody's getGround (``Ground()`` is its synonym). Enabling a
constraint is an Instance-stage State variable, so ``set_constraint_is_disabled``
returns a new State (functional form of Simbody's setConstraintIsDisabled); both
work under jit and vmap (the flag may be an array).
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._api.stage_operator import stage_operator
from jaxbody._dynamics.state import State
from jaxbody.errors import InvalidArgument


class MatterBookkeeping:
    """Mixed into SimbodyMatterSubsystem; needs its ``_ground`` and ``_constraints``."""

    def get_ground(self):
        """The Ground MobilizedBody (body 0)."""
        return self._ground

    def _own_constraint(self, constraint):
        """``constraint`` checked to be a jb.Constraint (check_operands has checked it is of this system)."""
        if not hasattr(constraint, "ctype") or not 0 <= getattr(constraint, "index", -1) < len(self._constraints):
            raise InvalidArgument(f"expected a jb.Constraint of {self._describe()}, got {constraint!r}")
        return constraint

    @stage_operator()
    def set_constraint_is_disabled(self, state: State, constraint, disabled=True) -> State:
        """A new State with ``constraint`` (a jb.Constraint of this matter) disabled (or enabled with False)."""
        index = self._own_constraint(constraint).index
        return state.set_constraint_enabled(state.constraint_enabled.at[index].set(~jnp.asarray(disabled, bool)))

    @stage_operator()
    def is_constraint_disabled(self, state: State, constraint):
        """bool array: whether ``constraint`` is disabled in ``state``."""
        return ~state.constraint_enabled[self._own_constraint(constraint).index]

    def _system_signature(self):
        """Its system's SystemSignature (for jaxbody._api.stage_operator.check_operands)."""
        return self._signature()

    def _label(self) -> str:
        return f"the matter subsystem of {self._describe()}"


__all__ = ["MatterBookkeeping"]
