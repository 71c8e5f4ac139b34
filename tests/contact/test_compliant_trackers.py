"""Primitive trackers against independent references: closed forms (sphere pairs, ellipsoid pole curvatures) and
brute-force minimization over the surfaces (grid + Nelder-Mead for ellipsoids, dense segment samples) (ellipsoid, capsule and box distances) on random poses, deep and
grazing; every table entry finite in value and gradient at degenerate poses (coincident centers, parallel axes)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import minimize

from jaxbody._dynamics.contact import shapes
from jaxbody._dynamics.contact.trackers import primitive as P
from jaxbody._dynamics.contact.trackers.hull import convex_hull_triangles
from jaxbody._dynamics.contact.trackers.table import PAIR_TABLE

N = 8


def _rotations(seed, n=N):
    q = np.random.default_rng(seed).normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    return jnp.asarray(np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], -2))


@pytest.fixture(scope="module")
def poses():
    rng = np.random.default_rng(3)
    return (_rotations(1), jnp.asarray(rng.normal(size=(N, 3)) * 0.25), _rotations(2), jnp.asarray(rng.normal(size=(N, 3)) * 0.25))


def _random_shapes(seed):
    rng = np.random.default_rng(seed)
    u = lambda lo, hi, *s: jnp.asarray(rng.uniform(lo, hi, size=(N, *s)))  # noqa: E731
    return {"HalfSpace": shapes.HalfSpace(), "Sphere": shapes.Sphere(u(0.05, 0.3)), "Ellipsoid": shapes.Ellipsoid(u(0.08, 0.4, 3)),
            "Capsule": shapes.Capsule(u(0.05, 0.2), u(0.05, 0.3)), "Brick": shapes.Brick(u(0.08, 0.35, 3)),
            "Cylinder": shapes.Cylinder(u(0.05, 0.2), u(0.05, 0.3)),
            "ConvexMesh": shapes.ConvexMesh(u(0.08, 0.35, 1, 1) * _HULL_POINTS, tuple(map(tuple, _HULL_FACES.tolist()))),
            "TriangleMesh": shapes.TriangleMesh(u(0.08, 0.35, 1, 1) * _HULL_POINTS, tuple(map(tuple, _HULL_FACES.tolist())))}


_HULL_POINTS = np.random.default_rng(0).normal(size=(12, 3))
_HULL_POINTS /= np.linalg.norm(_HULL_POINTS, axis=1, keepdims=True)  # all on the hull (a closed TriangleMesh too)
_HULL_FACES = convex_hull_triangles(_HULL_POINTS)


def _segment(p, R, h, k=4001):
    t = np.linspace(-1, 1, k)[:, None] * h
    return np.asarray(p)[None] + t * np.asarray(R)[:, 2][None]


def _box_signed_distance(points_B, h):
    inside = np.all(np.abs(points_B) <= h, -1)
    outside = np.linalg.norm(points_B - np.clip(points_B, -h, h), axis=-1)
    return np.where(inside, -np.min(h - np.abs(points_B), -1), outside)


def _ellipsoid_point(a, uv):
    u, v = np.asarray(uv)[..., 0], np.asarray(uv)[..., 1]
    return np.stack([a[0] * np.cos(u) * np.cos(v), a[1] * np.cos(u) * np.sin(v), a[2] * np.sin(u)], -1)


def _ellipsoid_extreme(a, cost):
    """Minimize ``cost(points (k, 3)) -> (k,)`` over the ellipsoid surface: a 121 x 241 grid, then Nelder-Mead
    from the best sample."""
    U, V = np.meshgrid(np.linspace(-np.pi / 2, np.pi / 2, 121), np.linspace(-np.pi, np.pi, 241))
    grid = np.stack([U.ravel(), V.ravel()], -1)
    start = grid[np.argmin(cost(_ellipsoid_point(a, grid)))]
    best = minimize(lambda uv: cost(_ellipsoid_point(a, uv)[None])[0], start, method="Nelder-Mead",
                    options={"xatol": 1e-12, "fatol": 1e-16, "maxiter": 4000})
    return best.fun


def _ellipsoid_signed_distance(c_E, a):
    d = np.sqrt(_ellipsoid_extreme(a, lambda x: np.sum((x - c_E) ** 2, -1)))
    return -d if np.sum(c_E**2 / a**2) < 1 else d


def test_sphere_pairs_closed_form(poses):
    R1, p1, R2, p2 = poses
    s = _random_shapes(4)
    r1, r2 = np.asarray(s["Sphere"].radius), np.asarray(s["Sphere"].radius)[::-1]
    c = P.sphere_sphere(R1, p1, s["Sphere"], R2, p2, shapes.Sphere(jnp.asarray(r2)))
    d = np.linalg.norm(np.asarray(p2 - p1), axis=1)
    np.testing.assert_allclose(c.depth[:, 0], r1 + r2 - d, atol=1e-15)
    np.testing.assert_allclose(c.normal_G[:, 0], np.asarray(p2 - p1) / d[:, None], atol=1e-15)
    np.testing.assert_allclose(c.curvatures[:, 0, 0], 1 / r1 + 1 / r2, rtol=1e-14)
    c = P.half_space_sphere(R1, p1, s["HalfSpace"], R2, p2, s["Sphere"])
    x = np.einsum("ni,ni->n", np.asarray(R1)[:, :, 0], np.asarray(p2 - p1))
    np.testing.assert_allclose(c.depth[:, 0], r1 + x, atol=1e-15)


def test_ellipsoid_trackers_against_brute_force(poses):
    R1, p1, R2, p2 = poses
    s = _random_shapes(5)
    a = np.asarray(s["Ellipsoid"].radii)
    p1 = p1.at[: N // 2].set(p2[: N // 2] + 0.03 * p1[: N // 2])  # centers inside the ellipsoid
    c = P.sphere_ellipsoid(R1, p1, s["Sphere"], R2, p2, s["Ellipsoid"])
    inside = 0
    for i in range(N):
        c_E = np.asarray(R2[i]).T @ np.asarray(p1[i] - p2[i])
        inside += np.sum(c_E**2 / a[i] ** 2) < 1
        expected = float(s["Sphere"].radius[i]) - _ellipsoid_signed_distance(c_E, a[i])
        assert abs(float(c.depth[i, 0]) - expected) < 1e-9, (i, float(c.depth[i, 0]), expected)
    assert 0 < inside < N  # the poses include centers inside and outside
    h = P.half_space_ellipsoid(R1, p1, s["HalfSpace"], R2, p2, s["Ellipsoid"])
    for i in range(N):
        x_H = np.asarray(R1[i])[:, 0]
        deepest = -_ellipsoid_extreme(a[i], lambda x: -(x @ np.asarray(R2[i]).T + np.asarray(p2[i] - p1[i])) @ x_H)
        assert abs(float(h.depth[i, 0]) - deepest) < 1e-10


def test_ellipsoid_curvatures_at_a_pole():
    """At the pole of axis c the principal curvatures are c/a^2 and c/b^2 (kmax first)."""
    radii = jnp.asarray([[0.3, 0.2, 0.1], [0.1, 0.25, 0.4]])
    R_H = jnp.asarray(np.stack([np.asarray([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])] * 2))  # x_H = -z_G: material below
    p_E = jnp.asarray([[0.0, 0, 0.05], [0.0, 0, 0.3]])
    c = P.half_space_ellipsoid(R_H, jnp.zeros((2, 3)), shapes.HalfSpace(), jnp.stack([jnp.eye(3)] * 2), p_E, shapes.Ellipsoid(radii))
    a, b, cc = np.asarray(radii).T
    expected = np.sort(np.stack([cc / a**2, cc / b**2], -1), -1)[:, ::-1]
    np.testing.assert_allclose(c.curvatures[:, 0], expected, rtol=1e-13)
    np.testing.assert_allclose(c.depth[:, 0], np.asarray(cc) - np.asarray(p_E)[:, 2], atol=1e-15)


def test_capsule_and_box_trackers_against_brute_force(poses):
    R1, p1, R2, p2 = poses
    s = _random_shapes(6)
    cap, box, sph = s["Capsule"], s["Brick"], s["Sphere"]
    cc = P.capsule_capsule(R1, p1, cap, R2, p2, shapes.Capsule(cap.radius[::-1], cap.half_length[::-1]))
    sc = P.sphere_capsule(R1, p1, sph, R2, p2, cap)
    bs = P.brick_sphere(R1, p1, box, R2, p2, sph)
    bc = P.brick_capsule(R1, p1, box, R2, p2, cap)
    for i in range(N):
        seg1 = _segment(p1[i], R1[i], float(cap.half_length[i]))
        seg2 = _segment(p2[i], R2[i], float(cap.half_length[::-1][i]))
        d = np.min(np.linalg.norm(seg1[::8, None] - seg2[None, ::8], axis=-1))
        sampled = float(cap.radius[i] + cap.radius[::-1][i]) - d  # samples overestimate the distance
        assert -1e-12 < float(cc.depth[i, 0]) - sampled < 1e-4
        seg = _segment(p2[i], R2[i], float(cap.half_length[i]))
        d = np.min(np.linalg.norm(seg - np.asarray(p1[i]), axis=-1))
        assert abs(float(sc.depth[i, 0]) - (float(sph.radius[i] + cap.radius[i]) - d)) < 1e-6
        c_B = np.asarray(R1[i]).T @ np.asarray(p2[i] - p1[i])
        expected = float(sph.radius[i]) - _box_signed_distance(c_B[None], np.asarray(box.half_lengths[i]))[0]
        assert abs(float(bs.depth[i, 0]) - expected) < 1e-14
        seg_B = (seg - np.asarray(p1[i])) @ np.asarray(R1[i])
        expected = float(cap.radius[i]) - np.min(_box_signed_distance(seg_B, np.asarray(box.half_lengths[i])))
        assert abs(float(bc.depth[i, 0]) - expected) < 1e-6


def test_brick_corners_on_half_space(poses):
    R1, p1, R2, p2 = poses
    box = _random_shapes(7)["Brick"]
    c = P.half_space_brick(R1, p1, shapes.HalfSpace(), R2, p2, box)
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    for i in range(N):
        corners = (signs * np.asarray(box.half_lengths[i])) @ np.asarray(R2[i]).T + np.asarray(p2[i])
        np.testing.assert_allclose(c.depth[i], (corners - np.asarray(p1[i])) @ np.asarray(R1[i])[:, 0], atol=1e-15)


@pytest.mark.long  # 26 s in CI; the batch tests cover NaN isolation
def test_every_pair_finite_at_degenerate_poses():
    """Coincident frames, parallel axes, identical shapes, for every pair kind of the table (one compilation):
    finite contact, unit normals, and finite gradients of depth, point and normal with respect to both frames."""
    eye = jnp.stack([jnp.eye(3)] * N)
    p = jnp.zeros((N, 3)).at[N // 2:, 2].set(0.01)
    kinds = sorted(PAIR_TABLE)
    first, second = _random_shapes(8), _random_shapes(9)

    @jax.jit
    def run(p1, p2):
        def total(p1, p2):
            out = []
            for k in kinds:
                c = PAIR_TABLE[k].track(eye, p1, first[k[0]], eye, p2, second[k[1]])
                out.append(jnp.sum(c.depth) + jnp.sum(c.point_G) + jnp.sum(c.normal_G * 0.3) + jnp.sum(c.curvatures * 1e-3))
            return jnp.stack(out)

        values = total(p1, p2)
        grads = jax.grad(lambda a, b: jnp.sum(total(a, b)), argnums=(0, 1))(p1, p2)  # a NaN anywhere shows here
        norms = [jnp.linalg.norm(PAIR_TABLE[k].track(eye, p1, first[k[0]], eye, p2, second[k[1]]).normal_G, axis=-1)
                 for k in kinds]
        return values, grads, norms

    values, grads, norms = run(p, p)
    for i, k in enumerate(kinds):
        assert np.isfinite(values[i]), k
        np.testing.assert_allclose(norms[i], 1.0, atol=1e-12, err_msg=str(k))
    assert all(np.all(np.isfinite(g)) for g in grads)


def test_sphere_ellipsoid_gradients_against_central_differences(poses):
    """The closest-point iteration carries no gradient; its last, differentiated Newton step gives the implicit
    derivative: depth, point and normal gradients w.r.t. the sphere's center match central differences."""
    R1, p1, R2, p2 = poses
    s = _random_shapes(10)
    w = jnp.asarray(np.random.default_rng(11).normal(size=(N, 7)))

    @jax.jit
    def f(p):
        c = P.sphere_ellipsoid(R1, p, s["Sphere"], R2, p2, s["Ellipsoid"])
        return jnp.sum(w * jnp.concatenate([c.depth, c.point_G[:, 0], c.normal_G[:, 0]], -1))

    g = jax.jit(jax.grad(f))(p1)
    eps = 1e-6
    fd = np.array([[(f(p1.at[i, j].add(eps)) - f(p1.at[i, j].add(-eps))) / (2 * eps) for j in range(3)] for i in range(N)])
    np.testing.assert_allclose(g, fd, atol=1e-7)
