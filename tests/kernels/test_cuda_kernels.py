"""The CUDA kernels on an NVIDIA GPU (skipped elsewhere; run on a lent GPU machine, see benchmarks/README.md).

On a GPU, tests/kernels/test_kernel_vs_jax.py and test_kernel_derivatives.py check the CUDA path against
the JAX path on the same device (the compiled path is the default there too). These tests add what only
the GPU has: the library is built by nvcc and registered for platform "CUDA", both scratch layouts
(local memory, and lane-major global memory) give the same numbers, and float32 lanes agree with float64.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from systems import catalogue_tree, mixed_tree_30, random_catalogue_qu, random_forces

pytestmark = pytest.mark.skipif(jax.default_backend() != "gpu", reason="needs an NVIDIA GPU")


def _udot_program(model):
    def fd(q, u, f, F):
        s = model.default_state().set_q(q).set_u(u).set_mobility_forces(f).set_body_forces(F)
        return model.realize(s, jb.Stage.Acceleration).acceleration.udot

    return jax.vmap(fd)


def _args(model, lanes, dtype=jnp.float64):
    q, u = random_catalogue_qu(model, 7, (lanes,))
    f, F = random_forces(model, 8, (lanes,))
    return tuple(jnp.asarray(x, dtype) for x in (q, u, f, F))


def test_cuda_library_is_built_and_registered():
    from jaxbody._kernels import build

    assert jb.compiled_available()
    assert build.last_load_cuda["how"] in ("compiled", "cached"), build.last_load_cuda
    model, _ = catalogue_tree(False)
    program = str(jax.make_jaxpr(_udot_program(model))(*_args(model, 2)))
    assert "jaxbody_kernel_call" in program


@pytest.mark.parametrize("lanes", [1, 200])
def test_local_and_global_scratch_agree_with_the_jax_path(lanes, monkeypatch):
    model = mixed_tree_30()[0]
    args = _args(model, lanes)
    with jb.use_backend("jax"):
        reference = np.asarray(jax.jit(_udot_program(model))(*args))
    results = {}
    for scratch in ("local", "global"):
        monkeypatch.setenv("JAXBODY_CUDA_SCRATCH", scratch)
        with jb.use_backend("compiled"):
            results[scratch] = np.asarray(jax.jit(_udot_program(model))(*args))
        scale = max(1.0, float(np.abs(reference).max()))
        assert np.abs(results[scratch] - reference).max() <= 1e-12 * scale, scratch
    monkeypatch.delenv("JAXBODY_CUDA_SCRATCH")


def test_float32_lanes_follow_float64():
    model, _ = catalogue_tree(False)
    args = _args(model, 64)
    with jb.use_backend("compiled"):
        u64 = np.asarray(jax.jit(_udot_program(model))(*args))
        m32 = jax.tree_util.tree_map(
            lambda x: jnp.asarray(x, jnp.float32) if hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jnp.floating)
            else x, model)
        u32 = np.asarray(jax.jit(_udot_program(m32))(*(jnp.asarray(a, jnp.float32) for a in args)))
    assert u32.dtype == np.float32
    assert np.abs(u32 - u64).max() <= 2e-3 * max(1.0, np.abs(u64).max())

