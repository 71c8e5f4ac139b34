"""MJCF tendon armature (jaxbody.io.mjcf_tendons, jb.TendonArmature, jaxbody._dynamics.tendon_armature) against
MuJoCo 4.0.

Golden numbers: tests/io/golden/mujoco_tendon_armature_*.npz from tests/io/generate_tendon_armature_golden.py on
MuJoCo's MJX test file tendon/armature.xml (tests/models/mjx_tendon_armature.xml) and
tests/models/tendon_armature.xml (fixed tendon with a ref'd hinge, spatial tendons through sites on a free body,
a ball chain and the world, armature from an actuator). At 13 states per model, under jit(vmap): jaxbody's
calc_m against MuJoCo's M (mj_fullM) and its realized udot against qacc (mj_forward), in MuJoCo's coordinates,
on the JAX path and on the compiled kernels (which agree with each other); the mass-matrix operators against each
other (M^-1 by Woodbury, M products, kinetic energy, inverse dynamics); gradients against central differences;
refusals. Beside an equality constraint (tests/models/tendon_armature_equality.xml, golden
mujoco_tendon_armature_equality.npz): the constrained udot against the ideal constraint's qacc from MuJoCo's M,
qacc_smooth and efc_J, on both paths, and its gradient.
"""

import functools
import os
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close

import jaxbody as jb
from jaxbody._kernels import backend

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
FILES = {"mjx_armature": "mjx_tendon_armature.xml", "tendon_armature": "tendon_armature.xml"}


@functools.cache
def imported_model(stem):
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # everything in these files is modelled: no warning
        imported = jb.io.load_mjcf(os.path.join(MODELS, FILES[stem]))
    return imported, imported.system.realize_topology()


def coordinate_map(imported, model, qpos, qvel):
    """(q, u, T): ``imported.from_mujoco`` of a batch, and qvel = T u from ``to_mujoco``'s Jacobian."""
    q, u = imported.from_mujoco(qpos, qvel)
    s0 = model.default_state()
    T = jax.vmap(lambda q, u: jax.jacfwd(lambda u: imported.to_mujoco(s0.set_q(q).set_u(u))[1])(u))(q, u)
    return jnp.asarray(q), jnp.asarray(u), np.asarray(T)


@functools.cache
def against_mujoco(stem, backend_name):
    """(golden, T, jaxbody's M (nu, nu) and udot per state, and on the small MJX model the other operators'
    results) on one backend."""
    with_operators = stem == "mjx_armature"   # the operators' compile is long on the larger model
    imported, model = imported_model(stem)
    g = dict(np.load(os.path.join(HERE, "golden", f"mujoco_tendon_armature_{stem}.npz")))
    q, u, T = coordinate_map(imported, model, g["qpos"], g["qvel"])
    with jb.use_backend(backend_name):
        @jax.jit
        @jax.vmap
        def evaluate(q, u):
            s = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Acceleration)
            return model.calc_m(s), s.acceleration.udot, operators(model, s) if with_operators else ()

        M, udot, ops = evaluate(q, u)
    return g, T, np.asarray(M), np.asarray(udot), [np.asarray(x) for x in ops]


def operators(model, s):
    """The other operators that include the armature, at a State realized to Acceleration (compared in
    test_operators_include_the_armature_consistently)."""
    dyn, x = s.dynamics, jnp.linspace(-1.0, 1.3, model.topology.nu)
    residual = model.calc_residual_force_ignoring_constraints(s, dyn.mobility_forces, dyn.body_forces,
                                                              s.acceleration.udot)
    return (model.multiply_by_m(s, x), model.calc_m_inv(s), model.multiply_by_m_inv(s, x),
            model.calc_kinetic_energy(s), residual,
            model.calc_acceleration_ignoring_constraints(s, dyn.mobility_forces, dyn.body_forces)[0])


def compiled_available():
    return backend.runs_compiled(imported_model("tendon_armature")[1].topology, jnp.float64)


@pytest.mark.parametrize("stem", list(FILES))
def test_mass_matrix_and_accelerations_match_mujoco(stem):
    g, T, M, udot, _ = against_mujoco(stem, "jax")
    M_mj = np.einsum("kji,kjl,klm->kim", T, g["M"], T)   # T^T M T: MuJoCo's M in jaxbody's u
    assert np.max(np.abs(g["M"] - g["M_plain"])) > 1 and np.max(np.abs(g["qacc"] - g["qacc_plain"])) > 1
    assert_close(M, M_mj, 1e-12, f"{stem}: calc_m vs MuJoCo's M (tendon armature in)")
    assert_close(np.einsum("kij,kj->ki", T, udot), g["qacc"], 1e-11, f"{stem}: udot vs MuJoCo's qacc")


