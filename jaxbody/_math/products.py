"""Batched products of small matrices (3x3, 6x6, 6 x nu) and vectors, any leading batch axes.

They are written as sums of broadcast products unrolled over
the contraction index (k = 0..2 or 0..5), not as dot_general nor as one
broadcast product reduced over a short axis: XLA:CPU turns each into
elementwise loops over the whole (states x bodies x m x n) block, which it
vectorizes, whereas a batched dot becomes one tiny matrix call per batch
element and a reduction over a 6-long minor axis does not vectorize. Measured
on a chain of eight (1024, 5, 6, 6) products: 80 us/state reduced, 42 as
einsum, 2.4 unrolled (benchmarks/README.md, "small products").
"""

from __future__ import annotations

import jax.numpy as jnp


def _unrolled_sum(term, k, empty):
    """``term(0) + term(1) + ... + term(k - 1)``; ``empty()`` (the zeros of the result) when k = 0."""
    if k == 0:
        return empty()
    total = term(0)
    for i in range(1, k):
        total = total + term(i)
    return total


def matvec(A, x):
    """Batched ``A @ x`` for A (..., m, n), x (..., n)."""
    return _unrolled_sum(lambda k: A[..., :, k] * x[..., k, None], A.shape[-1],
                         lambda: jnp.sum(A * x[..., None, :], axis=-1))


def mattvec(A, x):
    """Batched ``A.T @ x`` for A (..., m, n), x (..., m)."""
    return _unrolled_sum(lambda k: A[..., k, :] * x[..., k, None], A.shape[-2],
                         lambda: jnp.sum(A * x[..., :, None], axis=-2))


def matmul(A, B):
    """Batched ``A @ B`` for A (..., m, k), B (..., k, n)."""
    return _unrolled_sum(lambda k: A[..., :, k, None] * B[..., None, k, :], A.shape[-1],
                         lambda: jnp.sum(A[..., :, :, None] * B[..., None, :, :], axis=-2))


def matmul_t(A, B):
    """Batched ``A @ B.T`` for A (..., m, k), B (..., n, k)."""
    return _unrolled_sum(lambda k: A[..., :, k, None] * B[..., None, :, k], A.shape[-1],
                         lambda: jnp.sum(A[..., :, None, :] * B[..., None, :, :], axis=-1))


def tmatmul(A, B):
    """Batched ``A.T @ B`` for A (..., k, m), B (..., k, n)."""
    return _unrolled_sum(lambda k: A[..., k, :, None] * B[..., k, None, :], A.shape[-2],
                         lambda: jnp.sum(A[..., :, :, None] * B[..., :, None, :], axis=-3))
