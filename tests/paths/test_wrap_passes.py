"""OpenSim's multi-wrap passes (jaxbody._dynamics.paths.wrapping.apply_wrap_objects) run only while some lane
needs them: under vmap the batched program keeps a real ``cond`` around each pass (``_math.lanes.any_lane``), and
lengths, speeds and length gradients equal those of every pass computed on every lane.

The path: arm26's TRIlong with its ellipsoid PathWrap removed (cylinder TRI, then cylinder TRIlongglen: two wrap
objects, so OpenSim's passes apply; cylinders keep the compile short). TRIlong's OpenSim numbers with the
ellipsoid are checked in tests/paths/test_wrap_ellipsoid.py (which also fails when the passes after the first
are skipped: on these two cylinders the second pass changes nothing, so this file checks the program's structure
and that skipping changes no number). ``--long``: the length's gradient through the
skipped passes (reverse mode through their conds) against every pass and central differences."""

from __future__ import annotations

import pathlib
import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from helpers import jaxpr_primitives
from jaxbody._dynamics.paths import wrapping

ARM26 = pathlib.Path(__file__).resolve().parents[1] / "models" / "osim" / "arm26.osim"


@pytest.fixture(scope="module")
def two_cylinders():
    text = re.sub(r'<PathWrap name="TRIlong-wrap-ellipsoid">.*?</PathWrap>', "", ARM26.read_text(), flags=re.S)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imported = jb.io.load_osim(text)
    model = imported.system.realize_topology()
    path = imported.paths["TRIlong"]
    assert len(path.wraps) == 2
    rng = np.random.default_rng(3)
    s0 = imported.default_state(model)
    elbow, shoulder = imported.q_index("r_elbow_flex"), imported.q_index("r_shoulder_elev")
    q = np.tile(np.asarray(s0.q), (16, 1))
    q[:, elbow] = rng.uniform(0.0, 2.2, 16)
    q[:, shoulder] = rng.uniform(-1.0, 2.0, 16)
    u = rng.normal(size=(16, model.get_num_u()))
    return model, path, jnp.asarray(q), jnp.asarray(u)


def _length_and_speed(model, path):
    def numbers(q, u):
        s = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Velocity)
        return path.calc_length(model, s), path.calc_lengthening_speed(model, s)

    return jax.vmap(numbers)


def _length(model, path):
    def length(q):
        return path.calc_length(model, model.realize(model.default_state().set_q(q), jb.Stage.Position))

    return length


def test_passes_skip_under_vmap_and_change_nothing(two_cylinders, monkeypatch):
    model, path, q, u = two_cylinders
    batched = _length_and_speed(model, path)
    assert "cond" in jaxpr_primitives(jax.make_jaxpr(batched)(q, u))
    L, V = jax.jit(batched)(q, u)
    monkeypatch.setattr(wrapping, "any_lane", lambda flag: True)     # every pass on every lane
    L_all, V_all = jax.jit(_length_and_speed(model, path))(q, u)
    np.testing.assert_array_equal(L, L_all)
    np.testing.assert_array_equal(V, V_all)


@pytest.mark.long
def test_length_gradient_through_the_skipped_passes(two_cylinders, monkeypatch):
    """Reverse mode through the passes' conds: equal to every pass on every lane, and to central differences."""
    model, path, q, _ = two_cylinders
    length = _length(model, path)
    dL = jax.jit(jax.vmap(jax.grad(length)))(q)
    with monkeypatch.context() as m:
        m.setattr(wrapping, "any_lane", lambda flag: True)
        np.testing.assert_array_equal(dL, jax.jit(jax.vmap(jax.grad(_length(model, path))))(q))
    assert np.all(np.isfinite(dL)) and np.any(dL != 0)
    length = jax.jit(length)
    h = 1e-7
    for k in range(4):
        for j in range(q.shape[1]):
            e = jnp.zeros_like(q[k]).at[j].set(h)
            fd = float(length(q[k] + e) - length(q[k] - e)) / (2 * h)
            assert abs(dL[k, j] - fd) < 1e-7, (k, j, dL[k, j], fd)
