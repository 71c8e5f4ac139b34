"""Compile cost of arm26's muscle-driven pieces (issue 35): HLO size and compile time of each, to find which grows.

    PYTHONPATH=. python3 benchmarks/arm26_compile.py [--pieces len:TRIlong,deriv,scan] [--lower-only]

Pieces: ``len:<muscle>`` one muscle's path length (realize to Position included); ``deriv`` the muscle-driven state
derivative (q', u', z' from a realize to Acceleration); ``vmap`` it over 16 lanes; ``scan`` 16 lanes of 10 RK4
steps (``jb.simulate``, the demo's integrator). Per piece: the lowered StableHLO's operation and while-loop
counts, lower and compile wall time, the process CPU time of both (XLA compiles on several threads) and one
run's wall time. XLA's default flags (the demo's), not the tests'.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import time
import warnings

import jax
import jax.numpy as jnp

import jaxbody as jb

jax.config.update("jax_enable_x64", True)
ARM26 = pathlib.Path(__file__).resolve().parents[1] / "tests" / "models" / "osim" / "arm26.osim"
LANES = 16


def measure(name, f, args, lower_only=False, log=print):
    c0, t0 = time.process_time(), time.perf_counter()
    lowered = jax.jit(f).lower(*args)
    lower_s = time.perf_counter() - t0
    text = lowered.as_text()
    row = dict(piece=name, hlo_ops=len(re.findall(r"stablehlo\.\w+", text)), whiles=text.count("stablehlo.while"),
               lower_s=lower_s)
    if not lower_only:
        t1 = time.perf_counter()
        compiled = lowered.compile()
        row.update(compile_s=time.perf_counter() - t1, cpu_s=time.process_time() - c0)
        t2 = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        row.update(run_s=time.perf_counter() - t2)
    log("  ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()))
    return row


def pieces(model_file=ARM26):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imported = jb.io.load_osim(str(model_file))
    model = imported.system.realize_topology()
    base = imported.default_state(model).set_controls(jnp.full(model.num_controls, 0.5))

    def deriv(s):
        r = model.realize(s, jb.Stage.Acceleration)
        return jnp.concatenate([r.u, r.acceleration.udot, r.dynamics.zdot])

    lanes = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (LANES,) + jnp.shape(x)), base)
    out = {f"len:{n}": (lambda q, h=h: h.get_length(model.realize(base.set_q(q), jb.Stage.Position), model),
                        (base.q,)) for n, h in imported.forces_by_name.items() if hasattr(h, "state_names")}
    out["deriv"] = (deriv, (base,))
    out["vmap"] = (jax.vmap(deriv), (lanes,))
    out["scan"] = (jax.vmap(lambda s: jb.simulate(model, s, 1e-3, 10, method="rk4", save_every=10)[0].q), (lanes,))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pieces", default="len:BICshort,len:TRIlat,len:BIClong,len:TRIlong,deriv,vmap,scan")
    parser.add_argument("--lower-only", action="store_true", help="HLO sizes only (no compile)")
    args = parser.parse_args(argv)
    table = pieces()
    return [measure(p, *table[p], lower_only=args.lower_only) for p in args.pieces.split(",")]


if __name__ == "__main__":
    main()
