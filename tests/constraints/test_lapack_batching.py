"""jaxbody's LAPACK calls under large vmaps: no call is split over XLA:CPU's thread pool (jaxlib 0.10.x then
deadlocks, see jaxbody/_math/lapack.py), and the chunked pseudo-inverse equals jnp.linalg.pinv.

The guard is checked where it acts, in the lowered program: every LAPACK custom call of a 4096-lane
constrained realize, projection, adaptive RungeKuttaMerson run and PLUS contact step must hold less than
jaxlib's 2e5-flop inline limit of work. Without the chunking each holds all 4096 matrices in one call (measured:
1.1e6 flops for the four-bar's 3 x 3 eigh and SVDs, 7.1e7 for the box's PLUS SVD). The --long test runs the
program that hung (four-bar RKM, 1024 lanes) repeatedly in a subprocess.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from constraint_systems import fourbar_state, parallelogram_fourbar
from helpers import assert_close, assert_grad_matches_fd

import jaxbody as jb
from jaxbody._math.lapack import SPLITS_LAPACK_BATCHES, pinv

LANES = 4096
INLINE_WORK_LIMIT = 200_000  # jaxlib's kMinWorkPerTask
_CALL = re.compile(r"custom_call @(lapack_\w+)\(.*?:\s*\(tensor<([\dx]+)x[a-z]\w*>")


def lapack_calls(hlo: str):
    """[(target, batch, an upper bound of jaxlib's flop estimate for the whole call)] of a lowered program.
    The bound is 10 m n min(m, n) per matrix of the first operand (jaxlib: SVD 10 m n min, eigh 5 n^3,
    LU m n min, QR < 2 m n min)."""
    calls = []
    for target, dims in _CALL.findall(hlo):
        *batch, m, n = (int(d) for d in dims.split("x"))
        count = int(np.prod(batch)) if batch else 1
        calls.append((target, count, count * 10 * m * n * min(m, n)))
    return calls


def test_lapack_call_parser_sees_an_unguarded_batched_svd():
    """The parser finds jnp.linalg.pinv's SVD and its batch in a lowered program (so the check below can fail)."""
    hlo = jax.jit(jax.vmap(jnp.linalg.pinv)).lower(jnp.ones((LANES, 3, 5))).as_text()
    calls = lapack_calls(hlo)
    assert [(t.split("_")[1], b) for t, b, _ in calls] == [("dgesdd", LANES)] or \
        [(t.split("_")[1], b) for t, b, _ in calls] == [("sgesdd", LANES)], calls
    assert calls[0][2] == LANES * 10 * 3 * 5 * 3 > INLINE_WORK_LIMIT


def _fourbar_programs():
    model, _, _, _ = parallelogram_fourbar()
    theta = jnp.linspace(-2.4, -0.7, LANES)
    states = jax.vmap(lambda t: fourbar_state(model, t, 0.3))(theta)
    off = states.set_q(states.q + 1e-3)
    rkm = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=1e-6, constraint_tolerance=1e-8))
    yield "four-bar udot", jax.vmap(lambda s: model.realize(s, jb.Stage.Acceleration).acceleration.udot), states
    yield "four-bar project", jax.vmap(lambda s: model.project(s)[0].q), off
    yield "four-bar RKM", jax.vmap(lambda s: rkm.simulate(s, jnp.array([0.01]))[0].state.q), states


def _contact_program():
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "unilateral"))
    from contact_systems import box_on_four_points

    stepper, _ = box_on_four_points()
    base = stepper.model.default_state()
    heights = jnp.linspace(0.099, 0.11, LANES)
    states = jax.vmap(lambda y: base.set_q(base.q.at[5].set(y)).set_u(base.u.at[4].set(-1.0)))(heights)
    return "box PLUS step", jax.vmap(lambda s: stepper.simulate(s, 1e-3, 1)[0].q), states


@pytest.mark.long  # CI budget (2026-11-29 profile): ~12 s; a check of XLA's lowering, not of numbers
@pytest.mark.skipif(not SPLITS_LAPACK_BATCHES, reason="this jaxlib runs every LAPACK batch on the calling thread")
def test_no_lapack_call_of_a_4096_lane_program_is_split_over_the_thread_pool():
    for name, f, args in [*_fourbar_programs(), _contact_program()]:
        calls = lapack_calls(jax.jit(f).lower(args).as_text())
        assert calls, f"{name}: no LAPACK call found (the check would be vacuous)"
        worst = max(calls, key=lambda c: c[2])
        assert worst[2] < INLINE_WORK_LIMIT, f"{name}: {worst[0]} on {worst[1]} matrices, ~{worst[2]:.3g} flops"


