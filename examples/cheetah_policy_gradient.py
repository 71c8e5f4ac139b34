"""Learning to run from an MJCF file with contact: dm_control's half cheetah learns a periodic gait by analytic
policy gradients (backpropagation through batched contact rollouts), in truncated windows.

* ``tests/models/dm_control/cheetah.xml`` (dm_control 1.0.50's suite cheetah, Apache-2.0) read by
  ``jb.io.load_mjcf``: contact from the file (its eight capsules against the floor plane and the 19 capsule
  pairs of the body MuJoCo also collides; solref/solimp mapped to Hunt-Crossley parameters), six ``<motor>`` s
  driven by the State's controls in [-1, 1] (gears 30-120 N m); joint stiffness, damping, armature and limits
  from the file.
* Semi-explicit Euler steps of ``DT`` = 1 ms (a tenth of the file's 10 ms: full-torque controls drove the
  compliant contact and limit stops unstable at 2-5 ms). Every ``CONTROL_EVERY`` steps (10 ms) the policy sets
  the controls ``tanh(policy(t))``, held until the next decision.
* The policy is a periodic gait (``GaitPolicy``): a Fourier series of ``HARMONICS`` harmonics of a
  ``GAIT_HZ`` clock, 30 coefficients, all zero untrained (no torque). Open loop: it reads the clock, not the
  state; the starts have random phases (random times in one period).
* Truncated analytic policy gradients: a batch of ``batch`` cheetahs runs episodes of ``episode`` windows of
  ``WINDOW`` decisions (0.3 s). Each Adam step backpropagates through one window only (300 contact steps):
  loss = minus the batch's mean forward speed over the window (rootx travelled / window time, m/s) plus
  ``W_ACTION`` times the mean squared action. The state at a window's start is the previous window's end,
  through ``jax.lax.stop_gradient``, so the gradient never runs through more than 0.3 s of contact while the
  episodes (2.1 s) reach a running speed; then every cheetah restarts from a fresh random start. The gradient is
  clipped to global norm ``CLIP``; a step with a non-finite loss or gradient is skipped
  (``optax.apply_if_finite``) and a lane that blew up restarts from the file's pose.
* What did not learn as well (measured, seed 0, each one run): an equinox MLP policy of the state (with or
  without the clock as input), 0.1 s windows, Adam 1e-3 to 3e-3: stalled at 0.08 m/s, its controls pushed into
  tanh's saturation (gradient norm down to 0.006); the gait plus a feedback MLP (Adam 1e-2): 0.31 m/s in the
  first episode, then saturated and fell to 0.07 m/s; the gait alone with 0.1 s windows: 0.11 m/s after 140
  steps (from zero), 0.66 -> 1.04 m/s in 100 steps (from a random gait); 0.3 s windows from a random gait:
  0.90 -> 0.46 m/s (gradient norms 1e2); 0.3 s windows from zero at a constant 3e-2: 1.41 m/s after 42 steps,
  then back to 0.7 m/s by step 98, hence the cosine decay. The window longer than a stride (0.25 s at 4 Hz) is
  what let the gradient see a stride.
* Evaluation: held-out starts (key 1000 + seed) run ``eval_seconds`` with the trained and the untrained (no
  torque) policy; the reported speed of each is the mean of rootx's speed after its first second (the drop onto
  the floor and the start).

Run ``PYTHONPATH=. python3 examples/cheetah_policy_gradient.py [seed]`` from the repository root.
"""

from __future__ import annotations

import pathlib
import sys
import time
import warnings

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

import jaxbody as jb  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHEETAH_XML = ROOT / "tests" / "models" / "dm_control" / "cheetah.xml"
DT = 0.001  # s: a tenth of the file's <option timestep> (full-torque controls blow up at 2-5 ms)
CONTROL_EVERY = 10  # steps per policy decision (10 ms)
WINDOW = 30  # decisions per backpropagation window (0.3 s)
GAIT_HZ = 4.0  # Hz: the gait's frequency (the clock the policy reads)
HARMONICS = 2  # terms of the gait's Fourier series
W_ACTION = 0.01  # weight of mean(action^2) in the loss
LEARNING_RATE, CLIP = 3e-2, 1.0  # Adam's first learning rate (cosine decay to a tenth), the gradient's clip
NOISE_Q, NOISE_U = 0.1, 0.1  # rad (m), rad/s (m/s): the initial states' random spread

SIZES = {
    False: dict(batch=16, episode=7, updates=63, eval_batch=16, eval_seconds=4.0),
    True: dict(batch=2, episode=2, updates=3, eval_batch=2, eval_seconds=0.2),
}