def test_compiled_path_agrees_with_jax_path():
    if not compiled_available():
        pytest.skip("the compiled kernels are not available here")
    for stem in ["tendon_armature"]:
        g, T, M, udot, ops = against_mujoco(stem, "jax")
        _, _, M_c, udot_c, ops_c = against_mujoco(stem, "compiled")
        assert_close(udot_c, udot, 1e-12, f"{stem}: compiled vs JAX udot")
        assert_close(M_c, M, 1e-12, f"{stem}: compiled vs JAX M")
        assert_close(np.einsum("kij,kj->ki", T, udot_c), g["qacc"], 1e-11, f"{stem}: compiled udot vs qacc")


@functools.cache
def one_state(stem="mjx_armature"):
    """(model, q, u) at a random state of a small model (short compiles; a spatial tendon whose Jdot u != 0)."""
    imported, model = imported_model(stem)
    g = dict(np.load(os.path.join(HERE, "golden", f"mujoco_tendon_armature_{stem}.npz")))
    q, u, _ = coordinate_map(imported, model, g["qpos"][4:5], g["qvel"][4:5])
    return model, q[0], u[0]


def test_operators_include_the_armature_consistently(stem="mjx_armature"):
    """multiply_by_m, calc_m_inv, multiply_by_m_inv (Woodbury), kinetic energy and inverse dynamics all see
    M + J^T A J and the bias J^T A b: checked against calc_m and the realized udot (an independent route)."""
    imported, model = imported_model(stem)
    g, T, M, udot, (Mx, M_inv, M_inv_x, ke, residual, udot_ignoring) = against_mujoco(stem, "jax")
    _, u, _ = coordinate_map(imported, model, g["qpos"], g["qvel"])
    x = np.linspace(-1.0, 1.3, model.topology.nu)
    scale = np.max(np.abs(M))
    assert_close(Mx, M @ x, 1e-12 * scale, "multiply_by_m vs calc_m")
    assert_close(np.einsum("kij,kjl->kil", M_inv, M), np.broadcast_to(np.eye(len(x)), M.shape), 1e-10,
                 "calc_m_inv vs calc_m")
    assert_close(np.einsum("kij,kj->ki", M, M_inv_x), np.broadcast_to(x, udot.shape), 1e-10,
                 "multiply_by_m_inv vs calc_m")
    assert_close(ke, 0.5 * np.einsum("ki,kij,kj->k", u, M, u), 1e-12 * scale, "kinetic energy vs u^T M u / 2")
    assert_close(residual, np.zeros_like(residual), 1e-10 * scale, "inverse dynamics at the forward udot")
    assert_close(udot_ignoring, udot, 1e-12, "calc_acceleration_ignoring_constraints vs realize")


def test_gradients_match_central_differences():
    """d udot/d(armature leaf) and d udot/du (through the bias J^T A Jdot u) by jax.jacfwd, vs central differences."""
    model, q, u = one_state()

    def with_armature(a):
        return eqx.tree_at(lambda m: m.tendon_armatures[1].armature, model, a)

    @jax.jit
    def udot(model, u):
        return model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Acceleration).acceleration.udot

    a0 = model.tendon_armatures[1].armature
    da, du = (np.asarray(x) for x in jax.jacfwd(lambda a, v: udot(with_armature(a), v), argnums=(0, 1))(a0, u))
    fd = (np.asarray(udot(with_armature(a0 + 1e-3), u)) - np.asarray(udot(with_armature(a0 - 1e-3), u))) / 2e-3
    assert np.max(np.abs(da)) > 1e-4
    assert_close(da, fd, 1e-6 * np.max(np.abs(da)), "d udot / d armature vs central differences")
    h = 1e-6
    fd = np.stack([(np.asarray(udot(model, u + h * e)) - np.asarray(udot(model, u - h * e))) / (2 * h)
                   for e in np.eye(len(u))], axis=1)
    assert_close(du, fd, 1e-6 * np.max(np.abs(du)), "d udot / du vs central differences")
    g = jax.grad(lambda a: jnp.sum(udot(with_armature(a), u) ** 2))(a0)   # reverse mode
    assert np.isfinite(g) and abs(float(g) - 2 * float(np.asarray(udot(model, u)) @ da)) < 1e-8 * max(1, abs(float(g)))


