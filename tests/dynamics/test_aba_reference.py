"""The one-function ABA (jaxbody._dynamics.aba_reference.aba, RBDA Table 7.1 top to bottom) against the staged
realize on both paths, on trees of every catalogue mobilizer type with gravity, applied mobility and body
forces, in both orientation modes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import jaxbody as jb
from helpers import assert_close
from jaxbody._dynamics.aba_reference import aba
from systems import catalogue_tree, random_catalogue_qu, random_forces


# Quaternion mode (euler=False) is long for the CI budget (~13 s; 2026-11-29 profile): Euler mode runs in CI.
@pytest.mark.parametrize("euler", [pytest.param(False, marks=pytest.mark.long), True])
def test_reference_aba_equals_the_staged_realize(euler):
    model, _ = catalogue_tree(use_euler_angles=euler, seed=4)
    q, u = (jnp.asarray(x) for x in random_catalogue_qu(model, 5))
    f, F = (jnp.asarray(x) for x in random_forces(model, 6))
    state = model.default_state().set_q(q).set_u(u).set_mobility_forces(f).set_body_forces(F)
    for backend in ("jax", "compiled"):
        with jb.use_backend(backend):
            realized = jax.jit(lambda s: model.realize(s, jb.Stage.Acceleration))(state)
            dyn = realized.dynamics
            udot = jax.jit(lambda q, u: aba(model, q, u, dyn.mobility_forces, dyn.body_forces))(q, u)
            assert_close(udot, realized.acceleration.udot, 1e-11, what=f"aba vs realize ({backend} path)")
