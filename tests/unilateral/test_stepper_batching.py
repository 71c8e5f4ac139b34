"""jb.SemiExplicitEulerTimeStepper under jit, vmap (1024 lanes, each its own active set, one compilation) and
grad (through the PGS impulse solve, checked against closed forms and central differences); contact
Jacobian rows against finite differences of the separations."""

from __future__ import annotations

import re

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from contact_systems import G, ball_on_plane, block_on_incline
from helpers import assert_close, assert_grad_matches_fd

import jaxbody as jb
from helpers import trace_count

H = 1e-3


def test_vmap_1024_lanes_one_compilation_per_lane_status():
    """1024 balls at heights -0.5 mm .. 20 mm with speeds -1 .. 1 m/s, 10 steps in one vmapped simulate: lanes
    differ in proximal and impacting contacts, one trace serves two calls, every lane reports its own
    convergence, and sample lanes equal unbatched runs of the same lane (exactly)."""
    stepper, _ = ball_on_plane("newton", 0.5)
    n = 1024
    rng = np.random.default_rng(0)
    y0 = jnp.asarray(rng.uniform(-5e-4, 0.02, n))
    v0 = jnp.asarray(rng.uniform(-1.0, 1.0, n))
    base = stepper.model.default_state()
    states = jax.vmap(lambda y, v: base.set_q(jnp.array([0.0, y, 0.0])).set_u(jnp.array([0.0, v, 0.0])))(y0, v0)
    run = jax.vmap(lambda s: stepper.simulate(s, H, 10, save_every=10))
    before = trace_count("SemiExplicitEulerTimeStepper.simulate")
    final, _, reports = run(states)
    final2, _, _ = run(states.set_u(-states.u))
    assert trace_count("SemiExplicitEulerTimeStepper.simulate") - before == 1
    assert final.q.shape == (n, 3) and final2.q.shape == (n, 3)
    proximal, impacters = np.asarray(reports.proximal[:, 0, 0]), np.asarray(reports.impacters[:, 0, 0])
    assert proximal.any() and not proximal.all() and impacters.any() and not impacters.all()
    assert reports.converged.shape == (n, 1) and bool(jnp.all(reports.converged))
    for i in (int(np.argmax(impacters)), int(np.argmin(proximal))):
        single, _, _ = stepper.simulate(jax.tree_util.tree_map(lambda x, i=i: x[i], states), H, 10, save_every=10)
        assert_close(final.q[i], single.q, 1e-14, f"lane {i} q")
        assert_close(final.u[i], single.u, 1e-14, f"lane {i} u")


def test_jit_step_matches_eager():
    """``jax.jit`` around ``stepper.step`` gives the eager result (an impact step)."""
    stepper, _ = ball_on_plane("newton", 0.5)
    state = stepper.model.default_state().set_q(jnp.array([0.0, 5e-4, 0.0])).set_u(jnp.array([0.3, -0.1, 0.0]))
    eager, _ = stepper.step(state, H)
    jitted, report = jax.jit(lambda s: stepper.step(s, H))(state)
    assert_close(jitted.q, eager.q, 1e-15, "q")
    assert_close(jitted.u, eager.u, 1e-15, "u")
    assert bool(report.impacters[0])


def test_grad_of_rebound_speed_wrt_restitution():
    """Newton impact at 0.1 m/s (above the min-COR speed, so e = min_cor): v+ = e 0.1 - g h, hence
    dv+/de = 0.1 (reverse mode); checked against central differences (1e-8) and the closed form to 1e-6
    (the gradient is that of the impulse solver's converged iterate)."""
    stepper, _ = ball_on_plane("newton", 0.5)
    state = stepper.model.default_state().set_q(jnp.array([0.0, 5e-4, 0.0])).set_u(jnp.array([0.0, -0.1, 0.0]))

    def rebound(e):
        contacts = eqx.tree_at(lambda c: c.planes.min_cor, stepper.contacts, jnp.reshape(e, (1,)))
        return stepper.step(state, H, contacts=contacts)[0].u[1]

    grad, _ = assert_grad_matches_fd(rebound, jnp.asarray(0.5), 1e-4, 1e-8, "d v+/d e")
    assert_close(grad, 0.1, 1e-6, "d v+/d e closed form")


