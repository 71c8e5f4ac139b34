"""Simulation benchmark: jaxbody's adaptive RungeKuttaMerson (accuracy 1e-6, TimeStepper) and fixed-step RK4
(jb.simulate, dt = 1 ms) side by side with MuJoCo C (mj_step) and MJX (jit(vmap(mjx.step))), both with
MuJoCo's RK4 integrator at dt = 1 ms, on the same models, in one run.

    python benchmarks/simulation.py            # four-bar and humanoid, batches 1, 64, 1024
    python benchmarks/simulation.py --quick    # batches 1, 64
    python benchmarks/simulation.py --batches 1024 --no-gradient --out benchmarks/simulation_1024.json

Models (benchmarks/sim_cases.py), each read from one MJCF file by jb.io.load_mjcf and by MuJoCo: the
parallelogram four-bar (benchmarks/fourbar.xml: 3 hinges closed by an equality connect; jaxbody: an exact Ball
constraint with projection, MuJoCo: a soft constraint) and MJX's humanoid (tests/models/mjx_humanoid.xml,
27 dofs; MuJoCo's contacts, limits, passive forces and actuation off and armature zeroed, so both integrate
the same free-floating tree under gravity). Each lane starts from its own state (four-bar: crank angle and
speed; humanoid: random hinge angles and rates, the root at rest).

Timed: ``--horizon`` simulated seconds per batch size (default 1 s at batch 1, 0.1 s at 64, 0.01 s at 1024,
so the default run stays within minutes on a 2-core CPU), median of repetitions after compilation, reported as
wall time per simulated second and lane-steps per second (steps summed over lanes / wall); compile times.
jaxbody: ``jax.jit(jax.vmap(rollout))``; RKM with 10 report times (every lane its own step sequence; the batch
runs until its slowest lane finishes). MJX: ``jax.jit(jax.vmap)`` of a ``lax.scan`` of mjx.step. MuJoCo C:
mj_step in a Python loop, lanes one after another on one thread. Gradient: a 200-step (0.2 s) humanoid rollout
(batch 1), the gradient of a final-state loss w.r.t. the initial speeds vs the forward pass: wall time and
XLA's temp buffer size (``compiled.memory_analysis()``: the peak scratch memory of the compiled function) for
jaxbody RK4, jaxbody RKM (``differentiable=True``, internal_step_limit 200) and MJX RK4. Results go to
benchmarks/simulation.json (rewritten after every row, so an interrupted run keeps what it measured).
``--models humanoid --engines jaxbody,mjx --no-gradient`` picks parts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np
from _timing import median_time
from sim_cases import DT, Case, mjx_loss_fn, mjx_rollout_fn, mujoco_c_rollout

import jaxbody as jb

HORIZON = {1: 1.0, 64: 0.1, 1024: 0.01}


def save(out, path):
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)


def jaxbody_methods(model, horizon):
    n_steps = int(round(horizon / DT))
    rkm = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=1e-6, constraint_tolerance=1e-8))
    times = jnp.linspace(horizon / 10, horizon, 10)

    def rkm_rollout(q, u):
        run, _ = rkm.simulate(model.default_state().set_q(q).set_u(u), times)
        return run.state.q, run.stats.steps_taken

    def rk4_rollout(q, u):
        final, _ = jb.simulate(model, model.default_state().set_q(q).set_u(u), DT, n_steps,
                               save_every=max(n_steps // 10, 1))
        return final.q, jnp.asarray(n_steps)

    return {"jaxbody RungeKuttaMerson 1e-6": rkm_rollout, "jaxbody RK4 dt=1ms": rk4_rollout}


def row(out, **fields):
    out["runs"].append(fields)
    save(out, out["path"])
    print(json.dumps(fields), flush=True)


def bench_case(case, batches, engines, out):
    for n in batches:
        horizon = HORIZON.get(n, 0.01)
        n_steps = int(round(horizon / DT))
        q, u, qpos, qvel = case.lanes(n)
        common = {"model": case.name, "batch": n, "simulated_s": horizon}
        if "jaxbody" in engines:
            for method, fn in jaxbody_methods(case.model, horizon).items():
                f = jax.jit(jax.vmap(fn))
                t0 = time.perf_counter()
                compiled = f.lower(q, u).compile()
                compile_s = time.perf_counter() - t0
                wall, reps = median_time(lambda c=compiled: c(q, u), sync=jax.block_until_ready, max_reps=5, target_s=3.0)
                steps = int(np.sum(np.asarray(compiled(q, u)[1])))
                row(out, **common, method=method, wall_s_per_simulated_s=wall / horizon, lane_steps_per_s=steps / wall,
                    steps_per_lane_mean=steps / n, compile_s=compile_s, reps=reps)
        if "mjx" in engines:
            f = mjx_rollout_fn(case.mj, n_steps)
            qp, qv = jnp.asarray(qpos), jnp.asarray(qvel)
            t0 = time.perf_counter()
            compiled = f.lower(qp, qv).compile()
            compile_s = time.perf_counter() - t0
            wall, reps = median_time(lambda c=compiled: c(qp, qv), sync=jax.block_until_ready, max_reps=5, target_s=3.0)
            row(out, **common, method="MJX RK4 dt=1ms", wall_s_per_simulated_s=wall / horizon,
                lane_steps_per_s=n * n_steps / wall, steps_per_lane_mean=n_steps, compile_s=compile_s, reps=reps)
        if "mujoco" in engines:
            wall, reps = median_time(lambda: mujoco_c_rollout(case.mj, qpos, qvel, n_steps), max_reps=5, target_s=3.0)
            row(out, **common, method="MuJoCo C RK4 dt=1ms (mj_step, 1 thread)", wall_s_per_simulated_s=wall / horizon,
                lane_steps_per_s=n * n_steps / wall, steps_per_lane_mean=n_steps, compile_s=0.0, reps=reps)


def bench_gradient(case, engines, out):
    q, u, qpos, qvel = case.lanes(1)
    q, u = q[0], u[0]
    model = case.model
    rkm = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=1e-6, internal_step_limit=200),
                         differentiable=True)

    def loss_rk4(u0):
        final, _ = jb.simulate(model, model.default_state().set_q(q).set_u(u0), DT, 200)
        return jnp.sum(final.q**2) + jnp.sum(final.u**2)

    def loss_rkm(u0):
        run, _ = rkm.simulate(model.default_state().set_q(q).set_u(u0), jnp.array([0.2]))
        return jnp.sum(run.state.q**2) + jnp.sum(run.state.u**2)

    losses = []
    if "jaxbody" in engines:
        losses += [("jaxbody RK4 200 steps", loss_rk4, u), ("jaxbody RKM 1e-6 differentiable, limit 200", loss_rkm, u)]
    if "mjx" in engines:
        losses.append(("MJX RK4 200 steps", mjx_loss_fn(case.mj, qpos[0], 200), jnp.asarray(qvel[0])))
    for method, loss, x in losses:
        entry = {"model": case.name, "method": method}
        for kind, fn in (("forward", loss), ("gradient", jax.grad(loss))):
            t0 = time.perf_counter()
            compiled = jax.jit(fn).lower(x).compile()
            compile_s = time.perf_counter() - t0
            wall, _ = median_time(lambda c=compiled: c(x), sync=jax.block_until_ready, max_reps=5, target_s=2.0)
            mem = compiled.memory_analysis()
            entry[kind] = {"wall_s": wall, "temp_bytes": getattr(mem, "temp_size_in_bytes", None), "compile_s": compile_s}
        entry["gradient_over_forward_time"] = entry["gradient"]["wall_s"] / entry["forward"]["wall_s"]
        out["gradient"].append(entry)
        save(out, out["path"])
        print(json.dumps(entry), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--batches", default=None, help="comma-separated batch sizes (default 1,64,1024; --quick: 1,64)")
    parser.add_argument("--out", default=os.path.join(HERE, "simulation.json"))
    parser.add_argument("--models", default="fourbar,humanoid", help="comma-separated subset")
    parser.add_argument("--engines", default="jaxbody,mjx,mujoco", help="comma-separated subset")
    parser.add_argument("--no-gradient", action="store_true")
    parser.add_argument("--note", default="shared 2-core machine, other jobs running")
    args = parser.parse_args()
    batches = [1, 64] if args.quick else [1, 64, 1024]
    if args.batches:
        batches = [int(b) for b in args.batches.split(",")]
    engines = set(args.engines.split(","))
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    machine = {"platform": platform.platform(), "cpus": os.cpu_count(), "jax": jax.__version__,
               "device": str(jax.devices()[0]), "loadavg_at_start": load, "note": args.note}
    out = {"machine": machine, "path": args.out, "runs": [], "gradient": []}
    cases = {name: Case(name) for name in args.models.split(",")}
    for case in cases.values():
        bench_case(case, batches, engines, out)
    if not args.no_gradient:
        bench_gradient(cases.get("humanoid") or Case("humanoid"), engines, out)
    out["machine"]["loadavg_at_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    save(out, out["path"])


if __name__ == "__main__":
    main()
