"""Compliant contact physics in closed form: Hertz force against depth^1.5 with each pair's effective radius,
a box at rest on four corners, slide/stick on an incline at tan(theta) = mu, rolling at 5/7 v0 (sphere and
capsule), energy non-increasing with dissipation. Soft materials (1e5 Pa) keep the simulations short (RK4)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import ellipe, ellipk

import jaxbody as jb
from jaxbody._dynamics.contact import compliant_models, shapes
from jaxbody._dynamics.contact.trackers import primitive as P

G = 9.81
FLOOR = jb.Transform(jb.Rotation(np.asarray([[0.0, 1, 0], [-1, 0, 0], [0, 0, 1]])), [0.0, 0.0, 0.0])  # x_H = -y


def _hertz(track, s1, s2, p1, p2, R1=None, R2=None, stiffness=1e5):
    """Normal force magnitude of a static pair through the tracker and Simbody's Hertz law (equal materials)."""
    n = p1.shape[0]
    eye = jnp.stack([jnp.eye(3)] * n)
    c = track(eye if R1 is None else R1, p1, s1, eye if R2 is None else R2, p2, s2)
    mat = jnp.tile(jnp.asarray([[stiffness, 0.0, 0.0, 0.0, 0.0]]), (n, 1))
    zero_velocity = lambda point: jnp.zeros_like(point)  # noqa: E731
    model = compliant_models.hertz_elliptical if track in (P.half_space_ellipsoid, P.sphere_ellipsoid) else compliant_models.hertz_circular
    out = model(c, mat, mat, jnp.ones(n), jnp.ones(n), zero_velocity, 0.01)
    return jnp.sum(jnp.linalg.norm(out.force_G, axis=-1), -1), c


@jax.jit
def _hertz_cases(x):
    """Normal force (4,) per case of depths x (4,), and the ellipsoid's curvatures, in one compilation."""
    zeros, up = jnp.zeros((4, 3)), jnp.zeros((4, 3))
    floor_R = jnp.stack([jnp.asarray(FLOOR.R)] * 4)
    r1, r2, half = 0.1, 0.05, 0.2
    at = lambda h: up.at[:, 1].set(h)  # noqa: E731
    upright = jnp.stack([jnp.asarray([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])] * 4)  # capsule z axis along -y
    across = jnp.stack([jnp.asarray([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])] * 4)  # capsule z axis along x
    capsule = shapes.Capsule(jnp.full(4, r2), jnp.full(4, half))
    sphere1, sphere2 = shapes.Sphere(jnp.full(4, r1)), shapes.Sphere(jnp.full(4, r2))
    box = shapes.Brick(jnp.tile(jnp.asarray([[0.3, 0.2, 0.3]]), (4, 1)))
    ellipsoid = shapes.Ellipsoid(jnp.tile(jnp.asarray([[0.3, 0.1, 0.2]]), (4, 1)))  # resting on its b = 0.1 pole
    out = {
        "sphere/half-space": _hertz(P.half_space_sphere, shapes.HalfSpace(), sphere1, zeros, at(r1 - x), R1=floor_R),
        "sphere/sphere": _hertz(P.sphere_sphere, sphere1, sphere2, zeros, at(r1 + r2 - x)),
        "capsule end/half-space": _hertz(P.half_space_capsule, shapes.HalfSpace(), capsule, zeros, at(half + r2 - x),
                                         R1=floor_R, R2=upright),
        "sphere/capsule side": _hertz(P.sphere_capsule, sphere1, capsule, zeros, at(r1 + r2 - x)),
        "crossed capsules": _hertz(P.capsule_capsule, capsule, capsule, zeros, at(2 * r2 - x), R2=across),
        "box face/sphere": _hertz(P.brick_sphere, box, sphere1, zeros, at(0.2 + r1 - x)),
        "ellipsoid pole/half-space": _hertz(P.half_space_ellipsoid, shapes.HalfSpace(), ellipsoid, zeros, at(0.1 - x),
                                            R1=floor_R),
    }
    return {k: v[0] for k, v in out.items()}, out["ellipsoid pole/half-space"][1].curvatures[:, 0]


