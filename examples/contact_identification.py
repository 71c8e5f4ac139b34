"""Identify a box's contact material (stiffness, dissipation, static and dynamic friction) from its trajectories.

A 1 kg box (``jb.ContactGeometry.Brick``, Simbody's BrickHalfSpacePenalty law) on a floor half-space with a known
material (``jb.CompliantContactSubsystem``, transition velocity 1 cm/s) is simulated with ``jb.simulate`` (RK4,
dt 1 ms) in two experiments, one compiled rollout vmapped over them:

* **throw**: dropped flat from 1 cm with 4 m/s along x: it lands on its four corners, bounces (stiffness,
  dissipation) and slides, decelerating at about ``mu_dynamic g`` (dynamic friction); it is still sliding at
  the end;
* **creep**: at rest on a 31 degree incline (gravity tilted, a Model leaf), ``tan(theta) = 0.6`` between the
  combined dynamic (0.545) and static (0.747) friction: it creeps at the slip speed where Simbody's Stribeck
  curve ``mu_s step5(v / v_t)`` equals ``tan(theta)``, which the static friction sets.

The box's material row of the contact element (``model.forces[k].material``, a Model leaf) is replaced by
``eqx.tree_at``; its four numbers are fitted in log space from a start 35-40% off, minimizing the mean squared
error of the sampled generalized coordinates (positions in cm, quaternions), by optax's L-BFGS with exact
gradients by ``jax.grad``
through the whole contact rollout. The floor's material is known, so the pair's combined values (Simbody's rules:
``k = k1 k2 / (k1 + k2)`` for the penalty law, harmonic mean of the frictions) determine the box's own.

Run: ``python3 examples/contact_identification.py`` (from the repository root).
"""

from __future__ import annotations

import time

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import optax

import jaxbody as jb

G = 9.81
NAMES = ("stiffness", "dissipation", "static_friction", "dynamic_friction")
TRUE = np.array([1.0e5, 0.8, 0.7, 0.5])  # the box's material: Pa, s/m, -, -
START = TRUE * np.array([1.4, 0.6, 1.35, 0.65])  # the initial guess, 35-40% off
FLOOR_MATERIAL = (1.0e6, 0.5, 0.8, 0.6)  # known
HALF = (0.1, 0.05, 0.1)  # the box's half lengths, m
DT = 1e-3  # s
SAVE_EVERY = 1  # a sample every step (the bounce period is about 10 ms)
SCALE = jnp.asarray([1.0, 1, 1, 1, 100, 100, 100])  # q error weights: quaternion, position in cm
TILT = np.arctan(0.6)  # the creep experiment's incline


