"""The reverse-mode gradient's three kernel calls measured apart: where a gradient's time goes on the compiled path.

A gradient of forward dynamics w.r.t. (q, u, tau) is, per lane, the forward kernel, one M^-1 column (the
cotangent of udot through ``jaxbody_m_inverse``) and the adjoint sweep of inverse dynamics
(``jaxbody_residual_adjoint``, without the Model's cotangents); its compiled program holds those three custom
calls and a few tiny broadcasts. This times each call alone under ``jax.jit(jax.vmap(...))`` at one batch size,
float64, with the whole gradient and the forward pass in the same process:

    PYTHONPATH=. python3 benchmarks/kernel_pieces.py [--models humanoid27,chain16,chain64] [--batch 1024]
"""

from __future__ import annotations

import argparse
import os
import sys

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models as M  # noqa: E402
from _timing import median_time  # noqa: E402

from jaxbody._kernels import linear_ops  # noqa: E402


def us_per_state(fn, args, batch):
    compiled = jax.jit(fn)
    jax.block_until_ready(compiled(*args))
    t, _ = median_time(lambda: compiled(*args), min_reps=5, max_reps=300, target_s=1.0, sync=jax.block_until_ready)
    return t / batch * 1e6


def pieces(name, batch):
    spec = M.get_model(name)
    model, _ = M.build_jaxbody(spec)
    topo, prm = model.topology, model.parameters
    q, u, tau = (jnp.asarray(x) for x in M.random_states(spec, batch, seed=5))
    known = jnp.zeros((topo.nbodies,))
    state = model.default_state()
    F = jnp.zeros((topo.nbodies, 2, 3))
    W = jnp.asarray(model.realize(state).dynamics.gravity_weights)

    def forward(q, u, t):
        return M.jaxbody_udot(model, q, u, t)

    def gradient(q, u, t):
        return jax.grad(lambda q, u, t: forward(q, u, t).sum(), argnums=(0, 1, 2))(q, u, t)

    def m_inverse_column(q, t):
        return linear_ops.multiply_by_m_inverse(topo, prm, q, known, t)

    def adjoint(q, u, t):
        return linear_ops.residual_adjoint(topo, prm, q, u, F, W, t, t, 0, False)[1:3]

    out = {"forward": us_per_state(jax.vmap(forward), (q, u, tau), batch),
           "m_inverse_column": us_per_state(jax.vmap(m_inverse_column), (q, tau), batch),
           "adjoint_sweep": us_per_state(jax.vmap(adjoint), (q, u, tau), batch),
           "gradient": us_per_state(jax.vmap(gradient), (q, u, tau), batch)}
    out["sum_of_three"] = out["forward"] + out["m_inverse_column"] + out["adjoint_sweep"]
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="humanoid27,chain16,chain64")
    p.add_argument("--batch", type=int, default=1024)
    args = p.parse_args()
    for name in args.models.split(","):
        r = pieces(name, args.batch)
        print(name, ", ".join(f"{k} {v:.2f}" for k, v in r.items()), "us/state", flush=True)


if __name__ == "__main__":
    main()