def _exact_eccentricity_correction(kmax, kmin):
    """Hertz's exact factor (Simbody's numContactEllipseRatio with scipy's elliptic integrals): the contact
    ellipse's m = 1 - (b/a)^2 solves ``kmin/kmax = (K - E) / (E/(1 - m) - K)``, then ``e = pi k sqrt(E K) /
    (2 K^2)`` with k = a/b. Simbody approximates the ratio (Antoine et al.) and K, E."""
    ratio = lambda m: (ellipk(m) - ellipe(m)) / (ellipe(m) / (1 - m) - ellipk(m))  # noqa: E731
    m = brentq(lambda m: ratio(m) - kmin / kmax, 1e-12, 1 - 1e-12, xtol=1e-15)
    K, E, k = ellipk(m), ellipe(m), 1 / np.sqrt(1 - m)
    return np.pi * k * np.sqrt(E * K) / (2 * K * K)


def test_eccentricity_correction_against_exact_elliptic_integrals():
    """Simbody's approximate e within 1e-5 of Hertz's exact one for curvature ratios 1.05 to 100 (and 1 at 1)."""
    kmax = np.asarray([1.05, 1.5, 2.25, 10.0, 100.0])
    e = compliant_models.eccentricity_correction(jnp.asarray(kmax), jnp.ones(5))
    np.testing.assert_allclose(e, [_exact_eccentricity_correction(k, 1.0) for k in kmax], rtol=1e-5)
    assert float(compliant_models.eccentricity_correction(2.0, 2.0)) == 1.0


def test_hertz_force_against_depth_to_the_three_halves():
    """F = e 4/3 k x sqrt(R k x), k = stiffness^(2/3)/2 for equal materials, R each pair's effective radius
    (r1 r2 / (r1 + r2); a half-space's and a box face's radius infinite); the ellipsoid at its pole has
    curvatures c/a^2, c/b^2, R = 2/(kmax + kmin) and Simbody's eccentricity correction e."""
    x = jnp.asarray([1e-6, 1e-4, 2e-3, 1e-2])
    k = 1e5 ** (2 / 3) / 2
    r1, r2 = 0.1, 0.05
    forces, curvatures = _hertz_cases(x)
    a, b, c = 0.3, 0.2, 0.1
    kmax, kmin = c / b**2, c / a**2
    np.testing.assert_allclose(curvatures, np.tile([kmax, kmin], (4, 1)), rtol=1e-13)
    e = float(compliant_models.eccentricity_correction(kmax, kmin))
    assert 1.01 < e < 1.1  # the ellipse matters
    radius = {"sphere/half-space": r1, "sphere/sphere": r1 * r2 / (r1 + r2), "capsule end/half-space": r2,
              "sphere/capsule side": r1 * r2 / (r1 + r2), "crossed capsules": r2 / 2, "box face/sphere": r1,
              "ellipsoid pole/half-space": 2 / (kmax + kmin)}
    for name, f in forces.items():
        factor = e if name.startswith("ellipsoid") else 1.0
        # rtol: the 1e-6 m depth loses digits to r - (r - x)
        np.testing.assert_allclose(f, factor * 4 / 3 * k * x * np.sqrt(radius[name] * k * x), rtol=1e-10, err_msg=name)


def _system(material, gravity=(0.0, -G, 0.0), transition_velocity=0.01):
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, list(gravity))
    tracker = jb.ContactTrackerSubsystem(system)
    contact = jb.CompliantContactSubsystem(system, tracker)
    contact.set_transition_velocity(transition_velocity)
    matter.Ground().update_body().add_contact_surface(FLOOR, jb.ContactSurface(jb.ContactGeometry.HalfSpace(), material))
    return system, matter, contact


