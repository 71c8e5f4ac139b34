"""Policy learning through differentiable rollouts: an equinox MLP balances a cart-pole built with jaxbody.

* The cart-pole is Simbody-style: a cart on a ``MobilizedBody.Slider`` (along Ground x) carrying a pole on a
  ``MobilizedBody.Pin`` (about z), gravity -9.81 y; q = (x, theta) with theta = 0 upright. The motor force on
  the cart is the State's applied mobility force on the slider's u (``state.set_mobility_forces``).
* A rollout is a ``lax.scan`` of fixed semi-explicit Euler steps (``jb.step_semi_explicit_euler``): at every step the policy reads
  (x, cos theta, sin theta, xdot, thetadot) and sets the force ``F_MAX tanh(mlp(obs))``, held over the step.
* Training: ``jax.vmap`` of the rollout over a batch of random initial states, a quadratic cost on the
  pole angle, cart position, speeds and force, averaged over time and batch, and its exact gradient with
  respect to the MLP's weights by reverse mode through the whole scan; optax Adam with gradient clipping.
* Evaluation: rollouts of EVAL_SECONDS (longer than in training) from held-out initial states (another random key);
  a rollout succeeds when |theta| stays below ``SUCCESS_ANGLE`` and |x| below ``SUCCESS_X`` throughout.

Run ``PYTHONPATH=. python3 examples/policy_learning_cartpole.py`` from the repository root.
"""

from __future__ import annotations

import time

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

import jaxbody as jb  # noqa: E402

CART_MASS, POLE_MASS, POLE_LENGTH = 1.0, 0.2, 0.6  # kg, kg, m (pole: a rod of uniform mass)
F_MAX = 20.0  # N, the motor's force limit
DT = 0.025  # s, the step (the policy's control period)
LEARNING_RATE = 1e-2
INITIAL_RANGE = np.array([0.3, 0.25, 0.3, 0.3])  # +- bounds of the initial (x, theta, xdot, thetadot)
SUCCESS_ANGLE, SUCCESS_X = 0.3, 2.0  # rad, m
EVAL_SECONDS = 4.0  # s, the held-out rollouts' length (training rollouts: train_steps * DT)

SIZES = {
    False: dict(batch=256, train_steps=40, iterations=100, eval_batch=256, width=32),
    True: dict(batch=32, train_steps=40, iterations=60, eval_batch=64, width=16),
}


def build_cartpole():
    """(system, model, cart, pole): the cart-pole, at rest upright in its default state."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    cart_body = jb.Body.Rigid(jb.MassProperties(CART_MASS, [0, 0, 0], jb.Inertia(0.01)))
    # A uniform rod from the hinge (Bo) up along y: central inertia m L^2 / 12 about x and z, shifted to Bo.
    rod = jb.Inertia(POLE_MASS * POLE_LENGTH**2 / 12, 1e-6, POLE_MASS * POLE_LENGTH**2 / 12)
    com = np.array([0.0, POLE_LENGTH / 2, 0.0])
    pole_body = jb.Body.Rigid(jb.MassProperties(POLE_MASS, com, rod.shift_from_mass_center(com, POLE_MASS)))
    cart = jb.MobilizedBody.Slider(matter.Ground(), jb.Transform(), cart_body, jb.Transform(), name="cart")
    pole = jb.MobilizedBody.Pin(cart, jb.Transform(), pole_body, jb.Transform(), name="pole")
    cart.add_body_decoration(jb.Transform(), jb.DecorativeBrick([0.15, 0.06, 0.06]).set_color([0.3, 0.3, 0.8]))
    pole.add_body_decoration(jb.Transform(com), jb.DecorativeCylinder(0.015, POLE_LENGTH / 2).set_color([0.8, 0.3, 0.2]))
    matter.set_show_default_geometry(False)
    return system, system.realize_topology(), cart, pole


def observe(q, u):
    """Policy input (5,): x, cos theta, sin theta, xdot, thetadot."""
    return jnp.stack([q[0], jnp.cos(q[1]), jnp.sin(q[1]), u[0], u[1]])


def make_rollout(model, n_steps):
    """rollout(policy, x0) -> (q (n_steps + 1, 2), u (n_steps + 1, 2), force (n_steps,)); x0 = (x, theta, xdot, thetadot)."""
    state0 = model.default_state()

    def rollout(policy, x0):
        def step(state, _):
            force = F_MAX * jnp.tanh(policy(observe(state.q, state.u))[0])
            state = jb.step_semi_explicit_euler(model, state.set_mobility_forces(jnp.stack([force, 0.0])), DT)
            return state, (state.q, state.u, force)

        start = state0.set_q(x0[:2]).set_u(x0[2:])
        _, (q, u, force) = jax.lax.scan(step, start, None, length=n_steps)
        return jnp.concatenate([x0[None, :2], q]), jnp.concatenate([x0[None, 2:], u]), force

    return rollout


def rollout_cost(q, u, force):
    """Mean over time of theta^2 + 0.1 x^2 + 0.01 (xdot^2 + thetadot^2) + 0.01 (F / F_MAX)^2."""
    return (jnp.mean(q[:, 1] ** 2 + 0.1 * q[:, 0] ** 2 + 0.01 * (u[:, 0] ** 2 + u[:, 1] ** 2))
            + 0.01 * jnp.mean((force / F_MAX) ** 2))


def initial_states(key, n):
    """(n, 4) initial (x, theta, xdot, thetadot), uniform in +- INITIAL_RANGE."""
    return jax.random.uniform(key, (n, 4), minval=-1.0, maxval=1.0) * jnp.asarray(INITIAL_RANGE)


def make_policy(key, width):
    """An MLP (5 -> width -> width -> 1, tanh) whose last layer starts at zero: the untrained policy pushes not at all."""
    mlp = eqx.nn.MLP(in_size=5, out_size=1, width_size=width, depth=2, activation=jnp.tanh, key=key)
    last = mlp.layers[-1]
    return eqx.tree_at(lambda m: (m.layers[-1].weight, m.layers[-1].bias), mlp,
                       (jnp.zeros_like(last.weight), jnp.zeros_like(last.bias)))


def success(q):
    """(batch,) bool: |theta| < SUCCESS_ANGLE and |x| < SUCCESS_X at every sample of each rollout."""
    return jnp.all((jnp.abs(q[..., 1]) < SUCCESS_ANGLE) & (jnp.abs(q[..., 0]) < SUCCESS_X), axis=-1)


def train(model, sizes, key):
    """Adam on the batched rollout cost; returns (policy, untrained policy, loss history, seconds per iteration).

    The first iteration's time includes compilation."""
    policy_key, data_key = jax.random.split(key)
    policy = make_policy(policy_key, sizes["width"])
    untrained = policy
    rollout = make_rollout(model, sizes["train_steps"])
    optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(LEARNING_RATE))
    opt_state = optimizer.init(eqx.filter(policy, eqx.is_array))

    def loss(policy, x0):
        return jnp.mean(jax.vmap(lambda x: rollout_cost(*rollout(policy, x)))(x0))

    @eqx.filter_jit
    def update(policy, opt_state, x0):
        value, grads = eqx.filter_value_and_grad(loss)(policy, x0)
        updates, opt_state = optimizer.update(grads, opt_state, eqx.filter(policy, eqx.is_array))
        return eqx.apply_updates(policy, updates), opt_state, value

    history, times = [], [time.perf_counter()]
    for key_i in jax.random.split(data_key, sizes["iterations"]):
        policy, opt_state, value = update(policy, opt_state, initial_states(key_i, sizes["batch"]))
        history.append(float(value))
        times.append(time.perf_counter())
    return policy, untrained, np.array(history), np.diff(times)


