"""Where jaxbody's forward dynamics spends its work, stage by stage: XLA's cost model plus wall time.

For each model at one batch size, compiles ``jax.jit(jax.vmap(f))`` for

* ``position``: realize to Position (X_FM, H_FM per type; outward X_GB scan; world-frame H),
* ``velocity``: Position cache given, realize Velocity (outward V_GB scan, bias terms),
* ``dynamics``: Velocity cache given, realize Dynamics (forces, articulated inertias: inward scan),
* ``acceleration``: Dynamics cache given, realize Acceleration (inward forces + outward accelerations),
* ``total``: the whole realize,

and reports XLA's static cost analysis of each compiled program (flops, bytes accessed: independent of
machine load), the number of kernels one call launches (``kernels_per_call``: every instruction of the entry
computation and of the level-scan loop bodies times their trip counts, a fusion counting once) next to the
median wall time (which is not). Bytes per state against the machine's memory
bandwidth tell whether a stage is memory-bound:

    python benchmarks/profile_passes.py [--models humanoid27,chain16,chain64] [--batch 1024] [--dtype f64]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import models as M  # noqa: E402
from _timing import median_time  # noqa: E402

import jaxbody as jb  # noqa: E402

STAGES = [("position", None, jb.Stage.Position), ("velocity", jb.Stage.Position, jb.Stage.Velocity),
          ("dynamics", jb.Stage.Velocity, jb.Stage.Dynamics), ("acceleration", jb.Stage.Dynamics, jb.Stage.Acceleration),
          ("total", None, jb.Stage.Acceleration)]



_NOT_A_KERNEL = {"parameter", "get-tuple-element", "bitcast", "tuple", "constant"}


def kernels_per_call(hlo_text):
    """Kernels one call of a compiled XLA:CPU program runs: instructions of the entry computation that are not
    bookkeeping (parameters, tuples, bitcasts, constants), a fusion counting once and a ``while`` counting
    its condition and body times its known trip count (recursively)."""
    computations, current = {}, None
    for line in hlo_text.splitlines():
        head = re.match(r"^(ENTRY )?%?([\w.\-]+) .*\{$", line)
        if head:
            current = computations.setdefault(head.group(2), [])
            if head.group(1):
                entry = head.group(2)
            continue
        op = re.search(r"= .*? ([a-z][\w-]*)\(", line) if current is not None else None  # the first "name(" after "="
        if op:
            current.append((op.group(1), line))

    def count(name):
        total = 0
        for op, line in computations[name]:
            if op == "while":
                trips = int(re.search(r'"known_trip_count":\{"n":"(\d+)"', line).group(1))
                body, cond = re.search(r"body=%?([\w.\-]+)", line).group(1), re.search(r"condition=%?([\w.\-]+)", line).group(1)
                total += trips * (count(body) + count(cond))
            elif op not in _NOT_A_KERNEL:
                total += 1
        return total

    return count(entry)


def profile(name, batch, dtype):
    spec = M.get_model(name)
    model, _ = M.build_jaxbody(spec)
    model = M.cast_floats(model, dtype)
    q, u, tau = (jnp.asarray(x, dtype) for x in M.random_states(spec, batch, seed=5))

    def state(q, u, t):
        return model.default_state().set_q(q).set_u(u).set_mobility_forces(t)

    rows = {}
    for stage_name, given, target in STAGES:
        if given is None:
            def f(q, u, t, target=target):
                return model.realize(state(q, u, t), target)
            args = (q, u, tau)
        else:
            start = jax.jit(jax.vmap(lambda q, u, t, given=given: model.realize(state(q, u, t), given)))(q, u, tau)

            def f(s, target=target):
                return model.realize(s, target)
            args = (start,)
        compiled = jax.jit(jax.vmap(f)).lower(*args).compile()
        cost = compiled.cost_analysis()
        cost = cost[0] if isinstance(cost, list) else cost
        t, _ = median_time(lambda: compiled(*args), min_reps=3, max_reps=30, target_s=1.0, warmup=1,
                           sync=jax.block_until_ready)
        rows[stage_name] = {"flops_per_state": cost.get("flops", float("nan")) / batch,
                            "bytes_per_state": cost.get("bytes accessed", float("nan")) / batch,
                            "kernels_per_call": kernels_per_call(compiled.as_text()),
                            "us_per_state": t / batch * 1e6}
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="humanoid27,chain16,chain64")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--dtype", default="f64", choices=["f64", "f32"])
    p.add_argument("--out", default=None)
    args = p.parse_args()
    dtype = jnp.float64 if args.dtype == "f64" else jnp.float32
    results = {"batch": args.batch, "dtype": args.dtype, "jax": jax.__version__, "xla_flags": os.environ.get("XLA_FLAGS", ""),
               "loadavg": os.getloadavg(), "models": {}}
    for name in args.models.split(","):
        results["models"][name] = rows = profile(name, args.batch, dtype)
        print(f"{name} (batch {args.batch}, {args.dtype}; XLA_FLAGS={results['xla_flags'] or 'none'})")
        print(f"  {'stage':<13}{'kflop/state':>12}{'kB/state':>10}{'kernels':>9}{'us/state':>10}")
        for k, r in rows.items():
            print(f"  {k:<13}{r['flops_per_state'] / 1e3:>12.1f}{r['bytes_per_state'] / 1e3:>10.1f}"
                  f"{r['kernels_per_call']:>9}{r['us_per_state']:>10.2f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