@pytest.mark.long  # CI budget (2026-11-29 profile): ~13 s; the restitution gradient stays in CI
def test_grad_of_sliding_speed_wrt_friction():
    """A block sliding down a 30 deg incline with mu = 0.3 reaches v = -g (sin - mu cos) T after T = 0.02 s, so
    dv/dmu = g cos(30 deg) T = 0.16991 m/s (the sliding cone is active every step); forward mode through 20
    friction solves (PLUS, the default), against central differences (1e-8) and the closed form (1e-6)."""
    theta = float(np.radians(30))
    stepper, _ = block_on_incline(theta, 0.3)
    upslope = jnp.array([np.cos(theta), np.sin(theta), 0.0])

    def speed(mu):
        m = jnp.reshape(mu, (1,))
        contacts = eqx.tree_at(lambda c: (c.planes.mu_s, c.planes.mu_d), stepper.contacts, (m, m))
        final, _, _ = stepper.simulate(stepper.model.default_state(), H, 20, save_every=20, contacts=contacts)
        return final.u @ upslope

    mu = jnp.asarray(0.3)
    grad, _ = assert_grad_matches_fd(speed, mu, 1e-5, 1e-8, "dv/dmu", grad=jax.jacfwd(speed)(mu))
    assert_close(grad, G * np.cos(theta) * 0.02, 1e-6, "dv/dmu closed form")


@pytest.fixture(scope="module")
def geometry_zoo():
    """A Free box carrying a plane, a Free ball: PointPlane, SpherePlane (both on the moving plane), Rope and
    SphereSphere between them, HardStopUpper/Lower on a Slider, and an EdgeEdgeContact of crossed edges."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    mp = jb.MassProperties.from_central_inertia(1.5, [0.1, 0, 0], jb.Inertia(0.02, 0.03, 0.04))
    plate = jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="plate")
    ball = jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="ball")
    slider = jb.MobilizedBody.Slider(plate, jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="slider")
    for contact in (
        jb.PointPlaneContact(plate, [0.2, 1, 0.1], 0.05, ball, [0.1, -0.2, 0.05], 0.3, 0.6, 0.4, 0.1),
        jb.SpherePlaneContact(plate, [0, 1, 0], -0.1, ball, [0.0, 0.1, 0.0], 0.15, 0.3, 0.5, 0.5, 0),
        jb.Rope(plate, [0.3, 0, 0], ball, [0, 0.1, 0], 2.0, 0.2),
        jb.SphereSphereContact(ball, [0.05, 0, 0], 0.1, slider, [0, 0.2, 0], 0.2, 0.5, 0.3, 0.2, 0),
        jb.HardStopUpper(slider, 0, 0.4, 0.5),
        jb.HardStopLower(slider, 0, -0.4, 0.5),
        jb.EdgeEdgeContact(plate, jb.Transform(jb.Rotation(np.eye(3)), [0.1, 0.2, 0]), 0.5, ball,
                           jb.Transform(jb.Rotation(np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])), [0, 0, 0.1]),
                           0.5, 0.4, 0.3, 0.3, 0.0),
    ):
        matter.adopt_unilateral_contact(contact)
    stepper = jb.SemiExplicitEulerTimeStepper(system)
    rng = np.random.default_rng(3)
    q = np.concatenate([rng.normal(size=4), rng.normal(size=3) * 0.3, rng.normal(size=4), rng.normal(size=3), [0.1]])
    state = stepper.model.normalize_quaternions(stepper.model.default_state().set_q(jnp.asarray(q)))
    return stepper, state.set_u(jnp.asarray(rng.normal(size=13)))


def test_normal_rows_are_separation_rates(geometry_zoo):
    """For every geometry, the normal row times u equals d perr/dt by central differences along qdot = N u
    (1e-7), and the friction rows are orthogonal to the normal direction's rate at a contact point (unit
    tangents: the rows of a point contact have the norms of station velocities, checked by their sum of
    squares against |v_rel|^2)."""
    stepper, state = geometry_zoo
    model = stepper.model
    kin = stepper.calc_contact_kinematics(state)
    qdot = model.calc_q_dot(model.realize(state, jb.Stage.Position), state.u)
    rate = jnp.einsum("kn,n->k", kin.G[:, 0], state.u)

    def perr(eps):
        return stepper.calc_contact_kinematics(state.set_q(state.q + eps * qdot)).perr

    fd = (perr(1e-6) - perr(-1e-6)) / 2e-6
    assert_close(rate, fd, 1e-7, "G_n u vs d perr/dt")
    assert kin.perr.shape == (7,) and kin.G.shape == (7, 3, 13)
    assert_close(kin.G[4:6, 1:], jnp.zeros((2, 2, 13)), 0, "hard stops have no friction rows")
    assert_close(kin.mu_s, jnp.array([0.6, 0.5, 0.0, 0.3, 0.0, 0.0, 0.3]), 0, "mu_s in adoption order")


def test_stateful_step_to_matches_step():
    """Simbody's stateful interface: initialize(state), step_to(t) (one step of t - t0), get_state, get_time."""
    stepper, _ = ball_on_plane("newton", 0.5)
    state = stepper.model.default_state().set_q(jnp.array([0.0, 5e-4, 0.0])).set_u(jnp.array([0.3, -0.1, 0.0]))
    stepper.initialize(state)
    report = stepper.step_to(H)
    expected, _ = stepper.step(state, H)
    assert float(stepper.get_time()) == pytest.approx(H)
    assert_close(stepper.get_state().u, expected.u, 0, "u")
    assert bool(report.impacters[0])