def _body(matter, geometry, material, inertia, mass=1.0, X_BS=None):
    body = jb.Body.Rigid(jb.MassProperties(mass, np.zeros(3), jb.Inertia.from_matrix(np.diag(inertia))))
    body.add_contact_surface(X_BS, jb.ContactSurface(geometry, material))
    return jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), body, jb.Transform())


@jax.jit
def _run(model, q, u):
    final, traj = jb.simulate(model, model.default_state().set_q(q).set_u(u), 1e-3, 400, save_every=20)
    return final.q, final.u, traj.q, traj.u


def _energy(model, q, u):
    s = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Dynamics)
    return model.calc_energy(s)


@pytest.fixture(scope="module")
def box_model():
    material = jb.ContactMaterial(1e5, 0.5, 0.5, 0.5)
    system, matter, _ = _system(material)
    _body(matter, jb.ContactGeometry.Brick([0.1, 0.05, 0.1]), material, [0.0042, 0.0067, 0.0042])
    return system.realize_topology()


def _box_q(height, tilt=0.0):
    half = 0.5 * tilt
    return jnp.asarray([np.cos(half), 0.0, 0.0, np.sin(half), 0.0, height, 0.0])


def test_box_rests_on_four_corners(box_model):
    """At the depth where the four corners carry the weight (k x = m g / 4, k = stiffness/2) the accelerations
    vanish; started 20% deeper it settles back there, level, with no drift."""
    x0 = G / 4 / (1e5 / 2)
    q = _box_q(0.05 - x0)
    s = box_model.realize(box_model.default_state().set_q(q), jb.Stage.Acceleration)
    np.testing.assert_allclose(s.acceleration.udot, 0.0, atol=1e-10)
    q1, u1, _, _ = _run(box_model, _box_q(0.05 - 1.2 * x0), jnp.zeros(6))
    np.testing.assert_allclose(q1, q, atol=2e-5)
    np.testing.assert_allclose(u1, 0.0, atol=2e-3)


def test_incline_slide_and_stick(box_model):
    """The floor tilted by theta (gravity tilted instead, a Model leaf: no recompiling): below tan(theta) = mu
    the box creeps slower than the transition velocity; above, it slides with a = g (sin - mu cos)."""
    x0 = G / 4 / (1e5 / 2)
    results = {}
    for ratio in (0.7, 1.3):
        theta = np.arctan(ratio * 0.5)
        g_vec = jnp.asarray([G * np.sin(theta), -G * np.cos(theta), 0.0])
        model = eqx.tree_at(lambda m: m.forces[0].gravity, box_model, g_vec)  # UniformGravity's vector
        _, u, _, traj_u = _run(model, _box_q(0.05 - x0 * np.cos(theta)), jnp.zeros(6))
        results[ratio] = (np.asarray(traj_u[:, 3]), theta)
    slow, _ = results[0.7]
    assert np.max(np.abs(slow[5:])) < 0.01  # sticking: creep below the transition velocity
    fast, theta = results[1.3]
    a = (fast[-1] - fast[-6]) / (5 * 20e-3)
    np.testing.assert_allclose(a, G * (np.sin(theta) - 0.5 * np.cos(theta)), rtol=0.02)




R_BALL, MASS, V0 = 0.1, 1.0, 0.5
I_BALL = 0.4 * MASS * R_BALL**2
K23 = 1e5 ** (2 / 3) / 2