def make_evaluator(model, n_steps):
    """evaluate(policy, x0 (batch, 4)) -> (q, u, force) with a batch axis: vmapped rollouts, jitted once."""
    rollout = make_rollout(model, n_steps)
    return eqx.filter_jit(lambda policy, x0: jax.vmap(lambda x: rollout(policy, x))(x0))


def main(small: bool = False) -> dict:
    """Train, then evaluate trained and untrained policies on held-out initial states; returns the numbers."""
    sizes = SIZES[bool(small)]
    _, model, _, _ = build_cartpole()
    policy, untrained, history, seconds = train(model, sizes, jax.random.PRNGKey(0))
    held_out = initial_states(jax.random.PRNGKey(1), sizes["eval_batch"])
    eval_steps = int(round(EVAL_SECONDS / DT))
    evaluate = make_evaluator(model, eval_steps)
    q_untrained = evaluate(untrained, held_out)[0]  # (compiles)
    start = time.perf_counter()
    q, u, force = jax.block_until_ready(evaluate(policy, held_out))
    eval_wall = time.perf_counter() - start
    return dict(
        batch=sizes["batch"], iterations=sizes["iterations"], train_wall_time_s=float(np.sum(seconds)),
        compile_s=float(seconds[0]), seconds_per_iteration=float(np.median(seconds[1:])),
        train_steps_per_s=sizes["batch"] * sizes["train_steps"] / float(np.median(seconds[1:])), eval_wall_time_s=eval_wall, horizon_s=eval_steps * DT,
        loss_history=history, loss_initial=float(history[0]), loss_final=float(history[-1]),
        success_rate=float(jnp.mean(success(q))), untrained_success_rate=float(jnp.mean(success(q_untrained))),
        max_abs_theta_final_s=float(jnp.max(jnp.abs(q[:, -int(1.0 / DT):, 1]))),
        q=np.asarray(q), u=np.asarray(u), force=np.asarray(force), q_untrained=np.asarray(q_untrained),
    )


if __name__ == "__main__":
    r = main()
    print(f"trained on {r['batch']} rollouts x {r['iterations']} Adam steps in {r['train_wall_time_s']:.1f} s "
          f"(first step with compilation {r['compile_s']:.1f} s, then {r['seconds_per_iteration']:.3f} s per step: "
          f"{r['train_steps_per_s']:.3g} simulated steps/s, forward + backward)")
    print(f"loss {r['loss_initial']:.4g} -> {r['loss_final']:.4g}")
    print(f"held-out success (|theta| < {SUCCESS_ANGLE} rad, |x| < {SUCCESS_X} m for {r['horizon_s']:.0f} s): "
          f"trained {100 * r['success_rate']:.1f} %, untrained {100 * r['untrained_success_rate']:.1f} %")
    print(f"max |theta| over the last second: {r['max_abs_theta_final_s']:.2e} rad")