@pytest.mark.parametrize("method, lifted", [("bilateral", True), ("unilateral", True), ("none", False)])
def test_position_projection_methods(method, lifted):
    """A ball at rest 0.5 mm inside the plane: Bilateral and Unilateral projection (Simbody's
    doPositionCorrectionPhase) lift it to the surface in one step (|y| < 1e-9); NoPositionProjection leaves the
    penetration (it only stops the ball: y = -0.5 mm to 1e-9)."""
    stepper = jb.SemiExplicitEulerTimeStepper(ball_on_plane("newton", 0.5)[0].system)
    stepper.set_position_projection_method(method)
    state = stepper.model.default_state().set_q(jnp.array([0.0, -5e-4, 0.0]))
    final, _ = stepper.step(state, H)
    assert abs(float(final.q[1]) - (0.0 if lifted else -5e-4)) < 1e-9
    assert abs(float(final.u[1])) < 1e-6


def test_early_exit_gives_the_same_steps():
    """set_pgs_convergence(early_exit=True) (lax.while_loop, stops at convergence) reproduces the fixed-length
    sweeps exactly on 8 lanes of bouncing and resting balls (converged lanes freeze in both)."""
    system = ball_on_plane("newton", 0.5)[0].system
    fixed, early = jb.SemiExplicitEulerTimeStepper(system), jb.SemiExplicitEulerTimeStepper(system)
    for stepper in (fixed, early):
        stepper.set_impulse_solver_type("pgs")
    early.set_pgs_convergence(early_exit=True)
    base = fixed.model.default_state()
    states = jax.vmap(lambda y, v: base.set_q(jnp.array([0.0, y, 0.0])).set_u(jnp.array([0.0, v, 0.0])))(
        jnp.linspace(-5e-4, 5e-3, 8), jnp.linspace(-1.0, 0.5, 8))
    a, _, ra = jax.vmap(lambda s: fixed.simulate(s, H, 20, save_every=20))(states)
    b, _, rb = jax.vmap(lambda s: early.simulate(s, H, 20, save_every=20))(states)
    assert_close(b.q, a.q, 0, "q")
    assert_close(b.u, a.u, 0, "u")
    assert_close(rb.iterations, ra.iterations, 0, "iterations")


def test_contacts_argument_is_checked_like_the_constructors():
    """A UnilateralContactSet passed as contacts= gets the constructors' checks when its numbers are concrete,
    naming the contact; traced numbers (jit, vmap, grad) are not checked."""
    stepper, _ = ball_on_plane("newton", 0.5)
    state = stepper.model.default_state()
    label = stepper.system.get_matter_subsystem().get_unilateral_contact(0).label
    bad_cor = eqx.tree_at(lambda c: c.planes.min_cor, stepper.contacts, jnp.array([1.5]))
    with pytest.raises(jb.InvalidArgument, match=rf"step: contacts=: {re.escape(label)}: min_cor must be finite and "
                                                 r"in \[0.0, 1.0\], got 1.5"):
        stepper.step(state, H, contacts=bad_cor)
    sliding_above_static = eqx.tree_at(lambda c: (c.planes.mu_s, c.planes.mu_d), stepper.contacts,
                                       (jnp.array([0.2]), jnp.array([0.3])))
    with pytest.raises(jb.InvalidArgument, match=rf"simulate: contacts=: {re.escape(label)}: the dynamic "
                                                 r"coefficient of friction mu_d can't exceed mu_s"):
        stepper.simulate(state, H, 2, contacts=sliding_above_static)
    traced = jax.jit(lambda e: stepper.step(
        state, H, contacts=eqx.tree_at(lambda c: c.planes.min_cor, stepper.contacts, e))[0].u)(jnp.array([1.5]))
    assert traced.shape == state.u.shape
