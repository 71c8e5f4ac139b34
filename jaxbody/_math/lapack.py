"""The pseudo-inverse, safe to vmap over thousands of states on XLA:CPU.

Why this module exists: jaxlib 0.10.x and 0.11.0 split a batched LAPACK call (SVD, eigh, LU, Cholesky,
triangular solve) over XLA:CPU's intra-op thread pool once the batch holds at least 2e5 flops of work by
jaxlib's estimate, and the calling pool thread then blocks until the pieces finish. When the thunk executor
runs as many such calls at once as the pool has threads (two on a 2-core machine), every thread waits for
work that no thread is free to run and the process hangs at 0% CPU. Measured here (jax 0.10.2, 2026-11-23):
adaptive RungeKuttaMerson on the four-bar at 1024 lanes hung on its second call; gdb showed both
``tf_XLAEigen`` threads in ``BlockingCounter::Wait`` under ``lapack_dgesdd_ffi`` (the SVD of
``jnp.linalg.pinv``). ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false`` did not help. jaxlib 0.11.1 compiles
the parallel path out of its open-source builds.

``pinv`` is ``jnp.linalg.pinv`` with a vmap rule that, on an affected jaxlib, runs the batch as a
``lax.map`` over chunks small enough (chunk x cost < 2e5 flops) for jaxlib to run each LAPACK call inline on
the calling thread. The numbers are jnp.linalg.pinv's, bit for bit. Its derivative is Golub and Pereyra's
formula in matrix products of the result, so it transposes for reverse mode like jnp.linalg.pinv's.
jaxbody's other dense solves are LAPACK-free (``jaxbody._math.linalg.small_spd_solve``).
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import jaxlib

# jaxlib runs a batched LAPACK call inline when batch x cost_per_matrix is below this many flops
# (kMinWorkPerTask in jaxlib/cpu/lapack_kernels.cc).
_INLINE_WORK_LIMIT = 200_000


def _jaxlib_splits_lapack_batches(version: str) -> bool:
    """Whether this jaxlib version has the thread-pool-splitting LAPACK kernels (0.10.0 to 0.11.0)."""
    parts = tuple(int(p) for p in version.split(".")[:3] if p.isdigit())
    return (0, 10, 0) <= parts < (0, 11, 1)


SPLITS_LAPACK_BATCHES = _jaxlib_splits_lapack_batches(jaxlib.__version__)


def _svd_cost(shape) -> int:
    """jaxlib's flop estimate for the SVD of a (..., m, n) stack (10 m n min(m, n) per matrix); the
    symmetric eigensolver it uses for ``hermitian=True`` is estimated lower (5 n^3)."""
    m, n = shape[-2:]
    return 10 * m * n * min(m, n) * math.prod(shape[:-2])


@functools.lru_cache(maxsize=None)
def _pinv_values(rtol, hermitian: bool):
    """``a -> jnp.linalg.pinv(a, rtol, hermitian)``, with the chunking vmap rule where jaxlib needs it."""

    def values(a):
        if hermitian and a.shape[-2:] == (1, 1) and (rtol is None or rtol < 1.0):
            # 1 x 1: the eigenvalue's magnitude exceeds every cutoff below it unless a = 0, so pinv is 1/a (or 0),
            # jnp.linalg.pinv's number bit for bit without its LAPACK call (a NaN propagates).
            return jnp.where(a != 0, 1.0 / jnp.where(a != 0, a, 1.0), 0.0)
        return jnp.linalg.pinv(a, rtol=rtol, hermitian=hermitian)

    if not SPLITS_LAPACK_BATCHES:
        return values
    chunked = jax.custom_batching.custom_vmap(values)

    @chunked.def_vmap
    def rule(axis_size, in_batched, a):
        if not in_batched[0]:
            a = jnp.broadcast_to(a, (axis_size,) + a.shape)
        chunk = max(1, (_INLINE_WORK_LIMIT - 1) // max(_svd_cost(a.shape[1:]), 1))
        if chunk >= axis_size:
            # One call on the whole stack; under an enclosing vmap this rule runs again with the stack as a lane.
            return chunked(a), True
        return jax.lax.map(chunked, a, batch_size=chunk), True

    return chunked


def pinv(a, rtol=None, hermitian: bool = False):
    """Moore-Penrose pseudo-inverse of ``a`` (..., m, n) -> (..., n, m), as ``jnp.linalg.pinv``.

    Singular values at or below ``rtol`` (a Python float; default jax's 10 max(m, n) eps) times the largest
    are treated as zero. ``hermitian``: ``a`` is symmetric (an eigendecomposition is used). Cost: one LAPACK
    SVD (or symmetric eigensolve) per matrix, O(m n min(m, n)), none for a symmetric 1 x 1 matrix (1/a); under vmap on an affected jaxlib, ceil(batch /
    chunk) sequential LAPACK calls (see the module docstring). Differentiable in both modes.
    """
    return _pinv(a, None if rtol is None else float(rtol), hermitian)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def _pinv(a, rtol, hermitian):
    return _pinv_values(rtol, hermitian)(a)


@_pinv.defjvp
def _pinv_jvp(rtol, hermitian, primals, tangents):
    """Golub and Pereyra (SIAM J. Numer. Anal. 10(2), 1973): the derivative of the pseudo-inverse at fixed
    rank, written in products of p = pinv(a) only (real matrices)."""
    (a,), (a_dot,) = primals, tangents
    p = _pinv(a, rtol, hermitian)
    if hermitian:  # the eigensolver reads the symmetric part; the derivative must too
        a, a_dot = 0.5 * (a + a.mT), 0.5 * (a_dot + a_dot.mT)
    s = (p @ p.mT) @ a_dot.mT
    t = (a_dot.mT @ p.mT) @ p
    p_dot = -(p @ a_dot) @ p + s - (s @ a) @ p + t - (p @ a) @ t
    return p, p_dot
