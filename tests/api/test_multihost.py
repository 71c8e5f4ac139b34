"""``jb.sharded_vmap`` across processes: 2 CPU processes on localhost joined by ``jax.distributed.initialize``
(gloo collectives), one device each, a global batch of 8 lanes built from each process's 4 local lanes
(``jax.make_array_from_process_local_data``). Each process's lanes equal single-process ``jit(vmap)`` bit for bit,
and a failing lane (NaN q) is reported by its own process only."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from script_runner import ROOT
from xla_test_flags import xla_flags_for_tests

WORKER = textwrap.dedent(
    """
    import sys
    import jax
    pid, nproc, port, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
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
    B, FAILING = 8, 5
    rng = np.random.default_rng(0)
    s0 = model.default_state()
    q = np.asarray(s0.q) + 0.3 * rng.standard_normal((B, s0.q.shape[0]))
    q[FAILING, 0] = np.nan
    u = rng.standard_normal((B, s0.u.shape[0]))

    def udot(q, u):
        return model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Acceleration).acceleration.udot

    reference = np.asarray(jax.jit(jax.vmap(udot), device=jax.local_devices()[0])(q, u))  # single process
    mesh = jax.make_mesh((jax.device_count(),), ("batch",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch"))
    per = B // nproc
    mine = slice(pid * per, (pid + 1) * per)
    qg = jax.make_array_from_process_local_data(sharding, q[mine], q.shape)
    ug = jax.make_array_from_process_local_data(sharding, u[mine], u.shape)
    with jax.set_mesh(mesh):
        result = jax.jit(jb.sharded_vmap(udot, mesh))(qg, ug)
    shards = sorted(result.addressable_shards, key=lambda s: s.index[0].start)
    local = np.concatenate([np.asarray(s.data) for s in shards])
    np.savez(path, local=local, reference=reference[mine], lanes=np.arange(B)[mine],
             processes=jax.process_count(), devices=jax.device_count())
    """
)


def _free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def test_two_processes_equal_single_process(tmp_path):
    pytest.importorskip("jax")
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    env = dict(os.environ)
    env["XLA_FLAGS"] = " ".join(f"{k}={v}" for k, v in xla_flags_for_tests().items())
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    port = str(_free_port())
    workers = [subprocess.Popen([sys.executable, str(script), str(pid), "2", port, str(tmp_path / f"out{pid}.npz")],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for pid in range(2)]
    try:
        logs = [w.communicate(timeout=300)[0] for w in workers]
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
    assert all(w.returncode == 0 for w in workers), "\n".join(logs)
    for pid in range(2):
        out = np.load(tmp_path / f"out{pid}.npz")
        assert int(out["processes"]) == 2 and int(out["devices"]) == 2
        np.testing.assert_array_equal(out["local"], out["reference"])   # bit for bit, NaN where NaN
        failing = ~np.all(np.isfinite(out["local"]), axis=1)
        assert list(out["lanes"][failing]) == ([5] if pid == 1 else [])   # lane 5 fails on its own host only
