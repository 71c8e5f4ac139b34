"""Prescribed motion and locks in jb.SemiExplicitEulerTimeStepper (Simbody's stepper leaves them as a TODO):
mobilities with known udot take no impulse (their lock or Motion supplies the reaction) and the state is
prescribed before and after every step.

Independent routes: a locked joint must behave as the model in which that joint is a weld, and a body driven
at a prescribed speed must follow it exactly while contact impulses act on its child, whose motion must equal
the model without the driven body. Each control lane (lock released, Motion disabled) must differ, so that the
checks can fail. Locked and free lanes run in one vmapped, jitted simulate."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from helpers import assert_close

import jaxbody as jb

H = 1e-3
G = 9.81


def _system():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, [0.0, -G, 0.0])
    return system, matter


def _body(mass, com):
    return jb.Body.Rigid(jb.MassProperties.from_central_inertia(mass, com, jb.Inertia(0.01)))


@functools.cache
def double_pendulum(weld_upper: bool):
    """An upper link (Pin about z at the origin, 1 kg at (0.5, 0, 0)) carrying at (1, 0, 0) a lower link (Pin, 1 kg
    at (0, -0.5, 0)) whose tip (0, -0.5, 0) meets the Ground plane y = -0.48 (PointPlaneContact, COR 0.5,
    mu 0.5). ``weld_upper``: the lower link's Pin sits directly on Ground at (1, 0, 0) (the upper link welded)."""
    system, matter = _system()
    parent, at = matter.Ground(), jb.Transform(p=[1.0, 0, 0])
    if not weld_upper:
        parent = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), _body(1.0, [0.5, 0, 0]), jb.Transform(),
                                      name="upper")
    lower = jb.MobilizedBody.Pin(parent, at, _body(1.0, [0, -0.5, 0]), jb.Transform(), name="lower")
    matter.adopt_unilateral_contact(jb.PointPlaneContact(matter.Ground(), [0, 1, 0], -0.48, lower, [0, -0.5, 0],
                                                         0.5, 0.5, 0.5, 0.0))
    stepper = jb.SemiExplicitEulerTimeStepper(system)
    stepper.set_restitution_model("newton")
    return stepper, parent


@functools.cache
def cart_and_ball(driven: bool):
    """A 2 kg cart on a Slider along x (``driven``: Motion.Steady(0.5 m/s)) carrying a 1 kg ball on a vertical
    Slider (frames turned 90 deg about z), the ball's centre meeting the Ground plane y = 0 (PointPlaneContact,
    COR 0.5, mu 0.5). ``driven=False`` without the cart: the ball's Slider sits on Ground (the reference)."""
    system, matter = _system()
    turn = jb.Transform(jb.Rotation.about_z(np.pi / 2))
    parent = matter.Ground()
    if driven:
        parent = jb.MobilizedBody.Slider(parent, jb.Transform(), _body(2.0, [0, 0, 0]), jb.Transform(), name="cart")
        parent.adopt_motion(jb.Motion.Steady(0.5))
    ball = jb.MobilizedBody.Slider(parent, turn, _body(1.0, [0, 0, 0]), turn, name="ball")
    matter.adopt_unilateral_contact(jb.PointPlaneContact(matter.Ground(), [0, 1, 0], 0.0, ball, [0, 0, 0], 0.5,
                                                         0.5, 0.5, 0.0))
    return jb.SemiExplicitEulerTimeStepper(system), parent


def _batched(stepper, states, n_steps):
    return jax.vmap(lambda s: stepper.simulate(s, H, n_steps, save_every=10))(states)


def test_locked_joint_behaves_as_a_weld():
    """The lower link released at 0.6 rad swings into the ground (impact, friction) over 0.3 s: with the upper
    Pin position-locked at 0 its (q, u) trajectory equals the welded model's to 1e-10 and the upper link stays at
    q = u = 0 exactly; in the same vmapped call the unlocked lane's upper link swings (> 1e-2 rad)."""
    stepper, upper = double_pendulum(False)
    reference, _ = double_pendulum(True)
    free = stepper.model.default_state().set_q(jnp.array([0.0, 0.6]))
    locked = upper.lock(free)
    states = jax.tree_util.tree_map(lambda a, b: jnp.stack([a, b]), locked, free)
    _, traj, reports = _batched(stepper, states, 300)
    _, ref, _ = reference.simulate(reference.model.default_state().set_q(jnp.array([0.6])), H, 300, save_every=10)
    assert float(jnp.min(ref.q)) > 0.27 and float(jnp.max(ref.u)) > 0.1, "the tip must hit the ground and rebound"
    assert_close(traj.q[0, :, 1], ref.q[:, 0], 1e-10, "lower link q (locked vs weld)")
    assert_close(traj.u[0, :, 1], ref.u[:, 0], 1e-10, "lower link u (locked vs weld)")
    assert_close(traj.q[0, :, 0], np.zeros(30), 0, "locked q")
    assert_close(traj.u[0, :, 0], np.zeros(30), 0, "locked u")
    assert float(jnp.max(jnp.abs(traj.q[1, :, 0]))) > 1e-2
    assert bool(jnp.all(reports.converged))


def test_prescribed_speed_holds_while_contact_acts():
    """The ball dropped from 5 cm bounces on the ground while the cart drives it sideways at 0.5 m/s (sliding
    friction mu N acts on the cart's row): the cart's u stays 0.5 exactly and q = 0.5 t (1e-12), and the ball's
    height and speed equal the cartless reference's to 1e-10; with the Motion disabled (same call) friction
    slows the cart."""
    stepper, cart = cart_and_ball(True)
    reference, _ = cart_and_ball(False)
    driven = stepper.model.default_state().set_q(jnp.array([0.0, 0.05]))
    coasting = cart.disable_motion(driven.set_u(jnp.array([0.5, 0.0])))
    states = jax.tree_util.tree_map(lambda a, b: jnp.stack([a, b]), driven, coasting)
    _, traj, _ = _batched(stepper, states, 200)
    _, ref, _ = reference.simulate(reference.model.default_state().set_q(jnp.array([0.05])), H, 200, save_every=10)
    assert float(jnp.max(ref.u)) > 0.1, "the ball must bounce"
    times = H * 10 * np.arange(1, 21)
    assert_close(traj.u[0, :, 0], np.full(20, 0.5), 0, "cart speed")
    assert_close(traj.q[0, :, 0], 0.5 * times, 1e-12, "cart position")
    assert_close(traj.q[0, :, 1], ref.q[:, 0], 1e-10, "ball height (driven vs reference)")
    assert_close(traj.u[0, :, 1], ref.u[:, 0], 1e-10, "ball speed (driven vs reference)")
    assert float(traj.u[1, -1, 0]) < 0.45
