"""The compiled tree kernels (jaxbody/_kernels) against the JAX reference path: same numbers to 1e-12.

Every comparison first checks that the compiled path really ran (a ``jaxbody_kernel_call`` in the traced program), so a
silent fallback to the JAX path cannot make these tests pass. Models: Simbody's golden cases (constrained ones
included: the kernel gives their tree part), the catalogue tree with every built-in mobilizer type in both
modes (native kernel types and the generic path side by side, with locks), the 30-body mixed tree, and
imported robots (URDF Panda, MJX humanoid; an OpenSim model with CustomJoints as FunctionBased with --long).
"""

from __future__ import annotations

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from golden_cases import ALL_CASES, build_case, load_case, sample_state
from helpers import assert_close
from systems import catalogue_tree, mixed_tree_30, random_catalogue_qu, random_forces

TOL = 1e-12
N_LANES = 11  # more than a float64 lane pack (8), so packs and single lanes both run


def _realize_fields(model, q, u, f, F, lock_body):
    """Acceleration-stage outputs of one state with applied forces; ``lock_body`` (a MobilizedBody or None)
    locked at udot = 0."""
    state = model.default_state().set_q(q).set_u(u).set_mobility_forces(f).set_body_forces(F)
    if lock_body is not None:
        state = lock_body.lock(state, jb.Motion.Acceleration)
    a = model.realize(state, jb.Stage.Acceleration).acceleration
    return {"udot": a.udot, "A_GB": a.A_GB, "motion_forces": a.motion_forces, "qdotdot": a.qdotdot}


def batched_outputs(model, backend, args, lock_body=None):
    """jit(vmap) of the realize outputs on ``backend``; asserts which path the program contains."""
    fn = jax.vmap(functools.partial(_realize_fields, model, lock_body=lock_body))
    with jb.use_backend(backend):
        program = str(jax.make_jaxpr(fn)(*args))
        assert ("jaxbody_kernel_call" in program) == (backend == "compiled"), f"{backend} path not taken"
        return jax.jit(fn)(*args)


def assert_backends_agree(model, args, lock_body=None, tol=TOL):
    compiled = batched_outputs(model, "compiled", args, lock_body)
    reference = batched_outputs(model, "jax", args, lock_body)
    for name in reference:
        assert_close(compiled[name], reference[name], tol, what=name)
    return compiled


def random_args(model, seed, lanes=N_LANES):
    q, u = random_catalogue_qu(model, seed, (lanes,))
    f, F = random_forces(model, seed + 1, (lanes,))
    return tuple(jnp.asarray(x) for x in (q, u, f, F))


@pytest.mark.parametrize("case_name", ALL_CASES)
def test_golden_cases_both_paths(case_name):
    case, results = load_case(case_name)
    model, _ = build_case(case, with_constraints=True)
    states = [sample_state(model, s) for s in case["samples"]]
    q = jnp.stack([s.q for s in states])
    u = jnp.stack([s.u for s in states])
    f, F = random_forces(model, 3, (len(states),))
    assert_backends_agree(model, (q, u, jnp.asarray(f), jnp.asarray(F)))


# Euler mode is long for the CI budget (12 s, 2026-11-29); quaternions run in CI
@pytest.mark.parametrize("use_euler_angles", [False, pytest.param(True, marks=pytest.mark.long)],
                         ids=["quaternions", "euler"])
def test_every_mobilizer_type_both_paths(use_euler_angles):
    model, bodies = catalogue_tree(use_euler_angles)
    args = random_args(model, 11)
    assert_backends_agree(model, args)
    # A locked body (known udot): the kernel's partitioned solve and its prescribed-motion forces tau.
    out = assert_backends_agree(model, args, lock_body=bodies[3])
    assert float(jnp.abs(out["motion_forces"]).max()) > 0.0


#: The mobilizers real models use, each computed inside the kernel (issue 26 item 2), in both modes.
NATIVE_TYPES = {"Weld", "Pin", "Slider", "Translation", "Cylinder", "Planar", "Universal", "Gimbal", "Ball", "Free"}


@pytest.mark.parametrize("use_euler_angles", [False, True], ids=["quaternions", "euler"])
def test_the_types_real_models_use_run_natively(use_euler_angles):
    from jaxbody._kernels.layout import GENERIC, kernel_layout

    model, _ = catalogue_tree(use_euler_angles)
    layout = kernel_layout(model.topology)
    native = {m.simbody_name for m, code in zip(model.topology.mobilizers[1:], layout.code[1:]) if code != GENERIC}
    assert native == NATIVE_TYPES, native ^ NATIVE_TYPES


