"""Per-State Motion enabling (Simbody's Motion::disable/enable/isDisabled/setDisabledByDefault, catalogue 3.1).

Reference: Simbody's documentation of Motion::disable ("effectively removing it from the mobilizer ... allowing the
mobilizer to move freely unless locked"), checked by an independent route: forward dynamics of a State whose Motion
is disabled equals that of the same system built without the Motion; with the Motion enabled the driven udot is the
Sinusoid's closed-form acceleration -A w^2 sin(w t + phi).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from helpers import assert_close, assert_grad_matches_fd

A, W, PHI = 0.4, 2.0, 0.3


def _system(with_motion=True, disabled_by_default=False):
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, [0.0, -9.81, 0.0])
    mp = jb.MassProperties(1.3, [0.0, -0.4, 0.0], jb.Inertia(0.4, 0.1, 0.45))
    a = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="a")
    b = jb.MobilizedBody.Pin(a, jb.Transform([0.0, -0.8, 0.0]), jb.Body.Rigid(mp), jb.Transform(), name="b")
    if with_motion:
        a.adopt_motion(jb.Motion.Sinusoid(jb.Motion.Position, A, W, PHI))
        a.set_motion_disabled_by_default(disabled_by_default)
    return system.realize_topology(), a, b


@pytest.fixture(scope="module")
def models():
    return _system(), _system(with_motion=False)


def _state(model, t=0.7):
    return model.default_state().set_time(t).set_q(jnp.array([0.5, -0.3])).set_u(jnp.array([0.8, 1.1]))


def test_disabled_motion_frees_the_mobilizer(models):
    (model, a, _), (free_model, *_rest) = models
    on = _state(model)
    off = a.disable_motion(on)
    assert not bool(a.is_motion_disabled(on)) and bool(a.is_motion_disabled(off))
    assert [int(a.get_q_motion_method(on)), int(a.get_udot_motion_method(on))] == [jb.Motion.Prescribed] * 2
    assert [int(a.get_q_motion_method(off)), int(a.get_udot_motion_method(off))] == [jb.Motion.Free] * 2
    assert not bool(a.is_motion_disabled(a.enable_motion(off)))

    @jax.jit
    def udot(m, s):
        return m.realize(s).acceleration.udot

    lanes = jax.vmap(lambda s: udot(model, s))(jax.tree_util.tree_map(lambda x, y: jnp.stack([x, y]), on, off))
    assert_close(lanes[1], udot(free_model, _state(free_model)), 1e-12)  # disabled == built without the Motion
    assert_close(lanes[0, 0], -A * W**2 * np.sin(W * 0.7 + PHI), 1e-12)  # enabled: the Sinusoid drives it
    assert_close(model.prescribe_q(off).q, off.q, 0)  # nothing is prescribed while disabled
    assert_close(model.prescribe_q(on).q[0], A * np.sin(W * 0.7 + PHI), 1e-15)


def test_disabled_by_default_and_realize_model():
    model, a, b = _system(disabled_by_default=True)
    assert a.is_motion_disabled_by_default() and not b.is_motion_disabled_by_default()
    state = model.default_state()
    assert bool(a.is_motion_disabled(state))
    assert bool(a.is_motion_disabled(model.realize_model(a.enable_motion(state))))  # back to the default
    with pytest.raises(jb.InvalidArgument, match="adopted Motion"):
        b.disable_motion(state)
    with pytest.raises(jb.TopologyFrozen):
        a.set_motion_disabled_by_default(False)


def test_gradient_through_a_disabled_motion(models):
    (model, a, _), _ = models
    off = a.disable_motion(_state(model))
    f = lambda q: model.realize(off.set_q(q)).acceleration.udot[0]  # noqa: E731
    assert_grad_matches_fd(f, off.q, 1e-6, 1e-6, "d udot_a / dq, Motion disabled")
