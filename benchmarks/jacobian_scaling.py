"""Cost of the Jacobian operator forms versus the explicit Jacobian as a Pin chain grows (4 to 256 links).

``multiply_by_system_jacobian`` (one outward scan) should grow linearly with
the number of links, and ``calc_system_jacobian`` (nu operator applications)
quadratically. Prints a table and writes benchmarks/jacobian_scaling.json.

    python benchmarks/jacobian_scaling.py [--batch 64] [--links 4 8 16 32 64 128 256]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import platform
import time

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxbody as jb  # noqa: E402


def pin_chain(n):
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0, -9.81, 0])
    body = jb.Body.Rigid(jb.MassProperties.from_central_inertia(1.0, [0.15, 0, 0], jb.Inertia(0.01, 0.02, 0.02)))
    parent = matter.Ground()
    for i in range(n):
        parent = jb.MobilizedBody.Pin(parent, jb.Transform([0.3, 0, 0] if i else [0, 0, 0]), body, jb.Transform())
    return system.realize_topology()


def median_time(fn, *args, repeats=7):
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--links", type=int, nargs="+", default=[4, 8, 16, 32, 64, 128, 256])
    args = parser.parse_args(argv)
    rows = []
    for n in args.links:
        model = pin_chain(n)
        rng = np.random.default_rng(0)
        q = jnp.asarray(rng.uniform(-1, 1, (args.batch, n)))
        u = jnp.asarray(rng.normal(size=(args.batch, n)))

        def position(q):
            return model.realize(model.default_state().set_q(q), jb.Stage.Position)

        multiply = jax.jit(jax.vmap(lambda q, u: model.multiply_by_system_jacobian(position(q), u)))
        explicit = jax.jit(jax.vmap(lambda q: model.calc_system_jacobian(position(q))))
        kin = jax.jit(jax.vmap(lambda q: position(q).position.p_GB))
        t_kin = median_time(kin, q)
        t_mul = median_time(multiply, q, u)
        t_exp = median_time(explicit, q)
        rows.append({"links": n, "position_us": 1e6 * t_kin / args.batch,
                     "multiply_by_system_jacobian_us": 1e6 * t_mul / args.batch,
                     "calc_system_jacobian_us": 1e6 * t_exp / args.batch})
        print(f"{n:4d} links: position {rows[-1]['position_us']:9.2f} us  "
              f"multiply_by_system_jacobian {rows[-1]['multiply_by_system_jacobian_us']:9.2f} us  "
              f"calc_system_jacobian {rows[-1]['calc_system_jacobian_us']:10.2f} us  (per state, batch {args.batch})")
    # Growth exponents from a log-log fit over the upper half of the sizes.
    tail = rows[len(rows) // 2 :]
    x = np.log([r["links"] for r in tail])
    fit = {k: float(np.polyfit(x, np.log([r[k] for r in tail]), 1)[0])
           for k in ("multiply_by_system_jacobian_us", "calc_system_jacobian_us")}
    print("log-log slope (upper half):", {k: round(v, 2) for k, v in fit.items()})
    out = {"machine": platform.processor() or platform.machine(), "jax": jax.__version__, "batch": args.batch,
           "rows": rows, "slopes": fit}
    pathlib.Path(__file__).with_suffix(".json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