def test_mixed_tree_and_float32():
    model, _ = mixed_tree_30()
    args = random_args(model, 5, lanes=40)  # a float32 lane pack (32) and single lanes
    out64 = assert_backends_agree(model, args)
    model32 = jax.tree_util.tree_map(
        lambda x: jnp.asarray(x, jnp.float32) if hasattr(x, "dtype") and x.dtype == jnp.float64 else x, model)
    out32 = batched_outputs(model32, "compiled", tuple(jnp.asarray(a, jnp.float32) for a in args))
    assert out32["udot"].dtype == jnp.float32
    scale = float(jnp.abs(out64["udot"]).max())
    err = float(jnp.abs(out32["udot"] - out64["udot"]).max())
    assert err < 1e-3 * scale, (err, scale)


def _cast(model, dtype):
    return jax.tree_util.tree_map(
        lambda x: jnp.asarray(x, dtype) if hasattr(x, "dtype") and x.dtype == jnp.float64 else x, model)


# float32 lane packs are long for the CI budget (18 s, 2026-11-29); float64 runs in CI
@pytest.mark.parametrize("dtype", [jnp.float64, pytest.param(jnp.float32, marks=pytest.mark.long)])
def test_lane_packs_equal_single_lanes_bit_for_bit(dtype):
    """The CPU kernels run whole packs of lanes at once (8 float64 / 32 float32, lane_pack.h) and the rest one
    by one: 33 copies of one state (packs, then a single lane) give identical udot, A_GB, M^-1 and gradients
    (the adjoint kernel) in every lane."""
    model, _ = catalogue_tree(seed=2)  # native and generic bodies
    model = _cast(model, dtype)
    q, u, f, F = (jnp.asarray(x, dtype) for x in random_args(model, 13, lanes=1))
    lanes = 33

    def outputs(q, u, f, F):
        fields = _realize_fields(model, q, u, f, F, None)
        state = model.default_state().set_q(q)
        minv = model.calc_m_inv(model.realize(state, jb.Stage.Position))
        grad = jax.grad(lambda q, u: _realize_fields(model, q, u, f, F, None)["udot"].sum(), argnums=(0, 1))(q, u)
        return fields["udot"], fields["A_GB"], minv, grad

    program = jax.jit(jax.vmap(outputs))
    tiled = [jnp.tile(x, (lanes,) + (1,) * (x.ndim - 1)) for x in (q, u, f, F)]
    hlo = program.lower(*tiled).as_text()
    for kernel in ("jaxbody_forward_dynamics", "jaxbody_m_inverse", "jaxbody_residual_adjoint"):
        assert kernel in hlo, kernel
    for name, value in zip(["udot", "A_GB", "M^-1", "grad q", "grad u"], jax.tree_util.tree_leaves(program(*tiled))):
        value = np.asarray(value)
        assert np.isfinite(value).all(), name
        different = [lane for lane in range(lanes) if not np.array_equal(value[lane], value[0])]
        assert not different, f"{name}: lanes {different} differ from lane 0"


def test_nan_stays_in_its_lane():
    model, _ = mixed_tree_30()
    q, u, f, F = random_args(model, 7)
    out = batched_outputs(model, "compiled", (q.at[1, 0].set(jnp.nan), u, f, F))
    finite = np.isfinite(np.asarray(out["udot"])).all(axis=1)
    assert list(finite) == [lane != 1 for lane in range(N_LANES)]  # lane 1 shares a lane pack with 0, 2, ..., 7


def _imported(name):
    if name == "panda":
        robot = jb.io.load_urdf("tests/models/panda.urdf")
    elif name == "mjx_humanoid":
        pytest.importorskip("mujoco")
        # the tree kernels against the JAX tree: contact-free by design
        robot = jb.io.load_mjcf("tests/models/mjx_humanoid.xml", contact=False)
    else:
        robot = jb.io.load_osim(f"tests/models/osim/{name}.osim")
    return robot.system.realize_topology()


@pytest.mark.parametrize("name", ["panda", "mjx_humanoid", pytest.param("gait9dof18musc", marks=pytest.mark.long)])
def test_imported_models_both_paths(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _imported(name)
    assert_backends_agree(model, random_args(model, 21, lanes=2))
