"""JAX transformations of every public Model operator and MobilizedBody getter, on the 30-body mixed tree.

One function ``ops`` evaluates every operator; it is compiled once (module scope) and reused by all tests:

* ``jax.jit`` equals eager evaluation;
* ``jax.vmap`` over states (a few operators at 4096 states, all at a small batch) and over parameter sets
  matches a Python loop over lanes;
* ``jax.grad`` of a weighted scalar of each output w.r.t. q, u, forces and model parameters (mass, p_PF,
  p_BM, gravity) matches central finite differences;
* models with different parameter values but the same topology reuse the compiled code.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb

import systems as S
from helpers import assert_close, central_difference

Stage = jb.Stage

# Trace counter: incremented each time ``ops`` is traced (Python side effect, runs at trace time only).
TRACES = {"ops": 0}


def _getter_bodies(bodies):
    """One body of each mobilizer type (first occurrence), for the MobilizedBody getters."""
    seen, out = set(), []
    for kind, body in zip(S.MIXED_TREE_KINDS, bodies):
        if kind not in seen:
            seen.add(kind)
            out.append(body)
    return out


def ops(model, bodies, q, u, f, F, a, b):
    """Every public operator on one state. q (nq,), u (nu,), f (nu,), F (nbodies, 2, 3), a (nu,), b (nq,)."""
    TRACES["ops"] += 1
    state = model.default_state().set_q(q).set_u(u)
    sp = model.realize(state, Stage.Position)
    sv = model.realize(sp, Stage.Velocity)
    sa = model.realize(sv.set_mobility_forces(f).set_body_forces(F), Stage.Acceleration)
    udot_ic, A_ic = model.calc_acceleration_ignoring_constraints(sv, f, F)
    out = {
        "udot_ignoring_constraints": udot_ic,
        "A_GB_ignoring_constraints": A_ic,
        "residual": model.calc_residual_force_ignoring_constraints(sv, f, F, a),
        "M": model.calc_m(sp),
        "M_inv": model.calc_m_inv(sp),
        "M_a": model.multiply_by_m(sp, a),
        "M_inv_f": model.multiply_by_m_inv(sp, f),
        "M_inv_f_dyn": model.multiply_by_m_inv(sa, f),  # articulated inertias from the Dynamics cache
        "composite": model.calc_composite_body_inertias(sp),
        "articulated": model.get_articulated_body_inertias(sp),
        "A_from_udot": model.calc_body_acceleration_from_udot(sv, a),
        "tree_equivalent": model.calc_tree_equivalent_mobility_forces(sv, F),
        "qdot": model.calc_q_dot(sp, a),
        "qdotdot": model.calc_q_dot_dot(sv, a),
        "N": model.multiply_by_n(sp, a),
        "N_T": model.multiply_by_n(sp, b, transpose=True),
        "N_inv": model.multiply_by_n_inv(sp, b),
        "N_inv_T": model.multiply_by_n_inv(sp, a, transpose=True),
        "N_dot": model.multiply_by_n_dot(sv, a),
        "N_dot_T": model.multiply_by_n_dot(sv, b, transpose=True),
        "kinetic_energy": model.calc_kinetic_energy(sv),
        "potential_energy": model.calc_potential_energy(sa),
        "energy": model.calc_energy(sa),
        "system_mass": model.calc_system_mass(sp),
        "mass_center": model.calc_system_mass_center_location_in_ground(sp),
        "mass_center_velocity": model.calc_system_mass_center_velocity_in_ground(sv),
        "mass_center_acceleration": model.calc_system_mass_center_acceleration_in_ground(sa),
        "momentum": model.calc_system_momentum_about_ground_origin(sv),
        "central_momentum": model.calc_system_central_momentum(sv),
        "central_inertia": model.calc_system_central_inertia_in_ground(sp),
        "gravity_forces": model.get_gravity_body_forces(sp),
        "udot": sa.get_u_dot(),
        "qdot_realized": sa.get_q_dot(),
        "qdotdot_realized": sa.get_q_dot_dot(),
        "A_GB": sa.acceleration.A_GB,
        "normalized_q": model.normalize_quaternions(state).q,
    }
    for mb in bodies:
        X_GB, X_FM = mb.get_body_transform(sa), mb.get_mobilizer_transform(sa)
        out[f"{mb.name}.body"] = jnp.concatenate(
            [
                X_GB.R.ravel(), X_GB.p, mb.get_body_rotation(sa).ravel(), mb.get_body_origin_location(sa),
                X_FM.R.ravel(), X_FM.p,
                mb.get_body_velocity(sa).ravel(), mb.get_body_angular_velocity(sa), mb.get_body_origin_velocity(sa),
                mb.get_mobilizer_velocity(sa).ravel(),
                mb.get_body_acceleration(sa).ravel(), mb.get_body_angular_acceleration(sa),
                mb.get_body_origin_acceleration(sa),
                mb.get_q_as_vector(sa), mb.get_u_as_vector(sa),
            ]
        )
    return out


# Model parameters differentiated / batched here.
PARAM_NAMES = ("mass", "p_PF", "p_BM", "gravity")


def get_params(model):
    prm = model.parameters
    return {"mass": prm.mass, "p_PF": prm.p_PF, "p_BM": prm.p_BM, "gravity": model.forces[0].gravity}


def with_params(model, params):
    """The model with some of PARAM_NAMES replaced (same topology)."""
    changes = {k: v for k, v in params.items() if k != "gravity"}
    model = jb.replace_parameters(model, **changes) if changes else model
    if "gravity" in params:
        model = dataclasses.replace(model, forces=(dataclasses.replace(model.forces[0], gravity=params["gravity"]),))
    return model


# ---------------------------------------------------------------------------------------------
# Module-scoped shared data and compiled functions


@pytest.fixture(scope="module")
def tree():
    model, bodies = S.mixed_tree_30()
    assert not model.get_use_euler_angles()
    return model, _getter_bodies(bodies)


def _inputs(model, seed, shape=()):
    rng = np.random.default_rng(seed)
    q, u = S.random_qu(model, rng, shape)
    f, F = S.random_forces(model, rng, shape)
    a = rng.normal(size=shape + (model.get_num_u(),))
    b = rng.normal(size=shape + (model.get_num_q(),))
    return tuple(jnp.asarray(x) for x in (q, u, f, F, a, b))


@pytest.fixture(scope="module")
def inputs(tree):
    return _inputs(tree[0], 5)


@pytest.fixture(scope="module")
def ops_jit(tree):
    bodies = tree[1]
    return jax.jit(lambda model, *args: ops(model, bodies, *args))


@pytest.fixture(scope="module")
def ops_ref(tree, inputs, ops_jit):
    """Jitted outputs at the reference inputs (compiles ops once)."""
    return jax.device_get(ops_jit(tree[0], *inputs))


def assert_tree_close(actual, expected, tol=1e-12, what=""):
    """Same keys, each entry finite in ``expected`` and ``assert_close`` to it (tol * max(1, max|expected|))."""
    assert set(actual) == set(expected)
    for k in expected:
        assert np.all(np.isfinite(np.asarray(expected[k]))), f"{what}{k}: non-finite values"
        assert_close(actual[k], expected[k], tol, f"{what}{k}")


def lane(tree_, i):
    return jax.tree_util.tree_map(lambda x: x[i], tree_)


# ---------------------------------------------------------------------------------------------
# jit


def test_outputs_finite_and_shaped(tree, ops_ref):
    model = tree[0]
    nu, nq, nb = model.get_num_u(), model.get_num_q(), model.get_num_bodies()
    shapes = {
        "M": (nu, nu), "M_inv": (nu, nu), "composite": (nb, 6, 6), "articulated": (nb, 6, 6), "N": (nq,),
        "N_T": (nu,), "N_inv": (nu,), "N_inv_T": (nq,), "N_dot": (nq,), "N_dot_T": (nu,), "udot": (nu,),
        "A_GB": (nb, 2, 3), "momentum": (2, 3), "central_inertia": (3, 3), "kinetic_energy": (),
    }
    for k, shape in shapes.items():
        assert ops_ref[k].shape == shape, k
    for k, v in ops_ref.items():
        assert np.all(np.isfinite(v)), f"{k} has non-finite entries"
        assert np.asarray(v).dtype == np.float64, f"{k} is {np.asarray(v).dtype}, not float64"


@pytest.mark.long  # ~60 s of CPU; jit = eager is also implied by every jitted test against its eager golden data; CI time budget
def test_jit_equals_eager(tree, inputs, ops_ref):
    model, bodies = tree
    # disable_jit also runs jaxbody's level scans and vmaps op by op (a code path independent of XLA fusion).
    with jax.disable_jit():
        eager = jax.device_get(ops(model, bodies, *inputs))
    assert_tree_close(ops_ref, eager, 1e-11, what="jit vs eager: ")


def test_operator_consistency(tree, inputs, ops_ref):
    """Cross-checks between independently implemented operators, so the transformed outputs are meaningful."""
    r = ops_ref
    q, u, f, F, a, b = (np.asarray(x) for x in inputs)
    M, M_inv = r["M"], r["M_inv"]
    nu = M.shape[0]
    np.testing.assert_allclose(M, M.T, atol=1e-12)
    np.testing.assert_allclose(M @ M_inv, np.eye(nu), atol=1e-9)
    np.testing.assert_allclose(r["M_a"], M @ a, atol=1e-10)
    np.testing.assert_allclose(r["M_inv_f"], M_inv @ f, atol=1e-9)
    np.testing.assert_allclose(r["M_inv_f_dyn"], r["M_inv_f"], atol=1e-12)
    # M udot = f + J^T F - c, and the residual M a + c - f - J^T F.
    np.testing.assert_allclose(M @ r["udot_ignoring_constraints"], f + r["tree_equivalent"], atol=1e-9)
    np.testing.assert_allclose(r["residual"], M @ a - f - r["tree_equivalent"], atol=1e-9)
    np.testing.assert_allclose(r["kinetic_energy"], 0.5 * u @ M @ u, rtol=1e-12)
    np.testing.assert_allclose(r["energy"], r["kinetic_energy"] + r["potential_energy"], rtol=1e-13)
    # Model-level adjoints exercise the q/u layout gathers.
    np.testing.assert_allclose(r["N"] @ b, a @ r["N_T"], rtol=1e-12)
    np.testing.assert_allclose(r["N_inv"] @ a, b @ r["N_inv_T"], rtol=1e-12)
    np.testing.assert_allclose(r["N_dot"] @ b, a @ r["N_dot_T"], rtol=1e-12)
    np.testing.assert_allclose(r["system_mass"], np.sum(S.mixed_tree_30()[0].parameters.mass), rtol=1e-14)


# ---------------------------------------------------------------------------------------------
# Recompilation


def test_new_parameters_reuse_compilation(tree, inputs, ops_jit, ops_ref):
    model = tree[0]
    model2, _ = S.mixed_tree_30(seed=1)
    assert model2.topology == model.topology
    traces, cache = TRACES["ops"], ops_jit._cache_size()
    out2 = jax.device_get(ops_jit(model2, *inputs))
    scaled = with_params(model, {"mass": model.parameters.mass * 1.5, "inertia_Bo_B": model.parameters.inertia_Bo_B * 1.5,
                                 "gravity": model.forces[0].gravity * 0.5})  # mass and inertia scaled together: physical
    out3 = jax.device_get(ops_jit(scaled, *inputs))
    assert TRACES["ops"] == traces, "a model with new parameter values retraced ops"
    assert ops_jit._cache_size() == cache
    # ... and the new values are used.
    assert not np.allclose(out2["M"], ops_ref["M"])
    np.testing.assert_allclose(out3["system_mass"], 1.5 * ops_ref["system_mass"], rtol=1e-14)
    np.testing.assert_allclose(out3["potential_energy"], 0.75 * ops_ref["potential_energy"], rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# vmap over states


def _few_ops(model, q, u, f, F, a):
    state = model.default_state().set_q(q).set_u(u).set_mobility_forces(f).set_body_forces(F)
    state = model.realize(state, Stage.Acceleration)
    return {
        "udot": state.get_u_dot(),
        "kinetic_energy": model.calc_kinetic_energy(state),
        "M_a": model.multiply_by_m(state, a),
        "M_inv_f": model.multiply_by_m_inv(state, f),
        "A_GB": state.acceleration.A_GB,
        "mass_center": model.calc_system_mass_center_location_in_ground(state),
    }


def test_vmap_over_4096_states(tree, ops_jit):
    model = tree[0]
    n = 4096
    q, u, f, F, a, b = _inputs(model, 7, (n,))
    out = jax.device_get(jax.jit(jax.vmap(_few_ops, in_axes=(None, 0, 0, 0, 0, 0)))(model, q, u, f, F, a))
    assert out["udot"].shape == (n, model.get_num_u())
    assert np.all(np.isfinite(out["udot"]))
    for i in (0, 1234, n - 1):
        single = jax.device_get(ops_jit(model, q[i], u[i], f[i], F[i], a[i], b[i]))
        expected = {k: single[k] for k in out}
        assert_tree_close(lane(out, i), expected, 1e-11, what=f"lane {i}: ")


@pytest.mark.long  # ~65 s of compile (CI time budget); CI checks per-lane gradients of a batched sum on the pendulum (tests/api/test_tiling.py)
def test_grad_of_a_batched_sum_equals_per_lane_grads():
    """Reverse mode through the batched path: the gradient of a sum over lanes with respect to every lane's
    (q, u, f, F) and to the shared masses equals the per-lane gradients (stacked, and summed for the masses)
    to 1e-12 relative. On the 10-body tree of ten mobilizer types (the 30-body tree takes 70 s to compile)."""
    model, _ = S.conservative_tree_10()
    n = 3
    q, u, f, F, a, _ = _inputs(model, 11, (n,))

    def loss(mass, q, u, f, F, a):
        out = _few_ops(jb.replace_parameters(model, mass=mass), q, u, f, F, a)
        return sum(jnp.sum(jnp.sin(leaf)) for leaf in jax.tree_util.tree_leaves(out))

    mass = model.parameters.mass
    argnums = (0, 1, 2, 3, 4)
    batched = jax.jit(jax.grad(lambda m, *x: jnp.sum(jax.vmap(loss, in_axes=(None, 0, 0, 0, 0, 0))(m, *x)), argnums))
    single = jax.jit(jax.grad(loss, argnums))
    got = jax.device_get(batched(mass, q, u, f, F, a))
    lanes = [jax.device_get(single(mass, q[i], u[i], f[i], F[i], a[i])) for i in range(n)]
    assert_close(got[0], sum(g[0] for g in lanes), 1e-12, "d/dmass")
    for k, name in enumerate(("q", "u", "f", "F"), start=1):
        for i in range(n):
            assert_close(got[k][i], lanes[i][k], 1e-12, f"d/d{name} lane {i}")
    assert not np.allclose(got[1][0], got[1][1])  # the lanes' gradients differ: a lane mix-up would show


# ---------------------------------------------------------------------------------------------
# vmap over parameter sets


def _batched_model(model, n, seed):
    """``model`` with mass, inertia_Bo_B, p_PF and gravity batched over a leading axis of n (physical values)."""
    rng = np.random.default_rng(seed)
    prm = model.parameters
    s_m = 1 + 0.3 * rng.uniform(-1, 1, (n, 1))
    s_i = s_m * (1 + 0.2 * rng.uniform(0, 1, (n, 1)))  # inertia about Bo grows at least as fast: stays physical
    mass = prm.mass[None] * s_m
    inertia = prm.inertia_Bo_B[None] * s_i[..., None, None]
    p_PF = prm.p_PF[None] + 0.1 * rng.normal(size=(n,) + prm.p_PF.shape)
    gravity = model.forces[0].gravity[None] + rng.normal(size=(n, 3))
    batched = with_params(jb.replace_parameters(model, inertia_Bo_B=jnp.asarray(inertia)),
                          {"mass": jnp.asarray(mass), "p_PF": jnp.asarray(p_PF), "gravity": jnp.asarray(gravity)})
    axes = jax.tree_util.tree_map(lambda _: None, model)
    axes = jb.replace_parameters(axes, mass=0, inertia_Bo_B=0, p_PF=0)
    axes = dataclasses.replace(axes, forces=(dataclasses.replace(axes.forces[0], gravity=0),))
    return batched, axes


def test_vmap_over_states_and_parameter_sets(tree, ops_jit, ops_ref):
    """Every operator under one vmap over lanes that differ in state, forces and parameters (mass,
    inertia_Bo_B, p_PF, gravity) equals the single-state, single-model function lane by lane."""
    model, bodies = tree
    n = 3
    batched, axes = _batched_model(model, n, 8)
    batch = _inputs(model, 6, (n,))
    fn = jax.jit(jax.vmap(lambda m, *args: ops(m, bodies, *args), in_axes=(axes,) + (0,) * 6))
    traces = TRACES["ops"]
    out = jax.device_get(fn(batched, *batch))
    assert TRACES["ops"] == traces + 1
    assert out["M"].shape == (n,) + ops_ref["M"].shape
    for i in range(n):
        prm = batched.parameters
        model_i = with_params(
            jb.replace_parameters(model, inertia_Bo_B=prm.inertia_Bo_B[i]),
            {"mass": prm.mass[i], "p_PF": prm.p_PF[i], "gravity": batched.forces[0].gravity[i]},
        )
        single = jax.device_get(ops_jit(model_i, *lane(batch, i)))
        assert_tree_close(lane(out, i), single, 1e-11, what=f"lane {i}: ")
    # The parameter sets really differ (same state, different parameters: different udot).
    assert not np.allclose(out["system_mass"][0], out["system_mass"][1])
    # A second batch of parameter values reuses the vmapped compilation.
    batched2, _ = _batched_model(model, n, 9)
    fn(batched2, *batch)
    assert TRACES["ops"] == traces + 1 and fn._cache_size() == 1


# ---------------------------------------------------------------------------------------------
# grad vs central finite differences

INPUT_NAMES = ("q", "u", "mobility_forces", "body_forces")


@pytest.fixture(scope="module")
def weights(ops_ref):
    """Fixed random weights: scalar_k = sum(w_k * output_k) for every operator output k."""
    rng = np.random.default_rng(99)
    return {k: rng.normal(size=np.shape(v)) for k, v in ops_ref.items()}


@pytest.mark.long  # ~150 s of compile (CI time budget); CI still checks gradients vs FD on the 30-body tree (tests/dynamics/test_jacobians.py) and per mobilizer (tests/mobilizers/)
def test_grad_matches_finite_differences(tree, inputs, ops_jit, weights):
    model, bodies = tree
    keys = sorted(weights)
    q, u, f, F, a, b = inputs

    def scalars(params, q, u, f, F):
        out = ops(with_params(model, params), bodies, q, u, f, F, a, b)
        return jnp.stack([jnp.sum(weights[k] * out[k]) for k in keys])

    def scalars_fd(params, q, u, f, F):
        out = jax.device_get(ops_jit(with_params(model, params), q, u, f, F, a, b))
        return np.array([np.sum(weights[k] * out[k]) for k in keys])

    x0 = (get_params(model), q, u, f, F)
    jac = jax.jit(jax.jacrev(scalars, argnums=(0, 1, 2, 3, 4)))(*x0)  # d scalar_k / d input, for every k
    grads = {f"param.{n}": jac[0][n] for n in PARAM_NAMES}
    grads.update({n: jac[i + 1] for i, n in enumerate(INPUT_NAMES)})

    rng = np.random.default_rng(123)
    out0 = jax.device_get(ops_jit(model, q, u, f, F, a, b))
    # Size of the summed terms of each scalar: its round-off in FD is ~ eps * roundoff / h.
    roundoff = np.array([np.sum(np.abs(weights[k] * out0[k])) for k in keys]) + 1.0
    failures = []
    for name, g in grads.items():
        shape = np.shape(g)[1:]
        d = rng.normal(size=shape)
        if name == "param.mass" or name == "body_forces" or name.startswith("param.p_"):
            d[0] = 0.0  # Ground's row is not a free parameter
        ad = np.tensordot(np.asarray(g), d, axes=len(shape))
        h = 1e-5

        def along(value, name=name):
            x = list(x0)
            if name.startswith("param."):
                x[0] = {**x0[0], name[6:]: value}
            else:
                x[1 + INPUT_NAMES.index(name)] = value
            return scalars_fd(*x)

        at = x0[0][name[6:]] if name.startswith("param.") else x0[1 + INPUT_NAMES.index(name)]
        fd = central_difference(along, at, h, direction=d)
        # Relative 1e-6, plus the finite differences' own round-off (10 eps * size of the summed terms / h).
        noise = 10 * np.finfo(float).eps * roundoff / h
        err = np.abs(ad - fd)
        for k, e, x, y, z in zip(keys, err, ad, fd, noise):
            if not e <= 1e-6 * max(abs(x), abs(y)) + z:
                failures.append(f"d {k} / d {name}: grad {x:.10g} vs FD {y:.10g} (error {e:.2e}, FD noise {z:.1e})")
    assert not failures, "\n".join(failures)
