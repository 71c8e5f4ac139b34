"""GJK/EPA pair trackers (trackers/curved.py) and the convex mesh on a half-space, beyond the coal goldens:
ellipsoid pairs against closed forms (spheres as ellipsoids = Simbody's SphereSphere; pole-to-pole relative
curvatures; Hertz force ~ depth^1.5 with the pair's effective radius), gradients against central differences,
vmap lanes with different active pairs in one compilation (256; 4096 with --long; a NaN lane and a deep lane stay
in their lanes), and a convex-mesh box resting on a half-space."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody._dynamics.contact import compliant_models, shapes
from jaxbody._dynamics.contact.trackers import curved, primitive

EYE = jnp.eye(3)


def _ellipsoid_pair(radii1, radii2, p2, R2=EYE):
    """The Ellipsoid-Ellipsoid tracker on one pair (surface 1 at the origin)."""
    return curved.support_pair_hertz(EYE[None], jnp.zeros((1, 3)), shapes.Ellipsoid(jnp.asarray([radii1])),
                                     jnp.asarray(R2)[None], jnp.asarray([p2]), shapes.Ellipsoid(jnp.asarray([radii2])))


@pytest.fixture(scope="module")
def ellipsoids():
    return jax.jit(_ellipsoid_pair)


def test_spherical_ellipsoids_are_simbodys_sphere_pair(ellipsoids):
    d = jnp.asarray([0.1, -0.05, 0.08])
    c = ellipsoids(jnp.asarray([0.1] * 3), jnp.asarray([0.06] * 3), 0.14 * d / jnp.linalg.norm(d))
    s = primitive.sphere_sphere(EYE[None], jnp.zeros((1, 3)), shapes.Sphere(jnp.asarray([0.1])), EYE[None],
                                (0.14 * d / jnp.linalg.norm(d))[None], shapes.Sphere(jnp.asarray([0.06])))
    for got, want in zip(c, s):
        np.testing.assert_allclose(got, want, atol=1e-12)


def test_pole_to_pole_curvatures_and_hertz_law(ellipsoids):
    """Ellipsoids touching at their z poles: relative curvatures (c1/a1^2 + c2/a2^2, c1/b1^2 + c2/b2^2), and the
    hertz_elliptical force grows as depth^1.5 (Simbody's law with R = 2 / (kmax + kmin))."""
    r1, r2 = jnp.asarray([0.3, 0.2, 0.1]), jnp.asarray([0.25, 0.4, 0.15])
    forces = []
    for x in (1e-4, 4e-4):
        c = ellipsoids(r1, r2, jnp.asarray([0.0, 0.0, 0.25 - x]))
        np.testing.assert_allclose(c.depth[0, 0], x, atol=1e-13)
        np.testing.assert_allclose(c.normal_G[0, 0], [0, 0, 1], atol=1e-12)
        k = np.sort([0.1 / 0.09 + 0.15 / 0.0625, 0.1 / 0.04 + 0.15 / 0.16])[::-1]
        np.testing.assert_allclose(c.curvatures[0, 0], k, rtol=1e-9)
        mat = jnp.asarray([[1e6, 0.0, 0.0, 0.0, 0.0]])
        out = compliant_models.hertz_elliptical(c, mat, mat, jnp.ones(1), jnp.ones(1), jnp.zeros_like, 0.01)
        forces.append(float(jnp.linalg.norm(out.force_G)))
    assert forces[1] / forces[0] == pytest.approx(4.0 ** 1.5, rel=1e-9)


def test_gradients_match_central_differences():
    """Depth, point and normal of ellipsoid/ellipsoid (implicit normal derivative) and the depth of
    cylinder/brick (Danskin) w.r.t. surface 2's position, apart and overlapping."""
    rng = np.random.default_rng(4)
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    R2 = jnp.asarray([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                      [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                      [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    weights = jnp.asarray(rng.normal(size=7))
    ell1, ell2 = shapes.Ellipsoid(jnp.asarray([[0.1, 0.06, 0.08]])), shapes.Ellipsoid(jnp.asarray([[0.05, 0.09, 0.07]]))
    cyl, box = shapes.Cylinder(jnp.asarray([0.05]), jnp.asarray([0.08])), shapes.Brick(jnp.asarray([[0.1, 0.06, 0.08]]))

    def f(p2):
        a = curved.support_pair_hertz(EYE[None], jnp.zeros((1, 3)), ell1, R2[None], p2[None], ell2)
        b = curved.support_pair_penalty(EYE[None], jnp.zeros((1, 3)), box, R2[None], p2[None], cyl)
        fields = jnp.concatenate([a.depth[0], a.point_G[0, 0], a.normal_G[0, 0]])
        return jnp.stack([weights @ fields, b.depth[0, 0]])

    eps = 1e-6
    shifts = jnp.concatenate([eps * jnp.eye(3), -eps * jnp.eye(3)])

    @jax.jit
    def values_and_derivatives(p):  # one program: f at p +- eps e_j, and f's forward derivatives along e_j
        return jax.vmap(lambda dp: f(p + dp))(shifts), jax.vmap(lambda e: jax.jvp(f, (p,), (e,))[1])(jnp.eye(3))

    for p2 in ([0.17, 0.03, 0.02], [0.08, 0.02, -0.01]):  # apart, overlapping
        values, derivatives = values_and_derivatives(jnp.asarray(p2))
        np.testing.assert_allclose(derivatives, (values[:3] - values[3:]) / (2 * eps), atol=1e-6)


# 4096 lanes (8192 GJK/EPA pairs in one vmap) run in ~35 s of CPU at the tests' -O0 (measured; linear in the
# lanes: the batched EPA loop runs every lane while any overlapping one has not converged), so they are --long.
# The "stall" seen before was this run on a machine loaded 7x over its 2 cores: the idle XLA pool threads sit in
# futex waits while two compute threads progress.
@pytest.mark.parametrize("lanes", [256, pytest.param(4096, marks=pytest.mark.long)])
def test_vmap_lanes_with_different_active_pairs_a_nan_lane_and_a_deep_lane(lanes):
    """Lanes of 2 ellipsoid/ellipsoid pairs in one compilation, some touching and some apart; each lane equals
    its own unbatched evaluation; a NaN pose poisons only its own lane; a deep penetration (centers 1 mm apart)
    stays in its lane."""
    rng = np.random.default_rng(5)
    p2 = jnp.asarray(rng.uniform(-0.25, 0.25, size=(lanes, 2, 3)))
    p2 = p2.at[7].set(jnp.nan).at[11, 0].set(jnp.asarray([0.001, 0.0, 0.0]))
    R = jnp.broadcast_to(EYE, (2, 3, 3))
    ell1, ell2 = shapes.Ellipsoid(jnp.asarray([[0.1, 0.06, 0.08]] * 2)), shapes.Ellipsoid(jnp.asarray([[0.05, 0.09, 0.07]] * 2))

    def lane(p):
        return curved.support_pair_hertz(R, jnp.zeros((2, 3)), ell1, R, p, ell2).depth[:, 0]

    depth = jax.jit(jax.vmap(lane))(p2)
    finite = np.ones(lanes, bool)
    finite[7] = False
    assert np.all(np.isnan(depth[7])) and np.all(np.isfinite(depth[finite]))
    assert float(depth[11, 0]) > 0.1  # deeper than the smaller ellipsoid's smallest radius
    active = np.asarray(depth[finite] > 0)
    assert 0.05 < active.mean() < 0.95 and np.any(active[:, 0] != active[:, 1])  # different active pairs
    one = jax.jit(lane)
    for i in (0, 6, 8, 10, 11, 12, lanes - 1):
        np.testing.assert_allclose(depth[i], one(p2[i]), atol=1e-14)


def test_convex_mesh_box_rests_on_a_half_space():
    """A convex-mesh box (8 hull vertices) on the floor: at the depth where its 4 bottom vertices carry the
    weight (penalty k x = m g / 4, k = stiffness / 2) the accelerations vanish, as the Brick's corners."""
    G = 9.81
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -G, 0.0])
    tracker = jb.ContactTrackerSubsystem(system)
    jb.CompliantContactSubsystem(system, tracker)
    material = jb.ContactMaterial(1e5, 0.5, 0.5, 0.5)
    floor = jb.Transform(jb.Rotation(np.asarray([[0.0, 1, 0], [-1, 0, 0], [0, 0, 1]])), [0.0, 0.0, 0.0])
    matter.Ground().update_body().add_contact_surface(floor, jb.ContactSurface(jb.ContactGeometry.HalfSpace(), material))
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * [0.1, 0.05, 0.1]
    body = jb.Body.Rigid(jb.MassProperties(1.0, np.zeros(3), jb.Inertia.from_matrix(np.diag([0.0042, 0.0067, 0.0042]))))
    body.add_contact_surface(jb.Transform(), jb.ContactSurface(jb.ContactGeometry.ConvexMesh(corners), material))
    jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), body, jb.Transform())
    model = system.realize_topology()
    x0 = G / 4 / (1e5 / 2)
    q = jnp.asarray([1.0, 0.0, 0.0, 0.0, 0.0, 0.05 - x0, 0.0])
    s = model.realize(model.default_state().set_q(q), jb.Stage.Acceleration)
    np.testing.assert_allclose(s.acceleration.udot, 0.0, atol=1e-10)
    s = model.realize(model.default_state().set_q(q.at[5].add(-1e-4)), jb.Stage.Acceleration)
    assert float(s.acceleration.udot[4]) > 1.0  # deeper: pushed up
