"""FunctionBased: a Custom mobilizer given by six scalar functions of the q (catalogue 1.20).

nq = nu = n (1..6), qdot = u, no quaternion. With rotation functions
theta_i and translation functions x_i (each a function of the q listed in its
coordinate index list), unit rotation axes a_i and translation axes b_i (in F):

    R_FM = Rot(a1, theta1) Rot(a2, theta2) Rot(a3, theta3)      (body-fixed sequence)
    p_FM = x1 b1 + x2 b2 + x3 b3                                (in F)

With Fq (6, n) the partials of (theta, x) w.r.t. q (forward-mode autodiff of the
scalar functions) and W = [a1, R1 a2, R12 a3] the rotation axes in F
(R1 = Rot(a1, theta1), R12 = R1 Rot(a2, theta2)), Simbody's closed forms are used:

    H_FMw = W Fq_rot,                H_FMv = [b] Fq_trans
    HDot_FMw = WDot Fq_rot + W FqDot_rot,   HDot_FMv = [b] FqDot_trans

with FqDot = d/dt Fq along qdot = u and WDot = [0, w1 x W1, w12 x W2], where
w1 = thetadot1 W0 and w12 = w1 + thetadot2 W1 are the angular velocities of the
intermediate frames. This HDot is exact (``hdot="exact"``, the default). Simbody 3.9
(MobilizedBodyImpl.h, buildHdot) instead uses w1 = (H col 0) u0 and w12 = H[:, 0:2] (u0, u1)
(all of H u when the mobilizer has one, or at most two, mobilities), i.e. it assumes theta1
depends only on q0 and theta2 only on (q0, q1); the two agree whenever that holds. Where it does
not (OpenSim's CustomJoints whose rotations are all driven by one coordinate, e.g. Rajagopal's
walker knee), Simbody's HDot is not the derivative of its H; ``hdot="simbody"`` reproduces it,
so that OpenSim's velocity-dependent forces and udot are matched.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._math import spatial
from jaxbody._mobilizers.custom import Custom
from jaxbody.errors import InvalidArgument

#: Minimum |a_i x a_j| of two normalized axes (Simbody's tolerance).
PARALLEL_TOL = 1e-5
#: ``hdot`` choices: the exact time derivative of H, or Simbody 3.9's formula (module docstring).
HDOT_FORMULAS = ("exact", "simbody")


@dataclasses.dataclass(frozen=True)
class FunctionBasedTransform:
    """X_FM(q) of a FunctionBased mobilizer for one body: ``(q (n,), params) -> (R_FM (3, 3), p_FM (3,))``.

    functions: (theta1, theta2, theta3, x1, x2, x3), each ``f(x (m,)) -> scalar`` of the m q's selected by
    the matching entry of coordinate_indices (angles in rad, translations in length units);
    rotation_axes, translation_axes: three unit axes each, in F. hdot: "exact" or "simbody" (module docstring).
    """

    functions: tuple[Callable, ...]
    coordinate_indices: tuple[tuple[int, ...], ...]
    rotation_axes: tuple[tuple[float, float, float], ...]
    translation_axes: tuple[tuple[float, float, float], ...]
    hdot: str = "exact"

    def coordinates(self, q):
        """(theta1, theta2, theta3, x1, x2, x3) at q, shape (6,)."""
        return jnp.stack([
            jnp.asarray(f(q[np.asarray(idx, dtype=int)]), q.dtype).reshape(())
            for f, idx in zip(self.functions, self.coordinate_indices)
        ])

    def _rotations(self, c, dtype):
        """(R_FM (3, 3), W (3, 3) whose columns are the rotation axes a1, R1 a2, R12 a3 in F)."""
        a = jnp.asarray(self.rotation_axes, dtype)
        R1 = spatial.rotation_angle_axis(c[0], a[0])
        R12 = R1 @ spatial.rotation_angle_axis(c[1], a[1])
        R = R12 @ spatial.rotation_angle_axis(c[2], a[2])
        return R, jnp.stack([a[0], R1 @ a[1], R12 @ a[2]], -1)

    def _translation_axes(self, dtype):
        """[b] (3, 3) with the translation axes as columns."""
        return jnp.asarray(self.translation_axes, dtype).T

    def __call__(self, q, params):
        c = self.coordinates(q)
        R, _ = self._rotations(c, q.dtype)
        return R, self._translation_axes(q.dtype) @ c[3:]

    def coordinates_and_partials(self, q):
        """(Fq (6, n), c (6,)): the partials of (theta, x) and their values, from one trace of the functions."""
        return jax.jacfwd(lambda x: (lambda c: (c, c))(self.coordinates(x)), has_aux=True)(q)

    def transform_and_hinge(self, q, params):
        """(R_FM (3, 3), p_FM (3,), H_FM (6, n)): ``self(q)`` and ``hinge(q)`` from one evaluation."""
        Fq, c = self.coordinates_and_partials(q)
        R, W = self._rotations(c, q.dtype)
        b = self._translation_axes(q.dtype)
        return R, b @ c[3:], jnp.concatenate([W @ Fq[:3], b @ Fq[3:]])

    def hinge(self, q, params):
        """H_FM (6, n) = [W Fq_rot ; [b] Fq_trans]."""
        return self.transform_and_hinge(q, params)[2]

    def hinge_dot(self, q, u, params):
        """HDot_FM (6, n) in F along qdot = u: the exact time derivative of H_FM, or Simbody's formula with
        ``hdot="simbody"`` (module docstring)."""
        (Fq, c), (Fq_dot, _) = jax.jvp(self.coordinates_and_partials, (q,), (u,))
        _, W = self._rotations(c, q.dtype)
        if self.hdot == "simbody":  # the intermediate frames' rates from the first one and two mobilities' u
            H_w, n = W @ Fq[:3], u.shape[0]
            w1 = H_w[:, 0] * u[0] if n > 1 else H_w @ u
            w12 = H_w[:, :2] @ u[:2] if n > 2 else H_w @ u
        else:
            theta_dot = Fq[:3] @ u
            w1 = theta_dot[0] * W[:, 0]
            w12 = w1 + theta_dot[1] * W[:, 1]
        W_dot = jnp.stack([jnp.zeros_like(w1), jnp.cross(w1, W[:, 1]), jnp.cross(w12, W[:, 2])], -1)
        ang = W_dot @ Fq[:3] + W @ Fq_dot[:3]
        return jnp.concatenate([ang, self._translation_axes(q.dtype) @ Fq_dot[3:]])


@dataclasses.dataclass(frozen=True, kw_only=True)
class FunctionBased(Custom):
    """A Custom mobilizer whose x_fm_fn is a FunctionBasedTransform (qdot = u, closed-form H and HDot)."""

    simbody_name: ClassVar[str] = "FunctionBased"

    def calc_H_FM(self, q, params):
        return jax.vmap(self.x_fm_fn.hinge)(q, params)

    def calc_X_FM_and_H_FM(self, q, params):
        return jax.vmap(self.x_fm_fn.transform_and_hinge)(q, params)

    def calc_HDot_FM(self, q, u, params):
        return jax.vmap(self.x_fm_fn.hinge_dot)(q, u, params)


def _unit_axes(axes, what, name):
    if axes is None:
        return np.eye(3)
    a = np.asarray(axes, dtype=float)
    if a.shape != (3, 3) or not np.all(np.isfinite(a)):
        raise InvalidArgument(f"{name}: {what} must be three finite 3-vectors, got shape {a.shape}")
    norms = np.linalg.norm(a, axis=1)
    if np.any(norms == 0):
        raise InvalidArgument(f"{name}: {what} must be nonzero vectors, got {a.tolist()}")
    a = a / norms[:, None]
    for i, j in ((0, 1), (0, 2), (1, 2)):
        if np.linalg.norm(np.cross(a[i], a[j])) <= PARALLEL_TOL:
            raise InvalidArgument(f"{name}: {what} {i} and {j} are parallel: {a[i].tolist()}, {a[j].tolist()}")
    return a


def function_based(n_mobilities, functions, coordinate_indices, rotation_axes, translation_axes, name,
                   hdot: str = "exact") -> FunctionBased:
    """Validate Simbody's FunctionBased arguments and build the mobilizer. Raises InvalidArgument."""
    if hdot not in HDOT_FORMULAS:
        raise InvalidArgument(f"{name}: hdot must be one of {HDOT_FORMULAS}, got {hdot!r}")
    if not (isinstance(n_mobilities, (int, np.integer)) and 1 <= n_mobilities <= 6):
        raise InvalidArgument(f"{name}: n_mobilities must be an integer in 1..6, got {n_mobilities!r}")
    n = int(n_mobilities)
    functions = tuple(functions)
    if len(functions) != 6 or not all(callable(f) for f in functions):
        raise InvalidArgument(f"{name}: functions must be 6 callables (theta1, theta2, theta3, x1, x2, x3)")
    indices = tuple(tuple(int(i) for i in idx) for idx in coordinate_indices)
    if len(indices) != 6:
        raise InvalidArgument(f"{name}: coordinate_indices must have 6 entries (one per function), got {len(indices)}")
    for k, idx in enumerate(indices):
        if any(not 0 <= i < n for i in idx):
            raise InvalidArgument(f"{name}: coordinate_indices[{k}] = {list(idx)} must be q indices in 0..{n - 1}")
    transform = FunctionBasedTransform(
        functions,
        indices,
        tuple(map(tuple, _unit_axes(rotation_axes, "rotation_axes", name).tolist())),
        tuple(map(tuple, _unit_axes(translation_axes, "translation_axes", name).tolist())),
        hdot,
    )
    q0 = jnp.zeros(n)
    for k, (f, idx) in enumerate(zip(functions, indices)):
        try:
            value = np.asarray(f(q0[np.asarray(idx, dtype=int)]))
        except Exception as e:  # re-raised with context
            raise InvalidArgument(f"{name}: functions[{k}] failed on {len(idx)} zero argument(s): {e}") from e
        if value.shape != ():
            raise InvalidArgument(f"{name}: functions[{k}] must return a scalar, got shape {value.shape}")
    return FunctionBased(x_fm_fn=transform, nq_alloc=n, nu=n)