def test_refusals_name_the_tendon():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.GeneralForceSubsystem(system)
    body = jb.Body.Rigid(jb.MassProperties(1.0, [0.1, 0, 0], jb.Inertia(0.1)))
    a = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), body, jb.Transform(), name="a")
    b = jb.MobilizedBody.Pin(a, jb.Transform(np.eye(3), [0.2, 0, 0]), body, jb.Transform(), name="b")
    with pytest.raises(jb.errors.InvalidArgument, match="'cable'.*armature"):
        jb.TendonArmature.Spatial(matter, "cable", -1.0, [(a, [0, 0, 0]), (b, [0.1, 0, 0])])
    with pytest.raises(jb.errors.InvalidArgument, match="'cable'.*two points"):
        jb.TendonArmature.Spatial(matter, "cable", 1.0, [(a, [0, 0, 0])])
    with pytest.raises(jb.errors.InvalidArgument, match="'coupler'.*which_q"):
        jb.TendonArmature.Fixed(matter, "coupler", 1.0, [(a, 1, 1.0)])
    jb.TendonArmature.Spatial(matter, "cable", 1.0, [(matter.Ground(), [0, 0.1, 0]), (b, [0.1, 0, 0])])
    jb.Constraint.CoordinateCoupler(matter, lambda x, p: x[0] - x[1], [a, b], [0, 0])
    assert len(system.realize_topology().tendon_armatures) == 1   # beside constraints: built, not refused


EQUALITY_FILE = "tendon_armature_equality.xml"


@functools.cache
def with_equality(backend_name):
    """(golden, T, udot per state, calc_m per state) of tests/models/tendon_armature_equality.xml on one backend."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # tendon armature beside an equality constraint is modelled: no warning
        imported = jb.io.load_mjcf(os.path.join(MODELS, EQUALITY_FILE))
    model = imported.system.realize_topology()
    assert len(model.tendon_armatures) == 3 and model.constraints.m == 1
    g = dict(np.load(os.path.join(HERE, "golden", "mujoco_tendon_armature_equality.npz")))
    q, u, T = coordinate_map(imported, model, g["qpos"], g["qvel"])
    with jb.use_backend(backend_name):
        @jax.jit
        @jax.vmap
        def evaluate(q, u):
            s = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Acceleration)
            return s.acceleration.udot, s.acceleration.acceleration_errors

        udot, aerr = evaluate(q, u)
    return g, T, np.asarray(udot), np.asarray(aerr), model, q, u


def test_equality_constraint_sees_the_armature():
    """The constrained solve uses (M + J^T A J)^-1: udot equals the ideal constraint's qacc from MuJoCo's own M
    (tendon armature in), qacc_smooth and efc_J (MuJoCo's stiff limit) to 1e-10; without the armature in the
    constrained solve the answer would be qacc_plain's neighbourhood, not this."""
    g, T, udot, aerr, _, _, _ = with_equality("jax")
    assert np.max(np.abs(g["qacc"] - g["qacc_plain"])) > 1
    assert_close(np.einsum("kij,kj->ki", T, udot), g["qacc"], 1e-10, "udot vs MuJoCo's ideal constrained qacc")
    assert_close(aerr, np.zeros_like(aerr), 1e-10, "acceleration errors")


def test_equality_constraint_compiled_path_agrees_with_jax_path():
    if not compiled_available():
        pytest.skip("the compiled kernels are not available here")
    _, _, udot, _, _, _, _ = with_equality("jax")
    _, _, udot_c, _, _, _, _ = with_equality("compiled")
    assert_close(udot_c, udot, 1e-12, "compiled vs JAX constrained udot")


def test_equality_constraint_gradient_matches_central_differences():
    """d udot / d(armature leaf) through the constrained solve, by jax.jacfwd and jax.grad, vs central differences."""
    _, _, _, _, model, q, u = with_equality("jax")
    q, u = q[2], u[2]

    def with_armature(a):
        return eqx.tree_at(lambda m: m.tendon_armatures[1].armature, model, a)

    @jax.jit
    def udot(model):
        return model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Acceleration).acceleration.udot

    a0 = model.tendon_armatures[1].armature
    da = np.asarray(jax.jacfwd(lambda a: udot(with_armature(a)))(a0))
    fd = (np.asarray(udot(with_armature(a0 + 1e-3))) - np.asarray(udot(with_armature(a0 - 1e-3)))) / 2e-3
    assert np.max(np.abs(da)) > 1e-4
    assert_close(da, fd, 1e-6 * np.max(np.abs(da)), "d udot / d armature vs central differences")
    grad = jax.grad(lambda a: jnp.sum(udot(with_armature(a)) ** 2))(a0)
    assert abs(float(grad) - 2 * float(np.asarray(udot(model)) @ da)) < 1e-8 * max(1, abs(float(grad)))
