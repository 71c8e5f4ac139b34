"""Identify a box's contact material (stiffness, dissipation, static and dynamic friction) from its trajectories.

A 1 kg box (``jb.ContactGeometry.Brick``, Simbody's BrickHalfSpacePenalty law) on a floor half-space with a known
material (``jb.CompliantContactSubsystem``, transition velocity 1 cm/s) is simulated with ``jb.simulate`` (RK4,
dt 1 ms) in two experiments, vmapped:

* **throw**: dropped flat from 1 cm with 4 m/s along x: it lands on its four corners, bounces (stiffness,
  dissipation) and slides, decelerating at about ``mu_dynamic g`` (dynamic friction); it is still sliding at
  the end;
* **creep**: at rest on a 31 degree incline (gravity tilted, a Model leaf), ``tan(theta) = 0.6`` between the
  combined dynamic (0.545) and static (0.747) friction: it creeps at the slip speed where Simbody's Stribeck
  curve ``mu_s step5(v / v_t)`` equals ``tan(theta)``, which the static friction sets.

The data are the sampled states (q, u) of both experiments, every step. The fit compares short predictions with
them: the trajectory is cut into windows of ``WINDOW`` steps, each simulated from the measured state at its start
(all windows of both experiments in one vmapped rollout), and the residuals are the predicted minus the measured
generalized coordinates (positions in cm, quaternions). Short windows keep the residuals close to linear in the
parameters. One whole-trajectory simulation has local minima instead: a stiffer, less damped box bounces in a
different phase; on the whole 0.3 s trajectories L-BFGS stopped 27% off in stiffness and dissipation, and
Levenberg-Marquardt stops at stiffness +69%, dissipation -26% (cost 2.0 from 1660, Gauss-Newton matrix condition
1e7). Every window that holds an impact weighs stiffness and dissipation, every sliding one the frictions
(condition number ~300).

The box's material row of the contact element (``model.forces[k].material``, a Model leaf) is replaced by
``eqx.tree_at``; its four numbers are fitted in log space from a start 35-40% off by Levenberg-Marquardt
(Gauss-Newton with a Marquardt diagonal) with the exact Jacobian of the residuals from ``jax.jacfwd`` (four
forward-mode tangents through every contact rollout). The floor's material is known, so the pair's combined values
(Simbody's rules: ``k = k1 k2 / (k1 + k2)`` for the penalty law, harmonic mean of the frictions) determine the
box's own. With noise-free data the residuals vanish at the true material and the iteration converges
quadratically: all four numbers to ~1e-14 in 7 steps. With noise on the measured states (``main(noise=...)``;
the windows start from noisy states) 1 um on q and 0.1 mm/s on u leave every number within 1% (seed 0, 0.6 s of
data: stiffness +0.21%, dissipation +0.09%, static friction +0.60%, dynamic friction -0.08%);
10 um and 1 mm/s put static friction 30% off in one draw, since the creep that reveals it moves micrometres per step.

Run: ``python3 examples/contact_identification.py`` (from the repository root).
"""

from __future__ import annotations

import time

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx
import jax.numpy as jnp
import numpy as np

import jaxbody as jb

G = 9.81
NAMES = ("stiffness", "dissipation", "static_friction", "dynamic_friction")
TRUE = np.array([1.0e5, 0.8, 0.7, 0.5])  # the box's material: Pa, s/m, -, -
START = TRUE * np.array([1.4, 0.6, 1.35, 0.65])  # the initial guess, 35-40% off
FLOOR_MATERIAL = (1.0e6, 0.5, 0.8, 0.6)  # known
HALF = (0.1, 0.05, 0.1)  # the box's half lengths, m
DT = 1e-3  # s
WINDOW = 20  # steps per predicted window (20 ms; a corner's contact lasts about 5 ms)
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


def with_material(model, k, log_material):
    """The model with the box's material ``exp(log_material)`` (stiffness, dissipation, static, dynamic friction)."""
    material = model.forces[k].material.at[1, :4].set(jnp.exp(log_material))  # row 1: the box's surface
    return eqx.tree_at(lambda m: m.forces[k].material, model, material)


def simulate(model, gravity, q, u, n_steps):
    """(q (n_steps, 7), u (n_steps, 6)) after each of ``n_steps`` RK4 steps from (q, u) under ``gravity`` (3,)."""
    m = eqx.tree_at(lambda mm: mm.forces[0].gravity, model, gravity)
    _, trajectory = jb.simulate(m, m.default_state().set_q(q).set_u(u), DT, n_steps)
    return trajectory.q, trajectory.u


def measure(model, k, n_steps):
    """The data: (q (2, n_steps, 7), u (2, n_steps, 6)) of both experiments with the true material."""
    gravity, q0, u0 = experiments()
    m = with_material(model, k, jnp.log(TRUE))
    return jax.jit(jax.vmap(lambda g, q, u: simulate(m, g, q, u, n_steps)))(gravity, q0, u0)


