"""What the kernels' generic route costs on the OpenSim gait models (CustomJoints are FunctionBased mobilizers,
whose X_FM, H_FM and HDot_FM u the JAX path computes and hands to the kernel).

    PYTHONPATH=. python3 benchmarks/generic_cost.py [gait9dof18musc gait14dof22musc arm26]

Per model (tests/models/osim): realize at Acceleration (constraints included) under jit(vmap) at batch 1024,
float64, on the compiled path and on the JAX path, and the generic inputs alone
(jaxbody._kernels.layout.generic_inputs) under the same jit(vmap), in µs per state (medians).
"""

from __future__ import annotations

import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxbody as jb  # noqa: E402
from _timing import median_time  # noqa: E402
from jaxbody._kernels import layout  # noqa: E402

BATCH = 1024
MODELS = os.path.join(HERE, "..", "tests", "models", "osim")


def _us_per_state(fn, q, u):
    compiled = jax.jit(jax.vmap(fn)).lower(q, u).compile()
    jax.block_until_ready(compiled(q, u))
    t, _ = median_time(lambda: compiled(q, u), min_reps=5, max_reps=100, target_s=1.5, sync=jax.block_until_ready)
    return t / BATCH * 1e6


def measure(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imported = jb.io.load_osim(os.path.join(MODELS, f"{name}.osim"))
    model = imported.system.realize_topology()
    topo = model.topology
    rng = np.random.default_rng(0)
    s0 = model.default_state()
    q = jnp.asarray(np.asarray(s0.q) + 0.1 * rng.normal(size=(BATCH, topo.nq)))
    u = jnp.asarray(rng.normal(size=(BATCH, topo.nu)))
    times = {}
    for backend in ("compiled", "jax"):
        with jb.use_backend(backend):
            times[backend] = _us_per_state(
                lambda q, u: model.realize(s0.set_q(q).set_u(u), jb.Stage.Acceleration).acceleration.udot, q, u)
    times["generic_inputs"] = _us_per_state(lambda q, u: layout.generic_inputs(topo, model.parameters, q, u), q, u)
    kinds = sorted({type(m).__name__ for m in topo.mobilizers[1:]})
    print(f"{name}: {topo.nbodies - 1} bodies, nu {topo.nu}, {layout.kernel_layout(topo).n_generic} generic "
          f"({', '.join(kinds)}), {len(model.constraints.groups)} constraint group(s): compiled realize "
          f"{times['compiled']:.2f} us/state, the generic inputs alone {times['generic_inputs']:.2f}; JAX path "
          f"{times['jax']:.2f}", flush=True)


if __name__ == "__main__":
    for name in sys.argv[1:] or ["gait9dof18musc", "gait14dof22musc", "arm26"]:
        measure(name)