def load_cheetah():
    """(ImportedModel, Model) of the cheetah with its contact and actuators (the file's unmodelled attributes,
    e.g. torsional friction, are warned about by load_mjcf; silenced here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cheetah = jb.io.load_mjcf(CHEETAH_XML)
    cheetah.system.set_up_direction("+z")
    return cheetah, cheetah.system.realize_topology()


class Layout:
    """Index bookkeeping: where rootx and rootz sit in q, and which q the starts perturb (all but rootx)."""

    def __init__(self, cheetah, model):
        self.x = cheetah.q_index("rootx")
        self.z = cheetah.q_index("rootz")
        self.perturbed_q = np.array([i for i in range(model.get_num_q()) if i != self.x])
        self.num_controls = model.get_num_controls()


def initial_states(layout, state0, key, n):
    """(t (n,), q (n, nq), u (n, nu)): the file's pose (torso 0.7 m up, the feet just above the floor) with
    uniform noise of +-NOISE_Q on every q but rootx and of +-NOISE_U on every speed, at a random time in one
    gait period (s): a random phase."""
    kq, ku, kt = jax.random.split(key, 3)
    t = jax.random.uniform(kt, (n,), maxval=1.0 / GAIT_HZ, dtype=state0.t.dtype)
    noise = NOISE_Q * jax.random.uniform(kq, (n, layout.perturbed_q.size), minval=-1.0, maxval=1.0)
    q = jnp.tile(state0.q, (n, 1)).at[:, layout.perturbed_q].add(noise)
    u = state0.u + NOISE_U * jax.random.uniform(ku, (n,) + state0.u.shape, minval=-1.0, maxval=1.0)
    return t, q, u


class GaitPolicy(eqx.Module):
    """A periodic gait: ``policy(t)`` -> the six actions (controls = tanh(actions)) at time t (s), the Fourier
    series bias + sum_k sine[k-1] sin(k phi) + cosine[k-1] cos(k phi), phi = 2 pi GAIT_HZ t, k = 1..HARMONICS.
    Open loop: it reads the clock, not the state."""

    bias: jax.Array  # (6,)
    sine: jax.Array  # (HARMONICS, 6)
    cosine: jax.Array  # (HARMONICS, 6)

    def __call__(self, t):
        k_phi = 2 * jnp.pi * GAIT_HZ * t * jnp.arange(1, self.sine.shape[0] + 1)
        return self.bias + jnp.sin(k_phi) @ self.sine + jnp.cos(k_phi) @ self.cosine


def make_policy(layout):
    """The untrained policy: every coefficient zero, no torque."""
    zeros = jnp.zeros((HARMONICS, layout.num_controls))
    return GaitPolicy(jnp.zeros(layout.num_controls), zeros, zeros)


def make_rollout(model, layout, state0, decisions):
    """``rollout(policy, t0, q0, u0) -> (q (decisions + 1, nq), u (decisions + 1, nu), actions (decisions, 6))``:
    one world from time t0 (s), the state sampled at each decision; the controls are ``tanh(actions)``."""

    def rollout(policy, t0, q0, u0):
        def decide(state, _):
            action = policy(state.t)
            controls = jnp.tanh(action)
            state = state.set_controls(controls)
            state = jax.lax.fori_loop(0, CONTROL_EVERY, lambda i, s: jb.step_semi_explicit_euler(model, s, DT), state)
            return state, (state.q, state.u, action)

        _, (q, u, actions) = jax.lax.scan(decide, state0.set_time(t0).set_q(q0).set_u(u0), None, length=decisions)
        return jnp.concatenate([q0[None], q]), jnp.concatenate([u0[None], u]), actions

    return rollout


def speed(layout, q):
    """Mean forward speed (m/s) of rootx over a trajectory sampled every decision (time on axis -2)."""
    return (q[..., -1, layout.x] - q[..., 0, layout.x]) / ((q.shape[-2] - 1) * CONTROL_EVERY * DT)


def window_loss(policy, rollout, layout, t0, q0, u0):
    """(loss, (q_end, u_end, mean speed, fraction of |action| > 2)) of one window from the batch (t0, q0, u0):
    -mean speed + W_ACTION mean(action^2) (the penalty on the policy's output before tanh keeps the controls out
    of saturation, where tanh's gradient vanishes and learning stalls)."""
    q, u, actions = jax.vmap(lambda t, a, b: rollout(policy, t, a, b))(t0, q0, u0)
    v = jnp.mean(speed(layout, q))
    return -v + W_ACTION * jnp.mean(actions**2), (q[:, -1], u[:, -1], v, jnp.mean(jnp.abs(actions) > 2.0))


def train(model, layout, state0, sizes, key, say=lambda *a: None):
    """Adam over truncated windows; returns (policy, untrained policy, history of per-update arrays: the
    window's loss, mean speed (m/s), gradient norm, wall seconds)."""
    policy = untrained = make_policy(layout)
    rollout = make_rollout(model, layout, state0, WINDOW)
    optimizer = optax.apply_if_finite(optax.chain(optax.clip_by_global_norm(CLIP), optax.adam(optax.cosine_decay_schedule(LEARNING_RATE, sizes["updates"], alpha=0.1))), 5)
    opt_state = optimizer.init(eqx.filter(policy, eqx.is_array))

    @eqx.filter_jit
    def update(policy, opt_state, t0, q0, u0):
        # the window starts from a state that carries no gradient: truncated backpropagation
        q0, u0 = jax.lax.stop_gradient((q0, u0))
        (value, (q, u, v, saturated)), grads = eqx.filter_value_and_grad(window_loss, has_aux=True)(
            policy, rollout, layout, t0, q0, u0)
        norm = optax.global_norm(grads)
        updates, opt_state = optimizer.update(grads, opt_state, eqx.filter(policy, eqx.is_array))
        return eqx.apply_updates(policy, updates), opt_state, value, v, norm, saturated, q, u

    history = dict(loss=[], speed=[], grad_norm=[], saturated=[], seconds=[])
    keys = jax.random.split(key, sizes["updates"] // sizes["episode"] + 1)
    for i in range(sizes["updates"]):
        if i % sizes["episode"] == 0:
            t, q, u = initial_states(layout, state0, keys[i // sizes["episode"]], sizes["batch"])
        t0 = time.perf_counter()
        policy, opt_state, value, v, norm, saturated, q, u = update(policy, opt_state, t, q, u)
        t = t + WINDOW * CONTROL_EVERY * DT
        # a lane that blew up restarts from the file's pose
        ok = jnp.all(jnp.isfinite(q), axis=1) & jnp.all(jnp.isfinite(u), axis=1)
        q, u = jnp.where(ok[:, None], q, state0.q), jnp.where(ok[:, None], u, state0.u)
        history["loss"].append(float(value))
        history["speed"].append(float(v))
        history["grad_norm"].append(float(norm))
        history["saturated"].append(float(saturated))
        history["seconds"].append(time.perf_counter() - t0)
        if (i + 1) % sizes["episode"] == 0:
            say(f"update {i + 1}: mean window speed of this episode {np.mean(history['speed'][-sizes['episode']:]):.2f} m/s, "
                f"grad norm {np.median(history['grad_norm'][-sizes['episode']:]):.2g}, "
                f"{sum(history['seconds']):.0f} s")
    return policy, untrained, {k: np.array(v) for k, v in history.items()}


def make_evaluator(model, layout, state0, seconds):
    """evaluate(policy, t0 (n,), q0 (n, nq), u0 (n, nu)) -> (q, u, actions) with a batch axis: vmapped, jitted once."""
    rollout = make_rollout(model, layout, state0, int(round(seconds / (CONTROL_EVERY * DT))))
    return eqx.filter_jit(lambda policy, t0, q0, u0: jax.vmap(lambda t, a, b: rollout(policy, t, a, b))(t0, q0, u0))


def held_out_speed(layout, q, seconds):
    """Per-world mean forward speed (m/s) over the trajectory after its first second (or over all of it if shorter)."""
    skip = int(round(1.0 / (CONTROL_EVERY * DT))) if seconds > 1.0 else 0
    return np.asarray(speed(layout, q[:, skip:]))


def main(small: bool = False, quiet: bool = False, seed: int = 0) -> dict:
    """Train from ``seed``, evaluate on held-out starts (trained and untrained); returns numbers and trajectories."""
    sizes = SIZES[bool(small)]
    say = (lambda *a: None) if quiet else print
    cheetah, model = load_cheetah()
    layout = Layout(cheetah, model)
    state0 = cheetah.default_state(model)
    say(f"cheetah: {model.get_num_q()} q, {layout.num_controls} motors, "
        f"{cheetah.contact.subsystem.get_num_contact_pairs(model)} contact pairs; seed {seed}")
    policy, untrained, history = train(model, layout, state0, sizes, jax.random.PRNGKey(seed), say)
    say(f"trained: {sizes['updates']} Adam steps on windows of {sizes['batch']} x {WINDOW * CONTROL_EVERY * DT:.1f} s: "
        f"first (with compilation) {history['seconds'][0]:.1f} s, then {np.median(history['seconds'][1:]):.2f} s each, "
        f"{history['seconds'].sum():.0f} s in all")
    start = initial_states(layout, state0, jax.random.PRNGKey(1000 + seed), sizes["eval_batch"])
    evaluate = make_evaluator(model, layout, state0, sizes["eval_seconds"])
    q_untrained = np.asarray(evaluate(untrained, *start)[0])
    q, u, actions = (np.asarray(x) for x in evaluate(policy, *start))
    result = dict(
        history=history, sizes=sizes, seed=seed,
        speed_trained=held_out_speed(layout, q, sizes["eval_seconds"]),
        speed_untrained=held_out_speed(layout, q_untrained, sizes["eval_seconds"]),
        t0=np.asarray(start[0]), q=q, u=u, actions=actions, q_untrained=q_untrained, policy=policy,
        cheetah=cheetah, model=model, layout=layout, state0=state0,
    )
    say(f"held-out forward speed over the last {sizes['eval_seconds'] - 1:.0f} s of {sizes['eval_seconds']:.0f} s: trained "
        f"{result['speed_trained'].mean():.2f} m/s (min {result['speed_trained'].min():.2f}), untrained "
        f"{result['speed_untrained'].mean():.2f} m/s")
    return result


if __name__ == "__main__":
    main(seed=int(sys.argv[1]) if len(sys.argv) > 1 else 0)
