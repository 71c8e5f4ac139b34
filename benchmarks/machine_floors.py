"""What this machine's XLA:CPU can do at best: the floors that bound jaxbody's forward-dynamics times.

Three numbers, each from a trivial jitted program (float64, this process's XLA flags):

* memory bandwidth of one elementwise kernel ``2 x + 1`` over arrays of 8 MB (cache-resident on this
  machine), 64 MB and 436 MB (the size of a humanoid forward dynamics' intermediates at batch 1024 under
  ``jax.vmap``), counting the bytes read and written;
* the cost of one kernel launch: a chain of N tiny kernels that XLA cannot fuse (separated by
  ``optimization_barrier``), per kernel;
* the cost of one jitted call from Python, and of one ``while`` (``fori_loop``) iteration with a tiny body.

With ``benchmarks/profile_passes.py`` (bytes and kernels per state) these bound the time per state of a
program built from XLA kernels: bytes / bandwidth at large batches, and kernels x launch cost (plus the call)
at batch 1 or per tile of ``jb.tiled_vmap``.

    python benchmarks/machine_floors.py
"""

from __future__ import annotations

import os
import sys

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_time  # noqa: E402


def _median_s(fn, *args, reps):
    """Median wall time (s) of ``fn(*args)`` over ``reps`` calls after one warm-up call."""
    return median_time(lambda: fn(*args), min_reps=reps, max_reps=reps, target_s=0.0, sync=jax.block_until_ready)[0]


def bandwidth(megabytes):
    """Median GB/s of ``2 x + 1`` over a float64 array of ``megabytes`` MB (read + write counted)."""
    x = jnp.ones(megabytes * 2**20 // 8)
    return 2 * megabytes / 1024 / _median_s(jax.jit(lambda x: x * 2.0 + 1.0), x, reps=30)


def kernel_launch(n):
    """Median µs per kernel of a jitted chain of ``n`` unfusable kernels on a 6-vector."""

    def chain(x):
        for _ in range(n):
            x = jax.lax.optimization_barrier(jnp.sin(x) * 1.0001)
        return x

    return _median_s(jax.jit(chain), jnp.ones(6), reps=500) * 1e6 / n


def call_and_loop(iterations):
    """(median µs of one tiny jitted call, median µs per iteration of a tiny fori_loop)."""
    x = jnp.ones(6)
    call = _median_s(jax.jit(lambda x: x + 1.0), x, reps=2000)
    loop = _median_s(jax.jit(lambda x: jax.lax.fori_loop(0, iterations, lambda i, y: jnp.sin(y) * 1.0001, x)), x, reps=500)
    return call * 1e6, (loop - call) * 1e6 / iterations


def main():
    print(f"jax {jax.__version__}, backend {jax.default_backend()}")
    for mb in (8, 64, 436):
        print(f"elementwise kernel, {mb} MB in + {mb} MB out: {bandwidth(mb):.1f} GB/s (median)")
    for n in (50, 200):
        print(f"chain of {n} unfusable tiny kernels: {kernel_launch(n):.2f} us per kernel")
    call, per_iteration = call_and_loop(100)
    print(f"one tiny jitted call: {call:.1f} us; fori_loop iteration with a tiny body: {per_iteration:.2f} us")


if __name__ == "__main__":
    main()
