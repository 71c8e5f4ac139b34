"""The natural first tries work: ``jax.jit`` of a bound Model or TimeStepper method (they hash by identity, so
the bound method is a valid jit target), and ``jax.export`` of a model function under ``jb.use_backend("jax")``
(the compiled backend's custom calls carry no cross-version guarantee, so JAX refuses to serialize them, and its
error names ``jb.use_backend("jax")``)."""

from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integrators"))
from oscillators import oscillator, oscillator_solution  # noqa: E402


def test_jit_of_bound_methods():
    _, model = oscillator()
    state = model.default_state().set_q(jnp.array([0.7]))
    realized = jax.jit(model.realize)(state)
    np.testing.assert_array_equal(realized.acceleration.udot, model.realize(state).acceleration.udot)
    assert hash(model) == hash(model) and model == model and model != jb.replace_parameters(model)
    ts = jb.TimeStepper(model, jb.RungeKuttaMersonIntegrator(model, accuracy=1e-8))
    run, rows = jax.jit(ts.simulate)(state, jnp.array([0.1, 0.2]))
    x, _ = oscillator_solution(0.7, np.array([0.1, 0.2]))
    np.testing.assert_allclose(rows.q[:, 0], x, atol=1e-6)


def test_export_with_the_jax_backend():
    _, model = oscillator()
    state = model.default_state()

    def udot(q):
        return model.realize(state.set_q(q), jb.Stage.Acceleration).acceleration.udot

    with jb.use_backend("jax"):
        exported = jax.export.export(jax.jit(udot))(state.q)
    q = jnp.array([0.3])   # (serialize() needs the optional flatbuffers package)
    np.testing.assert_allclose(exported.call(q), udot(q), rtol=1e-14)
    assert "custom_call" not in exported.mlir_module()


@pytest.mark.skipif(not jb.compiled_available(), reason="the compiled kernels are not built on this machine")
def test_export_with_the_compiled_backend_names_the_jax_backend():
    _, model = oscillator()
    state = model.default_state()

    def udot(q):
        return model.realize(state.set_q(q), jb.Stage.Acceleration).acceleration.udot

    with jb.use_backend("compiled"), pytest.raises(ValueError, match=r"trace it under jb.use_backend\('jax'\)"):
        jax.export.export(jax.jit(udot))(state.q)
