"""Weak scaling of ``jb.sharded_vmap`` over 1 to 4 CPU processes on this machine (``jax.distributed``, gloo).

Each process owns one CPU device and ``--lanes`` lanes of a global batch (forward dynamics of a 2-body
Pin + Ball pendulum at random states); the global batch grows with the process count. Reported per process
count: the median wall time of one sharded call (process 0's view) and the weak-scaling efficiency
t(1 process) / t(P processes) (1.0 = perfect). On one shared host the processes compete for the same cores,
so efficiency here measures the machine, not the network: run it on a machine with at least 4 free cores
(or on several hosts by hand: same worker, a reachable coordinator address).

    python3 benchmarks/multihost_scaling.py [--lanes 4096] [--max-processes 4] [--pin]

``--pin`` gives each process one core of its own (process k on the k-th core), so that with at least as many
cores as processes the processes do not compete: the weak-scaling number of one core per host.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap

WORKER = textwrap.dedent(
    """
    import json, os, sys, time, statistics
    pid, nproc, port, lanes, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
    if sys.argv[6] == "pin":  # one core of this machine per process, before XLA sizes its thread pool
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cores[pid % len(cores)]})
    import jax
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    if nproc > 1:
        jax.distributed.initialize(coordinator_address=f"localhost:{port}", num_processes=nproc, process_id=pid)
    import numpy as np
    import jaxbody as jb

    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, [0.0, -9.81, 0.0])
    mp = jb.MassProperties.from_central_inertia(1.0, [0.1, 0, 0], jb.Inertia(0.1, 0.2, 0.3))
    arm = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform())
    jb.MobilizedBody.Ball(arm, jb.Transform([0, -0.5, 0]), jb.Body.Rigid(mp), jb.Transform())
    model = system.realize_topology()
    s0 = model.default_state()
    rng = np.random.default_rng(pid)
    q = np.asarray(s0.q) + 0.3 * rng.standard_normal((lanes, s0.q.shape[0]))
    u = rng.standard_normal((lanes, s0.u.shape[0]))

    def udot(q, u):
        return model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Acceleration).acceleration.udot

    mesh = jax.make_mesh((jax.device_count(),), ("batch",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch"))
    B = lanes * jax.process_count()
    qg = jax.make_array_from_process_local_data(sharding, q, (B, q.shape[1]))
    ug = jax.make_array_from_process_local_data(sharding, u, (B, u.shape[1]))
    with jax.set_mesh(mesh):
        f = jax.jit(jb.sharded_vmap(udot, mesh))
        jax.block_until_ready(f(qg, ug))
        times = []
        for _ in range(7):
            t0 = time.perf_counter()
            jax.block_until_ready(f(qg, ug))
            times.append(time.perf_counter() - t0)
    json.dump({"median_s": statistics.median(times), "global_batch": B}, open(path, "w"))
    """
)


def _free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def run(nproc: int, lanes: int, pin: bool = False) -> dict:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "worker.py")
        with open(script, "w") as f:
            f.write(WORKER)
        port = str(_free_port())
        outs = [os.path.join(tmp, f"{pid}.json") for pid in range(nproc)]
        procs = [subprocess.Popen([sys.executable, script, str(pid), str(nproc), port, str(lanes), outs[pid],
                                  "pin" if pin else "share"], env=env)
                 for pid in range(nproc)]
        for p in procs:
            if p.wait(timeout=600) != 0:
                raise RuntimeError(f"worker failed with status {p.returncode}")
        with open(outs[0]) as f:
            return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, default=4096, help="lanes per process (default %(default)s)")
    parser.add_argument("--max-processes", type=int, default=4)
    parser.add_argument("--pin", action="store_true",
                        help="pin process k to the k-th core of this process's CPU set (one core each; Linux)")
    args = parser.parse_args()
    rows = []
    for nproc in range(1, args.max_processes + 1):
        r = run(nproc, args.lanes, args.pin)
        rows.append((nproc, r["global_batch"], r["median_s"]))
    print("| processes | global batch | median s per call | weak-scaling efficiency |")
    print("|---:|---:|---:|---:|")
    for nproc, batch, t in rows:
        print(f"| {nproc} | {batch} | {t:.4f} | {rows[0][2] / t:.2f} |")


if __name__ == "__main__":
    main()
