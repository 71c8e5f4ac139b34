"""Gradients of forward dynamics through contact equal central differences, before, at and after first contact.

Model: a 2 kg ball (sphere radius 0.1 m at station s of the ball) on a Free mobilizer over a floor y = 0
(half-space frame with x_H = -y_G, an exact rotation matrix, so a purely vertical velocity has exactly zero
slip), gravity -9.81 y; one contact element per model. The sphere's lowest point is placed ``gap`` above
the floor (for the exponential spring, whose force is smooth everywhere, the station itself): 1e-4 (just before first contact), 0 (at it), -1e-4 (just after; penetrating). The objective is
``w . udot`` (fixed random w) and its gradient with respect to q, u and every contact parameter (relative
directions) is compared with central differences along random directions. HuntCrossley's Hertz force
``~ depth^(3/2)`` has a zero derivative at depth 0 that central differences reach only as ``sqrt(eps)``: at
exact contact it is checked as AD = 0 in the approach direction plus that shrinking convergence.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close, central_difference

import jaxbody as jb

RADIUS, STATION = 0.1, np.array([0.02, -0.01, 0.03])
FLOOR = jb.Transform(jb.Rotation(np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])))  # x_H = -y
PLANE = jb.Transform(jb.Rotation(np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])))  # z_P = +y
ANGLE = jb.Rotation.from_body_fixed_xyz(np.array([0.3, -0.2, 0.5]))


def _ball(kind):
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    mp = jb.MassProperties.from_central_inertia(2.0, [0.01, 0.0, -0.02], jb.Inertia(0.012, 0.015, 0.011))
    ball = jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="ball")
    if kind == "hunt_crossley":
        hc = jb.HuntCrossleyForce(forces, transition_velocity=0.05)
        hc.add_half_space(matter.Ground(), FLOOR, 2e6, 0.8, 0.9, 0.6, 0.2)
        hc.add_sphere(ball, RADIUS, STATION, 1e6, 1.5, 0.7, 0.5, 0.1)
    elif kind == "smooth":
        sm = jb.SmoothSphereHalfSpaceForce(forces, 1e6, 1.2, 0.8, 0.6, 0.3, 0.05)
        sm.add_contact(ball, STATION, RADIUS, matter.Ground(), FLOOR)
    else:
        jb.ExponentialSpringForce(forces, PLANE, ball, STATION)
    return system.realize_topology()


def _state(model, gap, v, w):
    """q, u with the sphere's lowest point ``gap`` above the floor (for the exponential spring: the station)."""
    R = np.asarray(ANGLE.R)
    lowest = R @ STATION - ([0.0, 0.0, 0.0] if model.nz else [0.0, RADIUS, 0.0])
    p = np.array([0.05, gap - lowest[1], -0.1])
    q = jnp.concatenate([jnp.asarray(ANGLE.to_quaternion()), jnp.asarray(p)])
    return q, jnp.asarray(np.concatenate([w, v]))


def _objective(model, q, u, z, weights):
    s = model.default_state().set_q(q).set_u(u).set_z(z)
    return jnp.dot(weights, model.realize(s, jb.Stage.Acceleration).acceleration.udot)


_value_and_grad = jax.jit(jax.value_and_grad(_objective, argnums=(0, 1, 2, 3)))
_value = jax.jit(_objective)

CASES = {  # name: (gap, v, w)
    "before": (1e-4, [0.3, -0.4, 0.1], [0.5, -0.2, 0.3]),
    "at": (0.0, [0.3, -0.4, 0.1], [0.5, -0.2, 0.3]),
    "after": (-1e-4, [0.3, -0.4, 0.1], [0.5, -0.2, 0.3]),
    "after_sticking": (-2e-4, [0.004, -0.1, -0.003], [0.01, 0.02, -0.03]),
    "after_zero_slip": (-2e-4, [0.0, -0.2, 0.0], [0.0, 0.0, 0.0]),
}


# The exponential spring is long for the CI budget (~25 s, 2026-11-29); its vmapped gradient vs central differences
# stays in CI (tests/contact/test_compliant_smooth_models.py)
@pytest.fixture(scope="module", params=["hunt_crossley", "smooth", pytest.param("exponential", marks=pytest.mark.long)])
def contact_model(request):
    return request.param, _ball(request.param)


def _z(model, kind, q):
    z = model.default_state().z
    if kind == "exponential":  # anchor ~1 mm from the station's projection (P: x_P = x_G, y_P = -z_G), K = 0.3
        p_G = np.asarray(q[4:]) + np.asarray(ANGLE.R) @ STATION
        z = jnp.asarray([p_G[0] + 0.001, -p_G[2] - 0.0005, 0.3])
    return z


@pytest.mark.parametrize("case", list(CASES))
def test_gradient_matches_central_differences(contact_model, case):
    kind, model = contact_model
    gap, v, w = CASES[case]
    q, u = _state(model, gap, np.asarray(v), np.asarray(w))
    z = _z(model, kind, q)
    rng = np.random.default_rng(7)
    weights = jnp.asarray(rng.normal(size=model.get_num_u()))
    _, (g_model, g_q, g_u, g_z) = _value_and_grad(model, q, u, z, weights)
    leaves = [np.asarray(x) for x in jax.tree_util.tree_leaves((g_model, g_q, g_u, g_z))]
    assert all(np.all(np.isfinite(x)) for x in leaves), f"{kind} {case}: non-finite gradient"
    element = model.forces[-1]
    exact_contact_hc = kind == "hunt_crossley" and case == "at"

    def along(name, ad, f, x, d, eps):
        fd = central_difference(f, x, eps, d)
        directional = float(sum(np.vdot(np.asarray(a), np.asarray(b)) for a, b in zip(jax.tree_util.tree_leaves(ad), jax.tree_util.tree_leaves(d))))
        if exact_contact_hc and name in ("q", "sphere_center", "radius", "p_BH"):  # directions that change depth
            # d/dq of depth^(3/2) is 0 at depth 0; central differences go to it like sqrt(eps)
            fd_small = central_difference(f, x, eps / 100, d)
            assert abs(fd_small) < abs(fd) / 5 + 1e-9, f"{kind} {case} {name}: FD does not converge to AD"
            return
        assert_close(directional, fd, 1e-6, f"{kind} {case}: d/d{name}")

    dq = jnp.asarray(rng.normal(size=q.shape))
    along("q", g_q, lambda x: _value(model, x, u, z, weights), q, dq, 1e-7)
    du = jnp.asarray(rng.normal(size=u.shape))
    along("u", g_u, lambda x: _value(model, q, x, z, weights), u, du, 1e-6)
    if z.size:
        dz = jnp.asarray(rng.normal(size=z.shape))
        along("z", g_z, lambda x: _value(model, q, u, x, weights), z, dz, 1e-8)
    g_element = g_model.forces[-1]
    for name in [f.name for f in element.__dataclass_fields__.values()]:
        leaf = getattr(element, name)
        if not eqx.is_inexact_array(leaf) or name in ("R_BH", "R_GP", "initial_z"):
            continue
        d = jnp.asarray(rng.normal(size=np.shape(leaf))) * jnp.asarray(leaf)  # relative direction

        def f(x, name=name):
            return _value(eqx.tree_at(lambda m: getattr(m.forces[-1], name), model, x), q, u, z, weights)

        along(name, getattr(g_element, name), f, jnp.asarray(leaf), d, 1e-6)
