"""The residual adjoint kernel (tree_adjoint.h) against JAX's vjp of the inverse-dynamics residual.

``residual_adjoint`` is what reverse mode runs for forward dynamics on the compiled path (jaxbody._kernels.
linear_ops): the gradient of lambda . R(theta, q, u, F, W, udot) with respect to every input. Checked here
directly, input by input, on trees holding every catalogue mobilizer type (native kernel types and the
generic route), in both orientation modes, reversed mobilizers (hypothesis), with armature, body forces and
weights; and its batched form (shared Model, per-lane states) against a loop over lanes. Both routes do the
same arithmetic in a different order: 1e-12 relative to the largest entry.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import jaxbody as jb
from helpers import assert_close
from jaxbody._kernels import linear_ops
from systems import build_random_tree, catalogue_tree, conservative_tree_10, random_catalogue_qu, random_qu, random_trees


def _inputs(model, q, u, seed, lead=()):
    topo = model.topology
    rng = np.random.default_rng(seed)
    prm = jb.replace_parameters(model, armature=jnp.asarray(rng.uniform(0.0, 0.3, topo.nu))).parameters
    nb = topo.nbodies
    F, W = rng.normal(size=lead + (nb, 2, 3)), rng.normal(size=lead + (nb, 3))
    udot, lam = rng.normal(size=lead + (topo.nu,)), rng.normal(size=lead + (topo.nu,))
    return (prm,) + tuple(jnp.asarray(x) for x in (q, u, F, W, udot, lam))

def _symmetric(cts):
    prm = cts[0]
    I = prm.inertia_Bo_B
    return (dataclasses.replace(prm, inertia_Bo_B=0.5 * (I + jnp.swapaxes(I, -1, -2))),) + tuple(cts[1:])

def _compare(model, args, what):
    topo = model.topology
    got = _symmetric(jax.jit(lambda *a: linear_ops.residual_adjoint(topo, *a))(*args))
    ref = _symmetric(jax.jit(lambda *a: linear_ops.residual_adjoint_by_jax(topo, *a))(*args))
    scale = max(1.0, max(float(jnp.abs(x).max(initial=0.0)) for x in jax.tree_util.tree_leaves(ref)))
    for (path, a), b in zip(jax.tree_util.tree_leaves_with_path(got), jax.tree_util.tree_leaves(ref)):
        error = float(jnp.abs(a - b).max(initial=0.0))
        assert error <= 1e-12 * scale, f"{what} {jax.tree_util.keystr(path)}: {error:.2e} > 1e-12 * {scale:.3g}"

# Quaternion mode is long for the CI budget (16 s, 2026-11-29); Euler mode runs in CI
@pytest.mark.parametrize("euler", [pytest.param(False, marks=pytest.mark.long), True])
def test_adjoint_equals_jax_vjp_on_every_catalogue_type(euler):
    model, _ = catalogue_tree(use_euler_angles=euler, seed=3)
    q, u = random_catalogue_qu(model, 4)
    _compare(model, _inputs(model, q, u, 5), f"catalogue_tree euler={euler}")

@pytest.mark.long  # CI budget (2026-11-29 CI run): 16 s; every catalogue type stays in CI
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(random_trees(8))
def test_adjoint_equals_jax_vjp_on_random_trees(tree):
    model, q, u, _, _ = build_random_tree(*tree)
    if model.topology.nu:
        _compare(model, _inputs(model, q, u, tree[-1] % 1000), f"random tree {tree}")

def test_batched_adjoint_shares_the_model_and_equals_a_loop_over_lanes():
    """Leading dimensions: states per lane (size 3), the Model's numbers shared (size 1), as vmap passes them."""
    model, _ = conservative_tree_10()
    q, u = random_qu(model, 6, shape=(3,))
    prm, q, u, F, W, udot, lam = _inputs(model, q, u, 7, lead=(3,))
    shared = jax.tree_util.tree_map(lambda x: x[None], prm)
    topo = model.topology
    batched = jax.jit(lambda *a: linear_ops.residual_adjoint(topo, *a, 1))(shared, q, u, F, W, udot, lam)
    reference = jax.jit(lambda *a: linear_ops.residual_adjoint_by_jax(topo, prm, *a))
    for lane in range(3):
        one = reference(q[lane], u[lane], F[lane], W[lane], udot[lane], lam[lane])
        got = jax.tree_util.tree_map(lambda x: x[lane], batched)
        for (path, a), b in zip(jax.tree_util.tree_leaves_with_path(_symmetric(got)),
                                jax.tree_util.tree_leaves(_symmetric(one))):
            assert_close(a, b, 1e-12, what=f"lane {lane} {jax.tree_util.keystr(path)}")
