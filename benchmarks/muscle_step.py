"""gait9dof18musc's muscle-driven state derivative: multibody with its constraints + 18 Thelen2003 muscles on their
imported paths + activation and fiber dynamics, per state, jaxbody (jit(vmap)) against OpenSim 4.6's
``computeStateVariableDerivatives`` on one thread, in the same run.

    PYTHONPATH=. python3 benchmarks/muscle_step.py [--batches 1 64 1024] [--out benchmarks/muscle_step.json]

Reports µs/state (median) for the forward derivative (udot, zdot), the gradient of a weighted sum of both with
respect to (q, u, z, controls) per lane, their ratio, and the first-call compile times. Needs `opensim` for the peer
(skipped without it). Timing on a shared machine is noisy; each number is a median of repeated calls.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxbody as jb  # noqa: E402
from _timing import median_time  # noqa: E402

MODEL = os.path.join(os.path.dirname(__file__), "..", "tests", "models", "osim", "gait9dof18musc.osim")


def random_batch(imp, model, n, seed=0):
    """n States within the coordinate ranges, random speeds, activations, fiber lengths and excitations."""
    rng = np.random.default_rng(seed)
    base = imp.default_state(model)
    q = np.tile(np.asarray(base.q), (n, 1))
    u = rng.uniform(-1, 1, (n, base.u.shape[0]))
    for name, info in imp.coordinate_info.items():
        if not info.locked:
            lo, hi = info.range
            q[:, imp.q_index(name)] = rng.uniform(max(lo, -1.0), min(hi, 1.0), n)
    z = np.tile(np.asarray(base.z), (n, 1))
    z = z * rng.uniform(0.95, 1.05, z.shape)
    c = rng.uniform(0.05, 0.95, (n, base.controls.shape[0]))
    return base, tuple(jnp.asarray(x) for x in (q, u, z, c))


def derivative(model, base):
    def f(q, u, z, c):
        s = model.realize(base.set_q(q).set_u(u).set_z(z).set_controls(c), jb.Stage.Acceleration)
        return s.acceleration.udot, s.dynamics.zdot
    return f


def opensim_time(n_calls=200, seed=0):
    try:
        import opensim as osim
    except ImportError:
        return None
    osim.Logger.setLevelString("error")
    m = osim.Model(MODEL)
    s = m.initSystem()
    rng = np.random.default_rng(seed)
    coords = [m.getCoordinateSet().get(i) for i in range(m.getCoordinateSet().getSize())]
    states = []
    for _ in range(20):
        for c in coords:
            if not c.getLocked(s):
                c.setValue(s, float(np.clip(rng.uniform(-0.3, 0.3), c.getRangeMin(), c.getRangeMax())), False)
                c.setSpeedValue(s, float(rng.uniform(-1, 1)))
        m.assemble(s)
        states.append(osim.State(s))
    m.realizeVelocity(s)
    t0 = time.perf_counter()
    for i in range(n_calls):
        st = states[i % len(states)]
        st.setTime(1e-9 * i)  # invalidate the caches, as a new state would
        m.computeStateVariableDerivatives(st)
    return (time.perf_counter() - t0) / n_calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 64, 1024])
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imp = jb.io.load_osim(MODEL)
    model = imp.system.realize_topology()
    results = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
               "jax": jax.__version__, "backend": jax.default_backend(), "rows": []}
    for n in args.batches:
        base, batch = random_batch(imp, model, n)
        f = derivative(model, base)
        fwd = jax.jit(jax.vmap(f))

        def scalar(q, u, z, c):
            udot, zdot = f(q, u, z, c)
            return jnp.sum(udot * jnp.arange(1, udot.shape[0] + 1)) + jnp.sum(zdot)
        grad = jax.jit(jax.vmap(jax.grad(scalar, argnums=(0, 1, 2, 3))))
        t0 = time.perf_counter(); jax.block_until_ready(fwd(*batch)); c_fwd = time.perf_counter() - t0
        t0 = time.perf_counter(); jax.block_until_ready(grad(*batch)); c_grad = time.perf_counter() - t0
        t_fwd, _ = median_time(lambda: fwd(*batch), sync=jax.block_until_ready)
        t_grad, _ = median_time(lambda: grad(*batch), sync=jax.block_until_ready)
        row = {"batch": n, "forward_us_per_state": 1e6 * t_fwd / n, "gradient_us_per_state": 1e6 * t_grad / n,
               "gradient_over_forward": t_grad / t_fwd, "compile_forward_s": c_fwd, "compile_gradient_s": c_grad}
        results["rows"].append(row)
        print(json.dumps(row))
    t_os = opensim_time()
    if t_os is not None:
        results["opensim_us_per_state"] = 1e6 * t_os
        best = min(r["forward_us_per_state"] for r in results["rows"])
        results["opensim_over_jaxbody_best"] = 1e6 * t_os / best
        print(f"OpenSim 4.6 computeStateVariableDerivatives: {1e6 * t_os:.1f} us/state; "
              f"OpenSim / jaxbody (best batch) = {results['opensim_over_jaxbody_best']:.1f}")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
