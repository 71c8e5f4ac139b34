"""Hypothesis fuzz of the compiled path against the JAX path: random trees of every mobilizer type.

Random trees from ``systems.random_trees`` (every catalogue mobilizer type, each forward or reversed, quaternion
or Euler-angle mode, random frames, mass properties, gravity, an optional Rod constraint, random armature) at a
random state with applied mobility and body forces: realize at Acceleration on both paths (the kernel's native
types and its generic route side by side, constraints included) and compare udot and A_GB. Both paths run the
same articulated-body arithmetic, so they agree to round-off: 1e-12 relative to the largest value, times the tree's own sensitivity to round-off (the condition number of M over 1e4, floored at 1:
random trees can be badly conditioned, which no implementation can undo).

``ci`` profile: 4 examples of up to 10 bodies (each compiles two programs); ``long``: 60 examples of up to 60.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from systems import build_random_tree, random_trees

import jaxbody as jb

LONG = settings().max_examples >= 200  # the ``long`` profile is loaded (see conftest.py)
MAX_BODIES = 60 if LONG else 10
EXAMPLES = 60 if LONG else 4


def _outputs(model, backend, q, u, f, F):
    def realize(q, u, f, F):
        s = model.default_state().set_q(q).set_u(u).set_mobility_forces(f).set_body_forces(F)
        a = model.realize(s, jb.Stage.Acceleration)
        return {"udot": a.acceleration.udot, "A_GB": a.acceleration.A_GB, "M": model.calc_m(a)}

    with jb.use_backend(backend):
        program = str(jax.make_jaxpr(realize)(q, u, f, F))
        assert ("jaxbody_kernel_call" in program) == (backend == "compiled"), f"{backend} path not taken"
        return jax.tree.map(np.asarray, jax.jit(realize)(q, u, f, F))


@pytest.mark.long  # CI budget (2026-11-29 CI run): 28 s; every mobilizer type on both paths stays in CI (test_kernel_vs_jax.py)
@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(random_trees(MAX_BODIES))
def test_random_trees_compiled_equals_jax_path(tree):
    model, q, u, f, F = build_random_tree(*tree)
    armature = np.random.default_rng(tree[-1] % 1000).uniform(0.0, 0.2, model.topology.nu)
    model = jb.replace_parameters(model, armature=jnp.asarray(armature))
    args = tuple(jnp.asarray(x) for x in (q, u, f, F))
    compiled, reference = _outputs(model, "compiled", *args), _outputs(model, "jax", *args)
    sensitivity = max(1.0, np.linalg.cond(reference["M"]) / 1e4) if model.topology.nu else 1.0
    for name in ("udot", "A_GB"):
        scale = max(1.0, float(np.abs(reference[name]).max(initial=0.0)))
        error = float(np.abs(compiled[name] - reference[name]).max(initial=0.0))
        assert np.all(np.isfinite(compiled[name])), (name, tree)
        assert error <= 1e-12 * scale * sensitivity, (name, error, scale, sensitivity, tree)
