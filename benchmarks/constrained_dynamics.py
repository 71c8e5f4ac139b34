"""Constrained forward dynamics and eager-call overhead, for comparing two checkouts of jaxbody.

Times, in float64 on the CPU:

* ``model.realize(state)`` to Acceleration (udot with exact multipliers) under ``jax.jit`` at batch 1,
  under ``jax.jit(jax.vmap(...))`` at batch 1024 and under ``jax.jit(jb.tiled_vmap(...))`` (64-lane tiles) at 1024, for the README's Ball four-bar (3 bodies, 1 constraint,
  3 equations) and a 12-body tree with 10 constraints of 6 types (13 equations);
* the compile time of each;
* eager calls: ``model.calc_m(state)`` (a compiled entry point) and ``system.project(state, 1e-10)``
  (first call and the median of later calls on new values).

Run from the repository root (``PYTHONPATH=path/to/other/checkout`` times another version of the same API):

    python benchmarks/constrained_dynamics.py [--out benchmarks/constrained_dynamics.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_time  # noqa: E402

import jaxbody as jb  # noqa: E402


def _link():
    return jb.Body.Rigid(jb.MassProperties(1.0, [0, -0.5, 0], jb.Inertia(0.34, 0.01, 0.34)))


def fourbar():
    """The README's closed-loop example: crank, coupler, rocker, closed by a Constraint.Ball."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, [0, -9.81, 0])
    link = _link()
    crank = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), link, jb.Transform())
    coupler = jb.MobilizedBody.Pin(crank, jb.Transform([0, -1, 0]), link, jb.Transform())
    rocker = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform([1, 0, 0]), link, jb.Transform())
    jb.Constraint.Ball(coupler, [1, 0, 0], rocker, [0, -1, 0])
    return system


def constrained_tree():
    """12 bodies (Pin, Ball, Universal, Slider) in two branches, tied by 10 constraints of 6 types (13 equations)."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, [0, -9.81, 0])
    link, G = _link(), matter.Ground()
    makers = [jb.MobilizedBody.Pin, jb.MobilizedBody.Ball, jb.MobilizedBody.Universal, jb.MobilizedBody.Pin,
              jb.MobilizedBody.Slider, jb.MobilizedBody.Pin]
    left, right, parent_l, parent_r = [], [], G, G
    for i, make in enumerate(makers):
        parent_l = make(parent_l, jb.Transform([0.1 * i, -0.8, 0]), link, jb.Transform())
        parent_r = make(parent_r, jb.Transform([1.0 + 0.1 * i, -0.8, 0.1]), link, jb.Transform())
        left.append(parent_l)
        right.append(parent_r)
    jb.Constraint.Rod(left[1], [0, -0.5, 0], right[1], [0, -0.5, 0], 1.1)
    jb.Constraint.Ball(left[3], [0.2, 0, 0], right[3], [-0.2, 0, 0])
    jb.Constraint.Rod(left[5], [0, 0, 0], right[5], [0, 0, 0], 1.0)
    jb.Constraint.PointInPlane(left[2], [0, 1, 0], 0.1, right[2], [0, -0.3, 0])
    jb.Constraint.PointOnLine(left[4], [1, 0, 0], [0, 0, 0], right[4], [0, 0.1, 0])
    jb.Constraint.ConstantAngle(left[0], [1, 0, 0], right[0], [0, 0, 1])
    jb.Constraint.ConstantAngle(left[2], [0, 0, 1], right[1], [1, 0, 0])
    jb.Constraint.ConstantSpeed(left[3], 0, 0.2)
    jb.Constraint.ConstantSpeed(right[5], 0, -0.1)
    jb.Constraint.Rod(left[0], [0, -0.5, 0], right[2], [0, 0.2, 0], 1.3)
    return system


def _random_states(model, n, seed=0):
    rng = np.random.default_rng(seed)
    s = model.default_state()
    q = jnp.asarray(np.asarray(s.q) + 0.1 * rng.standard_normal((n, s.q.shape[0])))
    u = jnp.asarray(0.3 * rng.standard_normal((n, s.u.shape[0])))
    return s, q, u


def time_forward_dynamics(model, batch, budget_s, tiled=False):
    base, q, u = _random_states(model, batch)

    def udot(q, u):
        return model.realize(base.set_q(q).set_u(u)).acceleration.udot

    fn = jax.jit(udot) if batch == 1 else jax.jit(jb.tiled_vmap(udot) if tiled else jax.vmap(udot))
    args = (q[0], u[0]) if batch == 1 else (q, u)
    t0 = time.perf_counter()
    jax.block_until_ready(fn(*args))
    compile_s = time.perf_counter() - t0
    median, reps = median_time(lambda: fn(*args), sync=jax.block_until_ready, target_s=budget_s, max_reps=200)
    return {"us_per_state": 1e6 * median / batch, "compile_s": compile_s, "reps": reps}


def time_eager(system, n_calls=4):
    model = system.realize_topology()
    base, q, u = _random_states(model, n_calls + 1, seed=1)
    out = {}
    for name, call in {
        "calc_m": lambda k: model.calc_m(model.realize(base.set_q(q[k]), jb.Stage.Position)),
        "project": lambda k: system.project(base.set_q(q[k]).set_u(u[k]), 1e-10)[0].q,
    }.items():
        t0 = time.perf_counter()
        jax.block_until_ready(call(0))
        first = time.perf_counter() - t0
        later = []
        for k in range(1, n_calls + 1):
            t0 = time.perf_counter()
            jax.block_until_ready(call(k))
            later.append(time.perf_counter() - t0)
        out[name] = {"first_s": first, "later_median_s": float(np.median(later))}
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    parser.add_argument("--budget", type=float, default=2.0, help="seconds of timing per case")
    args = parser.parse_args(argv)
    results = {"jaxbody": os.path.dirname(os.path.dirname(jb.__file__)), "jax": jax.__version__,
               "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"}
    for name, make in {"fourbar": fourbar, "tree10": constrained_tree}.items():
        system = make()
        model = system.realize_topology()
        entry = {"m": model.get_num_constraint_equations()}
        for key, batch, tiled in (("batch1", 1, False), ("batch1024", 1024, False), ("batch1024_tiled", 1024, True)):
            entry[key] = time_forward_dynamics(model, batch, args.budget, tiled)
            print(name, key, entry[key], flush=True)
        entry["eager"] = time_eager(make())
        print(name, "eager", entry["eager"], flush=True)
        results[name] = entry
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    main()
