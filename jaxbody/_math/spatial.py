"""Rotation, transform and spatial-vector algebra in Simbody's conventions.

Raw-array functions operate on trailing dimensions and broadcast over any
leading batch dimensions:

* rotation matrices ``R_AB`` have shape (..., 3, 3) and map B components to A
  components (``r_A = R_AB r_B``);
* a transform ``X_AB`` is the pair ``(R_AB, p_AB)``;
* spatial vectors have shape (..., 2, 3): row 0 angular, row 1 linear, as
  Simbody's ``SpatialVec``; spatial matrices acting on them are (..., 6, 6)
  after flattening the vector to (..., 6) in the same order;
* quaternions are (w, x, y, z), scalar first.

``Rotation`` and ``Transform`` are small equinox Modules wrapping those
arrays for the user-facing API (they are pytrees, so they vmap and
differentiate). Every function here is gradient-safe: no NaN gradient at the
identity rotation or at zero-length vectors.
"""

from __future__ import annotations

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._math.products import matmul as matmul
from jaxbody._math.products import matmul_t as matmul_t
from jaxbody._math.products import mattvec as mattvec
from jaxbody._math.products import matvec as matvec
from jaxbody._math.products import tmatmul as tmatmul
from jaxbody.errors import InvalidArgument

# --------------------------------------------------------------------------
# Vectors


def skew(v):
    """Cross-product matrix ``[v]x`` with ``[v]x w = v x w``. Shape (..., 3, 3)."""
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    o = jnp.zeros_like(x)
    return jnp.stack(
        [jnp.stack([o, -z, y], -1), jnp.stack([z, o, -x], -1), jnp.stack([-y, x, o], -1)], -2
    )


def safe_norm(v, axis=-1, keepdims=False):
    """Euclidean norm whose gradient is 0 (not NaN) at v = 0."""
    sq = jnp.sum(v * v, axis=axis, keepdims=keepdims)
    is_zero = sq == 0
    safe_sq = jnp.where(is_zero, 1.0, sq)
    return jnp.where(is_zero, 0.0, jnp.sqrt(safe_sq))


# --------------------------------------------------------------------------
# Rotations


def _axis_rotation(angle, i, j):
    c, s = jnp.cos(angle), jnp.sin(angle)
    one, zero = jnp.ones_like(c), jnp.zeros_like(c)
    rows = [[one, zero, zero], [zero, one, zero], [zero, zero, one]]
    rows[i][i], rows[i][j], rows[j][i], rows[j][j] = c, -s, s, c
    return jnp.stack([jnp.stack(r, -1) for r in rows], -2)


def rot_x(angle):
    """Rotation by ``angle`` (rad) about x. Shape (..., 3, 3)."""
    return _axis_rotation(angle, 1, 2)


def rot_y(angle):
    """Rotation by ``angle`` (rad) about y. Shape (..., 3, 3)."""
    return _axis_rotation(angle, 2, 0)


def rot_z(angle):
    """Rotation by ``angle`` (rad) about z. Shape (..., 3, 3)."""
    return _axis_rotation(angle, 0, 1)


def rotation_from_body_fixed_xyz(angles):
    """``R = Rx(a0) Ry(a1) Rz(a2)`` (body-fixed X-Y-Z). angles (..., 3) -> (..., 3, 3)."""
    return matmul(matmul(rot_x(angles[..., 0]), rot_y(angles[..., 1])), rot_z(angles[..., 2]))


def body_fixed_xyz_from_rotation(R):
    """Body-fixed X-Y-Z angles of R, Simbody's exact formula (catalogue 0.3).

    Angles a0, a2 in [-pi, pi], a1 in [-pi/2, pi/2]. At gimbal lock
    (|cos a1| < 4 eps) a2 = 0 and a0 absorbs the combined angle.
    """
    eps = jnp.finfo(R.dtype).eps
    r = lambda i, j: R[..., i, j]  # noqa: E731
    rsum = jnp.sqrt((r(0, 0) ** 2 + r(0, 1) ** 2 + r(1, 2) ** 2 + r(2, 2) ** 2) / 2)
    a1 = jnp.arctan2(r(0, 2), rsum)
    regular = rsum > 4 * eps
    a0_reg = jnp.arctan2(-r(1, 2), r(2, 2))
    a2_reg = jnp.arctan2(-r(0, 1), r(0, 0))
    a0_lock = jnp.where(
        r(0, 2) > 0,
        jnp.arctan2(r(1, 0) + r(2, 1), r(1, 1) - r(2, 0)),
        jnp.arctan2(r(2, 1) - r(1, 0), r(1, 1) + r(2, 0)),
    )
    a0 = jnp.where(regular, a0_reg, a0_lock)
    a2 = jnp.where(regular, a2_reg, 0.0)
    return jnp.stack([a0, a1, a2], -1)