@pytest.fixture(scope="module")
def trio():
    """One model, one compilation: a sphere and a capsule launched sliding along x (z = 0 and z = 1), and a
    spinning ball dropped at z = 2; the three bodies share a clique (they never touch each other)."""
    rolling = jb.ContactMaterial(1e5, 0.3, 0.5, 0.5)
    system, matter, _ = _system(rolling)
    clique = jb.ContactSurface.create_new_contact_clique()
    bodies = [(jb.ContactGeometry.Sphere(R_BALL), rolling), (jb.ContactGeometry.Capsule(R_BALL, 0.1), rolling),
              (jb.ContactGeometry.Sphere(R_BALL), jb.ContactMaterial(1e5, 1.0, 0.5, 0.4))]
    for geometry, material in bodies:
        body = jb.Body.Rigid(jb.MassProperties(MASS, np.zeros(3), jb.Inertia(I_BALL)))
        body.add_contact_surface(None, jb.ContactSurface(geometry, material).join_clique(clique))
        jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), body, jb.Transform())
    model = system.realize_topology()
    x0 = [(MASS * G / (4 / 3 * K23 * np.sqrt(R_BALL * K23)) / share) ** (2 / 3) for share in (1, 2)]
    q = jnp.asarray([1.0, 0, 0, 0, 0.0, R_BALL - x0[0], 0.0, 1.0, 0, 0, 0, 0.0, R_BALL - x0[1], 1.0,
                     1.0, 0, 0, 0, 0.0, 0.12, 2.0])
    u = jnp.asarray([0, 0, 0, V0, 0, 0, 0, 0, 0, V0, 0, 0, 0.0, 3.0, 2.0, 0.4, -0.5, 0.0])
    return model, q, u, x0, _run(model, q, u)


@pytest.mark.parametrize("body", [0, 1], ids=["sphere", "capsule"])
def test_rolling_at_five_sevenths(trio, body):
    """Launched sliding at v0 without spin, friction brings it to rolling at v0 / (1 + I / (m rho^2)), rho the
    lever arm from the center to the contact point (r - x0/2 at the static depth x0): 5/7 v0 as x0 -> 0 with
    I = 2/5 m r^2 about the rolling axis (here rho/r = 0.96 and 0.98: 0.698 v0 and 0.706 v0). The capsule
    rolls about its own axis on both end spheres."""
    _, _, _, x0, (_, u, _, _) = trio
    rho = R_BALL - x0[body] / 2
    w_z, v_x = u[6 * body + 2], u[6 * body + 3]
    np.testing.assert_allclose(v_x, V0 / (1 + I_BALL / (MASS * rho * rho)), rtol=2e-3)
    np.testing.assert_allclose(-w_z * rho, v_x, rtol=2e-3)  # rolling: w_z rho = -v_x


def test_energy_never_increases_with_dissipation(trio):
    """With a spinning ball dropped on the floor (Hunt-Crossley dissipation, friction) and the rolling bodies,
    kinetic + gravity + contact energy is non-increasing along the trajectory (sampled every 20 ms)."""
    model, q, u, _, (_, _, traj_q, traj_u) = trio
    energy = np.asarray(jax.vmap(lambda a, b: _energy(model, a, b))(traj_q, traj_u))
    start = float(_energy(model, q, u))
    energy = np.concatenate([[start], energy])
    assert np.all(np.diff(energy) <= 1e-9 * abs(start)), np.diff(energy)
    assert energy[-1] < energy[0] - 0.05  # it did touch and lose energy


def test_compiled_and_jax_paths_agree(box_model):
    """The element feeds the tree kernels as body forces: accelerations of a tilted, moving box on its corners
    agree between the compiled path and the pure-JAX reference to 1e-12."""
    q = _box_q(0.045, tilt=0.05)
    u = jnp.asarray([0.1, -0.2, 0.3, 0.05, -0.02, 0.01])
    udot = {}
    for backend in ("compiled", "jax"):
        with jb.use_backend(backend):
            f = jax.jit(lambda q, u: box_model.realize(box_model.default_state().set_q(q).set_u(u),
                                                       jb.Stage.Acceleration).acceleration.udot)
            udot[backend] = f(q, u)
    assert np.max(np.abs(np.asarray(udot["jax"]))) > 1.0  # the corners push
    np.testing.assert_allclose(udot["compiled"], udot["jax"], rtol=1e-12, atol=1e-12)
