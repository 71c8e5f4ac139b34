"""The JAX path of two checkouts compared (issue 28's no-slowdown check): forward dynamics, its gradient w.r.t.
(q, u) and one RK4 step, humanoid27 and chain16, batch 1024, float64, medians of 15 calls, with compile times.

    git worktree add /tmp/old 2bca458
    python3 benchmarks/jax_path_checkouts.py /tmp/old /tmp/old.json
    python3 benchmarks/jax_path_checkouts.py . /tmp/new.json

Run each on the same quiet machine, back to back; the script imports jaxbody and benchmarks/models.py from
the checkout named by its first argument and forces the JAX path (JAXBODY_BACKEND=jax).
"""
import json, os, sys, time
root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "benchmarks")); sys.path.insert(0, root)
os.environ["JAXBODY_BACKEND"] = "jax"
import jax; jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp, numpy as np
import jaxbody as jb, models as M
out = {}
for name in ("humanoid27", "chain16"):
    spec = M.get_model(name)
    built = M.build_jaxbody(spec)
    model = built[0] if isinstance(built, tuple) else built
    q, u, tau = (jnp.asarray(x) for x in M.random_states(spec, 1024, seed=5))
    def udot(q, u, t):
        s = model.default_state().set_q(q).set_u(u).set_mobility_forces(t)
        return model.realize(s, jb.Stage.Acceleration).acceleration.udot
    def rk4(q, u, t):
        s = model.default_state().set_q(q).set_u(u).set_mobility_forces(t)
        s = jb.step_rk4(model, s, 1e-3)
        return s.q, s.u
    fns = {"forward": jax.vmap(udot), "grad_qu": jax.vmap(jax.grad(lambda q, u, t: udot(q, u, t).sum(), argnums=(0, 1))),
           "rk4_step": jax.vmap(rk4)}
    for k, f in fns.items():
        t0 = time.perf_counter(); c = jax.jit(f).lower(q, u, tau).compile(); tc = time.perf_counter() - t0
        jax.block_until_ready(c(q, u, tau))
        ts = []
        for _ in range(15):
            t0 = time.perf_counter(); jax.block_until_ready(c(q, u, tau)); ts.append(time.perf_counter() - t0)
        out[f"{name}_{k}"] = {"us_per_state": float(np.median(ts)) / 1024 * 1e6, "compile_s": tc}
        print(name, k, out[f"{name}_{k}"], flush=True)
json.dump(out, open(sys.argv[2], "w"), indent=1)