def make_residual(model, k, data):
    """``residual(log_material) -> (2 * n_steps * 7,)``: every window of WINDOW steps simulated from the measured
    state at its start (the experiment's initial state for the first), minus the measured q, weighted by SCALE."""
    gravity, q0, u0 = experiments()
    q_data, u_data = data
    n = q_data.shape[1] // WINDOW
    q_start = jnp.concatenate([q0[:, None], q_data[:, WINDOW - 1:-1:WINDOW]], 1)  # (2, n, 7)
    u_start = jnp.concatenate([u0[:, None], u_data[:, WINDOW - 1:-1:WINDOW]], 1)
    g_start = jnp.repeat(gravity[:, None], n, 1)
    target = q_data[:, :n * WINDOW].reshape(2, n, WINDOW, 7)

    def residual(log_material):
        m = with_material(model, k, log_material)
        q, _ = jax.vmap(jax.vmap(lambda g, q, u: simulate(m, g, q, u, WINDOW)))(g_start, q_start, u_start)
        return ((q - target) * SCALE).reshape(-1)

    return residual


def central_differences(residual, x, h=1e-5):
    """d residual / d x (nr, 4) by central differences of step h (in log space)."""
    return np.stack([(residual(x.at[i].add(h)) - residual(x.at[i].add(-h))) / (2 * h) for i in range(x.size)], 1)


def levenberg_marquardt(residual_and_jacobian, x0, iterations, tolerance=1e-13):
    """Minimize |r(x)|^2: steps ``(J'J + lam diag(J'J)) dx = -J'r``, lam divided by 10 after a step that lowers
    the cost and multiplied by 10 (the step retried) otherwise. Stops when a step is below ``tolerance`` (log
    space), when no step lowers the cost (converged to rounding), or after ``iterations`` accepted steps. Each
    trial returns its Jacobian too (one compiled function), used as the next one when the trial is accepted.
    Returns (x, cost history: the cost at each accepted x)."""
    x, lam = x0, 1e-3
    r, J = (np.asarray(a) for a in residual_and_jacobian(x))
    history = [float(r @ r)]
    for _ in range(iterations):
        A, g = J.T @ J, J.T @ r
        while lam <= 1e12:
            dx = np.linalg.lstsq(A + lam * np.diag(np.diag(A)), -g, rcond=None)[0]  # a zero column gives dx 0
            r_trial, J_trial = (np.asarray(a) for a in residual_and_jacobian(x + dx))
            if r_trial @ r_trial < history[-1]:
                break
            lam *= 10
        else:
            break
        x, r, J, lam = x + dx, r_trial, J_trial, max(lam / 10, 1e-15)
        history.append(float(r @ r))
        if np.max(np.abs(dx)) < tolerance:
            break
    return x, np.array(history)


def main(small: bool = False, quiet: bool = False, noise=None, seed: int = 0):
    """Fit and report. ``small``: 0.2 s of data instead of 0.6 s. ``noise``: (sigma_q, sigma_u), Gaussian noise
    added to every measured q entry (m, and quaternion units) and u entry (m/s, rad/s), seeded by ``seed``."""
    duration, iterations = (0.2, 12) if small else (0.6, 20)
    n_steps = int(round(duration / DT))
    say = (lambda *a: None) if quiet else print
    model, k = build_model()
    t0 = time.perf_counter()
    data = measure(model, k, n_steps)
    if noise is not None:
        rng = np.random.default_rng(seed)
        data = tuple(d + jnp.asarray(rng.normal(0.0, sigma, d.shape)) for d, sigma in zip(data, noise))
    residual = make_residual(model, k, data)
    residual_and_jacobian = jax.jit(lambda x: (residual(x), jax.jacfwd(residual)(x)))
    x0 = jnp.log(START)
    _, J0 = residual_and_jacobian(x0)
    t_compile = time.perf_counter() - t0
    fd0 = central_differences(lambda x: residual_and_jacobian(x)[0], x0)
    jacobian_error = np.max(np.abs(np.asarray(J0) - fd0), 0) / np.max(np.abs(fd0), 0)
    say(f"{n_steps} RK4 steps x 2 experiments in windows of {WINDOW}; data + first Jacobian (compile) {t_compile:.1f} s")
    say("Jacobian vs central differences, per parameter (max error / max entry):", jacobian_error)
    t0 = time.perf_counter()
    x, history = levenberg_marquardt(residual_and_jacobian, x0, iterations)
    t_fit = time.perf_counter() - t0
    recovered = np.exp(np.asarray(x))
    relative_error = recovered / TRUE - 1
    say(f"Levenberg-Marquardt, {len(history) - 1} steps, {t_fit:.1f} s; cost {history[0]:.3e} -> {history[-1]:.3e}")
    for name, true, start, value, err in zip(NAMES, TRUE, START, recovered, relative_error):
        say(f"  {name:17s} true {true:10.4g}  start {start:10.4g}  recovered {value:.12g}  error {err:+.2e}")
    return {"recovered": recovered, "true": TRUE, "start": START, "relative_error": relative_error,
            "start_error": START / TRUE - 1, "history": history, "jacobian": np.asarray(J0),
            "central_differences": fd0, "jacobian_error": jacobian_error, "fit_seconds": t_fit,
            "compile_seconds": t_compile, "x": x}


if __name__ == "__main__":
    main()