def build_model():
    """(model, index of the contact element): the box on a floor half-space whose normal is +y."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -G, 0.0])
    tracker = jb.ContactTrackerSubsystem(system)
    contact = jb.CompliantContactSubsystem(system, tracker)
    contact.set_transition_velocity(0.01)
    floor_frame = jb.Transform(jb.Rotation(np.asarray([[0.0, 1, 0], [-1, 0, 0], [0, 0, 1]])))  # x_H = -y
    floor = jb.ContactSurface(jb.ContactGeometry.HalfSpace(), jb.ContactMaterial(*FLOOR_MATERIAL))
    matter.Ground().update_body().add_contact_surface(floor_frame, floor)
    inertia = [(HALF[1] ** 2 + HALF[2] ** 2) / 3, (HALF[0] ** 2 + HALF[2] ** 2) / 3, (HALF[0] ** 2 + HALF[1] ** 2) / 3]
    body = jb.Body.Rigid(jb.MassProperties(1.0, np.zeros(3), jb.Inertia.from_matrix(np.diag(inertia))))
    body.add_contact_surface(None, jb.ContactSurface(jb.ContactGeometry.Brick(list(HALF)), jb.ContactMaterial(*TRUE)))
    jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), body, jb.Transform(), name="box")
    return system.realize_topology(), contact.force.index


def experiments():
    """(gravity (2, 3), q0 (2, 7), u0 (2, 6)) of the throw and creep experiments (Free: q = quaternion, p;
    u = angular, linear velocity in G)."""
    k_corner = TRUE[0] * FLOOR_MATERIAL[0] / (TRUE[0] + FLOOR_MATERIAL[0])
    sink = G * np.cos(TILT) / 4 / k_corner  # each corner's static depth on the incline
    level = [0.0, -G, 0.0]
    gravity = jnp.asarray([level, [G * np.sin(TILT), -G * np.cos(TILT), 0.0]])
    q0 = jnp.asarray([[1.0, 0, 0, 0, 0.0, HALF[1] + 0.01, 0.0], [1.0, 0, 0, 0, 0.0, HALF[1] - sink, 0.0]])
    u0 = jnp.asarray([[0.0, 0, 0, 4.0, 0, 0], [0.0, 0, 0, 0, 0, 0]])
    return gravity, q0, u0


def make_rollout(model, k, n_steps):
    """``rollout(log_material) -> q`` (2, n_steps // SAVE_EVERY, 7): both experiments with the box's material
    ``exp(log_material)`` (stiffness, dissipation, static, dynamic friction)."""
    gravity, q0, u0 = experiments()

    def rollout(log_material):
        material = model.forces[k].material.at[1, :4].set(jnp.exp(log_material))  # row 1: the box's surface
        m0 = eqx.tree_at(lambda m: m.forces[k].material, model, material)

        def one(g, q, u):
            m = eqx.tree_at(lambda mm: mm.forces[0].gravity, m0, g)
            _, trajectory = jb.simulate(m, m.default_state().set_q(q).set_u(u), DT, n_steps, save_every=SAVE_EVERY)
            return trajectory.q

        return jax.vmap(one)(gravity, q0, u0)

    return rollout


def make_loss(rollout, reference):
    """Mean squared error of the sampled coordinates (positions in cm) against the reference trajectories."""
    return lambda log_material: jnp.mean(((rollout(log_material) - reference) * SCALE) ** 2)


def central_differences(loss, x, h=1e-5):
    """d loss / d x (4,) by central differences of step h (in log space)."""
    return np.array([(loss(x.at[i].add(h)) - loss(x.at[i].add(-h))) / (2 * h) for i in range(x.size)])


def fit(loss, x0, iterations):
    """optax's L-BFGS (zoom line search) on the log material, one compiled step; returns (x, loss history)."""
    optimizer = optax.lbfgs()
    value_and_grad = optax.value_and_grad_from_state(loss)

    @jax.jit
    def step(x, state):
        value, grad = value_and_grad(x, state=state)
        updates, state = optimizer.update(grad, state, x, value=value, grad=grad, value_fn=loss)
        return optax.apply_updates(x, updates), state, value

    x, state, history = x0, optimizer.init(x0), []
    for _ in range(iterations):
        x, state, value = step(x, state)
        history.append(float(value))
    return x, np.array(history)


def main(small: bool = False, quiet: bool = False):
    duration, iterations = (0.3, 40) if small else (0.6, 60)
    n_steps = int(round(duration / DT))
    say = (lambda *a: None) if quiet else print
    model, k = build_model()
    rollout = make_rollout(model, k, n_steps)
    t0 = time.perf_counter()
    reference = jax.jit(rollout)(jnp.log(TRUE))
    loss = make_loss(rollout, reference)
    value_and_grad = jax.jit(jax.value_and_grad(loss))
    x0 = jnp.log(START)
    loss0, grad0 = value_and_grad(x0)
    t_compile = time.perf_counter() - t0
    fd0 = central_differences(jax.jit(loss), x0)
    gradient_error = np.abs(np.asarray(grad0) - fd0) / np.max(np.abs(fd0))
    say(f"{n_steps} RK4 steps x 2 experiments; reference + first gradient (compile) {t_compile:.1f} s")
    say("gradient at the start (log space):", np.asarray(grad0), "\ncentral differences:         ", fd0)
    t0 = time.perf_counter()
    x, history = fit(loss, x0, iterations)
    t_fit = time.perf_counter() - t0
    recovered = np.exp(np.asarray(x))
    relative_error = recovered / TRUE - 1
    say(f"L-BFGS, {iterations} iterations, {t_fit:.1f} s; loss {history[0]:.3e} -> {history[-1]:.3e}")
    for name, true, start, value, err in zip(NAMES, TRUE, START, recovered, relative_error):
        say(f"  {name:17s} true {true:10.4g}  start {start:10.4g}  recovered {value:10.4g}  error {100 * err:+.3f}%")
    return {"recovered": recovered, "true": TRUE, "start": START, "relative_error": relative_error,
            "start_error": START / TRUE - 1, "history": history, "gradient": np.asarray(grad0),
            "central_differences": fd0, "gradient_error": gradient_error, "iterations": iterations,
            "fit_seconds": t_fit, "compile_seconds": t_compile, "reference": np.asarray(reference),
            "fitted": np.asarray(jax.jit(rollout)(x)), "loss": loss, "x": x}


if __name__ == "__main__":
    main()
