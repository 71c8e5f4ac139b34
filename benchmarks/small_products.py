"""Microbenchmark behind ``jaxbody/_math/products.py``: three ways to write a batched 6x6 product on XLA:CPU.

A chain of eight products ``X <- 0.1 X C + A`` on (1024 states, 5 bodies, 6, 6) float64 blocks, compiled
with ``jax.jit``, timed interleaved (min and median of 15 calls, us per state):

* ``reduced``: one broadcast product reduced over the 6-long contraction axis (jaxbody before 2026-11-23),
* ``einsum``: ``jnp.einsum`` (a batched dot_general),
* ``unrolled``: the sum over k of rank-1 broadcast products (jaxbody now).

    python benchmarks/small_products.py        # also run with XLA_FLAGS=--xla_cpu_use_fusion_emitters=false
"""

import time

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

B, W = 1024, 5


def reduced(A, C):
    return jnp.sum(A[..., :, :, None] * C[..., None, :, :], axis=-2)


def einsum(A, C):
    return jnp.einsum("...ik,...kj->...ij", A, C)


def unrolled(A, C):
    out = A[..., :, 0, None] * C[..., None, 0, :]
    for k in range(1, A.shape[-1]):
        out = out + A[..., :, k, None] * C[..., None, k, :]
    return out


def chain(product):
    def f(A, C):
        X = A
        for _ in range(8):
            X = product(X, C) * 0.1 + A
        return X
    return f


def main():
    rng = np.random.default_rng(0)
    A, C = (jnp.asarray(rng.standard_normal((B, W, 6, 6))) for _ in range(2))
    compiled = {f.__name__: jax.jit(chain(f)).lower(A, C).compile() for f in (reduced, einsum, unrolled)}
    times = {k: [] for k in compiled}
    for _ in range(15):
        for k, c in compiled.items():
            t0 = time.perf_counter()
            jax.block_until_ready(c(A, C))
            times[k].append(time.perf_counter() - t0)
    for k, v in times.items():
        print(f"{k:<10} min {np.min(v) / B * 1e6:8.3f} us/state   median {np.median(v) / B * 1e6:8.3f}")
    np.testing.assert_allclose(compiled["unrolled"](A, C), compiled["reduced"](A, C), rtol=1e-10, atol=1e-14)


if __name__ == "__main__":
    main()
