"""Broad phase cost: contact forces of a ~200-geom model with and without ``set_broad_phase``.

The model: ``--geoms`` free bodies on a grid (spacing 0.3 m) above a floor half-space, each with one surface,
alternately an ellipsoid (semi-axes 0.1, 0.06, 0.08; GJK/EPA pairs) and a sphere (radius 0.08), all pairs of
different bodies tracked (geoms (geoms - 1) / 2 + geoms pairs); the bodies of the first grid row are lowered
into the floor and two are moved into contact, so a few pairs touch. Times one evaluation of every contact
force (``jax.jit`` of realize to Dynamics, body forces from the contact element) with the broad phase off and
with capacity ``--capacity``, after compiling each once, and checks the two give the same forces (max abs
difference printed). ``--batch B`` (> 0) times ``jax.vmap`` over B copies of the state instead (the first
grid row's heights jittered per lane, so lanes differ): no lane overflows the capacity, so the candidates' branch
alone runs (``broad_phase.any_lane``). ``--capacity`` may list several capacities (each timed against off).
Usage: ``python3 benchmarks/contact_broad_phase.py [--geoms 200] [--capacity 32 [64 ...]] [--batch 0]``.
Timings on a shared CPU are noisy; the lead reruns them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))  # this checkout's jaxbody

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxbody as jb  # noqa: E402
from _timing import median_time  # noqa: E402


def build(geoms: int, capacity: int):
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    tracker = jb.ContactTrackerSubsystem(system)
    contact = jb.CompliantContactSubsystem(system, tracker)
    contact.set_broad_phase(capacity)
    material = jb.ContactMaterial(1e6, 0.5, 0.5, 0.5)
    floor = jb.Transform(jb.Rotation(np.asarray([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])), [0.0, 0.0, 0.0])  # x_H = -z
    matter.Ground().update_body().add_contact_surface(floor, jb.ContactSurface(jb.ContactGeometry.HalfSpace(), material))
    for i in range(geoms):
        body = jb.Body.Rigid(jb.MassProperties(1.0, np.zeros(3), jb.Inertia(0.01, 0.01, 0.01)))
        shape = jb.ContactGeometry.Ellipsoid([0.1, 0.06, 0.08]) if i % 2 == 0 else jb.ContactGeometry.Sphere(0.08)
        body.add_contact_surface(jb.Transform(), jb.ContactSurface(shape, material))
        jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), body, jb.Transform())
    return system.realize_topology(), contact


def state(model, geoms):
    side = int(np.ceil(np.sqrt(geoms)))
    q = np.zeros((geoms, 7))
    q[:, 0] = 1.0
    for i in range(geoms):
        q[i, 4:] = [0.3 * (i % side), 0.3 * (i // side), 0.2 if i >= side else 0.07]
    q[1, 4:] = q[0, 4:] + [0.15, 0.0, 0.0]  # an ellipsoid and a sphere touching
    s = model.default_state()
    return s.set_q(jnp.asarray(q.reshape(-1)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--geoms", type=int, default=200)
    parser.add_argument("--capacity", type=int, nargs="+", default=[32])
    parser.add_argument("--batch", type=int, default=0)
    args = parser.parse_args()
    results = {}
    for capacity in [0] + args.capacity:
        model, contact = build(args.geoms, capacity)
        s = state(model, args.geoms)
        one = lambda m, q: m.realize(s.set_q(q), jb.Stage.Dynamics).dynamics.body_forces  # noqa: E731
        q = s.q
        if args.batch:
            side = int(np.ceil(np.sqrt(args.geoms)))
            jitter = np.zeros((args.batch, args.geoms, 7))
            jitter[:, :side, 6] = np.linspace(-0.005, 0.005, args.batch)[:, None]
            q = q[None] + jnp.asarray(jitter.reshape(args.batch, -1))
            one = jax.vmap(one, in_axes=(None, 0))
        forces = jax.jit(one)
        t = time.perf_counter()
        out = jax.block_until_ready(forces(model, q))
        compile_s = time.perf_counter() - t
        run_s, _ = median_time(lambda: forces(model, q), max_reps=5, target_s=1.0, sync=jax.block_until_ready)
        results[capacity] = out
        print(f"geoms {args.geoms}, pairs {contact.get_num_contact_pairs(model)}, batch {args.batch}, broad phase "
              f"capacity {capacity}: compile+first {compile_s:.2f} s, forces {run_s * 1e3:.2f} ms", flush=True)
        if capacity:
            print("  max |force difference| with/without broad phase:", float(jnp.max(jnp.abs(results[0] - out))))


if __name__ == "__main__":
    main()