def test_pinv_equals_jnp_pinv_lane_by_lane_with_its_derivatives():
    key = jax.random.PRNGKey(0)
    A = jax.random.normal(key, (1000, 7, 9))
    A = A.at[:, 6].set(A[:, 0] + A[:, 1])  # rank 6: the cutoff matters
    assert_close(jax.jit(jax.vmap(pinv))(A), jax.vmap(jnp.linalg.pinv)(A), 0, "pinv, 1000 lanes")
    nested = jax.jit(jax.vmap(jax.vmap(pinv)))(A.reshape(10, 100, 7, 9)).reshape(1000, 9, 7)
    assert_close(nested, jax.vmap(jnp.linalg.pinv)(A), 1e-14, "pinv, vmap of vmap")
    S = A[:, :, :7] @ jnp.swapaxes(A[:, :, :7], 1, 2)  # symmetric, rank 6
    assert_close(jax.vmap(lambda s: pinv(s, 1e-12, True))(S), jax.vmap(lambda s: jnp.linalg.pinv(s, 1e-12, True))(S),
                 0, "hermitian pinv")

    def loss(pinv_fn):
        return lambda a: jnp.sum(jnp.sin(pinv_fn(a)) * jnp.arange(20.0).reshape(4, 5))

    C = jax.random.normal(key, (300, 5, 4))
    grads = jax.jit(jax.vmap(jax.grad(loss(pinv))))(C)
    assert_close(grads, jax.vmap(jax.grad(loss(jnp.linalg.pinv)))(C), 1e-12, "grad")
    assert_close(jax.grad(lambda c: jax.vmap(loss(pinv))(c).sum())(C), grads, 1e-12, "grad of the vmapped sum")
    _, tangent = jax.jvp(jax.vmap(pinv), (C,), (C[::-1],))
    assert_close(tangent, jax.jvp(jax.vmap(jnp.linalg.pinv), (C,), (C[::-1],))[1], 1e-12, "jvp")
    assert_grad_matches_fd(loss(pinv), C[0], 1e-6, 1e-7, "d loss / d a")


@pytest.mark.long  # compiles the adaptive four-bar at 1024 lanes (~90 s)
def test_fourbar_rkm_at_1024_lanes_runs_repeatedly_without_hanging(tmp_path):
    """The program that hung on its second call (jaxlib 0.10.2, 2 cores) runs 6 calls in a subprocess."""
    script = tmp_path / "fourbar_rkm_1024.py"
    script.write_text(textwrap.dedent("""
        import jax, jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        from constraint_systems import fourbar_state, parallelogram_fourbar
        import jaxbody as jb
        model, _, _, _ = parallelogram_fourbar()
        rkm = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=1e-6, constraint_tolerance=1e-8))
        theta = jnp.linspace(-2.4, -0.7, 1024)
        f = jax.jit(jax.vmap(lambda t: rkm.simulate(fourbar_state(model, t, 0.3), jnp.linspace(0.001, 0.01, 10))[0].state.q))
        for k in range(6):
            jax.block_until_ready(f(theta))
            print("call", k, flush=True)
    """))
    tests = pathlib.Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tests.parent), str(tests), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=480)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split("\n")[:6] == [f"call {k}" for k in range(6)], run.stdout


def test_symmetric_one_by_one_pinv_needs_no_lapack():
    """A symmetric 1 x 1 matrix (one constraint equation, e.g. gait9dof18musc's coupler) is inverted as 1/a, bit
    for bit jnp.linalg.pinv's number (0 for a zero), with no LAPACK call; a NaN propagates; its gradient is
    -1/a^2."""
    rng = np.random.default_rng(0)
    a = np.concatenate([rng.normal(size=500) * 10.0 ** rng.uniform(-8, 8, 500), [0.0, -0.0, 1e-300]])
    a = jnp.asarray(a).reshape(-1, 1, 1)
    mine = jax.jit(jax.vmap(lambda x: pinv(x, rtol=1e-12, hermitian=True)))
    assert jnp.array_equal(mine(a), jax.vmap(lambda x: jnp.linalg.pinv(x, rtol=1e-12, hermitian=True))(a))
    assert "lapack" not in mine.lower(a).as_text()
    assert bool(jnp.isnan(pinv(jnp.full((1, 1), jnp.nan), hermitian=True)[0, 0]))
    g = jax.grad(lambda x: pinv(x.reshape(1, 1), rtol=1e-12, hermitian=True)[0, 0])(jnp.asarray([2.5]))
    assert_close(g, jnp.asarray([-1 / 2.5**2]), 1e-15, "d pinv / da")
