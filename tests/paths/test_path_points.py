"""Path points (fixed, conditional, moving) on a 30-body tree with every mobilizer type (quaternion balls and
free joints, so N != I): lengthening speed against a central difference of the length along qdot, moment arms
``-dL/du`` against autodiff through the kinematics and central differences, the tension forces' power, jit,
vmap over 1024 states with one Model, and the gradient with respect to the path's own numbers."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody._dynamics import jacobians
from jaxbody._dynamics.paths.geometry_path import GeometryPath
from jaxbody._dynamics.paths.path_points import PathPoints
from systems import mixed_tree_30, random_qu


def _path(model):
    """Five points over bodies 0, 3, 7, 12, 30: point 2 conditional on a pin's angle, point 3 moving with it."""
    topo = model.topology
    pin = next(b for b in range(1, topo.nbodies) if type(topo.mobilizers[b]).__name__ == "Pin")
    c = int(topo.q_start[pin])
    rng = np.random.default_rng(0)
    base = PathPoints.fixed([0, 3, 7, 12, 30], 0.1 * rng.normal(size=(5, 3)))
    moving = ((), (), (), (lambda x: 0.1 * jnp.sin(x[0]), None, lambda x: 0.05 * x[0] ** 2), ())
    points = PathPoints(base.bodies, base.locations, base.R_BF, base.p_BF,
                        condition_q=(-1, -1, c, -1, -1), condition_range=jnp.array([[0, 0], [0, 0], [-0.5, 0.5], [0, 0], [0, 0.0]]),
                        moving=moving, moving_q=((-1,) * 3, (-1,) * 3, (-1,) * 3, (c, -1, c), (-1,) * 3),
                        moving_range=jnp.zeros((5, 3, 2)).at[3, :, 0].set(-3.0).at[3, :, 1].set(3.0))
    return GeometryPath(points), c


@pytest.fixture(scope="module")
def setup():
    model, _ = mixed_tree_30()
    path, c = _path(model)

    @jax.jit
    def quantities(path, q, u):
        s = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Velocity)
        F, f = path.calc_tension_forces(model, s, 3.0)
        return (path.calc_length(model, s), path.calc_lengthening_speed(model, s), path.calc_moment_arms(model, s),
                jacobians.multiply_by_system_jacobian_transpose(model, s.position, F) + f)

    @jax.jit
    def length_of_q(path, q):
        return path.calc_length(model, model.realize(model.default_state().set_q(q), jb.Stage.Position))

    return model, path, c, quantities, length_of_q


def _state_with(model, c, angle, seed):
    q, u = random_qu(model, seed)
    q[c] = angle
    return jnp.asarray(q), jnp.asarray(u)


@pytest.mark.parametrize("angle", [0.2, 1.2])  # the conditional point active, then inactive
def test_speed_and_moment_arms_against_differences(setup, angle):
    model, path, c, quantities, length_of_q = setup
    q, u = _state_with(model, c, angle, 3)
    L, speed, arms, generalized = quantities(path, q, u)
    s = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Velocity)
    qdot = s.velocity.qdot
    h = 1e-6
    fd = (length_of_q(path, q + h * qdot) - length_of_q(path, q - h * qdot)) / (2 * h)
    assert abs(speed - fd) < 1e-8 * max(1.0, abs(fd))
    assert abs(jnp.dot(arms, u) + speed) < 1e-12 * max(1.0, abs(speed))  # -dL/du . u = -dL/dt
    np.testing.assert_allclose(generalized, 3.0 * arms, rtol=0, atol=1e-12)  # power of the tension forces
    # -dL/dq by autodiff through the kinematics equals N^T-mapped moment arms: dL/dq . qdot = -arms . u
    dLdq = jax.grad(length_of_q, argnums=1)(path, q)
    assert abs(jnp.dot(dLdq, qdot) + jnp.dot(arms, u)) < 1e-12
    # the pin's moment arm against a central difference in its angle (its q is its u)
    e = jnp.zeros_like(q).at[c].set(h)
    fd_c = (length_of_q(path, q + e) - length_of_q(path, q - e)) / (2 * h)
    u_c = model.topology.u_start[int(np.searchsorted(model.topology.q_start, c, side="right") - 1)]
    assert abs(arms[u_c] + fd_c) < 1e-8


def test_conditional_point_switches(setup):
    model, path, c, quantities, _ = setup
    q, u = _state_with(model, c, 0.2, 4)
    L_in = quantities(path, q, u)[0]
    drop = GeometryPath(PathPoints(path.points.bodies, path.points.locations, path.points.R_BF, path.points.p_BF,
                                   (-1,) * 5, path.points.condition_range, path.points.moving, path.points.moving_q,
                                   path.points.moving_range))
    assert abs(L_in - quantities(drop, q, u)[0]) < 1e-14  # active inside the range: as if unconditional
    q_out = q.at[c].set(0.5 + 2e-5)
    s = model.realize(model.default_state().set_q(q_out), jb.Stage.Position)
    P = path.points.calc_locations_in_ground(s.position.R_GB, s.position.p_GB, q_out)
    skip = sum(float(jnp.linalg.norm(P[i + 1] - P[i])) for i in (0, 3)) + float(jnp.linalg.norm(P[3] - P[1]))
    assert abs(quantities(path, q_out, u)[0] - skip) < 1e-13  # beyond range + 1e-5: the point is skipped
    assert abs(quantities(path, q.at[c].set(0.5 + 0.5e-5), u)[0]
               - quantities(drop, q.at[c].set(0.5 + 0.5e-5), u)[0]) < 1e-14  # within OpenSim's 1e-5 tolerance


def test_vmap_1024_states_one_model(setup):
    model, path, c, quantities, _ = setup
    q, u = random_qu(model, 5, (1024,))
    L, speed, arms, _ = jax.vmap(quantities, in_axes=(None, 0, 0))(path, jnp.asarray(q), jnp.asarray(u))
    assert L.shape == (1024,) and arms.shape == (1024, model.topology.nu)
    for i in (0, 511, 1023):
        one = quantities(path, jnp.asarray(q[i]), jnp.asarray(u[i]))
        np.testing.assert_allclose(L[i], one[0], rtol=1e-13)
        np.testing.assert_allclose(speed[i], one[1], rtol=1e-12, atol=1e-13)


def test_gradient_with_respect_to_path_numbers(setup):
    model, path, c, _, length_of_q = setup
    q, _ = _state_with(model, c, 0.2, 6)
    g = jax.grad(lambda p: length_of_q(p, q))(path)
    h = 1e-6
    for i, k in ((0, 0), (2, 1), (4, 2)):
        bump = lambda d: GeometryPath(PathPoints(path.points.bodies, path.points.locations.at[i, k].add(d),
                                                 *[getattr(path.points, f) for f in ("R_BF", "p_BF", "condition_q",
                                                   "condition_range", "moving", "moving_q", "moving_range")]))
        fd = (length_of_q(bump(h), q) - length_of_q(bump(-h), q)) / (2 * h)
        assert abs(g.points.locations[i, k] - fd) < 1e-8
