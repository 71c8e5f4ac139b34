"""Fit the link lengths of a four-bar linkage so that its coupler point traces a target curve.

A planar four-bar (crank, coupler, rocker: three Pins about z, closed by a ``Constraint.Ball`` between the
coupler's tip and the rocker's tip) is driven through a full turn of its crank. At each crank angle the crank is
locked and ``model.project_q`` assembles the coupler and rocker angles onto the loop-closure manifold (Simbody's
Gauss-Newton, continued from the previous angle). The coupler point's path is compared with a target path made
by the same mechanism with "true" lengths; the loss is the mean squared distance between corresponding points.

The four lengths are leaves of the Model: the crank length a is the coupler's inboard frame ``X_PF`` (on the
crank), the ground length d is the rocker's ``X_PF`` (on Ground), and the coupler length b and rocker length c
are the Ball's two stations. Gradients reach them through the projection's implicit-function VJP (no
differentiation of the Newton iterations). optax's L-BFGS minimizes the loss.

Run: ``python3 examples/closed_chain_fourbar.py`` (from the repository root).
"""

from __future__ import annotations

import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import optax

import jaxbody as jb

TRUE_LENGTHS = np.array([1.0, 3.0, 2.5, 3.0])  # crank a, coupler b, rocker c, ground d (m): a Grashof crank-rocker
START_LENGTHS = np.array([1.2, 2.6, 2.9, 3.4])  # the initial guess (also a crank-rocker)
COUPLER_POINT = np.array([1.5, 0.8, 0.0])  # the traced point, in the coupler's frame (m)
FIRST_GUESS = np.array([0.0, 1.0, 1.7])  # (crank, coupler relative, rocker) angles near the "elbow up" assembly
OPTIONS = jb.ProjectOptions(accuracy=1e-12)


