"""Small timing helpers shared by the benchmark scripts."""

from __future__ import annotations

import statistics
import time


def median_time(fn, *, min_reps=3, max_reps=50, target_s=1.5, warmup=1, sync=None):
    """Median wall time (s) of ``fn()`` over repetitions.

    ``sync(result)`` blocks until the result is ready (e.g. jax.block_until_ready).
    Repetitions stop after ``max_reps`` or once ``target_s`` seconds were spent
    (but never fewer than ``min_reps``). Returns (median_s, reps).
    """
    sync = sync or (lambda r: r)
    for _ in range(warmup):
        sync(fn())
    times = []
    t_start = time.perf_counter()
    while len(times) < max_reps:
        t0 = time.perf_counter()
        sync(fn())
        times.append(time.perf_counter() - t0)
        if len(times) >= min_reps and time.perf_counter() - t_start > target_s:
            break
    return statistics.median(times), len(times)


def timed(fn):
    """(result, seconds) of one call."""
    t0 = time.perf_counter()
    r = fn()
    return r, time.perf_counter() - t0


def xla_cpu_settings(default=None) -> dict:
    """The XLA:CPU flag settings the benchmarks compare: ``default`` and, where jaxlib still has the switch
    (before 0.11, which removed it; an unknown flag in XLA_FLAGS aborts the process), ``nofusion``."""
    from importlib.metadata import version

    major, minor = (int(x) for x in version("jaxlib").split(".")[:2])
    settings = {"default": default}
    if (major, minor) < (0, 11):
        settings["nofusion"] = "--xla_cpu_use_fusion_emitters=false"
    return settings

