"""Two of Simbody's per-method details: ExplicitEuler's error estimate (the unprojected y1 against the explicit
trapezoid with ydot at the *projected* y1, never itself projected: ExplicitEulerIntegrator.cpp) on a
constrained step, and Verlet's bounded u iteration, which makes a Verlet rollout reverse-differentiable."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_grad_matches_fd
from oscillators import oscillator, oscillator_solution

import jaxbody as jb
from jaxbody._integrators import control
from jaxbody._integrators.methods import join_y, realize_ydot, with_y


def cartesian_pendulum(angle=0.4, rate=2.0):
    """A 1 kg point on a Translation mobilizer held at 1 m from the origin by a Rod (gravity -y): the circle is
    curved, so an Euler step leaves it. Returns (model, assembled state)."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, [0.0, -9.81, 0.0])
    mass = jb.MassProperties.from_central_inertia(1.0, [0, 0, 0], jb.Inertia(0.01, 0.01, 0.01))
    bob = jb.MobilizedBody.Translation(matter.Ground(), jb.Transform(), jb.Body.Rigid(mass), jb.Transform())
    jb.Constraint.Rod(matter.Ground(), [0, 0, 0], bob, [0, 0, 0], 1.0)
    model = system.realize_topology()
    c, s = np.cos(angle), np.sin(angle)
    return model, model.default_state().set_q(jnp.array([s, -c, 0.0])).set_u(rate * jnp.array([c, s, 0.0]))


@pytest.mark.long  # ~50 s of CPU compiling a projected Rod pendulum; CI time budget
def test_explicit_euler_error_estimate_is_simbodys():
    """One ExplicitEuler attempt on a Rod pendulum: the step-size update follows from Simbody's estimate
    ``y1 - (y0 + h/2 (ydot0 + ydot1(projected y1)))`` with the RMS norm (q absolute, u relative to
    max(|u0|, 1)) and the rule h_new = 0.9 h (acc / err)^(1/2), computed here by hand."""
    model, state = cartesian_pendulum()
    acc, h = 1e-2, 0.01
    integ = jb.ExplicitEulerIntegrator(model, accuracy=acc, initial_step_size=h, constraint_tolerance=1e-4)
    ts = jb.TimeStepper(model, integ)
    run = ts.initialize(state)
    new = jax.jit(lambda r, t: ts._attempt(r, t))(run, 1.0)

    y0, f0 = join_y(run.state), run.ydot
    y1 = y0 + h * f0
    s1, _, ok, _ = control.project_with_error(model, with_y(run.state, h, y1), jnp.zeros_like(y1),
                                              control.projection_options(integ.settings))
    f1, _ = realize_ydot(model, s1)
    err = np.asarray(y1 - (y0 + h / 2 * (f0 + f1)))
    u0 = np.asarray(run.state.u)
    norm = max(np.sqrt(np.mean(err[:3] ** 2)), np.sqrt(np.mean((err[3:] / np.maximum(np.abs(u0), 1.0)) ** 2)))
    assert bool(ok) and acc / 30 < norm < acc, norm  # accepted, and the rule grows h
    h_expected = min(0.9 * h * np.sqrt(acc / norm), 5 * h)
    assert h_expected > 1.2 * h
    assert float(new.state.t) == h and int(new.stats.steps_taken) == 1
    assert float(new.h) == pytest.approx(h_expected, rel=1e-12)
    # The old estimate (ydot1 at the unprojected y1) gives another step size on this constrained step.
    f1_unprojected, _ = realize_ydot(model, with_y(run.state, h, y1))
    err_old = np.asarray(y1 - (y0 + h / 2 * (f0 + f1_unprojected)))
    assert np.abs(err_old - err).max() > 1e-3 * np.abs(err).max()


@pytest.mark.long  # 37 s of gradient compile (CI budget); CI differentiates checkpointed RKM rollouts
# (tests/integrators/test_integrators.py::test_gradient_through_adaptive_rollout, test_events.py)
def test_verlet_rollout_reverse_differentiable():
    """Reverse mode through a checkpointed, error-controlled Verlet rollout of the oscillator: d x(T)/d x0 =
    cos(w T) to the integration accuracy, and central differences."""
    _, model = oscillator()
    ts = jb.TimeStepper(model, jb.VerletIntegrator(model, accuracy=1e-6, internal_step_limit=800), differentiable=True)

    def final(x0):
        run, _ = ts.simulate(model.default_state().set_q(x0[None]), jnp.array([0.5]))
        return run.state.q[0], run.stats

    x0 = jnp.asarray(0.7)
    grad, stats = jax.jit(jax.grad(final, has_aux=True))(x0)
    assert not bool(stats.step_limit_reached) and int(stats.steps_taken) > 100, stats  # about 550 steps
    assert float(grad) == pytest.approx(oscillator_solution(1.0, 0.5)[0], abs=1e-4)
    assert_grad_matches_fd(jax.jit(lambda x: final(x)[0]), x0, 1e-4, 1e-6, "Verlet rollout", grad=grad)
