"""The CUDA kernels on a GPU: forward dynamics per state against the JAX path on the same GPU.

    JAX_PLATFORMS=cuda PYTHONPATH=. python3 benchmarks/gpu_kernels.py --out benchmarks/gpu_kernels.json

For each model (benchmarks/models.py, the numbers forward_dynamics.py uses): udot = f(q, u, tau) with gravity
under ``jax.jit(jax.vmap(f))`` at batches 1 to 65536 on the compiled path (float32 and float64) and at 1024
and 65536 on the JAX path; the compiled path's two scratch layouts (the lane's per-body values in local memory, the default for
trees of up to 64 bodies, or lane-major in global memory: JAXBODY_CUDA_SCRATCH=global) and threads per block
(JAXBODY_CUDA_BLOCK) at the largest batch; the first call's cost (building the CUDA library, or loading it
from the cache); the largest difference between the two paths; and for the humanoid the reverse-mode gradient
of sum(udot) with respect to (q, u, tau). Compile = ``lower().compile()``; medians of repetitions
(benchmarks/_timing.py) with ``block_until_ready``. MJX on the same device: ``forward_dynamics.py --child mjx
--device gpu`` (see benchmarks/README.md, "GPU"). The results are written after every measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxbody as jb  # noqa: E402
import models as M  # noqa: E402
from _timing import median_time, timed  # noqa: E402

BATCHES = (1, 1024, 8192, 65536)



def _time(fn, args, per):
    """{us_per_state, states_per_s, compile_s} of jax.jit(fn) on args; ``per`` states per call."""
    compiled, t_compile = timed(lambda: jax.jit(fn).lower(*args).compile())
    jax.block_until_ready(compiled(*args))
    t, reps = median_time(lambda: compiled(*args), min_reps=5, max_reps=200, target_s=0.5,
                          sync=jax.block_until_ready)
    return {"us_per_state": t / per * 1e6, "states_per_s": per / t, "compile_s": t_compile, "reps": reps}


class Results:
    def __init__(self, path):
        self.path, self.data = path, {"device": str(jax.devices()[0].device_kind), "jax": jax.__version__,
                                      "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}

    def put(self, keys, value):
        node = self.data
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        node[keys[-1]] = value
        print(" ".join(keys), json.dumps(value), flush=True)
        with open(self.path, "w") as f:
            json.dump(self.data, f, indent=1)


def bench_model(name, res, batches, variants, paths=("compiled", "jax")):
    spec = M.get_model(name)
    model64, _ = M.build_jaxbody(spec)
    q, u, tau = (np.asarray(x) for x in M.random_states(spec, max(batches), seed=5))
    for dtname, dt in (("f32", jnp.float32), ("f64", jnp.float64)):
        model = model64 if dtname == "f64" else M.cast_floats(model64, dt)
        for backend in paths:
            # A new function per backend: jax.jit caches a traced function with the backend it was traced on.
            fd = jax.vmap(lambda q, u, t, model=model: M.jaxbody_udot(model, q, u, t))
            with jb.use_backend(backend):
                for B in (batches if backend == "compiled" else sorted({min(1024, max(batches)), max(batches)})):
                    a = tuple(jnp.asarray(x[:B], dt) for x in (q, u, tau))
                    res.put([name, backend, dtname, str(B)], _time(fd, a, B))
        if variants:
            B = max(batches)
            a = tuple(jnp.asarray(x[:B], dt) for x in (q, u, tau))
            fd = jax.vmap(lambda q, u, t, model=model: M.jaxbody_udot(model, q, u, t))
            for scratch in ("local", "global"):
                for block in ("32", "64", "128", "256"):
                    os.environ.update(JAXBODY_CUDA_SCRATCH=scratch, JAXBODY_CUDA_BLOCK=block)
                    with jb.use_backend("compiled"):
                        res.put([name, "variants", dtname, f"{scratch}_block{block}"], _time(fd, a, B))
            os.environ.pop("JAXBODY_CUDA_SCRATCH"), os.environ.pop("JAXBODY_CUDA_BLOCK")
    if not paths:
        return
    B = min(1024, max(batches))
    a = tuple(jnp.asarray(x[:B]) for x in (q, u, tau))
    out = {}
    for backend in ("compiled", "jax"):
        with jb.use_backend(backend):
            program = str(jax.make_jaxpr(jax.vmap(lambda q, u, t: M.jaxbody_udot(model64, q, u, t)))(*a))
            assert ("jaxbody_kernel_call" in program) == (backend == "compiled"), f"{backend} path not taken"
            out[backend] = np.asarray(jax.jit(jax.vmap(lambda q, u, t: M.jaxbody_udot(model64, q, u, t)))(*a))
    res.put([name, "max_abs_diff_compiled_vs_jax_f64"], float(np.abs(out["compiled"] - out["jax"]).max()))
    res.put([name, "max_abs_udot"], float(np.abs(out["jax"]).max()))
    if name == "humanoid27":
        for backend in ("compiled", "jax"):
            g = jax.vmap(jax.grad(lambda q, u, t: M.jaxbody_udot(model64, q, u, t).sum(), argnums=(0, 1, 2)))
            with jb.use_backend(backend):
                res.put([name, backend, "grad_f64", str(B)], _time(g, a, B))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="humanoid27,chain16,chain64")
    p.add_argument("--batches", default=",".join(map(str, BATCHES)))
    p.add_argument("--out", default=os.path.join(HERE, "gpu_kernels.json"))
    p.add_argument("--variants-only", action="store_true", help="only the scratch layouts and block sizes")
    args = p.parse_args()
    res = Results(args.out)
    from jaxbody._kernels import build

    _, t_load = timed(jb.compiled_available)
    res.put(["library"], {"first_use_s": t_load, "cpu": build.last_load, "cuda": build.last_load_cuda})
    batches = [int(b) for b in args.batches.split(",")]
    for i, name in enumerate(args.models.split(",")):
        if args.variants_only:
            bench_model(name, res, batches, variants=True, paths=())
        else:
            bench_model(name, res, batches, variants=(i == 0))


if __name__ == "__main__":
    main()
