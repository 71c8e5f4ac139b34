"""Model mixin: prescribe solvers, motion multipliers and errors, free q/u bookkeeping (catalogue 3, 4.1).

Two forms for everything whose Simbody result has a data-dependent length:

* mask forms (``get_free_q_mask`` ..., ``find_motion_forces``,
  ``calc_motion_errors(..., packed=False)``): fixed-shape arrays, jit-,
  vmap- and grad-safe; use these inside traced code;
* Simbody's packed/index forms (``get_free_q_index`` ..., ``pack_free_q``,
  ``get_motion_multipliers``, ``calc_motion_errors``): numpy on the host, for
  a *concrete* State; called on traced values they raise InvalidArgument.

All orders are Simbody's: q or u index order (= MobilizedBodyIndex order).
No Stage is required beyond what is named: every State carries its Instance
information (locks) and the Motions are part of the Model.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._api.stage_operator import stage_operator
from jaxbody._dynamics import prescribed
from jaxbody._dynamics.state import State, require
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument

_slot_masks = eqx.filter_jit(prescribed.calc_slot_masks)


def _host(x, what: str) -> np.ndarray:
    try:
        return np.asarray(x)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        raise InvalidArgument(
            f"{what} returns a data-dependent length and needs a concrete State; under jit/vmap use the "
            "mask forms (get_free_q_mask, get_free_u_mask, get_free_udot_mask, get_known_udot_mask, "
            "find_motion_forces, calc_motion_errors(..., packed=False))"
        ) from None


class ModelMotion:
    """Prescribed-motion operators of Model (Simbody's SimbodyMatterSubsystem / System solvers)."""

    # -- prescribe solvers (Simbody's System::prescribeQ / prescribeU / prescribe) --------------

    @stage_operator(jit=True)
    def prescribe_q(self, state: State) -> State:
        """State with each known q set to its prescribed value at state.t (locks, position Motions)."""
        return prescribed.prescribe_q(self, state)

    @stage_operator(jit=True)
    def prescribe_u(self, state: State) -> State:
        """State with each known u set to its prescribed value at (t, q); zero-method u set to 0."""
        return prescribed.prescribe_u(self, state)

    @stage_operator(jit=True)
    def prescribe(self, state: State) -> State:
        """``prescribe_u(prescribe_q(state))``: what every integrator stage does before realizing."""
        return prescribed.prescribe(self, state)

    # -- masks (jit-safe) --------------------------------------------------------------------

    @stage_operator(jit=True)
    def get_motion_methods(self, state: State):
        """(nbodies, 3) int32 Motion::Method of every body's (q, u, udot) in ``state``."""
        return prescribed.calc_motion_methods(self, state)

    @stage_operator(jit=True)
    def get_free_q_mask(self, state: State):
        """(nq,) bool: q that are free (not locked, prescribed or unused slots)."""
        return prescribed.calc_slot_masks(self, state).free_q

    @stage_operator(jit=True)
    def get_free_u_mask(self, state: State):
        """(nu,) bool: u that are free (method Free)."""
        return prescribed.calc_slot_masks(self, state).free_u

    @stage_operator(jit=True)
    def get_free_udot_mask(self, state: State):
        """(nu,) bool: udots computed from forces; the complement of get_known_udot_mask."""
        return prescribed.calc_slot_masks(self, state).free_udot

    @stage_operator(jit=True)
    def get_known_udot_mask(self, state: State):
        """(nu,) bool: udots known from a lock or Motion (one motion force each)."""
        return prescribed.calc_slot_masks(self, state).known_udot

    # -- Simbody's index lists and packing (host) -------------------------------------------------

    def _mask(self, state, which, what):
        return _host(getattr(_slot_masks(self, state), which), what)

    @stage_operator()
    def get_free_q_index(self, state: State) -> np.ndarray:
        """Indices of the free q (Simbody's getFreeQIndex), int numpy array. Concrete State only."""
        return np.flatnonzero(self._mask(state, "free_q", "get_free_q_index"))

    @stage_operator()
    def get_free_u_index(self, state: State) -> np.ndarray:
        """Indices of the free u (getFreeUIndex). Concrete State only."""
        return np.flatnonzero(self._mask(state, "free_u", "get_free_u_index"))

    @stage_operator()
    def get_free_udot_index(self, state: State) -> np.ndarray:
        """Indices of the free udots (getFreeUDotIndex). Concrete State only."""
        return np.flatnonzero(self._mask(state, "free_udot", "get_free_udot_index"))

    @stage_operator()
    def get_known_udot_index(self, state: State) -> np.ndarray:
        """Indices of the known udots (getKnownUDotIndex), the order of the motion multipliers. Concrete State only."""
        return np.flatnonzero(self._mask(state, "known_udot", "get_known_udot_index"))

    @stage_operator()
    def pack_free_q(self, state: State, all_q):
        """``all_q`` (nq,) restricted to the free q, in order. Concrete State only."""
        return jnp.asarray(self._vec(all_q, self.topology.nq, "all_q"))[self.get_free_q_index(state)]

    @stage_operator()
    def unpack_free_q(self, state: State, free_q, unpacked_free_q=None):
        """(nq,) ``unpacked_free_q`` (default zeros) with its free entries replaced by ``free_q``.

        The entries that are not free are left as given (Simbody's unpackFreeQ). Concrete State only.
        """
        return self._unpack(self.get_free_q_index(state), free_q, unpacked_free_q, self.topology.nq, "free_q")

    @stage_operator()
    def pack_free_u(self, state: State, all_u):
        """``all_u`` (nu,) restricted to the free u, in order. Concrete State only."""
        return jnp.asarray(self._mobility(all_u, "all_u"))[self.get_free_u_index(state)]

    @stage_operator()
    def unpack_free_u(self, state: State, free_u, unpacked_free_u=None):
        """(nu,) ``unpacked_free_u`` (default zeros) with its free entries replaced. Concrete State only."""
        return self._unpack(self.get_free_u_index(state), free_u, unpacked_free_u, self.topology.nu, "free_u")

    def _unpack(self, index, packed, base, n, what):
        packed = self._vec(packed, index.size, what)
        base = jnp.zeros(n, packed.dtype) if base is None else self._vec(base, n, f"unpacked_{what}")
        return base.at[index].set(packed)

    # -- motion multipliers, forces, power, errors -------------------------------------------------

    @stage_operator(Stage.Acceleration, jit=True)
    def find_motion_forces(self, state: State):
        """(nu,) Simbody's prescribed-motion forces unpacked into u slots, zero on free mobilities. They are on the left of ``M udot + motion_forces = f - c``: the applied mobility forces that would
        produce the prescribed motion are ``-motion_forces``.
        """
        return state.acceleration.motion_forces

    @stage_operator(Stage.Acceleration)
    def get_motion_multipliers(self, state: State) -> np.ndarray:
        """The motion forces packed in get_known_udot_index order (Simbody's getMotionMultipliers). Concrete State only."""
        motion_forces = _host(self.find_motion_forces(state), "get_motion_multipliers")
        return motion_forces[self.get_known_udot_index(state)]

    @stage_operator(Stage.Acceleration, jit=True)
    def calc_motion_power(self, state: State):
        """Power (W) the Motions and locks add to the system, ``-motion_forces . u``."""
        return -jnp.dot(self.find_motion_forces(state), state.u)

    @stage_operator()
    def calc_motion_errors(self, state: State, stage: Stage, packed: bool = True):
        """Actual minus prescribed values of the known q (stage Position), u (Velocity) or udot (Acceleration).

        packed=True (Simbody): numpy, one entry per known value in index order, concrete State only.
        packed=False: jit-safe, unpacked into q or u slots with zeros elsewhere.
        Acceleration requires the state realized to Acceleration.
        """
        stage = Stage(stage)
        masks = prescribed.calc_slot_masks(self, state)
        if stage == Stage.Position:
            known, err = masks.known_q, state.q - prescribed.calc_prescribed_q(self, state)
        elif stage == Stage.Velocity:
            known, err = masks.known_u, state.u - prescribed.calc_prescribed_u(self, state)
        elif stage == Stage.Acceleration:
            udot = require(state, Stage.Acceleration, "calc_motion_errors").acceleration.udot  # only this stage needs it
            known, err = masks.known_udot, udot - prescribed.calc_prescribed_udot(self, state)
        else:
            raise InvalidArgument(f"calc_motion_errors: stage must be Position, Velocity or Acceleration, got {stage!r}")
        if not packed:
            return jnp.where(known, err, 0.0)
        return _host(err, "calc_motion_errors")[_host(known, "calc_motion_errors")]

    @stage_operator(jit=True)
    def realize_model(self, state: State) -> State:
        """Simbody's realizeModel: Instance variables (locks, Motion enabling) back to their defaults; drops every
        cache."""
        default = self.default_state()
        return state.set_locks(default.lock_level, default.lock_q, default.lock_u).set_motion_enabled(default.motion_enabled)


__all__ = ["ModelMotion"]
