"""The compiled tree kernels against the JAX path and Pinocchio's C++ batch loop, in one process, one run.

    PYTHONPATH=. python3 benchmarks/kernels.py [--models humanoid27,chain16,chain64] [--out benchmarks/kernels.json]

For each model (benchmarks/models.py; the same numbers as forward_dynamics.py): forward dynamics
udot = f(q, u, tau) with gravity under ``jax.jit(jax.vmap(f))`` at batch 1024 and under ``jax.jit(f)`` for one
state, on the compiled kernels (float64 and float32; both cores, and one core with JAXBODY_KERNEL_THREADS=1)
and on the JAX path (float64); the reverse-mode gradient of sum(udot) with respect to (q, u, tau) and with
respect to every Model leaf, per state at batch 1024, as a ratio to the forward pass of the same backend;
one RK4 step (jb.step_rk4) against one forward pass; compile times (``lower().compile()``, tracing included;
the kernel library itself is built once per machine, see jaxbody._kernels.build); and Pinocchio's own C++
loop over the batch on one thread (``pin.abaInParallel(1, ...)``) and its per-call cost on one state, in the
same run. Default XLA flags. Medians of repetitions (benchmarks/_timing.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
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

BATCH = 1024



def _time(fn, args, per):
    """(us per state, compile s) of jax.jit(fn) on args; ``per`` states per call."""
    compiled, t_compile = timed(lambda: jax.jit(fn).lower(*args).compile())
    jax.block_until_ready(compiled(*args))
    t, _ = median_time(lambda: compiled(*args), min_reps=5, max_reps=200, target_s=1.0,
                       sync=jax.block_until_ready)
    return t / per * 1e6, t_compile


def bench_model(name):
    spec = M.get_model(name)
    model64, _ = M.build_jaxbody(spec)
    q, u, tau = (np.asarray(x) for x in M.random_states(spec, BATCH, seed=5))
    out = {}
    for backend in ("compiled", "jax"):
        jb.set_backend(backend)
        for dtname, dt in (("f64", jnp.float64), ("f32", jnp.float32)):
            if backend == "jax" and dtname == "f32":
                continue
            model = model64 if dtname == "f64" else M.cast_floats(model64, dt)
            a = tuple(jnp.asarray(x, dt) for x in (q, u, tau))
            fd = lambda q, u, t, model=model: M.jaxbody_udot(model, q, u, t)  # noqa: E731
            us, c = _time(jax.vmap(fd), a, BATCH)
            out[f"{backend}_{dtname}_batch{BATCH}"] = {"us_per_state": us, "compile_s": c}
            if backend == "compiled" and dtname == "f64":
                os.environ["JAXBODY_KERNEL_THREADS"] = "1"
                us1, _ = _time(jax.vmap(lambda q, u, t, model=model: M.jaxbody_udot(model, q, u, t)), a, BATCH)
                del os.environ["JAXBODY_KERNEL_THREADS"]
                out[f"{backend}_{dtname}_batch{BATCH}_one_thread"] = {"us_per_state": us1}
            if dtname == "f64":
                one = tuple(x[0] for x in a)
                us_1, c_1 = _time(lambda q, u, t, model=model: M.jaxbody_udot(model, q, u, t), one, 1)
                out[f"{backend}_f64_batch1"] = {"us_per_call": us_1, "compile_s": c_1}
                g = jax.vmap(jax.grad(lambda q, u, t, model=model: M.jaxbody_udot(model, q, u, t).sum(), argnums=(0, 1, 2)))
                us_g, c_g = _time(g, a, BATCH)
                out[f"{backend}_grad_quf"] = {"us_per_state": us_g, "compile_s": c_g,
                                              "ratio": us_g / out[f"{backend}_f64_batch{BATCH}"]["us_per_state"]}
                def fd_prm(prm, q, u, t, model=model):
                    return M.jaxbody_udot(dataclasses.replace(model, parameters=prm), q, u, t).sum()

                gm = jax.vmap(jax.grad(fd_prm), in_axes=(None, 0, 0, 0))
                us_m, c_m = _time(lambda q, u, t, model=model: gm(model.parameters, q, u, t), a, BATCH)
                out[f"{backend}_grad_model"] = {"us_per_state": us_m, "compile_s": c_m,
                                                "ratio": us_m / out[f"{backend}_f64_batch{BATCH}"]["us_per_state"]}

                def rk4(q, u, t, model=model):
                    s = model.default_state().set_q(q).set_u(u).set_mobility_forces(t)
                    s = jb.step_rk4(model, s, 1e-3)
                    return s.q, s.u

                us_r, _ = _time(jax.vmap(rk4), a, BATCH)
                out[f"{backend}_rk4_step"] = {"us_per_state": us_r,
                                              "ratio": us_r / out[f"{backend}_f64_batch{BATCH}"]["us_per_state"]}
        print(name, backend, {k: v for k, v in out.items() if k.startswith(backend)}, flush=True)
    jb.set_backend("compiled")
    a = tuple(jnp.asarray(x) for x in (q, u, tau))
    jax.config.update("jax_enable_x64", True)
    with jb.use_backend("compiled"):
        uc = jax.jit(jax.vmap(lambda q, u, t: M.jaxbody_udot(model64, q, u, t)))(*a)
    with jb.use_backend("jax"):
        uj = jax.jit(jax.vmap(lambda q, u, t: M.jaxbody_udot(model64, q, u, t) + 0.0))(*a)
    out["max_abs_diff_compiled_vs_jax"] = float(jnp.abs(uc - uj).max())
    out["max_abs_udot"] = float(jnp.abs(uj).max())
    out.update(pinocchio(spec, q, u, tau))
    return out


def pinocchio(spec, q, u, tau):
    try:
        import pinocchio as pin
    except ImportError:
        return {}
    pm = M.build_pinocchio(spec)
    pd = pm.createData()
    qp = np.stack([M.q_to_pinocchio(spec, x) for x in q])
    pool = pin.ModelPool(pm, 1)
    qT, uT, tT = (np.asfortranarray(x.T) for x in (qp, u, tau))
    aT = np.zeros_like(uT)
    t, _ = median_time(lambda: pin.abaInParallel(1, pool, qT, uT, tT, aT), min_reps=5, max_reps=50, target_s=1.0)
    K = 2000
    q0, v0, t0 = qp[0].copy(), u[0].copy(), tau[0].copy()

    def calls():
        for _ in range(K):
            pin.aba(pm, pd, q0, v0, t0)

    tc, _ = median_time(calls, min_reps=3, max_reps=20, target_s=1.0)
    return {"pinocchio_cpp_batch1024_us_per_state": t / len(q) * 1e6, "pinocchio_call_us": tc / K * 1e6}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="humanoid27,chain16,chain64")
    p.add_argument("--out", default=os.path.join(HERE, "kernels.json"))
    args = p.parse_args()
    t0 = time.time()
    results = {"machine": platform.processor() or platform.machine(), "cores": os.cpu_count(),
               "jax": jax.__version__, "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "load_avg_at_start": os.getloadavg(), "models": {}}
    for name in args.models.split(","):
        results["models"][name] = bench_model(name)
    results["wall_s"] = time.time() - t0
    results["load_avg_at_end"] = os.getloadavg()
    with open(args.out, "w") as fh:
        json.dump(results, fh, indent=1)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
