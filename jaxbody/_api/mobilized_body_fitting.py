"""Simbody's MobilizedBody::setQToFit* / setUToFit* as a mixin of MobilizedBody.

Each method returns a new State whose q (or u) slots of this mobilizer best reproduce a requested mobilizer
transform X_FM (or velocity V_FM, measured and expressed in F, linear part at Mo), using the mobilizer's
``q_fit_*`` / ``u_fit_*`` methods (closed forms for the built-in types, see jaxbody/mobilizers). Coordinates
the target does not determine keep their current values, as in Simbody. The State's Euler/quaternion mode
(``mobilizer_in(state)``) decides how q is written. Parameters (screw pitch, offsets, beam length) come from
``model``, a required argument after Simbody's (``set_q_to_fit_transform(state, X_FM, model)``: the package's
convention for every handle method whose result depends on a Model's numbers; the State must fit it). All
methods work under jit, vmap and grad (also with respect to ``model``); q/u setters drop the State's
Position/Velocity caches.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._api.stage_operator import stage_operator
from jaxbody._dynamics.state import State
from jaxbody._math.spatial import Rotation, Transform
from jaxbody.errors import InvalidArgument


def _rotation(R, what):
    R = R.R if isinstance(R, Rotation) else jnp.asarray(R)
    if R.shape != (3, 3):
        raise InvalidArgument(f"{what} must be a jb.Rotation or a 3x3 matrix, got shape {R.shape}")
    return R


def _vec3(x, what):
    x = jnp.asarray(x)
    if x.shape != (3,):
        raise InvalidArgument(f"{what} must have shape (3,), got {x.shape}")
    return x


class MobilizedBodyFitting:
    """Mixin: uses ``q_start``, ``u_start``, ``mobilizer_in`` and ``_mobilizer_params`` of MobilizedBody."""

    def _fit_q(self, state: State, model, fit) -> State:
        """state with this mobilizer's q slots replaced by ``fit(mobilizer, q (1, nq_alloc), params (1, n))``."""
        mob = self.mobilizer_in(state)
        if mob.nq_alloc == 0:
            return state
        dtype = state.q.dtype
        sl = slice(self.q_start, self.q_start + mob.nq_alloc)
        params = self._mobilizer_params(model).astype(dtype)[None]
        q = fit(mob, state.q[sl][None], params)[0]
        return state.set_q(state.q.at[sl].set(q.astype(dtype)))

    def _fit_u(self, state: State, model, fit) -> State:
        """state with this mobilizer's u replaced by ``fit(mobilizer, q (1, nq_alloc), u (1, nu), params)``."""
        mob = self.mobilizer_in(state)
        if mob.nu == 0:
            return state
        dtype = state.u.dtype
        q = state.q[self.q_start : self.q_start + mob.nq_alloc][None]
        sl = slice(self.u_start, self.u_start + mob.nu)
        params = self._mobilizer_params(model).astype(dtype)[None]
        u = fit(mob, q, state.u[sl][None], params)[0]
        return state.set_u(state.u.at[sl].set(u.astype(dtype)))

    @stage_operator()
    def set_q_to_fit_transform(self, state: State, X_FM, model) -> State:
        """q best reproducing ``X_FM`` (jb.Transform or (R (3, 3), p (3,)) in F, m). Type-specific order:
        rotation then translation by default; Planar, Free, FreeLine and Bushing fit translation first."""
        R, p = (X_FM.R, X_FM.p) if isinstance(X_FM, Transform) else X_FM
        R, p = _rotation(R, "X_FM rotation"), _vec3(p, "X_FM translation")
        return self._fit_q(state, model, lambda m, q, prm: m.q_fit_transform(q, R[None], p[None], prm))

    @stage_operator()
    def set_q_to_fit_rotation(self, state: State, R_FM, model) -> State:
        """q best reproducing the rotation ``R_FM`` (jb.Rotation or 3x3); translation-only q kept."""
        R = _rotation(R_FM, "R_FM")
        return self._fit_q(state, model, lambda m, q, prm: m.q_fit_rotation(q, R[None], prm))

    @stage_operator()
    def set_q_to_fit_translation(self, state: State, p_FM, model) -> State:
        """q best reproducing the translation ``p_FM`` (3,) (m, in F); rotation-only q kept (type-specific)."""
        p = _vec3(p_FM, "p_FM")
        return self._fit_q(state, model, lambda m, q, prm: m.q_fit_translation(q, p[None], prm))

    @stage_operator()
    def set_u_to_fit_velocity(self, state: State, V_FM, model) -> State:
        """u best reproducing ``V_FM`` (2, 3) = (w_FM rad/s, v_FM m/s), in F: angular first, then linear."""
        V = jnp.asarray(V_FM)
        if V.shape != (2, 3):
            raise InvalidArgument(f"V_FM must have shape (2, 3) (angular, linear), got {V.shape}")
        return self._fit_u(state, model, lambda m, q, u, prm: m.u_fit_velocity(q, u, V[None, 0], V[None, 1], prm))

    @stage_operator()
    def set_u_to_fit_angular_velocity(self, state: State, w_FM, model) -> State:
        """u best reproducing the angular velocity ``w_FM`` (3,) (rad/s, in F)."""
        w = _vec3(w_FM, "w_FM")
        return self._fit_u(state, model, lambda m, q, u, prm: m.u_fit_angular_velocity(q, u, w[None], prm))

    @stage_operator()
    def set_u_to_fit_linear_velocity(self, state: State, v_FM, model) -> State:
        """u best reproducing the velocity of Mo ``v_FM`` (3,) (m/s, in F)."""
        v = _vec3(v_FM, "v_FM")
        return self._fit_u(state, model, lambda m, q, u, prm: m.u_fit_linear_velocity(q, u, v[None], prm))
