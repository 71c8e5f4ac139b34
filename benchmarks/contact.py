"""Forward dynamics with contact at batch 1024: jaxbody vs MJX, same run (CPU unless a GPU is present).

* jaxbody: the 11-body humanoid-like doll of ``tests/contact/humanoid.py`` (26 u) with one HuntCrossleyForce
  of 8 spheres (4 per sole) against a floor half-space, gravity, joint springs and dampers;
  ``model.realize(state, Acceleration)`` (udot) under ``jax.jit(jax.vmap(...))``, float64, random states
  around standing (about half the spheres touching).
* MJX: ``mjx.forward`` on MuJoCo's own humanoid (``mujoco/mjx/test_data/humanoid/humanoid.xml``, 27 dof,
  contact on: its floor plane against the body geoms), float32 (MJX's default), under ``jax.jit(jax.vmap)``.

The models are comparable, not identical (MJX has its constraint solver for contacts; jaxbody's contact is a
compliant force). Usage: ``python3 benchmarks/contact.py [--batch 1024]``; prints and writes contact.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))  # this checkout's jaxbody
sys.path.insert(0, os.path.join(HERE, "..", "tests", "contact"))

from _timing import median_time, timed


def jaxbody_case(batch):
    jax.config.update("jax_enable_x64", True)
    from humanoid import humanoid  # tests/contact/humanoid.py

    import jaxbody as jb

    model, _, _ = humanoid("hunt_crossley")
    s0 = model.default_state()
    rng = np.random.default_rng(0)
    q = np.tile(np.asarray(s0.q), (batch, 1))
    q[:, 5] = rng.uniform(-0.03, 0.01, batch)  # pelvis height: some spheres in contact
    q[:, 7:] += rng.normal(scale=0.05, size=(batch, q.shape[1] - 7))
    u = rng.normal(scale=0.3, size=(batch, model.get_num_u()))
    q, u = jnp.asarray(q), jnp.asarray(u)

    def udot(q, u):
        return model.realize(s0.set_q(q).set_u(u), jb.Stage.Acceleration).acceleration.udot

    f = jax.jit(jax.vmap(udot))
    _, compile_s = timed(lambda: jax.block_until_ready(f(q, u)))
    t, reps = median_time(lambda: f(q, u), sync=jax.block_until_ready)
    return {"compile_s": compile_s, "median_s": t, "reps": reps, "nu": model.get_num_u(), "contacts": 8}


def mjx_case(batch):
    import mujoco
    from mujoco import mjx

    path = os.path.join(os.path.dirname(mujoco.__file__), "mjx", "test_data", "humanoid", "humanoid.xml")
    m = mujoco.MjModel.from_xml_path(path)
    mx = mjx.put_model(m)
    d = mujoco.MjData(m)
    mujoco.mj_resetData(m, d)
    dx = mjx.put_data(m, d)
    rng = np.random.default_rng(0)
    qpos = np.tile(np.asarray(d.qpos), (batch, 1)) + np.concatenate(
        [np.zeros((batch, 7)), rng.normal(scale=0.05, size=(batch, m.nq - 7))], 1)
    qvel = rng.normal(scale=0.3, size=(batch, m.nv))
    f = jax.jit(jax.vmap(lambda qp, qv: mjx.forward(mx, dx.replace(qpos=qp, qvel=qv)).qacc))
    qp, qv = jnp.asarray(qpos, jnp.float32), jnp.asarray(qvel, jnp.float32)
    _, compile_s = timed(lambda: jax.block_until_ready(f(qp, qv)))
    t, reps = median_time(lambda: f(qp, qv), sync=jax.block_until_ready)
    return {"compile_s": compile_s, "median_s": t, "reps": reps, "nv": int(m.nv), "ngeom": int(m.ngeom)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=1024)
    args = parser.parse_args()
    out = {"batch": args.batch, "backend": jax.default_backend()}
    out["mjx_forward"] = mjx_case(args.batch)  # float32, before x64 is switched on for jaxbody
    out["jaxbody_hunt_crossley"] = jaxbody_case(args.batch)
    for k in ("mjx_forward", "jaxbody_hunt_crossley"):
        r = out[k]
        print(f"{k:24s} batch {args.batch}: {r['median_s'] * 1e3:9.2f} ms per batch "
              f"({r['median_s'] / args.batch * 1e6:7.2f} us/state), compile {r['compile_s']:.1f} s")
    with open(os.path.join(HERE, "contact.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
