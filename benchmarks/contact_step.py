"""One full contact step of MJX's humanoid: jaxbody vs MuJoCo C and MJX in the same run (CPU unless a GPU is present).

* jaxbody: ``tests/models/mjx_humanoid.xml`` read by ``load_mjcf(contact=True)`` (its four foot capsules against
  the floor plane, compliant Hunt-Crossley contact from MuJoCo's solref/solimp; joint limit stops, damping,
  armature as imported), one step = contact forces + forward dynamics + semi-explicit Euler, dt 0.005 s
  (``jb.simulate(model, s, dt, 1, "semi_explicit_euler")``) under ``jax.jit(jax.vmap)``; states: the file's qpos0
  with the root lowered 5 mm (feet in contact) and speeds ~ N(0, 0.1^2); float64 and float32 (the model's leaves
  cast). Gradient: ``jax.vjp`` of the step w.r.t. (q, u) with a random cotangent, divided by the forward time.
* MuJoCo C: ``mujoco.mj_step`` on the same file, one thread, the states one after another (µs per state).
* MJX: ``jax.jit(jax.vmap(mjx.step))`` on the same file (its contact solver), float32 (MJX's default).
* Rollout: ``jb.simulate`` of ``--rollout-steps`` steps on ``--rollout-worlds`` worlds (vmap), compile + run.

The models are the same file, not the same physics: MuJoCo and MJX solve contact as soft constraints
(implicit), jaxbody's is a force law integrated explicitly (at dt 0.005 the imported stiffness is beyond the
explicit step's stability limit: the timing is the step's cost, the trajectory needs dt <= 0.001-0.002; see
jaxbody.io.mjcf_contact_material). Usage: ``python3 benchmarks/contact_step.py [--batches 1 64 1024 4096]
[--rollout-worlds 4096 --rollout-steps 1000] [--out contact_step.json]``. Timings on a shared CPU are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))  # this checkout's jaxbody

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from _timing import median_time, timed  # noqa: E402

import jaxbody as jb  # noqa: E402

MODEL = os.path.join(HERE, "..", "tests", "models", "mjx_humanoid.xml")
DT = 0.005


def jaxbody_case(dtype, contact=True):
    """(Model, State): the file's qpos0 with the root lowered 5 mm, the model's leaves cast to ``dtype``;
    ``contact=False`` reads the file without its contact."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imp = jb.io.load_mjcf(MODEL, contact=contact)
    model = imp.system.realize_topology()
    state = imp.default_state(model)
    state = state.set_q(state.q.at[6].add(-0.005))
    if dtype == jnp.float32:
        cast = lambda x: x.astype(jnp.float32) if isinstance(x, jax.Array) and x.dtype == jnp.float64 else x  # noqa: E731
        model, state = jax.tree.map(cast, model), jax.tree.map(cast, state)
    return model, state


def batch_states(state, batch, seed=0):
    u = 0.1 * np.random.default_rng(seed).normal(size=(batch, state.u.size))
    return jax.vmap(state.set_u)(jnp.asarray(u, state.u.dtype))


def time_jaxbody(model, state, batches, budget_s):
    def step(s):
        return jb.simulate(model, s, DT, 1, "semi_explicit_euler")[0]

    def grad(s, ct):
        def f(q, u):
            out = step(s.set_q(q).set_u(u))
            return out.q, out.u
        _, vjp = jax.vjp(f, s.q, s.u)
        return vjp(ct)

    fwd, bwd = jax.jit(jax.vmap(step)), jax.jit(jax.vmap(grad))
    out = {}
    for B in batches:
        states = batch_states(state, B)
        ct = (jnp.ones_like(states.q), jnp.ones_like(states.u))
        (_, t_fc) = timed(lambda: fwd.lower(states).compile())
        (_, t_gc) = timed(lambda: bwd.lower(states, ct).compile())
        t_f, _ = median_time(lambda: fwd(states), target_s=budget_s, sync=lambda r: jax.block_until_ready(r.q))
        t_g, _ = median_time(lambda: bwd(states, ct), target_s=budget_s, sync=jax.block_until_ready)
        finite = bool(jnp.all(jnp.isfinite(fwd(states).q)))
        out[B] = {"step_us_per_state": 1e6 * t_f / B, "grad_us_per_state": 1e6 * t_g / B, "grad_over_step": t_g / t_f,
                  "compile_step_s": t_fc, "compile_grad_s": t_gc, "finite_after_one_step": finite}
        print(f"  jaxbody {state.q.dtype} B={B}: step {out[B]['step_us_per_state']:.2f} us/state, grad/step "
              f"{out[B]['grad_over_step']:.2f}, compile {t_fc:.2f} s + {t_gc:.2f} s", flush=True)
    return out


