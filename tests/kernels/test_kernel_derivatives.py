"""Derivatives of the compiled forward dynamics (jaxbody._kernels.tree): JVP, VJP, jacfwd, jacrev, vmap of
grad and second derivatives against the JAX path (1e-10) and central differences (1e-6).

On conservative_tree_10 (pin, ball, universal, free, gimbal, slider, planar, cylinder, ellipsoid: native and
generic kernel types), with respect to q, u, applied mobility and body forces and the Model's leaves
(masses, mass centers, inertias, X_PF, X_BM, armature (nonzero here), the gravity vector of its force element).
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from helpers import assert_close, central_difference
from systems import conservative_tree_10, random_forces, random_qu

REL = 1e-10


@pytest.fixture(scope="module")
def setup():
    model, _ = conservative_tree_10()
    model = jb.replace_parameters(model, armature=jnp.asarray(np.random.default_rng(2).uniform(0.05, 0.3,
                                                                                            model.topology.nu)))
    q, u = random_qu(model, 3)
    f, F = random_forces(model, 4)
    inputs = dict(q=jnp.asarray(q), u=jnp.asarray(u), f=jnp.asarray(f), F=jnp.asarray(F),
                  prm=model.parameters, g=model.forces[0].gravity)
    rng = np.random.default_rng(8)
    tangent = jax.tree_util.tree_map(lambda x: jnp.asarray(rng.normal(size=np.shape(x))), inputs)
    dI = tangent["prm"].inertia_Bo_B  # inertias are symmetric: so are their tangents (jaxbody._kernels.tree)
    tangent["prm"] = dataclasses.replace(tangent["prm"], inertia_Bo_B=dI + jnp.swapaxes(dI, -1, -2))
    return model, inputs, tangent


def udot(model, q, u, f, F, prm, g):
    m = eqx.tree_at(lambda mm: mm.forces[0].gravity, dataclasses.replace(model, parameters=prm), g)
    state = m.default_state().set_q(q).set_u(u).set_mobility_forces(f).set_body_forces(F)
    return m.realize(state, jb.Stage.Acceleration).acceleration.udot


def _on(backend, fn, *args):
    """jit of ``fn`` traced afresh on ``backend`` (a new function: jax.jit caches traces per function)."""
    with jb.use_backend(backend):
        return jax.jit(lambda *a: fn(*a))(*args)


def test_jvp_vjp_match_jax_path_and_finite_differences(setup):
    model, x, t = setup
    fn = lambda x: udot(model, **x)  # noqa: E731
    jvp = lambda x, t: jax.jvp(fn, (x,), (t,))  # noqa: E731
    (y_c, dy_c), (y_j, dy_j) = _on("compiled", jvp, x, t), _on("jax", jvp, x, t)
    assert_close(y_c, y_j, 1e-12, what="udot")
    assert_close(dy_c, dy_j, REL, what="jvp")
    fd = central_difference(lambda e: fn(jax.tree_util.tree_map(lambda a, b: a + e * b, x, t)), 0.0, 1e-6)
    assert_close(dy_c, fd, 1e-6, what="jvp vs central differences")
    w = jnp.asarray(np.random.default_rng(9).normal(size=y_c.shape))
    vjp = lambda x: jax.vjp(fn, x)[1](w)[0]  # noqa: E731
    g_c, g_j = _on("compiled", vjp, x), _on("jax", vjp, x)
    sym = lambda I: 0.5 * (I + jnp.swapaxes(I, -1, -2))  # noqa: E731
    g_j["prm"] = dataclasses.replace(g_j["prm"], inertia_Bo_B=sym(g_j["prm"].inertia_Bo_B))
    for (path, a), b in zip(jax.tree_util.tree_leaves_with_path(g_c), jax.tree_util.tree_leaves(g_j)):
        assert_close(a, b, REL, what=f"vjp {jax.tree_util.keystr(path)}")
    # <w, J t> = <J^T w, t>: the two modes agree with each other.
    lhs = float(w @ dy_c)
    rhs = sum(float(jnp.vdot(a, b)) for a, b in zip(jax.tree_util.tree_leaves(g_c), jax.tree_util.tree_leaves(t)))
    assert abs(lhs - rhs) <= 1e-10 * max(1.0, abs(lhs))


@pytest.mark.long  # CI budget (2026-11-29 CI run): 93 s; jvp/vjp and batched gradients vs the JAX path stay in CI
def test_jacobians_vmap_and_second_derivatives(setup):
    model, x, _ = setup
    fq = lambda q, u: udot(model, q, u, x["f"], x["F"], x["prm"], x["g"])  # noqa: E731
    for name, jac in (("jacfwd", jax.jacfwd), ("jacrev", jax.jacrev)):
        J = lambda q, u: jac(fq, argnums=(0, 1))(q, u)  # noqa: E731
        for a, b in zip(_on("compiled", J, x["q"], x["u"]), _on("jax", J, x["q"], x["u"])):
            assert_close(a, b, REL, what=name)
    qs = x["q"][None] + 0.05 * jnp.arange(3.0)[:, None]
    grads = lambda qs: jax.vmap(jax.grad(lambda q: jnp.sum(jnp.sin(fq(q, x["u"])))))(qs)  # noqa: E731
    assert_close(_on("compiled", grads, qs), _on("jax", grads, qs), REL, what="vmap(grad)")
    hess = lambda u: jax.hessian(lambda u: jnp.sum(jnp.sin(fq(x["q"], u))))(u)  # noqa: E731
    assert_close(_on("compiled", hess, x["u"]), _on("jax", hess, x["u"]), REL, what="hessian in u")
    # reverse over forward: differentiates the residual tangent's non-linear arguments (its own JVP rule)
    hess_rf = lambda u: jax.jacrev(jax.jacfwd(lambda u: jnp.sum(jnp.sin(fq(x["q"], u)))))(u)  # noqa: E731
    assert_close(_on("compiled", hess_rf, x["u"]), _on("jax", hess_rf, x["u"]), REL, what="jacrev(jacfwd) in u")


@pytest.mark.long  # CI budget (2026-11-29, second CI run: 26 min on a slower-running machine): 57 s; jvp/vjp vs the JAX path and central differences stay in CI
def test_batched_gradients_with_a_shared_model_match_jax_path(setup):
    """Reverse mode under vmap with the Model's numbers shared by the lanes: the gradient of a sum over the
    batch with respect to the Model (summed over lanes), per-lane gradients (vmap of grad) and a nested vmap."""
    model, x, _ = setup
    qs = x["q"][None] + 0.05 * jnp.arange(4.0)[:, None]
    loss = lambda prm, q: jnp.sum(jnp.sin(udot(model, q, x["u"], x["f"], x["F"], prm, x["g"])))  # noqa: E731
    sym = lambda g: dataclasses.replace(g, inertia_Bo_B=0.5 * (g.inertia_Bo_B + jnp.swapaxes(g.inertia_Bo_B, -1, -2)))  # noqa: E731
    summed = lambda prm, qs: jax.grad(lambda prm: jnp.sum(jax.vmap(lambda q: loss(prm, q))(qs)))(prm)  # noqa: E731
    per_lane = lambda prm, qs: jax.vmap(jax.grad(loss), in_axes=(None, 0))(prm, qs)  # noqa: E731
    nested = lambda prm, qs: jax.vmap(jax.vmap(jax.grad(loss, argnums=1), in_axes=(None, 0)), in_axes=(None, 0))(  # noqa: E731
        prm, qs.reshape(2, 2, -1))
    for name, fn in (("grad of a batch sum", summed), ("vmap of grad", per_lane), ("nested vmap", nested)):
        got, ref = _on("compiled", fn, x["prm"], qs), _on("jax", fn, x["prm"], qs)
        if name != "nested vmap":
            got, ref = sym(got), sym(ref)
        for (path, a), b in zip(jax.tree_util.tree_leaves_with_path(got), jax.tree_util.tree_leaves(ref)):
            assert_close(a, b, REL, what=f"{name} {jax.tree_util.keystr(path)}")


@pytest.mark.long  # 114 s in CI (2026-11-28: the CI budget); M^-1 also enters every gradient test here
def test_m_inverse_operators_match_jax_path(setup):
    """multiply_by_m_inv and calc_m_inv on the kernel: values with a locked body (Simbody's partitioned
    inverse), their JVP and VJP with respect to q and the Model, and a second derivative, against the JAX path."""
    _, x, t = setup
    model, bodies = conservative_tree_10()
    locked = bodies[3].lock(model.default_state(), jb.Motion.Velocity)  # the free body: six known udots

    def ops(q, f, prm, state):
        m = dataclasses.replace(model, parameters=prm)
        s = m.realize(state.set_q(q), jb.Stage.Position)
        return m.multiply_by_m_inv(s, f), m.calc_m_inv(s)

    args = (x["q"], x["f"], x["prm"])
    for state in (model.default_state(), locked):
        for a, b in zip(_on("compiled", lambda *a: ops(*a, state), *args), _on("jax", lambda *a: ops(*a, state), *args)):
            assert_close(a, b, 1e-12, what="M^-1 values")
    for state in (locked,):  # derivatives: the partitioned case covers the plain one's terms
        jvp = lambda q, f, prm, dq, df, dprm: jax.jvp(lambda *a: ops(*a, state), (q, f, prm), (dq, df, dprm))[1]  # noqa: E731
        targs = args + (t["q"], t["f"], t["prm"])
        for a, b in zip(_on("compiled", jvp, *targs), _on("jax", jvp, *targs)):
            assert_close(a, b, REL, what="M^-1 jvp")
        loss = lambda q, f, prm: sum(jnp.sum(jnp.sin(y)) for y in ops(q, f, prm, state))  # noqa: E731
        grad = lambda *a: jax.grad(loss, argnums=(0, 1))(*a)  # noqa: E731
        for a, b in zip(_on("compiled", grad, *args), _on("jax", grad, *args)):
            assert_close(a, b, REL, what="M^-1 vjp")
        hess = lambda q: jax.hessian(lambda q: loss(q, x["f"], x["prm"]))(q)  # noqa: E731
        assert_close(_on("compiled", hess, x["q"]), _on("jax", hess, x["q"]), REL, what="M^-1 hessian in q")
