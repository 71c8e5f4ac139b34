"""Compliant contact under jit, vmap (4096 lanes with different active pairs, one compilation), grad and jvp
(against central differences before, at and after onset, with respect to q, u and Model leaves), NaN isolation
per lane, and the ContactForces report against the body forces it explains."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb

FLOOR = jb.Transform(jb.Rotation(np.asarray([[0.0, 1, 0], [-1, 0, 0], [0, 0, 1]])), [0.0, 0.0, 0.0])  # x_H = -y
LANES = 4096


@pytest.fixture(scope="module")
def scene():
    """Ground half-space; a ball (sphere r 0.1) and a capsule (r 0.05, half length 0.1) on free mobilizers:
    three pair kinds (half-space/sphere, half-space/capsule, sphere/capsule; the box pairs are exercised in
    test_compliant_trackers.py and test_compliant_physics.py, kept out here for compile time)."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    tracker = jb.ContactTrackerSubsystem(system)
    contact = jb.CompliantContactSubsystem(system, tracker)
    contact.set_transition_velocity(0.02)
    steel = jb.ContactMaterial(2e6, 0.4, 0.7, 0.5, 0.05)
    rubber = jb.ContactMaterial(1e6, 0.8, 0.9, 0.6)
    matter.Ground().update_body().add_contact_surface(FLOOR, jb.ContactSurface(jb.ContactGeometry.HalfSpace(), steel))
    for name, geometry, material in (("ball", jb.ContactGeometry.Sphere(0.1), rubber),
                                     ("capsule", jb.ContactGeometry.Capsule(0.05, 0.1), steel)):
        body = jb.Body.Rigid(jb.MassProperties(1.0, np.zeros(3), jb.Inertia(0.01)))
        body.add_contact_surface(jb.Transform(jb.Rotation(), [0.0, 0.01, 0.0]), jb.ContactSurface(geometry, material))
        jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), body, jb.Transform(), name=name)
    return system.realize_topology(), contact


def _q(heights, xs=(0.0, 0.12), tilt=0.3):
    """q (..., 14): the two bodies at x positions ``xs`` and the given heights, each tilted about z."""
    quat = jnp.asarray([np.cos(tilt / 2), 0.0, 0.0, np.sin(tilt / 2)])
    parts = []
    for i, x in enumerate(xs):
        h = heights[..., i]
        p = jnp.stack([jnp.full_like(h, x), h, jnp.zeros_like(h)], -1)
        parts += [jnp.broadcast_to(quat, h.shape + (4,)), p]
    return jnp.concatenate(parts, -1)


def _velocity_state(model, q, u):
    return model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Velocity)


@jax.jit
def _forces(model, q, u):
    s = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Dynamics)
    return s.dynamics.body_forces, s.dynamics.potential_energy


def _report(model, contact, q, u):
    return contact.get_contact_forces(_velocity_state(model, q, u), model)


