"""Compile-then-run timing of a jitted program, as the demos and the examples report it."""

from __future__ import annotations

import time


def compile_and_run(jitted, *args):
    """``(result, compile_s, run_s)``: ``jitted`` (a ``jax.jit`` function) lowered and compiled for ``args`` (timed
    alone, so the run's time holds no compilation), then called once on them and waited for."""
    import jax

    t0 = time.perf_counter()
    compiled = jitted.lower(*args).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    result = jax.block_until_ready(compiled(*args))
    return result, compile_s, time.perf_counter() - t0
