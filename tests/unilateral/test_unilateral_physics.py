"""Unilateral contact under jb.SemiExplicitEulerTimeStepper against physics with known answers.

References (each test's docstring names its own): Newton's and Poisson's impact laws for one contact
(rebound speed e v); Coulomb friction on an incline (stick iff tan(theta) <= mu, else a = g (sin - mu cos));
momentum conservation with Newton restitution for a head-on sphere collision; Simbody's stepper behaviour
(SemiExplicitEulerTimeStepper.cpp: proximal at perr <= consTol, capture velocity 2 consTol, projection).
Step h = 1e-3 s throughout; semi-explicit Euler's error is O(h), so rebound checks allow 2 %.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from contact_systems import (
    BOX_HALF,
    BOX_MASS,
    G,
    ball_on_plane,
    block_on_incline,
    box_on_four_points,
    crossed_edges,
    newtons_cradle,
    pendulum_with_stops,
    rope_pendulum,
    sphere_on_ground,
    two_spheres,
)
from helpers import assert_close

H = 1e-3


@pytest.mark.parametrize("restitution", ["newton", "poisson"])
def test_ball_bounces_to_e_squared_height(restitution):
    """Dropped from 1 m onto a PointPlaneContact with COR e = 0.5, the ball rebounds to e^2 * 1 m = 0.25 m
    (free fall: apex = v^2 / 2g; the impact law sets v+ = e v-; for one contact Newton's and Poisson's laws
    agree). Tolerance 2 % (the impact is detected up to one step late, an O(h) error); measured 0.6 %."""
    stepper, _ = ball_on_plane(restitution, 0.5)
    state = stepper.model.default_state().set_q(jnp.array([0.0, 1.0, 0.0]))
    _, traj, reports = stepper.simulate(state, H, 700)
    y = np.asarray(traj.q[:, 1])
    impacts = np.nonzero(np.asarray(reports.num_impact_rounds))[0]
    assert impacts[0] == pytest.approx(np.sqrt(2 / G) / H, abs=2)  # free fall time 0.4515 s
    expected_rounds = 1 if restitution == "newton" else 2  # Poisson: compression, then expansion
    assert np.asarray(reports.num_impact_rounds)[impacts[0]] == expected_rounds
    apex = y[impacts[0]:].max()
    assert apex == pytest.approx(0.25, rel=0.02)
    assert y.min() > -1e-3  # never penetrates deeper than the constraint tolerance
    assert bool(np.all(np.asarray(reports.converged)))


@pytest.mark.parametrize("speed, captured", [(1e-3, True), (0.1, False)])
def test_low_speed_impacts_are_captured(speed, captured):
    """Simbody's calcEffectiveCOR: an impact at or below the capture speed (2 consTol = 2 mm/s) gets COR 0. A ball
    0.5 mm above the plane (proximal: perr <= consTol) moving down at 1 mm/s stays on the plane (upward speed
    below the PGS tolerance 1e-6 m/s); at 0.1 m/s it rebounds with e v - g h = 0.04019 m/s (0.1 %)."""
    stepper, _ = ball_on_plane("newton", 0.5)
    state = stepper.model.default_state().set_q(jnp.array([0.0, 5e-4, 0.0])).set_u(jnp.array([0.0, -speed, 0.0]))
    final, _, reports = stepper.simulate(state, H, 1)
    v = float(final.u[1])
    assert bool(reports.impacters[0, 0])
    if captured:
        assert abs(v) < 1e-6
    else:
        assert v == pytest.approx(0.5 * speed - G * H, rel=1e-3)


@pytest.mark.parametrize("theta, mu, sticks", [(np.radians(20), 0.5, True), (np.radians(30), 0.3, False)])
def test_block_on_incline_sticks_or_slides(theta, mu, sticks):
    """Coulomb friction: a block released at rest on an incline sticks when tan(theta) <= mu (tan 20 deg = 0.36
    < 0.5) and otherwise slides down with a = g (sin theta - mu cos theta) (30 deg, mu 0.3: 2.357 m/s^2). The
    velocity after 0.5 s is checked to 1e-6 relative (semi-explicit Euler is exact for constant acceleration)."""
    stepper, _ = block_on_incline(float(theta), mu)
    final, _, reports = stepper.simulate(stepper.model.default_state(), H, 500, save_every=500)
    upslope = jnp.array([np.cos(theta), np.sin(theta), 0.0])
    normal = jnp.array([-np.sin(theta), np.cos(theta), 0.0])
    v = float(final.u @ upslope)
    if sticks:
        assert abs(v) < 1e-6 and float(jnp.linalg.norm(final.q)) < 1e-6
    else:
        assert v == pytest.approx(-G * (np.sin(theta) - mu * np.cos(theta)) * 0.5, rel=1e-6)
    assert abs(float(final.q @ normal)) < 1e-9  # stays on the plane
    assert bool(np.all(np.asarray(reports.converged)))


@pytest.mark.parametrize("restitution", ["poisson", "newton"])
def test_pendulum_rebounds_from_hard_stop(restitution):
    """A pendulum released at q = -1 rad swings into HardStopUpper(0.3 rad, COR 0.6): the speed after the
    impact is 0.6 times the speed before (impact law for one coordinate; both laws agree), and q never passes
    the stop by more than consTol (1e-3). Tolerance: 1 % of the ratio (the impulse acts one step late)."""
    stepper, _ = pendulum_with_stops(0.3, -2.0, 0.6, restitution)
    state = stepper.model.default_state().set_q(jnp.array([-1.0]))
    _, traj, reports = stepper.simulate(state, H, 700)
    q, u = np.asarray(traj.q[:, 0]), np.asarray(traj.u[:, 0])
    k = np.nonzero(np.asarray(reports.num_impact_rounds))[0][0]
    # speed just before the impact step (one gravity step earlier) and just after it
    ratio = -u[k] / u[k - 1]
    assert ratio == pytest.approx(0.6, rel=0.01)
    assert q.max() < 0.3 + 1e-3
    assert u[k + 50] < 0  # swinging back


def test_pendulum_between_stops_stays_inside():
    """With HardStopUpper(0.3) and HardStopLower(-0.3), COR 0.5, a pendulum released at 0.29 rad with
    2 rad/s stays in [-0.3 - consTol, 0.3 + consTol] for 1.5 s and loses energy at each impact."""
    stepper, _ = pendulum_with_stops(0.3, -0.3, 0.5, "poisson")
    state = stepper.model.default_state().set_q(jnp.array([0.29])).set_u(jnp.array([2.0]))
    _, traj, reports = stepper.simulate(state, H, 1500)
    q = np.asarray(traj.q[:, 0])
    assert q.max() < 0.301 and q.min() > -0.301
    impacts = np.nonzero(np.asarray(reports.num_impact_rounds))[0]
    assert len(impacts) >= 3 and np.any(q < -0.29)  # hit both stops


def test_rope_never_exceeds_its_length():
    """A bob released at (0.5, 0, 0), 0.5 m from the anchor of a 1 m Rope (COR 0), falls until the rope goes
    taut, then swings on it. Simbody's stepper acts on a contact once it is proximal (perr <= consTol = 1 mm), so
    the rope can be overstretched only in the step that makes it proximal, by at most that step's travel
    |v| h; the next step's position projection removes that, and from then on |p| <= L + 1e-5 while the rope
    stays taut (|p| >= L - 1e-5: it did act)."""
    stepper, _ = rope_pendulum(1.0)
    state = stepper.model.default_state().set_q(jnp.array([0.5, 0.0, 0.0]))
    _, traj, reports = stepper.simulate(state, H, 1000)
    r = np.linalg.norm(np.asarray(traj.q), axis=1)
    first = int(np.argmax(r > 1.0 - 1e-3))  # the step after which the rope is proximal
    speed = float(np.linalg.norm(traj.u[first - 1]))
    assert r[first] <= 1.0 + speed * H
    assert r[first + 1:].max() <= 1.0 + 1e-5
    assert r[first + 1:].min() >= 1.0 - 1e-5
    assert np.any(np.asarray(reports.impacters))


def test_box_on_four_redundant_contacts_rests():
    """A box resting on four PointPlaneContacts (3 independent constraints, 4 contacts: redundant) stays at rest
    for 1 s with the PGS tolerance 1e-12 m/s: drift of every coordinate < 1e-9 m, speeds < 1e-9, normal impulses finite and nonnegative with
    their sum m g h per step (vertical momentum balance; PGS tolerance 1e-6 m/s)."""
    stepper, _ = box_on_four_points()
    q0 = jnp.array([1.0, 0, 0, 0, 0.0, BOX_HALF[1], 0.0])
    state = stepper.model.default_state().set_q(q0)
    _, traj, reports = stepper.simulate(state, H, 1000, save_every=10)
    assert float(jnp.max(jnp.abs(traj.q - q0))) < 1e-9
    assert float(jnp.max(jnp.abs(traj.u))) < 1e-9
    normal = np.asarray(reports.impulse[..., 0])
    assert np.all(np.isfinite(normal)) and np.all(normal >= 0)
    assert_close(normal.sum(-1), np.full(len(normal), BOX_MASS * G * H), 1e-8, "sum of normal impulses")
    assert bool(np.all(np.asarray(reports.converged)))


@pytest.mark.parametrize("restitution", ["newton", "poisson"])
def test_head_on_sphere_collision(restitution):
    """Two equal 1 kg spheres (SphereSphereContact, COR 0.8), sphere 1 at 1 m/s toward sphere 2 at rest: after
    impact v1 = (1 - e)/2 = 0.1 and v2 = (1 + e)/2 = 0.9 m/s (momentum conservation + restitution), exact up
    to the PGS tolerance since no force acts; the SpherePlaneContact below stays distal (never proximal)."""
    stepper, _ = two_spheres(0.8, restitution)
    state = stepper.model.default_state().set_q(jnp.array([-0.25, 0, 0, 0, 0, 0])).set_u(jnp.array([1.0, 0, 0, 0, 0, 0]))
    final, _, reports = stepper.simulate(state, H, 100, save_every=100)
    assert_close(final.u[jnp.array([0, 3])], jnp.array([0.1, 0.9]), 1e-6, "velocities after impact")
    assert float(final.q[3] - final.q[0]) > 0.2  # separated
    assert not bool(np.any(np.asarray(reports.proximal)[:, 1]))


def test_crossed_edges_bounce():
    """A bar whose edge (along z) is dropped from 0.2 m onto a crossed Ground edge (along x), EdgeEdgeContact with
    Newton COR 0.5: it rebounds to e^2 0.2 m = 0.05 m (2 %, as for the ball) and never passes through."""
    stepper, _ = crossed_edges(0.5)
    state = stepper.model.default_state().set_q(jnp.array([0.0, 0.2, 0.0]))
    _, traj, reports = stepper.simulate(state, H, 350)
    y = np.asarray(traj.q[:, 1])
    k = np.nonzero(np.asarray(reports.num_impact_rounds))[0][0]
    assert y[k:].max() == pytest.approx(0.05, rel=0.02)
    assert y.min() > -1e-3


def test_sliding_sphere_starts_rolling_at_five_sevenths():
    """A solid sphere (I = 2/5 m r^2) launched sliding at v0 = 1 m/s without spin on a SpherePlaneContact with
    mu = 0.4: friction decelerates it by mu g (to the PGS tolerance 1e-6 m/s) and spins it up until it rolls at
    v = 5/7 v0 with w = -v / r (rigid-body closed form; reached after 2 v0 / (7 mu g) = 0.073 s), then rolls on
    (to the PGS tolerance)."""
    stepper, _ = sphere_on_ground(0.4)
    q0 = jnp.array([1.0, 0, 0, 0, 0, 0.1, 0])
    state = stepper.model.default_state().set_q(q0).set_u(jnp.array([0, 0, 0, 1.0, 0, 0]))
    final, traj, reports = stepper.simulate(state, H, 150)
    v = np.asarray(traj.u[:, 3])
    assert_close(v[:50], 1.0 - 0.4 * G * H * np.arange(1, 51), 1e-6, "sliding deceleration")
    assert_close(final.u[jnp.array([2, 3])], jnp.array([-50 / 7, 5 / 7]), 1e-6, "rolling w_z, v_x")
    assert abs(float(final.q[5]) - 0.1) < 1e-9  # stays on the plane
    assert bool(np.all(np.asarray(reports.converged)))


@pytest.mark.parametrize("induced, restitution, expected, rounds", [
    ("simultaneous", "newton", (-1 / 3, 2 / 3, 2 / 3), 1),
    pytest.param("sequential", "newton", (0.0, 0.0, 1.0), 2, marks=pytest.mark.long),  # CI budget: one of each
    pytest.param("mixed", "newton", (0.0, 0.0, 1.0), 2, marks=pytest.mark.long),  # induced-impact mode runs in CI
    ("sequential", "poisson", (0.0, 0.0, 1.0), 3),
])
def test_newtons_cradle(induced, restitution, expected, rounds):
    """Three touching equal spheres (COR 1), the first arriving at 1 m/s. Sequential (and Mixed) impacts
    resolve the contacts one after the other: ball 1 stops, ball 2 passes its momentum on, ball 3 leaves at
    1 m/s (the textbook cradle, Simbody's motivation for induced impacts). The Simultaneous model solves both
    contacts together: Newton's law on contact 1-2 (v2 - v1 = 1), contact 2-3 closed (v3 = v2) and momentum 1
    give (-1/3, 2/3, 2/3). Exact up to the PGS tolerance (1e-6). Rounds: Newton 1-2 then 2-3; Poisson
    compression 1-2, then its expansion with compression 2-3, then the expansion of 2-3."""
    stepper, _ = newtons_cradle(induced, restitution)
    q0 = jnp.array([-0.2, 0, 0, 0.0, 0, 0, 0.2, 0, 0])
    u0 = jnp.zeros(9).at[0].set(1.0)
    final, report = stepper.step(stepper.model.default_state().set_q(q0).set_u(u0), H)
    assert_close(final.u[jnp.array([0, 3, 6])], jnp.array(expected), 1e-6, f"{induced} {restitution}")
    assert int(report.num_impact_rounds) == rounds
