"""A float32 model computes in float32: no equation of a realize produces a float64 value.

A promotion to float64 (a float64 constant or ``jnp.asarray`` of a Python float under x64 meeting a float32
array) would make float32 slower than float64 on CPU and defeat it on GPUs. The jaxpr of a vmapped realize to
Acceleration (10-body tree of nine mobilizer types, gravity, applied mobility and body forces) and of its
reverse-mode gradient is walked through every sub-jaxpr (scans, jits, custom rules); the float32 result is
also checked against float64 to float32 accuracy. Constants folded at compile time (Python scalars,
one-hot level maps) are inputs of casts, not produced values, and are not counted.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from helpers import assert_close
from systems import conservative_tree_10, random_forces, random_qu


def _fd(model, q, u, f, F):
    state = model.default_state().set_q(q).set_u(u).set_mobility_forces(f).set_body_forces(F)
    return model.realize(state, jb.Stage.Acceleration).get_u_dot()


def _sub_jaxprs(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _sub_jaxprs(v)
    elif hasattr(value, "jaxpr") and hasattr(value.jaxpr, "eqns"):  # ClosedJaxpr
        yield value.jaxpr
    elif hasattr(value, "eqns"):  # Jaxpr
        yield value


def _float64_outputs(jaxpr):
    """Names of the primitives whose outputs are float64, through every sub-jaxpr."""
    found = []
    for eqn in jaxpr.eqns:
        found += [eqn.primitive.name for v in eqn.outvars if getattr(v.aval, "dtype", None) == jnp.float64]
        for p in eqn.params.values():
            for sub in _sub_jaxprs(p):
                found += _float64_outputs(sub)
    return found


def _inputs(model, dtype):
    q, u = random_qu(model, 7, (2,))
    f, F = random_forces(model, 8, (2,))
    return tuple(jnp.asarray(x, dtype) for x in (q, u, f, F))


def test_float32_realize_has_no_float64_intermediates():
    model64, _ = conservative_tree_10()
    model = model64.astype(jnp.float32)
    args = _inputs(model64, jnp.float32)

    def batched(*a):
        return jax.vmap(lambda *x: _fd(model, *x))(*a)

    forward = jax.make_jaxpr(batched)(*args)
    assert forward.out_avals[0].dtype == jnp.float32
    assert _float64_outputs(forward.jaxpr) == []
    gradient = jax.make_jaxpr(jax.grad(lambda q, u, f, F: jnp.sum(batched(q, u, f, F)), argnums=(0, 1)))(*args)
    assert all(a.dtype == jnp.float32 for a in gradient.out_avals)
    assert _float64_outputs(gradient.jaxpr) == []
    # The checker does see float64 where it is produced: the float64 model's jaxpr is full of it.
    assert len(_float64_outputs(jax.make_jaxpr(lambda *x: _fd(model64, *x))(*(x[0] for x in _inputs(model64, jnp.float64))).jaxpr)) > 100


#: Measured (x64, this file's inputs): max|udot32 - udot64| = 7.2 eps32 * max|udot64| (6.5 eps32 of it remains when
#: float64 gets the same float32-rounded inputs and parameters: it is float32 arithmetic, not input rounding).
#: The bound is 32 eps32 (a 4x margin for XLA reordering across versions), far below the cond(M) eps32 ~ 720 eps32
#: that bounds a backward-stable solve of these states' mass matrices (cond(M) ~ 7e2).
FLOAT32_BOUND = 32 * float(np.finfo(np.float32).eps)


def _assert_float32_accuracy(udot32, udot64):
    assert udot32.dtype == jnp.float32
    assert_close(np.asarray(udot32, np.float64), udot64, FLOAT32_BOUND * float(np.max(np.abs(udot64))), "float32 udot")


def test_float32_matches_float64_to_float32_accuracy():
    model64, _ = conservative_tree_10()
    fd = jax.jit(jax.vmap(_fd, in_axes=(None, 0, 0, 0, 0)))
    udot64 = np.asarray(fd(model64, *_inputs(model64, jnp.float64)))
    model32, inputs32 = model64.astype(jnp.float32), _inputs(model64, jnp.float32)
    _assert_float32_accuracy(fd(model32, *inputs32), udot64)
    # The bound fails a computation that lost precision: the same float32 call on inputs rounded through bfloat16.
    lossy = tuple(x.astype(jnp.bfloat16).astype(jnp.float32) for x in inputs32)
    with pytest.raises(AssertionError, match="float32 udot"):
        _assert_float32_accuracy(fd(model32, *lossy), udot64)
