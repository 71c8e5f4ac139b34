"""Simulation benchmark: adaptive RungeKuttaMerson (accuracy 1e-6, TimeStepper) vs fixed-step RK4 (jb.simulate).

    python benchmarks/simulation.py            # four-bar and humanoid27, batches 1, 64, 1024
    python benchmarks/simulation.py --quick    # batches 1, 64

Models: the parallelogram four-bar (3 pins closed by a Ball constraint, gravity) and humanoid27 (benchmarks/
models.py, free-floating, gravity). Each lane starts from its own state (four-bar: crank angle and speed;
humanoid: random q, u). Timed: one simulated second, ``jax.jit(jax.vmap(rollout))``, median of repetitions
after compilation. RKM: 10 report times, every lane its own step sequence (the batch runs until its slowest
lane finishes). RK4: dt = 1 ms, 1000 steps. Reported: wall time per simulated second, lane-steps per second
(steps taken summed over lanes / wall), compile time; and for a 200-step rollout of the humanoid (batch 1)
the time and XLA's temp memory of the gradient of a final-state loss vs the forward pass (RK4 and RKM with
``differentiable=True``, internal_step_limit 200). Results go to benchmarks/simulation.json (rewritten after
every row, so an interrupted run keeps what it measured). ``--models humanoid27 --no-gradient`` picks parts.
MJX / MuJoCo C are not part of this script (see forward_dynamics.py for their per-step costs).
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
from models import build_jaxbody, humanoid, random_states

import jaxbody as jb


def fourbar():
    a, L = 0.6, 1.0
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])

    def rod(m, length):
        return jb.Body.Rigid(jb.MassProperties.from_central_inertia(
            m, [length / 2, 0, 0], jb.Inertia(0.01, m * length**2 / 12, m * length**2 / 12)))

    G = matter.Ground()
    crank = jb.MobilizedBody.Pin(G, jb.Transform(), rod(1.0, a), jb.Transform())
    coupler = jb.MobilizedBody.Pin(crank, jb.Transform([a, 0, 0]), rod(2.0, L), jb.Transform())
    rocker = jb.MobilizedBody.Pin(G, jb.Transform([L, 0, 0]), rod(1.5, a), jb.Transform())
    jb.Constraint.Ball(coupler, [L, 0, 0], rocker, [a, 0, 0])
    model = system.realize_topology()

    def states(n):
        theta = jnp.linspace(-0.5, 1.0, n)
        w = jnp.linspace(-3.0, 3.0, n)
        q = jnp.stack([theta, -theta, theta], -1)
        return q, jnp.stack([w, -w, w], -1)

    return "fourbar", model, states


def humanoid_case():
    spec = humanoid()
    model, _ = build_jaxbody(spec)

    def states(n):
        q, u, _ = random_states(spec, n, seed=0, vel_scale=0.5)
        return jnp.asarray(q), jnp.asarray(u)

    return "humanoid27", model, states


def save(out, path):
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)


def bench_model(name, model, states, batches, out):
    rkm = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=1e-6, constraint_tolerance=1e-8))
    times = jnp.linspace(0.1, 1.0, 10)

    def rkm_rollout(q, u):
        run, _ = rkm.simulate(model.default_state().set_q(q).set_u(u), times)
        return run.state.q, run.stats.steps_taken

    def rk4_rollout(q, u):
        final, _ = jb.simulate(model, model.default_state().set_q(q).set_u(u), 1e-3, 1000, save_every=100)
        return final.q, jnp.asarray(1000)

    for method, fn in (("RungeKuttaMerson 1e-6", rkm_rollout), ("RK4 dt=1ms", rk4_rollout)):
        for n in batches:
            q, u = states(n)
            f = jax.jit(jax.vmap(fn))
            t0 = time.perf_counter()
            compiled = f.lower(q, u).compile()
            compile_s = time.perf_counter() - t0
            wall, reps = median_time(lambda c=compiled, q=q, u=u: c(q, u), sync=jax.block_until_ready, max_reps=5, target_s=3.0)
            steps = int(np.sum(np.asarray(compiled(q, u)[1])))
            row = {"model": name, "method": method, "batch": n, "wall_s_per_simulated_s": wall,
                   "lane_steps_per_s": steps / wall, "steps_per_lane_mean": steps / n, "compile_s": compile_s, "reps": reps}
            out["runs"].append(row)
            save(out, out["path"])
            print(json.dumps(row), flush=True)


def bench_gradient(model, states, out):
    q, u = states(1)
    q, u = q[0], u[0]
    rkm = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=1e-6, internal_step_limit=200),
                         differentiable=True)

    def loss_rk4(u0):
        final, _ = jb.simulate(model, model.default_state().set_q(q).set_u(u0), 1e-3, 200)
        return jnp.sum(final.q**2) + jnp.sum(final.u**2)

    def loss_rkm(u0):
        run, _ = rkm.simulate(model.default_state().set_q(q).set_u(u0), jnp.array([0.2]))
        return jnp.sum(run.state.q**2) + jnp.sum(run.state.u**2)

    for method, loss in (("RK4 200 steps", loss_rk4), ("RKM 1e-6 differentiable, limit 200", loss_rkm)):
        row = {"method": method}
        for kind, fn in (("forward", loss), ("gradient", jax.grad(loss))):
            compiled = jax.jit(fn).lower(u).compile()
            wall, _ = median_time(lambda c=compiled: c(u), sync=jax.block_until_ready, max_reps=5, target_s=2.0)
            mem = compiled.memory_analysis()
            row[kind] = {"wall_s": wall, "temp_bytes": getattr(mem, "temp_size_in_bytes", None)}
        out["gradient"].append(row)
        save(out, out["path"])
        print(json.dumps(row), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=os.path.join(HERE, "simulation.json"))
    parser.add_argument("--models", default="fourbar,humanoid27", help="comma-separated subset")
    parser.add_argument("--no-gradient", action="store_true")
    args = parser.parse_args()
    batches = [1, 64] if args.quick else [1, 64, 1024]
    machine = {"platform": platform.platform(), "cpus": os.cpu_count(), "jax": jax.__version__,
               "device": str(jax.devices()[0]), "note": "shared 2-core machine, other jobs running"}
    out = {"machine": machine, "path": args.out, "runs": [], "gradient": []}
    cases = {"fourbar": fourbar, "humanoid27": humanoid_case}
    chosen = [cases[m]() for m in args.models.split(",")]
    for name, model, states in chosen:
        bench_model(name, model, states, batches, out)
    if not args.no_gradient:
        hum = humanoid_case()
        bench_gradient(hum[1], hum[2], out)


if __name__ == "__main__":
    main()
