"""Small dense linear algebra that vectorizes over any batch and differentiates like ordinary arithmetic."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

#: Simbody's SignificantReal for float64, eps^(7/8) ~ 1.9e-14 (Simbody catalogue 0.6): below it a quantity
#: counts as zero (impulse thresholds, degenerate fits).
SIGNIFICANT_REAL = float(np.finfo(np.float64).eps) ** 0.875


def small_spd_inverse(D):
    """Inverse of a batch of small symmetric positive-definite matrices (..., n, n).

    Unrolled Gauss-Jordan without pivoting (valid for SPD), so it vectorizes
    over any batch and differentiates like ordinary arithmetic. Singular D
    (a massless body at the end of a chain) gives inf/NaN, as Simbody throws.
    Cost: n^3 multiply-adds per matrix, traced as n unrolled steps.
    """
    n = D.shape[-1]
    A = D
    X = jnp.broadcast_to(jnp.eye(n, dtype=D.dtype), D.shape)
    for k in range(n):
        inv_pivot = 1.0 / A[..., k, k]
        row_A = A[..., k, :] * inv_pivot[..., None]
        row_X = X[..., k, :] * inv_pivot[..., None]
        col = A[..., :, k]
        A = (A - col[..., :, None] * row_A[..., None, :]).at[..., k, :].set(row_A)
        X = (X - col[..., :, None] * row_X[..., None, :]).at[..., k, :].set(row_X)
    return X


def small_spd_solve(D, b):
    """x with D x = b, for small symmetric positive-definite D (..., n, n) and b (..., n) or (..., n, k).

    ``small_spd_inverse`` then one product: no LAPACK call, so it vectorizes over any batch (see
    jaxbody._math.lapack for why that matters on XLA:CPU) and differentiates like ordinary arithmetic.
    Cost: n^3 + n^2 k multiply-adds per matrix.
    """
    D_inv = small_spd_inverse(D)
    if b.ndim == D.ndim - 1:
        return jnp.einsum("...ij,...j->...i", D_inv, b)
    return D_inv @ b