def rotation_from_quaternion(quat):
    """Rotation of a (possibly unnormalized) quaternion (w, x, y, z); normalized first.

    A zero quaternion has no rotation: the result is NaN (as in Simbody).
    """
    n = jnp.linalg.norm(quat, axis=-1, keepdims=True)
    w, x, y, z = jnp.moveaxis(quat / n, -1, 0)
    return jnp.stack(
        [
            jnp.stack([w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            jnp.stack([2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)], -1),
            jnp.stack([2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z], -1),
        ],
        -2,
    )


def quaternion_from_rotation(R):
    """Unit quaternion (w, x, y, z) of R with w >= 0 (Simbody's Spurrier variant, catalogue 0.3)."""
    r = lambda i, j: R[..., i, j]  # noqa: E731
    tr = r(0, 0) + r(1, 1) + r(2, 2)
    cands = jnp.stack(
        [
            jnp.stack([1 + tr, r(2, 1) - r(1, 2), r(0, 2) - r(2, 0), r(1, 0) - r(0, 1)], -1),
            jnp.stack([r(2, 1) - r(1, 2), 1 - tr + 2 * r(0, 0), r(0, 1) + r(1, 0), r(0, 2) + r(2, 0)], -1),
            jnp.stack([r(0, 2) - r(2, 0), r(0, 1) + r(1, 0), 1 - tr + 2 * r(1, 1), r(1, 2) + r(2, 1)], -1),
            jnp.stack([r(1, 0) - r(0, 1), r(0, 2) + r(2, 0), r(1, 2) + r(2, 1), 1 - tr + 2 * r(2, 2)], -1),
        ],
        -2,
    )
    use_tr = (tr >= r(0, 0)) & (tr >= r(1, 1)) & (tr >= r(2, 2))
    use_x = (~use_tr) & (r(0, 0) >= r(1, 1)) & (r(0, 0) >= r(2, 2))
    use_y = (~use_tr) & (~use_x) & (r(1, 1) >= r(2, 2))
    which = jnp.where(use_tr, 0, jnp.where(use_x, 1, jnp.where(use_y, 2, 3)))
    v = jnp.take_along_axis(cands, which[..., None, None], axis=-2)[..., 0, :]
    q = v / safe_norm(v, keepdims=True)
    return jnp.where(q[..., :1] < 0, -q, q)


def rotation_angle_axis(angle, axis):
    """Rotation by ``angle`` about the unit vector ``axis`` (built via the quaternion, as Simbody)."""
    half = 0.5 * jnp.asarray(angle)
    quat = jnp.concatenate([jnp.cos(half)[..., None], jnp.sin(half)[..., None] * axis], -1)
    return rotation_from_quaternion(quat)


def perp(n):
    """Simbody's ``UnitVec3::perp``: unit(n x e_k), k = axis of the smallest |n_k| (ties to lower k)."""
    a = jnp.abs(n)
    k = jnp.where(a[..., 0] <= a[..., 1], jnp.where(a[..., 0] <= a[..., 2], 0, 2), jnp.where(a[..., 1] <= a[..., 2], 1, 2))
    e = jnp.eye(3, dtype=n.dtype)[k]
    v = jnp.cross(n, e)
    return v / safe_norm(v, keepdims=True)


# --------------------------------------------------------------------------
# Transforms as (R, p) pairs


def compose(R_AB, p_AB, R_BC, p_BC):
    """``X_AC = X_AB X_BC``."""
    return matmul(R_AB, R_BC), p_AB + matvec(R_AB, p_BC)


def invert(R_AB, p_AB):
    """``X_BA = X_AB^-1``."""
    R_BA = jnp.swapaxes(R_AB, -1, -2)
    return R_BA, -matvec(R_BA, p_AB)


# --------------------------------------------------------------------------
# Spatial vectors (..., 2, 3) = (angular, linear)


def shift_motion(A, l):
    """Move a spatial motion from point P out to point B, ``l = p_PB``: ``[w; v + w x l]``."""
    return jnp.stack([A[..., 0, :], A[..., 1, :] + jnp.cross(A[..., 0, :], l)], -2)


def shift_force(F, l):
    """Move a spatial force from point B in to point P, ``l = p_PB``: ``[t + l x f; f]``."""
    return jnp.stack([F[..., 0, :] + jnp.cross(l, F[..., 1, :]), F[..., 1, :]], -2)


def shift_matrix(l):
    """Phi(l) as a (..., 6, 6) matrix acting on flattened forces: ``Phi F = shift_force(F, l)``.

    Its transpose moves motions outward: ``Phi^T A = shift_motion(A, l)``.
    """
    eye = jnp.broadcast_to(jnp.eye(3, dtype=l.dtype), l.shape[:-1] + (3, 3))
    zero = jnp.zeros_like(eye)
    return jnp.concatenate(
        [jnp.concatenate([eye, skew(l)], -1), jnp.concatenate([zero, eye], -1)], -2
    )


def shift_inertia(P, l):
    """``Phi(l) P Phi(l)^T`` for spatial matrices P (..., 6, 6): move an inertia-like matrix from B to P, l = p_PB.

    With ``P = [[A, B], [C, D]]`` and ``L = [l]x``: ``[[A + L C - (B + L D) L, B + L D], [C - D L, D]]``,
    computed with 3x3 blocks (far cheaper than two 6x6 products).
    """
    A, B, C, D = P[..., :3, :3], P[..., :3, 3:], P[..., 3:, :3], P[..., 3:, 3:]

    def L_times(X):  # [l]x X, column by column
        return jnp.cross(l[..., :, None], X, axis=-2)

    def times_L(X):  # X [l]x = -([l]x X^T)^T
        return -jnp.swapaxes(L_times(jnp.swapaxes(X, -1, -2)), -1, -2)

    B_new = B + L_times(D)
    A_new = A + L_times(C) - times_L(B_new)
    C_new = C - times_L(D)
    return jnp.concatenate([jnp.concatenate([A_new, B_new], -1), jnp.concatenate([C_new, D], -1)], -2)


def flat(V):
    """(..., 2, 3) -> (..., 6)."""
    return V.reshape(V.shape[:-2] + (6,))


def unflat(v):
    """(..., 6) -> (..., 2, 3)."""
    return v.reshape(v.shape[:-1] + (2, 3))


def spatial_inertia_matrix(mass, c, I_o):
    """Spatial inertia about a point O as a (..., 6, 6) matrix.

    Args:
        mass: (...,) kg.
        c: (..., 3) mass center measured from O (same frame as I_o).
        I_o: (..., 3, 3) rotational inertia about O.

    Returns:
        ``[[I_o, m [c]x], [-m [c]x, m 1]]`` so that ``Mk [w; v] = [I_o w + m c x v; m v - m c x w]``.
    """
    mc = mass[..., None] * c
    S = skew(mc)
    eye = jnp.broadcast_to(jnp.eye(3, dtype=c.dtype), c.shape[:-1] + (3, 3))
    return jnp.concatenate(
        [jnp.concatenate([I_o, S], -1), jnp.concatenate([-S, mass[..., None, None] * eye], -1)], -2
    )


# --------------------------------------------------------------------------
# User-facing wrappers


def _as_array(x):
    return x.R if isinstance(x, Rotation) else jnp.asarray(x)


class Rotation(eqx.Module):
    """A rotation matrix ``R_AB`` (..., 3, 3); columns are B's axes in A.

    ``Rotation()`` is the identity, ``Rotation(matrix)`` wraps a matrix,
    and the class methods build the forms Simbody offers.
    """

    R: jnp.ndarray

    def __init__(self, R=None):
        self.R = jnp.eye(3) if R is None else _as_array(R)

    @classmethod
    def about_x(cls, angle):
        return cls(rot_x(jnp.asarray(angle, dtype=float)))

    @classmethod
    def about_y(cls, angle):
        return cls(rot_y(jnp.asarray(angle, dtype=float)))

    @classmethod
    def about_z(cls, angle):
        return cls(rot_z(jnp.asarray(angle, dtype=float)))

    @classmethod
    def about_axis(cls, angle, axis):
        axis = jnp.asarray(axis, dtype=float)
        return cls(rotation_angle_axis(jnp.asarray(angle, dtype=float), axis / safe_norm(axis, keepdims=True)))

    @classmethod
    def from_body_fixed_xyz(cls, angles):
        return cls(rotation_from_body_fixed_xyz(jnp.asarray(angles, dtype=float)))

    @classmethod
    def from_quaternion(cls, quat):
        """Rotation of quaternion (w, x, y, z), normalized first; a concrete zero or non-finite quaternion raises."""
        if not isinstance(quat, jax.core.Tracer):
            q = np.asarray(quat, dtype=float)
            if q.shape[-1:] != (4,):
                raise InvalidArgument(f"a quaternion has 4 elements (w, x, y, z), got shape {q.shape}")
            if not np.all(np.isfinite(q)):
                raise InvalidArgument(f"quaternion elements must be finite, got {q.tolist()}")
            if np.any(np.linalg.norm(q, axis=-1) == 0):
                raise InvalidArgument("quaternion of zero norm has no rotation")
        return cls(rotation_from_quaternion(jnp.asarray(quat, dtype=float)))

    def to_quaternion(self):
        return quaternion_from_rotation(self.R)

    def to_body_fixed_xyz(self):
        return body_fixed_xyz_from_rotation(self.R)

    def transpose(self) -> "Rotation":
        return Rotation(jnp.swapaxes(self.R, -1, -2))

    invert = transpose

    def __matmul__(self, other):
        if isinstance(other, Rotation):
            return Rotation(self.R @ other.R)
        return matvec(self.R, jnp.asarray(other))

    __mul__ = __matmul__


@functools.lru_cache(maxsize=None)
def _identity_transform(dtype):
    """(eye(3), zeros(3)) of ``dtype``, made once: immutable arrays shared by every default Transform (a model
    import builds thousands; each fresh jnp.eye cost about 0.2 ms). Made at compile-time evaluation, so a first
    call inside a trace caches concrete arrays, never tracers."""
    with jax.ensure_compile_time_eval():
        return jnp.eye(3, dtype=dtype), jnp.zeros(3, dtype=dtype)


class Transform(eqx.Module):
    """A frame transform ``X_AB = (R_AB, p_AB)``: ``r_A = R_AB r_B + p_AB``.

    ``Transform()`` is the identity; ``Transform(R)``, ``Transform(p)`` (a
    3-vector) and ``Transform(R, p)`` follow Simbody's constructors.
    """

    R: jnp.ndarray
    p: jnp.ndarray

    def __init__(self, R=None, p=None):
        if p is None and R is not None and not isinstance(R, Rotation) and np.shape(R)[-1:] == (3,) and np.ndim(R) == 1:
            R, p = None, R
        identity, origin = _identity_transform(jax.dtypes.canonicalize_dtype(float))
        self.R = identity if R is None else _as_array(R)
        self.p = origin if p is None else jnp.asarray(p, dtype=float)

    @property
    def rotation(self) -> Rotation:
        return Rotation(self.R)

    def invert(self) -> "Transform":
        R, p = invert(self.R, self.p)
        return Transform(R, p)

    def __mul__(self, other):
        """``X_AB * X_BC -> X_AC``; ``X_AB * station_B -> station_A``."""
        if isinstance(other, Transform):
            R, p = compose(self.R, self.p, other.R, other.p)
            return Transform(R, p)
        return matvec(self.R, jnp.asarray(other)) + self.p

    __matmul__ = __mul__
