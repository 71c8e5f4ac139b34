"""Custom: a mobilizer defined by user functions of one body (Simbody's ``MobilizedBody::Custom``, catalogue 1.19).

The user writes pure JAX functions for a single body (unbatched); this class
vectorizes them with ``jax.vmap`` over the k bodies of a group:

* ``x_fm_fn(q (nq,), params (n_params,)) -> (R_FM (3, 3), p_FM (3,))`` (required; F fixed on the parent, M on
  the child, p_FM in F, lengths in the model's units);
* ``h_fm_fn(q, params) -> H_FM (6, nu)`` in F, rows (angular; linear at Mo) (optional: by default
  ``V_FM = H_FM u`` is the derivative of X_FM along qdot = N u, angular part vee(dR R^T), linear part dp);
* ``n_fn(q, u) -> qdot (nq,)`` and ``n_inv_fn(q, qdot) -> u (nu,)`` (optional, together; default qdot = u,
  legal only when nq == nu and there is no quaternion).

``n_angles`` (0..4) says how many leading q are angles; 4 means the first four q are a quaternion
(w, x, y, z), possibly unnormalized, that the user functions receive as is (x_fm_fn must normalize it).
In Euler-angle mode such a mobilizer keeps its nq slots, uses nq-1 of them, laid out
``[body-fixed XYZ angles (3), q[4:] (nq-4), 0]``; the user functions still see quaternion-mode q: the angles
are converted to a unit quaternion, and qdot is mapped through the angular velocity in F
(qdot_angles = N_P(angles) w with w = NInv_quat qdot_quat), so the user's u keeps its meaning in both modes.

Two bodies with the same functions (by identity), sizes and mode are equal mobilizers and form one group.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._mobilizers import orientation
from jaxbody._mobilizers.base import Mobilizer
from jaxbody.errors import InvalidArgument

MAX_NQ = 7  # Simbody's largest q block (Free: quaternion + translation)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Custom(Mobilizer):
    """A user-defined mobilizer (see the module docstring for the function signatures)."""

    simbody_name: ClassVar[str] = "Custom"

    x_fm_fn: Callable
    nq_alloc: int
    nu: int
    n_angles: int = 0
    h_fm_fn: Callable | None = None
    n_fn: Callable | None = None
    n_inv_fn: Callable | None = None
    n_params: int = 0
    euler: bool = False

    # -- configuration -------------------------------------------------------------------

    @property
    def has_quaternion_mode(self) -> bool:
        return self.n_angles == 4

    @property
    def uses_quaternion(self) -> bool:
        return self.n_angles == 4 and not self.euler

    @property
    def _euler_quaternion(self) -> bool:
        """True in Euler mode of a quaternion mobilizer (q slots hold XYZ angles)."""
        return self.n_angles == 4 and self.euler

    @property
    def nq_in_use(self) -> int:
        return self.nq_alloc - 1 if self._euler_quaternion else self.nq_alloc

    @property
    def qdot_is_u(self) -> bool:
        return self.n_fn is None

    def with_euler(self, euler: bool) -> "Custom":
        return dataclasses.replace(self, euler=bool(euler)) if self.has_quaternion_mode else self

    def default_q(self) -> np.ndarray:
        q = np.zeros(self.nq_alloc)
        if self.uses_quaternion:
            q[0] = 1.0
        return q

    # -- user functions, batched ---------------------------------------------------------------

    def _user_q(self, q):
        """The quaternion-mode q (k, nq) the user functions expect, from this mode's q slots (k, nq)."""
        if not self._euler_quaternion:
            return q
        return jnp.concatenate([orientation.quaternion_from_body_fixed_xyz(q[:, :3]), q[:, 3:-1]], -1)

    def calc_X_FM(self, q, params):
        return jax.vmap(self.x_fm_fn)(self._user_q(q), params)

    def calc_H_FM(self, q, params):
        if self.h_fm_fn is not None:
            return jax.vmap(self.h_fm_fn)(self._user_q(q), params)
        # Column j: derivative of X_FM along qdot = N e_j.
        k = q.shape[0]
        eye = jnp.eye(self.nu, dtype=q.dtype)
        n_cols = jax.vmap(lambda e: self.multiply_by_n(q, jnp.broadcast_to(e, (k, self.nu))), out_axes=-1)(eye)
        X = lambda qq: self.calc_X_FM(qq, params)  # noqa: E731 - local closure
        R, _ = X(q)
        dR, dp = jax.vmap(lambda qd: jax.jvp(X, (q,), (qd,))[1], in_axes=-1, out_axes=-1)(n_cols)
        W = jnp.einsum("kabj,kcb->kacj", dR, R)  # dR_j R^T, (k, 3, 3, nu)
        W = (W - jnp.swapaxes(W, 1, 2)) / 2
        w = jnp.stack([W[:, 2, 1], W[:, 0, 2], W[:, 1, 0]], 1)
        return jnp.concatenate([w, dp], 1)

    def multiply_by_n(self, q, u):
        if self.n_fn is None:
            return u
        qu = self._user_q(q)
        qdot = jax.vmap(self.n_fn)(qu, u)
        if not self._euler_quaternion:
            return qdot
        w = orientation.quaternion_w(qu[:, :4], qdot[:, :4])
        return jnp.concatenate([orientation.euler_xyz_qdot(q[:, :3], w), qdot[:, 4:], jnp.zeros_like(q[:, :1])], -1)

    def multiply_by_n_inv(self, q, qdot):
        if self.n_inv_fn is None:
            return qdot
        qu = self._user_q(q)
        if self._euler_quaternion:
            w = orientation.euler_xyz_w(q[:, :3], qdot[:, :3])
            qdot = jnp.concatenate([orientation.quaternion_qdot(qu[:, :4], w), qdot[:, 3:-1]], -1)
        return jax.vmap(self.n_inv_fn)(qu, qdot)

    def normalize_q(self, q):
        if not self.uses_quaternion:
            return q
        return jnp.concatenate([orientation.normalize(q[:, :4], False), q[:, 4:]], -1)


