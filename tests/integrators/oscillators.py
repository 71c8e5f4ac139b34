"""Small systems with known solutions for the integrator tests."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np

import jaxbody as jb
from jaxbody._dynamics.forces import ForceElement

OMEGA = 2.0  # rad/s


def oscillator(stiffness=OMEGA**2, mass=1.0):
    """A Slider along x with a MobilityLinearSpring: x(t) = x0 cos(w t), u = -x0 w sin(w t), w = sqrt(k/m)."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    mp = jb.MassProperties.from_central_inertia(mass, [0, 0, 0], jb.Inertia(0.1, 0.1, 0.1))
    body = jb.MobilizedBody.Slider(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="mass")
    jb.Force.MobilityLinearSpring(forces, body, 0, stiffness, 0.0)
    return system, system.realize_topology()


def oscillator_solution(x0, t, omega=OMEGA):
    return x0 * np.cos(omega * t), -x0 * omega * np.sin(omega * t)


def ball(gravity=9.81):
    """A point mass on a vertical Slider (y up) under gravity: the bouncing ball's body."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0, -gravity, 0])
    mp = jb.MassProperties.from_central_inertia(1.0, [0, 0, 0], jb.Inertia(0.1, 0.1, 0.1))
    X_PF = jb.Transform(jb.Rotation.about_z(np.pi / 2), [0, 0, 0])  # Slider's x axis along Ground y
    body = jb.MobilizedBody.Slider(matter.Ground(), X_PF, jb.Body.Rigid(mp), X_PF, name="ball")
    return system, body


class Lag(ForceElement):
    """A force element with one state variable: ``zdot = (target - z) / tau`` (z(t) in closed form), no force."""

    target: jnp.ndarray
    tau: jnp.ndarray

    def calc(self, model, state):
        raise AssertionError("an element with state variables is evaluated through calc_with_z")

    def num_z(self):
        return 1

    def default_z(self, dtype):
        return jnp.zeros((1,), dtype)

    def calc_with_z(self, model, state, z):
        return (jnp.zeros((model.topology.nbodies, 2, 3), z.dtype), jnp.zeros(model.topology.nu, z.dtype),
                jnp.zeros((), z.dtype))

    def calc_z_dot(self, model, state, z):
        return (self.target - z) / self.tau


def with_lag(model, target=2.0, tau=0.1):
    return eqx.tree_at(lambda m: m.forces, model, model.forces + (Lag(jnp.asarray(target), jnp.asarray(tau)),))