def build_fourbar():
    """The four-bar with the true lengths; returns (system, crank, coupler, rocker, model)."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    bar = jb.Body.Rigid(jb.MassProperties(1.0, [0.5, 0, 0], jb.Inertia(0.01, 0.34, 0.34)))
    a, b, c, d = TRUE_LENGTHS
    crank = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), bar, jb.Transform())
    coupler = jb.MobilizedBody.Pin(crank, jb.Transform([a, 0, 0]), bar, jb.Transform())
    rocker = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform([d, 0, 0]), bar, jb.Transform())
    jb.Constraint.Ball(coupler, [b, 0, 0], rocker, [c, 0, 0])
    return system, crank, coupler, rocker, system.realize_topology()


def with_lengths(model, coupler, rocker, lengths):
    """``model`` with link lengths (a, b, c, d) written into its leaves: X_PF of coupler and rocker, Ball stations."""
    a, b, c, d = lengths
    params = model.parameters
    p_PF = params.p_PF.at[coupler.index, 0].set(a).at[rocker.index, 0].set(d)
    (ball,) = params.constraint_params  # one constraint group: the Ball, params (station on coupler, on rocker)
    ball = ball.at[0, 0].set(b).at[0, 3].set(c)
    return jb.replace_parameters(model, p_PF=p_PF, constraint_params=(ball,))


def make_coupler_curve(model, crank, coupler, rocker):
    """``curve(lengths, thetas) -> (points (n, 2), q (n, 3), success (n,))``: the assembled coupler path."""

    def curve(lengths, thetas):
        m = with_lengths(model, coupler, rocker, lengths)
        state0 = m.default_state()

        def assemble(q_prev, theta):
            state = crank.lock_at(state0.set_q(q_prev), theta)  # the crank angle is held; the others move
            state, results = m.project_q(state, options=OPTIONS)
            point = coupler.find_station_location_in_ground(m.realize(state, jb.Stage.Position), COUPLER_POINT)
            return state.q, (point[:2], state.q, results.success)

        _, (points, qs, success) = jax.lax.scan(assemble, jnp.asarray(FIRST_GUESS), thetas)
        return points, qs, success

    return curve


def make_loss(curve, thetas, target):
    """Mean squared distance (m^2) between the coupler points at ``thetas`` and the target points."""

    def loss(lengths):
        points, _, _ = curve(lengths, thetas)
        return jnp.mean(jnp.sum((points - target) ** 2, -1))

    return loss


def fit(loss, start, max_iterations, tolerance=1e-24):
    """optax L-BFGS (zoom line search) from ``start`` in one compiled while_loop; returns (lengths, losses, n, g0).

    ``losses`` (max_iterations,) holds the loss before each iteration (NaN after the last one), ``g0`` the
    gradient at ``start``. Stops when the loss falls below ``tolerance``.
    """
    optimizer = optax.lbfgs()
    value_and_grad = optax.value_and_grad_from_state(loss)

    def cond(carry):
        _, _, losses, k, _ = carry
        return (k < max_iterations) & ((k == 0) | (losses[jnp.maximum(k - 1, 0)] > tolerance))

    def body(carry):
        x, opt_state, losses, k, g0 = carry
        value, grad = value_and_grad(x, state=opt_state)
        updates, opt_state = optimizer.update(grad, opt_state, x, value=value, grad=grad, value_fn=loss)
        g0 = jnp.where(k == 0, grad, g0)
        return optax.apply_updates(x, updates), opt_state, losses.at[k].set(value), k + 1, g0

    start = jnp.asarray(start)
    carry = (start, optimizer.init(start), jnp.full(max_iterations, jnp.nan), 0, jnp.zeros_like(start))
    x, _, losses, k, g0 = jax.lax.while_loop(cond, body, carry)
    return x, losses, k, g0


def main(small: bool = False) -> dict:
    """Fit the four lengths from START_LENGTHS; return losses, lengths, errors and timings."""
    n_angles, max_iterations = (24, 40) if small else (72, 40)
    _, crank, coupler, rocker, model = build_fourbar()
    curve = jax.jit(make_coupler_curve(model, crank, coupler, rocker))
    thetas = jnp.linspace(0.0, 2 * jnp.pi, n_angles, endpoint=False)
    target, _, target_ok = curve(jnp.asarray(TRUE_LENGTHS), thetas)
    loss = make_loss(curve, thetas, target)

    t0 = time.perf_counter()
    run = jax.jit(fit, static_argnums=(0, 2)).lower(loss, START_LENGTHS, max_iterations).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    lengths, losses, n, g0 = jax.block_until_ready(run(START_LENGTHS))
    fit_s = time.perf_counter() - t0
    losses = np.asarray(losses)[: int(n)]
    start_points, _, start_ok = curve(jnp.asarray(START_LENGTHS), thetas)
    fitted_points, _, fitted_ok = curve(lengths, thetas)
    final_loss = float(loss(lengths))
    return {
        "n_angles": n_angles,
        "iterations": int(n),
        "losses": losses,
        "initial_loss": float(losses[0]),
        "final_loss": final_loss,
        "loss_drop": float(losses[0]) / max(final_loss, 1e-300),
        "grad_at_start": np.asarray(g0),
        "true_lengths": TRUE_LENGTHS,
        "start_lengths": START_LENGTHS,
        "fitted_lengths": np.asarray(lengths),
        "max_length_error": float(np.max(np.abs(np.asarray(lengths) - TRUE_LENGTHS))),
        "all_assembled": bool(np.all(target_ok) and np.all(start_ok) and np.all(fitted_ok)),
        "thetas": np.asarray(thetas),
        "target": np.asarray(target),
        "start_curve": np.asarray(start_points),
        "fitted_curve": np.asarray(fitted_points),
        "loss_fn": loss,
        "compile_s": compile_s,
        "fit_s": fit_s,
    }


if __name__ == "__main__":
    out = main()
    print(f"{out['iterations']} L-BFGS iterations over {out['n_angles']} crank angles: loss {out['initial_loss']:.3e} -> "
          f"{out['final_loss']:.3e} (x{out['loss_drop']:.1e} lower); compile {out['compile_s']:.1f} s, fit {out['fit_s']:.1f} s")
    print("lengths (a, b, c, d): true", out["true_lengths"], "start", out["start_lengths"],
          "fitted", np.round(out["fitted_lengths"], 8), f"max error {out['max_length_error']:.2e}")
