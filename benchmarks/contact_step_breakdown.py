"""Where the MJX humanoid's contact step spends its time: the step, realize to Dynamics and realize to
Acceleration, with and without the file's contact (``load_mjcf(contact=...)``), on the compiled and the JAX
path, batch 1024, float64, ``jit(vmap)``, µs per state (median); model and states as benchmarks/contact_step.py.

    PYTHONPATH=. python3 benchmarks/contact_step_breakdown.py [--batch 1024]
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from _timing import median_time  # noqa: E402
from contact_step import batch_states, jaxbody_case  # noqa: E402

import jaxbody as jb  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=1024)
    batch = p.parse_args().batch
    for contact in (True, False):
        model, state = jaxbody_case(jnp.float64, contact)
        states = batch_states(state, batch)
        cases = {"step": lambda s: jb.simulate(model, s, 0.005, 1, "semi_explicit_euler")[0],
                 "realize Dynamics": lambda s: model.realize(s, jb.Stage.Dynamics).dynamics,
                 "realize Acceleration": lambda s: model.realize(s, jb.Stage.Acceleration).acceleration.udot}
        for backend in ("compiled", "jax"):
            with jb.use_backend(backend):
                for name, fn in cases.items():
                    f = jax.jit(jax.vmap(fn))
                    jax.block_until_ready(f(states))
                    t, _ = median_time(lambda: f(states), target_s=1.0, sync=jax.block_until_ready)
                    print(f"contact={contact!s:5s} {backend:8s} {name:22s} {1e6 * t / batch:7.2f} us/state", flush=True)


if __name__ == "__main__":
    main()