def time_mujoco(n):
    import mujoco
    m = mujoco.MjModel.from_xml_path(MODEL)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(0)
    qvel = 0.1 * rng.normal(size=(n, m.nv))

    def run():
        for i in range(n):
            mujoco.mj_resetData(m, d)
            d.qpos[2] -= 0.005
            d.qvel[:] = qvel[i]
            mujoco.mj_step(m, d)
    t, _ = median_time(run, target_s=1.0)
    return {"step_us_per_state": 1e6 * t / n, "n": n, "ncon_last": int(d.ncon)}


def time_mjx(batches, budget_s):
    import mujoco
    from mujoco import mjx
    m = mujoco.MjModel.from_xml_path(MODEL)
    mx = mjx.put_model(m)
    d0 = mjx.make_data(mx)
    step = jax.jit(jax.vmap(lambda d: mjx.step(mx, d)))
    out = {}
    for B in batches:
        rng = np.random.default_rng(0)
        qpos = jnp.tile(jnp.asarray(m.qpos0, jnp.float32), (B, 1)).at[:, 2].add(-0.005)
        qvel = jnp.asarray(0.1 * rng.normal(size=(B, m.nv)), jnp.float32)
        ds = jax.vmap(lambda q, v: d0.replace(qpos=q, qvel=v))(qpos, qvel)
        (_, t_c) = timed(lambda: step.lower(ds).compile())
        t, _ = median_time(lambda: step(ds), target_s=budget_s, sync=lambda r: jax.block_until_ready(r.qpos))
        out[B] = {"step_us_per_state": 1e6 * t / B, "compile_s": t_c}
        print(f"  MJX B={B}: step {out[B]['step_us_per_state']:.2f} us/state, compile {t_c:.2f} s", flush=True)
    return out


def rollout(model, state, worlds, steps):
    states = batch_states(state, worlds)
    run = jax.jit(jax.vmap(lambda s: jb.simulate(model, s, DT, steps, "semi_explicit_euler", save_every=steps)[0].q))
    t0 = time.perf_counter()
    compiled = run.lower(states).compile()
    t_compile = time.perf_counter() - t0
    _, t_run = timed(lambda: jax.block_until_ready(compiled(states)))
    return {"worlds": worlds, "steps": steps, "compile_s": t_compile, "run_s": t_run, "total_s": t_compile + t_run}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batches", type=int, nargs="+", default=[1, 64, 1024, 4096])
    p.add_argument("--budget", type=float, default=1.5, help="seconds of timing per case")
    p.add_argument("--rollout-worlds", type=int, default=4096)
    p.add_argument("--rollout-steps", type=int, default=1000)
    p.add_argument("--no-peers", action="store_true")
    p.add_argument("--out", default=os.path.join(HERE, "contact_step.json"))
    args = p.parse_args()
    results = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "backend": jax.default_backend(),
                           "jax": jax.__version__}, "dt": DT, "batches": args.batches}
    for name, dtype in (("float64", jnp.float64), ("float32", jnp.float32)):
        model, state = jaxbody_case(dtype)
        results[f"jaxbody_{name}"] = time_jaxbody(model, state, args.batches, args.budget)
    if not args.no_peers:
        results["mujoco_c"] = time_mujoco(256)
        print(f"  MuJoCo C mj_step: {results['mujoco_c']['step_us_per_state']:.2f} us/state", flush=True)
        results["mjx"] = time_mjx(args.batches, args.budget)
    if args.rollout_worlds and args.rollout_steps:
        model, state = jaxbody_case(jnp.float64)
        results["rollout_float64"] = rollout(model, state, args.rollout_worlds, args.rollout_steps)
        print(f"  rollout {results['rollout_float64']}", flush=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1, default=str)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
