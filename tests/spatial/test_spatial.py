"""Rotation, quaternion, transform and spatial-vector algebra in Simbody's conventions."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody._math import spatial

rng = np.random.default_rng(0)


def random_rotations(n):
    q = rng.normal(size=(n, 4))
    return np.asarray(spatial.rotation_from_quaternion(jnp.asarray(q)))


def test_axis_rotations_follow_simbody():
    a = 0.3
    c, s = np.cos(a), np.sin(a)
    np.testing.assert_allclose(spatial.rot_x(a), [[1, 0, 0], [0, c, -s], [0, s, c]], atol=1e-16)
    np.testing.assert_allclose(spatial.rot_y(a), [[c, 0, s], [0, 1, 0], [-s, 0, c]], atol=1e-16)
    np.testing.assert_allclose(spatial.rot_z(a), [[c, -s, 0], [s, c, 0], [0, 0, 1]], atol=1e-16)


def test_body_fixed_xyz_round_trip_and_gimbal_lock():
    angles = rng.uniform(-1.4, 1.4, size=(50, 3))
    R = spatial.rotation_from_body_fixed_xyz(jnp.asarray(angles))
    np.testing.assert_allclose(spatial.body_fixed_xyz_from_rotation(R), angles, atol=1e-12)
    # At gimbal lock a2 = 0 and a0 absorbs the combined rotation.
    locked = spatial.rotation_from_body_fixed_xyz(jnp.array([0.2, np.pi / 2, 0.3]))
    a = spatial.body_fixed_xyz_from_rotation(locked)
    assert float(a[2]) == 0.0
    np.testing.assert_allclose(spatial.rotation_from_body_fixed_xyz(a), locked, atol=1e-12)


def test_quaternion_round_trip_is_canonical_in_every_branch():
    R = random_rotations(200)
    # Force each Spurrier branch: trace largest, and x, y, z diagonal largest (rotations by ~pi).
    R = np.concatenate([R, [np.diag([1.0, -1, -1]), np.diag([-1.0, 1, -1]), np.diag([-1.0, -1, 1])]])
    q = np.asarray(spatial.quaternion_from_rotation(jnp.asarray(R)))
    assert np.all(q[:, 0] >= 0)
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-15)
    np.testing.assert_allclose(spatial.rotation_from_quaternion(jnp.asarray(q)), R, atol=1e-14)
    # Unnormalized quaternions give the same rotation.
    np.testing.assert_allclose(spatial.rotation_from_quaternion(jnp.asarray(3 * q)), R, atol=1e-14)


def test_angle_axis_and_perp():
    R = jb.Rotation.about_axis(0.7, [0.0, 0.0, 2.0]).R
    np.testing.assert_allclose(R, spatial.rot_z(0.7), atol=1e-15)
    n = jnp.array([0.3, -0.1, 0.9])
    p = spatial.perp(n)
    np.testing.assert_allclose(p, np.cross(n, [0, 1, 0]) / np.linalg.norm(np.cross(n, [0, 1, 0])))
    assert np.allclose(spatial.perp(jnp.array([1.0, 1.0, 1.0])), np.cross([1, 1, 1], [1, 0, 0]) / np.sqrt(2))


def test_transforms_compose_and_invert():
    X1 = jb.Transform(jb.Rotation(random_rotations(1)[0]), [1.0, 2.0, 3.0])
    X2 = jb.Transform(jb.Rotation.about_x(0.4), [0.5, -1.0, 0.2])
    station = jnp.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose((X1 * X2) * station, X1 * (X2 * station), atol=1e-15)
    ident = X1 * X1.invert()
    np.testing.assert_allclose(ident.R, np.eye(3), atol=1e-15)
    np.testing.assert_allclose(ident.p, 0.0, atol=1e-15)
    assert np.allclose(jb.Transform([1.0, 2.0, 3.0]).p, [1, 2, 3])


def test_spatial_shifts_are_adjoint():
    A, F = jnp.asarray(rng.normal(size=(2, 3))), jnp.asarray(rng.normal(size=(2, 3)))
    l = jnp.asarray(rng.normal(size=3))
    lhs = jnp.sum(spatial.shift_motion(A, l) * F)
    rhs = jnp.sum(A * spatial.shift_force(F, l))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-14)
    Phi = spatial.shift_matrix(l)
    np.testing.assert_allclose(Phi @ spatial.flat(F), spatial.flat(spatial.shift_force(F, l)), atol=1e-15)
    np.testing.assert_allclose(Phi.T @ spatial.flat(A), spatial.flat(spatial.shift_motion(A, l)), atol=1e-15)


def test_spatial_inertia_matches_its_definition():
    m, c = 2.5, jnp.array([0.1, -0.2, 0.3])
    I = jnp.asarray(np.diag([1.0, 2.0, 2.5]))
    w, v = jnp.asarray(rng.normal(size=3)), jnp.asarray(rng.normal(size=3))
    Mk = spatial.spatial_inertia_matrix(jnp.asarray(m), c, I)
    out = Mk @ jnp.concatenate([w, v])
    np.testing.assert_allclose(out[:3], I @ w + m * np.cross(c, v), atol=1e-14)
    np.testing.assert_allclose(out[3:], m * v - m * np.cross(c, w), atol=1e-14)


@pytest.mark.parametrize(
    "fn,x",
    [
        (lambda v: spatial.safe_norm(v), jnp.zeros(3)),
        (lambda a: jnp.sum(jb.Rotation.about_axis(a[0], jnp.array([0.0, 0, 1])).R), jnp.zeros(1)),
        (lambda q: jnp.sum(spatial.rotation_from_quaternion(q)), jnp.array([1.0, 0, 0, 0])),
        (lambda a: jnp.sum(spatial.rotation_from_body_fixed_xyz(a)), jnp.zeros(3)),
        (lambda R: jnp.sum(spatial.quaternion_from_rotation(R.reshape(3, 3))), jnp.eye(3).reshape(9)),
        (lambda R: jnp.sum(spatial.body_fixed_xyz_from_rotation(R.reshape(3, 3))), jnp.eye(3).reshape(9)),
    ],
)
def test_gradients_are_finite_at_identity_and_zero(fn, x):
    g = jax.grad(fn)(x)
    assert np.all(np.isfinite(np.asarray(g)))
