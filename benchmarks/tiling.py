"""Tiled batches: ``jax.jit(jax.vmap(fd))`` against ``jax.jit(jb.tiled_vmap(fd, tile))`` on CPU.

Forward dynamics (realize to Acceleration, udot) of the benchmark models (models.py: chain16, chain64,
humanoid27), float64, at batches 64, 1024 and 8192, for tiles of 16 to 256 lanes, and the reverse-mode
gradient of sum(udot) with respect to (q, u) at batch 1024, under both XLA flag settings (one child process
each: XLA reads its flags at start-up). Prints a markdown table and writes benchmarks/tiling.json.

    PYTHONPATH=. python3 benchmarks/tiling.py            # about 15 minutes on the 2-core machine
    PYTHONPATH=. python3 benchmarks/tiling.py --quick    # humanoid27 at batch 1024 only
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _timing import xla_cpu_settings  # noqa: E402

SETTINGS = xla_cpu_settings(default="")
MODELS = ("chain16", "chain64", "humanoid27")
BATCHES = (64, 1024, 8192)
TILES = (16, 32, 64, 128, 256)
GRAD_BATCH = 1024


def child(args):
    import jax
    import jax.numpy as jnp
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    import models as M
    from _timing import median_time, timed

    import jaxbody as jb

    rows = []
    for name in args.models.split(","):
        spec = M.get_model(name)
        model, _ = M.build_jaxbody(spec)

        def fd(q, u, tau, model=model):
            s = model.default_state().set_q(q).set_u(u).set_mobility_forces(tau)
            return model.realize(s, jb.Stage.Acceleration).acceleration.udot

        def grad(q, u, tau, fd=fd):
            return jax.grad(lambda q, u: fd(q, u, tau).sum(), argnums=(0, 1))(q, u)

        q, u, tau = (jnp.asarray(x) for x in M.random_states(spec, max(BATCHES), seed=5))
        cases = [("forward", B, t) for B in args.batches for t in (None,) + TILES if B > (t or 0) and (B <= 1024 or t in (None, 64))]
        cases += [("grad", GRAD_BATCH, t) for t in (None, 64) if GRAD_BATCH in args.batches]
        reference = {}
        for kind, B, tile in cases:
            lane_fn = fd if kind == "forward" else grad
            f = jax.jit(jax.vmap(lane_fn) if tile is None else jb.tiled_vmap(lane_fn, tile=tile))
            a = (q[:B], u[:B], tau[:B])
            compiled, t_compile = timed(lambda f=f, a=a: f.lower(*a).compile())
            out = jax.block_until_ready(compiled(*a))
            t, reps = median_time(lambda compiled=compiled, a=a: compiled(*a), min_reps=5, max_reps=30, target_s=2.0,
                                  sync=jax.block_until_ready)
            leaves = jax.tree_util.tree_leaves(out)
            if tile is None:
                reference[(kind, B)] = leaves
            diff = max(float(jnp.max(jnp.abs(x - y))) for x, y in zip(leaves, reference[(kind, B)]))
            row = {"model": name, "kind": kind, "batch": B, "tile": tile, "us_per_state": t / B * 1e6,
                   "compile_s": t_compile, "reps": reps, "max_diff_vs_vmap": diff, "finite": bool(all(np.isfinite(x).all() for x in leaves))}
            print("@@ROW " + json.dumps(row), flush=True)
            rows.append(row)
    return rows


def table(results):
    lines = []
    for setting, rows in results["settings"].items():
        lines.append(f"\n{setting} XLA flags ({SETTINGS[setting] or 'none'}); us per state, median (compile s):\n")
        lines.append("| model | what | batch | vmap | " + " | ".join(f"tile {t}" for t in TILES) + " | best / vmap |")
        lines.append("|---|---|---:|---:|" + "---:|" * len(TILES) + "---:|")
        keys = sorted({(r["model"], r["kind"], r["batch"]) for r in rows}, key=lambda k: (MODELS.index(k[0]), k[1] != "forward", k[2]))
        for m, kind, B in keys:
            by_tile = {r["tile"]: r for r in rows if (r["model"], r["kind"], r["batch"]) == (m, kind, B)}
            cell = lambda t: f"{by_tile[t]['us_per_state']:.2f} ({by_tile[t]['compile_s']:.1f})" if t in by_tile else "–"  # noqa: E731
            best = min(r["us_per_state"] for t, r in by_tile.items() if t is not None) if len(by_tile) > 1 else float("nan")
            lines.append(f"| {m} | {kind} | {B} | {cell(None)} | " + " | ".join(cell(t) for t in TILES)
                         + f" | {best / by_tile[None]['us_per_state']:.2f} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--child", action="store_true")
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--batches", default=",".join(map(str, BATCHES)))
    p.add_argument("--out", default=os.path.join(HERE, "tiling.json"))
    args = p.parse_args()
    args.batches = [int(b) for b in args.batches.split(",")]
    if args.child:
        child(args)
        return
    if args.quick:
        args.models, args.batches = "humanoid27", [1024]
    import jax

    results = {"machine": f"{platform.node()} {platform.processor() or platform.machine()}, {os.cpu_count()} cores",
               "jax": jax.__version__, "python": platform.python_version(), "command": " ".join(sys.argv), "settings": {}}
    for setting, flags in SETTINGS.items():
        env = dict(os.environ, XLA_FLAGS=flags)
        cmd = [sys.executable, __file__, "--child", "--models", args.models, "--batches", ",".join(map(str, args.batches))]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        rows = [json.loads(line[6:]) for line in proc.stdout.splitlines() if line.startswith("@@ROW ")]
        results["settings"][setting] = rows
        print(f"{setting}: {len(rows)} cases", flush=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(table(results))


if __name__ == "__main__":
    main()
