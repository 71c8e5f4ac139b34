"""Armature (per-mobility rotor inertia, ``model.parameters.armature``): M = J^T Mk J + diag(armature).

On the catalogue tree (every built-in mobilizer type; native and generic kernel types) with seeded armature:
calc_m equals the rigid-body M plus the diagonal; forward dynamics on both paths satisfies the independent
route ``M udot = f + J^T F - c`` (M by calc_m, the rest by the residual at udot = 0) and the two paths agree to
1e-12, with a locked body too; M^-1 is M's inverse; the kinetic energy is 1/2 u^T M u; the gradient of udot
with respect to the armature matches central differences on both paths. The builder's setter validates its
input and puts the values in the Model's u slots. MuJoCo's and Pinocchio's armature: tests/io/test_io_passive.py,
tests/io/test_io_mjcf.py, tests/io/test_io_urdf.py.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from helpers import assert_close, central_difference
from systems import catalogue_tree, random_catalogue_qu, random_forces


@pytest.fixture(scope="module")
def setup():
    model, bodies = catalogue_tree(False)
    armature = jnp.asarray(np.random.default_rng(3).uniform(0.05, 0.4, model.topology.nu))
    q, u = random_catalogue_qu(model, 5, ())
    f, F = random_forces(model, 6, ())
    return model, bodies, armature, tuple(jnp.asarray(x) for x in (q, u, f, F))


def _state(model, q, u, f, F):
    return model.default_state().set_q(q).set_u(u).set_mobility_forces(f).set_body_forces(F)


@pytest.mark.parametrize("backend", ["compiled", "jax"])
def test_forward_dynamics_solves_m_with_armature(setup, backend):
    model, bodies, armature, args = setup
    with_armature = jb.replace_parameters(model, armature=armature)
    with jb.use_backend(backend):
        s = with_armature.realize(_state(with_armature, *args), jb.Stage.Acceleration)
        M = with_armature.calc_m(s)
        rigid = model.calc_m(model.realize(_state(model, *args), jb.Stage.Position))
        assert_close(M, rigid + jnp.diag(armature), 1e-12, what="M = M_rigid + diag(armature)")
        # Independent route: the residual at udot = 0 is c - f - J^T F, so M udot must equal its negative.
        minus_rhs = with_armature.calc_residual_force_ignoring_constraints(
            s, s.dynamics.mobility_forces, s.dynamics.body_forces, jnp.zeros_like(args[1]))
        assert_close(M @ s.acceleration.udot, -minus_rhs, 1e-10, what="M udot = f + J^T F - c")
        assert_close(with_armature.calc_m_inv(s) @ M, jnp.eye(M.shape[0]), 1e-10, what="M^-1 M")
        ke = with_armature.calc_kinetic_energy(s)
        assert_close(ke, 0.5 * args[1] @ M @ args[1], 1e-12, what="kinetic energy = u^T M u / 2")
    assert float(jnp.abs(s.acceleration.udot - model.realize(_state(model, *args), jb.Stage.Acceleration)
                         .acceleration.udot).max()) > 1e-3   # the armature changes the answer


def test_both_paths_agree_with_armature_and_a_lock(setup):
    model, bodies, armature, args = setup
    with_armature = jb.replace_parameters(model, armature=armature)

    def udot(backend):
        s = bodies[3].lock(_state(with_armature, *args), jb.Motion.Acceleration)
        with jb.use_backend(backend):
            return jax.jit(lambda s: with_armature.realize(s, jb.Stage.Acceleration).acceleration.udot)(s)

    assert_close(udot("compiled"), udot("jax"), 1e-12, what="udot, compiled vs JAX path")


# The JAX path's gradient is long for the CI budget (~7 s; 2026-11-29 profile): the compiled one runs in CI and
# the two paths' forward solves are compared above.
@pytest.mark.parametrize("backend", ["compiled", pytest.param("jax", marks=pytest.mark.long)])
def test_gradient_with_respect_to_armature(setup, backend):
    model, _, armature, args = setup
    w = jnp.asarray(np.random.default_rng(4).normal(size=model.topology.nu))

    def objective(a):
        m = jb.replace_parameters(model, armature=a)
        return w @ m.realize(_state(m, *args), jb.Stage.Acceleration).acceleration.udot

    with jb.use_backend(backend):
        grad = jax.jit(jax.grad(objective))(armature)
        direction = jnp.asarray(np.random.default_rng(5).normal(size=armature.shape))
        fd = central_difference(lambda e: objective(armature + e * direction), 0.0, 1e-6)
    assert_close(grad @ direction, fd, 1e-6, what="d/d armature vs central differences")


def test_builder_sets_armature_in_u_slots_and_checks_it():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    body = jb.Body.Rigid(jb.MassProperties(1.0, [0, 0, 0], jb.Inertia(1, 1, 1)))
    pin = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), body, jb.Transform(), name="pin")
    ball = jb.MobilizedBody.Ball(pin, jb.Transform(), body, jb.Transform(), name="ball")
    ball.set_default_armature([0.1, 0.2, 0.3])
    pin.set_default_armature(0.5)
    with pytest.raises(jb.InvalidArgument, match="ball: armature"):
        ball.set_default_armature([0.1, -0.2, 0.3])
    with pytest.raises(jb.InvalidArgument, match="pin: armature"):
        pin.set_default_armature([0.1, 0.2])
    model = system.realize_topology()
    np.testing.assert_array_equal(model.parameters.armature, [0.5, 0.1, 0.2, 0.3])
    with pytest.raises(jb.InvalidInertia, match="armature"):
        jb.replace_parameters(model, armature=jnp.asarray([0.5, -0.1, 0.2, 0.3]))