def test_vmap_4096_lanes_different_active_pairs(scene):
    model, contact = scene
    rng = np.random.default_rng(0)
    heights = jnp.asarray(rng.uniform(0.02, 0.2, size=(LANES, 2)))
    q = _q(heights)
    u = jnp.asarray(rng.normal(size=(LANES, 12)) * 0.3)
    batched = jax.jit(jax.vmap(lambda a, b: (_forces(model, a, b), _report(model, contact, a, b).active)))
    (F, pe), active = batched(q, u)
    patterns = {tuple(map(bool, row)) for row in np.asarray(active)}
    assert len(patterns) >= 6, patterns  # lanes differ in which pairs touch
    for lane in (0, 1, 2, 1000, LANES - 1):
        F1, pe1 = _forces(model, q[lane], u[lane])
        np.testing.assert_allclose(F[lane], F1, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(pe[lane], pe1, rtol=1e-12, atol=1e-15)


def test_nan_in_one_lane_stays_in_that_lane(scene):
    model, contact = scene
    q = _q(jnp.asarray([[0.09, 0.03]] * 8))
    u = jnp.zeros((8, 12)).at[:, 4].set(-0.1)
    bad_q = q.at[3, 5].set(jnp.nan)
    batched = jax.jit(jax.vmap(lambda a, b: _forces(model, a, b)))
    F, _ = batched(bad_q, u)
    F_ok, _ = batched(q, u)
    assert not np.all(np.isfinite(F[3]))
    others = np.arange(8) != 3
    np.testing.assert_array_equal(F[others], F_ok[others])
    assert np.all(np.isfinite(F_ok))


def test_report_explains_the_body_forces(scene):
    """Every pair active: summing each pair's force (on surface 2, at its point, with its moment; the negative on
    surface 1) gives the body forces, and the reported energies add up to the PE."""
    model, contact = scene
    q = _q(jnp.asarray([0.085, 0.035]), xs=(0.0, 0.12))  # overlapping neighbours and the floor
    u = jnp.asarray(np.random.default_rng(1).normal(size=12) * 0.2)
    r = jax.jit(lambda a, b: _report(model, contact, a, b))(q, u)
    F, pe = _forces(model, q, u)
    assert np.all(np.asarray(r.active)), r.active
    s = _velocity_state(model, q, u)
    expected = np.zeros((3, 2, 3))
    for k, ((b1, _), (b2, _)) in enumerate(contact.get_contact_pairs(model)):
        for body, sign in ((b2.index, 1.0), (b1.index, -1.0)):
            arm = np.asarray(r.point_G[k] - s.position.p_GB[body])
            expected[body, 0] += sign * (np.asarray(r.moment_G[k]) + np.cross(arm, r.force_G[k]))
            expected[body, 1] += sign * np.asarray(r.force_G[k])
    np.testing.assert_allclose(F, expected, atol=1e-9)
    np.testing.assert_allclose(np.sum(r.potential_energy), pe, rtol=1e-12)
    assert np.all(np.asarray(r.power_loss) >= 0)
    np.testing.assert_allclose(np.linalg.norm(r.normal_G, axis=-1), 1.0, atol=1e-12)


@pytest.fixture(scope="module")
def objective(scene):
    """(jitted objective, its jitted gradient): weighted body forces + PE as a function of (q, u, the ball's
    radius, the surfaces' material rows), the last two Model leaves."""
    model, contact = scene
    k = contact.force.index
    w = jnp.asarray(np.random.default_rng(3).normal(size=(3, 2, 3)))

    def f(q, u, radius, material):
        m = eqx.tree_at(lambda mm: (mm.forces[k].shapes[1].radius, mm.forces[k].material), model, (radius, material))
        F, pe = _forces(m, q, u)
        return jnp.sum(w * F) + pe

    return jax.jit(f), jax.jit(jax.grad(f, argnums=(0, 1, 2, 3))), (model.forces[k].shapes[1].radius, model.forces[k].material)


@pytest.mark.parametrize("where", ["before", "at", "after"])
def test_gradients_against_central_differences(objective, where):
    """d(weighted body forces + PE)/d(q, u, ball radius, materials) by jax.grad and jax.jvp against central
    differences (relative steps 1e-7), with the ball 0.5 mm into the floor, exactly touching, and 0.5 mm above."""
    f, grad, (radius0, material0) = objective
    offset = {"before": -5e-4, "at": 0.0, "after": 5e-4}[where]
    q0 = _q(jnp.asarray([0.1 - 0.01 + offset, 0.3]))  # the ball's sphere center is 0.01 above its origin
    u0 = jnp.asarray(np.random.default_rng(2).normal(size=12) * 0.1)
    args = (q0, u0, radius0, material0)
    grads = grad(*args)
    checked = {0: [(1,), (4,), (5,), (6,)], 1: [(0,), (3,), (4,), (5,)], 2: [(0,)], 3: [(1, 0), (1, 1), (1, 2), (0, 0)]}
    for i, entries in checked.items():
        assert np.all(np.isfinite(np.asarray(grads[i])))
        for idx in entries:
            h = 1e-7 * max(1.0, abs(float(args[i][idx])))
            plus, minus = list(args), list(args)
            plus[i], minus[i] = args[i].at[idx].add(h), args[i].at[idx].add(-h)
            fd = float(f(*plus) - f(*minus)) / (2 * h)
            assert abs(float(grads[i][idx]) - fd) <= 1e-6 * max(1.0, abs(fd)), (where, i, idx, float(grads[i][idx]), fd)
    direction = jnp.asarray(np.random.default_rng(4).normal(size=14))
    _, tangent = jax.jvp(lambda q: f(q, u0, radius0, material0), (q0,), (direction,))
    np.testing.assert_allclose(tangent, jnp.sum(grads[0] * direction), rtol=1e-10, atol=1e-10)
