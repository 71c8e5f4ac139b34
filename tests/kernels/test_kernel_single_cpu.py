"""The compiled path on a one-CPU process (``taskset -c 0``, a one-vCPU VM or container): a kernel call inside
the semi-explicit Euler and Verlet steps' ``while`` loops lost its typed-FFI attributes in jax 0.10.2's
StableHLO -> HLO conversion there ("No registered implementation for untyped custom call"), while two CPUs
hid it (jaxbody._kernels.ffi_primitive). The case runs in a subprocess pinned to one CPU before jax loads."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import jaxbody as jb

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CHILD = textwrap.dedent("""
    import os, sys
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    import jax, jax.numpy as jnp, numpy as np
    jax.config.update("jax_enable_x64", True)
    import jaxbody as jb
    sys.path.insert(0, os.path.join(sys.argv[1], "tests", "integrators"))
    from oscillators import oscillator
    _, model = oscillator()
    state = model.default_state().set_q(jnp.array([0.3]))
    run = lambda: jax.jit(lambda s: jb.simulate(model, s, 0.01, 3, "semi_explicit_euler")[0].q)(state)
    assert jb.compiled_available()
    with jb.use_backend("compiled"):
        compiled = run()
    with jb.use_backend("jax"):
        reference = run()
    np.testing.assert_allclose(compiled, reference, rtol=1e-12)
    print("cpus", len(os.sched_getaffinity(0)), "q", float(compiled[0]))
""")


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs Linux's sched_setaffinity")
@pytest.mark.skipif(not jb.compiled_available(), reason="the compiled kernels are not built on this machine")
def test_semi_explicit_euler_on_one_cpu():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", CHILD, ROOT], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("cpus 1 "), done.stdout