def _trial(what, fn, *args):
    """fn(*args) as numpy arrays, turning any failure into a build-time InvalidArgument naming ``what``."""
    try:
        out = fn(*args)
        return jax.tree_util.tree_map(np.asarray, out)
    except Exception as e:  # re-raised with context
        raise InvalidArgument(f"{what} failed on the default q: {type(e).__name__}: {e}") from e


def _check_shape(what, x, shape):
    if not isinstance(x, np.ndarray) or x.shape != shape:
        got = x.shape if isinstance(x, np.ndarray) else type(x).__name__
        raise InvalidArgument(f"{what} must return an array of shape {shape}, got {got}")


def validate_custom(m: Custom, params: np.ndarray, name: str) -> None:
    """Build-time checks of a Custom mobilizer: sizes, function pairing, and a trial evaluation at the default q.

    The trial checks every output shape, that R_FM is a rotation and that NInv(N u) = u. Raises InvalidArgument.
    """
    for what, fn in (("calc_x_fm", m.x_fm_fn), ("calc_h_fm", m.h_fm_fn), ("multiply_by_n", m.n_fn),
                     ("multiply_by_n_inv", m.n_inv_fn)):
        if not (callable(fn) or (fn is None and what != "calc_x_fm")):
            raise InvalidArgument(f"{name}: {what} must be a function, got {type(fn).__name__}")
    if not 1 <= m.nu <= 6:
        raise InvalidArgument(f"{name}: nu must be in 1..6, got {m.nu}")
    if not m.nu <= m.nq_alloc <= MAX_NQ:
        raise InvalidArgument(f"{name}: nq must be in nu..{MAX_NQ} = {m.nu}..{MAX_NQ}, got {m.nq_alloc}")
    if not 0 <= m.n_angles <= min(4, m.nq_alloc):
        raise InvalidArgument(f"{name}: n_angles must be in 0..min(4, nq) (4: the first four q are a quaternion), "
                              f"got {m.n_angles}")
    if (m.n_fn is None) != (m.n_inv_fn is None):
        raise InvalidArgument(f"{name}: give multiply_by_n and multiply_by_n_inv together (or neither: qdot = u)")
    if m.n_fn is None and (m.nq_alloc != m.nu or m.n_angles == 4):
        raise InvalidArgument(f"{name}: qdot = u (no multiply_by_n) needs nq == nu and no quaternion; "
                              f"got nq={m.nq_alloc}, nu={m.nu}, n_angles={m.n_angles}")
    q = jnp.asarray(m.default_q())
    prm = jnp.asarray(params)
    X = _trial(f"{name}: calc_x_fm", m.x_fm_fn, q, prm)
    if not (isinstance(X, (tuple, list)) and len(X) == 2):
        raise InvalidArgument(f"{name}: calc_x_fm must return (R_FM (3, 3), p_FM (3,)), got {type(X).__name__}")
    _check_shape(f"{name}: calc_x_fm's R_FM", X[0], (3, 3))
    _check_shape(f"{name}: calc_x_fm's p_FM", X[1], (3,))
    R = X[0]
    if not (np.allclose(R @ R.T, np.eye(3), atol=1e-6) and np.linalg.det(R) > 0):
        raise InvalidArgument(f"{name}: calc_x_fm's R_FM at the default q is not a rotation: {R.tolist()}")
    if m.h_fm_fn is not None:
        _check_shape(f"{name}: calc_h_fm", _trial(f"{name}: calc_h_fm", m.h_fm_fn, q, prm), (6, m.nu))
    if m.n_fn is not None:
        u = jnp.linspace(0.5, 1.5, m.nu, dtype=q.dtype)
        qdot = _trial(f"{name}: multiply_by_n", m.n_fn, q, u)
        _check_shape(f"{name}: multiply_by_n", qdot, (m.nq_alloc,))
        u_back = _trial(f"{name}: multiply_by_n_inv", m.n_inv_fn, q, jnp.asarray(qdot))
        _check_shape(f"{name}: multiply_by_n_inv", u_back, (m.nu,))
        if not np.allclose(u_back, u, rtol=1e-5, atol=1e-5):
            raise InvalidArgument(f"{name}: multiply_by_n_inv(q, multiply_by_n(q, u)) != u at the default q "
                                  f"(u={np.asarray(u).tolist()}, got {u_back.tolist()})")
