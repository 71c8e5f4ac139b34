"""The physical-validity checks of construction values, written once for NumPy (the builders and concrete
parameters, float64 on the host) and ``jax.numpy`` (traced parameters, ``jb.check_parameters``).

Each ``*_failures`` function takes a batch (leading axes ``...``) and returns ``{check: (...,) bool}``, True where
the check fails, in the order the builders report them; ``message(check, what, value)`` is the builders' text.
Tolerances are the builders' (relative 1e-10 for inertias, 1e-9 for rotations as ``np.allclose``), widened to
100 eps for float32 values.
"""

from __future__ import annotations

import numpy as np

INERTIA_TOL = 1e-10
ROTATION_TOL = 1e-9


def _tol(base: float, dtype) -> float:
    return max(base, 100 * float(np.finfo(dtype).eps))


def mass_failures(m, xp=np) -> dict:
    return {"mass": ~xp.isfinite(m) | (m < 0)}


def inertia_failures(I, xp=np) -> dict:
    """Symmetric, nonnegative moments, triangle inequalities, positive semidefinite, for (..., 3, 3)."""
    finite = xp.all(xp.isfinite(I), axis=(-2, -1))
    J = xp.where(finite[..., None, None], I, 0.0)
    tol = _tol(INERTIA_TOL, I.dtype) * xp.maximum(1.0, xp.max(xp.abs(J), axis=(-2, -1)))
    d = xp.diagonal(J, axis1=-2, axis2=-1)
    asymmetric = xp.any(xp.abs(J - xp.swapaxes(J, -1, -2)) > tol[..., None, None], axis=(-2, -1))
    negative = xp.any(d < -tol[..., None], axis=-1)
    triangle = (d[..., 0] + d[..., 1] < d[..., 2] - tol) | (d[..., 0] + d[..., 2] < d[..., 1] - tol) | (
        d[..., 1] + d[..., 2] < d[..., 0] - tol)
    indefinite = xp.min(xp.linalg.eigvalsh(0.5 * (J + xp.swapaxes(J, -1, -2))), axis=-1) < -tol
    ok = finite
    out = {"inertia finite": ~finite}
    for name, fails in (("symmetric", asymmetric), ("negative moment", negative), ("triangle", triangle),
                        ("positive semidefinite", indefinite)):
        out[name] = ok & fails  # each reported only where the earlier checks passed, as the builders raise
        ok = ok & ~fails
    return out


def rotation_failures(R, xp=np) -> dict:
    """Proper orthonormal (R Rᵀ = 1 as ``np.allclose(atol=1e-9)``, det R > 0), for (..., 3, 3)."""
    finite = xp.all(xp.isfinite(R), axis=(-2, -1))
    eye = xp.eye(3, dtype=R.dtype)
    Rz = xp.where(finite[..., None, None], R, eye)
    off = xp.abs(Rz @ xp.swapaxes(Rz, -1, -2) - eye) > _tol(ROTATION_TOL, R.dtype) + 1e-5 * eye
    return {"rotation finite": ~finite,
            "rotation": finite & (xp.any(off, axis=(-2, -1)) | (xp.linalg.det(Rz) < 0))}


def vector_failures(p, xp=np) -> dict:
    return {"vector finite": ~xp.all(xp.isfinite(p), axis=-1)}


_MESSAGES = {
    "mass": "must be finite and >= 0, got {x}",
    "inertia finite": "must be a finite 3x3 matrix, got {x}",
    "symmetric": "is not symmetric: {x}",
    "negative moment": "has a negative moment of inertia: diagonal {d}",
    "triangle": "violates the triangle inequality: diagonal {d}",
    "positive semidefinite": "is not positive semidefinite: {x}",
    "rotation finite": "is not finite",
    "rotation": "rotation is not a proper orthonormal matrix: {x}",
    "vector finite": "is not finite",
}


def message(check: str, what: str, value) -> str:
    """The builders' message for a failed ``check`` of ``what`` (e.g. "inertia about the mass center")."""
    x = np.asarray(value)
    d = np.diagonal(x).tolist() if x.ndim == 2 else None
    return f"{what} " + _MESSAGES[check].format(x=x.tolist(), d=d)


def first_failure(failures: dict):
    """(check, index) of the first failing entry in report order, or None (NumPy failures)."""
    for check, fails in failures.items():
        hits = np.argwhere(np.atleast_1d(np.asarray(fails)))
        if hits.size:
            return check, tuple(int(i) for i in hits[0][-np.ndim(fails):]) if np.ndim(fails) else ()
    return None


__all__ = ["first_failure", "inertia_failures", "mass_failures", "message", "rotation_failures", "vector_failures"]
