"""HuntCrossley contact batched: 4096 states under jit(vmap) with one compilation, and balls bouncing.

Ball: 1 kg, sphere of radius 0.1 m centered at Bo, on a Free mobilizer over the floor y = 0 (half-space with
x_H = -y), gravity -9.81 y. Independent references: a lane of the batch equals the unbatched evaluation;
with dissipation c = 0 contact is conservative (energy ``KE + m g y + 2/5 fH depth`` conserved by RK4);
(Simbody's f = fH (1 + 3/2 c v)); without gravity the rebound speed solves Hunt & Crossley's exact energy
relation for ``m xddot = -K x^(3/2) (1 + alpha xdot)``, ``alpha = 3/2 c``: ``h(v0) = h(-v_out)`` with
``h(v) = v / alpha - ln(1 + alpha v) / alpha^2`` (independent of K and m).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close

import jaxbody as jb

FLOOR = jb.Transform(jb.Rotation(np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])))
RADIUS, G = 0.1, 9.81
TRACES = {"n": 0}


def bouncing_ball(dissipation, friction=(0.0, 0.0, 0.0), gravity=True):
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    if gravity:
        jb.Force.UniformGravity(forces, matter, [0.0, -G, 0.0])
    mp = jb.MassProperties.from_central_inertia(1.0, [0.0, 0.0, 0.0], jb.Inertia(0.004))
    ball = jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="ball")
    hc = jb.HuntCrossleyForce(forces)
    hc.add_half_space(matter.Ground(), FLOOR, 1e7, dissipation, *friction)
    hc.add_sphere(ball, RADIUS, [0.0, 0.0, 0.0], 1e7, dissipation, *friction)
    return system.realize_topology()


def _udot(model, q, u):
    TRACES["n"] += 1
    return model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Acceleration).acceleration.udot


@pytest.fixture(scope="module")
def model():
    return bouncing_ball(0.5, (0.8, 0.6, 0.1))


def test_4096_states_one_compilation(model):
    rng = np.random.default_rng(3)
    n = 4096
    quat = rng.normal(size=(n, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    height = RADIUS + rng.uniform(-2e-3, 1e-3, n)  # about a third separated
    p = np.stack([rng.uniform(-1, 1, n), height, rng.uniform(-1, 1, n)], 1)
    q = jnp.asarray(np.concatenate([quat, p], 1))
    u = jnp.asarray(rng.normal(size=(n, 6)) * [2, 2, 2, 0.5, 0.5, 0.5])
    batched = jax.jit(jax.vmap(_udot, in_axes=(None, 0, 0)))
    TRACES["n"] = 0
    udot = batched(model, q, u)
    udot2 = batched(model, q[::-1] + 0.0, u[::-1] * 1.0)
    assert TRACES["n"] == 1, f"{TRACES['n']} traces for two batched calls"
    assert np.all(np.isfinite(udot))
    assert_close(udot2, udot[::-1], 0.0, "same lanes, reversed")
    single = jax.jit(_udot)
    for i in (0, 1, 1000, 4095):
        assert_close(udot[i], single(model, q[i], u[i]), 1e-12, f"lane {i}")
    in_contact = height < RADIUS
    assert np.all(np.abs(np.asarray(udot)[~in_contact, 4] + G) < 1e-12)  # separated: free fall
    grad = jax.jit(jax.vmap(jax.grad(lambda q, u: jnp.sum(_udot(model, q, u) ** 2)), in_axes=(0, 0)))(q[:256], u[:256])
    assert np.all(np.isfinite(grad))


def _drop(model, heights, speeds, dt, steps):
    """Balls released at ``heights`` above the floor with downward ``speeds``: (y, vy) every 10 steps."""
    q0 = jnp.asarray([[1.0, 0, 0, 0, 0.0, RADIUS + h, 0.0] for h in heights])
    u0 = jnp.asarray([[0.0, 0, 0, 0, -v, 0.0] for v in speeds])
    s0 = model.default_state()

    def run(q, u):
        _, traj = jb.simulate(model, s0.set_q(q).set_u(u), dt, steps, method="rk4", save_every=10)
        return traj.q[:, 5], traj.u[:, 4]

    return jax.jit(jax.vmap(run))(q0, u0)


def _hunt_crossley_rebound_speed(v0, alpha):
    """Exact rebound speed of ``m xddot = -K x^n (1 + alpha xdot)``: ``h(v0) = h(-v_out)``, h(v) = v/a - ln(1+a v)/a^2."""
    h = lambda v: v / alpha - np.log1p(alpha * v) / alpha**2
    lo, hi = 0.0, v0
    for _ in range(200):  # bisection on the restitution branch (h decreasing in v_out there)
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if h(-mid) < h(v0) else (lo, mid)
    return 0.5 * (lo + hi)


def test_bounce_restitution_matches_hunt_crossley_law():
    """No gravity: the ball hits the floor at v0 and leaves at Hunt-Crossley's exact v_out(v0, alpha = 3/2 c)."""
    c, speeds = 0.2, np.array([0.5, 2.0])
    y, vy = _drop(bouncing_ball(c, gravity=False), [1e-3, 1e-3], speeds, 1e-6, 20000)
    assert np.all(np.asarray(y)[:, -1] > RADIUS), "the balls left the floor"
    expected = np.array([_hunt_crossley_rebound_speed(v, 1.5 * c) for v in speeds])
    assert_close(np.asarray(vy)[:, -1], expected, 1e-7, "rebound speed")
    assert np.all(expected < speeds) and expected[1] / speeds[1] < expected[0] / speeds[0]


def test_conservative_bounce_conserves_energy():
    """c = 0: ``KE + m g y + 2/5 fH depth`` is constant through the bounce (RK4, dt = 2e-5 s)."""
    heights = np.array([0.02, 0.1])
    y, vy = _drop(bouncing_ball(0.0), heights, [0.0, 0.0], 2e-5, 10000)
    y, vy = np.asarray(y), np.asarray(vy)
    assert np.min(y) < RADIUS - 1e-5, "the balls reached the floor"
    depth = np.maximum(RADIUS - y, 0.0)
    k = (1e7 ** (2 / 3)) / 2  # Simbody: k_i = stiffness^(2/3), k = k1 k2 / (k1 + k2)
    pe_contact = 0.4 * (4 / 3) * k * depth * np.sqrt(RADIUS * k * depth) * depth
    energy = 0.5 * vy**2 + G * y + pe_contact
    e0 = (G * (RADIUS + heights))[:, None]
    drift = np.max(np.abs(energy - e0) / e0)
    assert drift < 1e-6, f"energy drift {drift:.2e} through a conservative bounce"
