"""Learning to move forward from an MJCF file with contact: dm_control's planar walker, an equinox MLP policy
trained with analytic policy gradients (backpropagation through batched contact rollouts).

* ``tests/models/dm_control/walker.xml`` (dm_control 1.0.50's suite walker, Apache-2.0) read by
  ``jb.io.load_mjcf``: its contact comes from the file (the seven capsules against the floor plane, MuJoCo's
  pair list from contype/conaffinity, solref/solimp mapped to Hunt-Crossley parameters; see "Model import" in
  README.md) and its six ``<motor>`` s are driven by the State's controls (MuJoCo's ``ctrl``, in [-1, 1], times
  the gears 100/50/20 N m). Joint limits, damping and armature come from the file too.
* A rollout is a ``lax.scan`` of ``jb.step_semi_explicit_euler`` steps of ``DT`` = 1.25 ms (half the file's
  2.5 ms: at 2.5 ms, policies that saturate the motors drive the compliant joint-limit stops unstable) from the
  file's standing pose (qpos0, lifted ``DROP``) with small random joint angles and speeds. Every
  ``CONTROL_EVERY`` steps (10 ms) the policy reads the observation (every q but the forward position rootx, and
  every u; ``observe``) and sets the six controls ``tanh(mlp(obs))``, held until the next decision.
* Loss per rollout: minus the torso's forward distance (rootx at the end minus at the start, m), plus
  ``W_HEIGHT`` times the mean squared drop of the torso below ``MIN_HEIGHT`` (falling is penalized, not
  forbidden) plus ``W_CONTROL`` times the mean squared control. ``jax.vmap`` over a batch of worlds,
  ``eqx.filter_value_and_grad`` through every step (reverse mode through the contact forces), optax Adam with the
  gradient's global norm clipped at ``CLIP``: gradients through contact are large when a foot strikes.
* The choices that make this fit a 2-core CPU in about two minutes: a short horizon (0.4 s, 320 steps), a small
  batch (16 worlds), a tiny MLP (two hidden layers of 16), 100 Adam steps of 1e-2, float64. Measured on the
  shared CPU: ~55 s to compile the first step, then ~0.7 s per step. A larger learning rate (2e-2) let the
  gradient norms explode (to 1e11) and the rollouts diverge after ~80 steps; a step with a non-finite loss or
  gradient is skipped (``optax.apply_if_finite``).
* The learning is fragile, and this is what was measured: at XLA's default CPU flags the run below is
  deterministic and learns (batch mean forward distance -0.03 m -> +0.12 m; held out over 0.4 s: +0.125 m
  trained, -0.022 m untrained); the same run compiled with the test suite's flags (LLVM -O0: other rounding,
  and the contact rollouts are chaotic) went backwards (-0.04 m over the first 10 steps, -0.22 m over the last
  10). Fading the gradient through the state by 0.9 per decision kept the gradient norms below 1 for ~50 steps
  at -O0 (distance up to +0.12 m, then exploding norms and a fall back), but at the default flags it went
  backwards too (-0.13 m after 50 steps). Robust learning here needs more than this budget: longer training
  with a decaying learning rate, larger batches, or a smoother contact model for the gradients.
* What it learns in that budget is a lunge, not a gait: held out, the trained walker pushes itself forward and
  sinks into a crouch (torso 0.3-0.45 m below standing after 0.8 s) where the untrained one collapses (0.7 m);
  walking needs a longer horizon and many more steps than this example spends.
* Evaluation: the forward distance of held-out starts (another random key) over the training horizon and over
  twice that, trained against untrained (zero output) policy, and an animation of one trained rollout.

Run ``PYTHONPATH=. python3 examples/walker_policy_gradient.py`` from the repository root.
"""

from __future__ import annotations

import pathlib
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
WALKER_XML = ROOT / "tests" / "models" / "dm_control" / "walker.xml"
DT = 0.00125  # s: half the file's <option timestep> (at 2.5 ms, full-torque policies blow up the joint-limit stops)
CONTROL_EVERY = 8  # steps per policy decision (10 ms)
MIN_HEIGHT = -0.25  # m: rootz (the torso's height above its standing height) below which the loss grows
W_HEIGHT, W_CONTROL = 10.0, 0.01
LEARNING_RATE, CLIP = 1e-2, 1.0
NOISE_Q, NOISE_U = 0.05, 0.1  # rad, rad/s (m/s): the initial states' random spread (joint angles; all speeds)
DROP = 0.02  # m: the torso starts this much above its standing height (the feet just off the floor)

SIZES = {
    False: dict(batch=16, horizon=320, iterations=100, eval_batch=32, width=16),
    True: dict(batch=4, horizon=48, iterations=3, eval_batch=4, width=8),
}


def load_walker():
    """(ImportedModel, Model) of the walker with its contact and actuators (the file's unmodelled attributes,
    e.g. the limits' solimplimit, are warned about by load_mjcf; silenced here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        walker = jb.io.load_mjcf(WALKER_XML)
    walker.system.set_up_direction("+z")
    return walker, walker.system.realize_topology()


class Layout:
    """Index bookkeeping: where rootx and rootz sit in q, and which q the policy observes."""

    def __init__(self, walker, model):
        self.x = walker.q_index("rootx")
        self.z = walker.q_index("rootz")
        nq = model.get_num_q()
        self.observed_q = np.array([i for i in range(nq) if i != self.x])
        self.joints_q = np.array([i for i in range(nq) if i not in (self.x, self.z)])  # rooty and the six joints
        self.num_obs = nq - 1 + model.get_num_u()
        self.num_controls = model.get_num_controls()


def observe(layout, state):
    """Policy input: q without rootx, and u (rootz, rooty, six joint angles; nine speeds)."""
    return jnp.concatenate([state.q[layout.observed_q], state.u])


def initial_states(layout, state0, key, n):
    """(q (n, nq), u (n, nu)): the file's standing pose lifted by DROP, uniform noise of +-NOISE_Q on rooty and
    the joint angles, of +-NOISE_U on every speed."""
    kq, ku = jax.random.split(key)
    noise = NOISE_Q * jax.random.uniform(kq, (n, layout.joints_q.size), minval=-1.0, maxval=1.0)
    q = jnp.tile(state0.q.at[layout.z].add(DROP), (n, 1)).at[:, layout.joints_q].add(noise)
    u = state0.u + NOISE_U * jax.random.uniform(ku, (n,) + state0.u.shape, minval=-1.0, maxval=1.0)
    return q, u


def make_policy(key, layout, width):
    """MLP (num_obs -> width -> width -> 6, tanh) with a zero last layer: the untrained policy applies no torque."""
    mlp = eqx.nn.MLP(layout.num_obs, layout.num_controls, width, 2, activation=jnp.tanh, key=key)
    last = mlp.layers[-1]
    return eqx.tree_at(lambda m: (m.layers[-1].weight, m.layers[-1].bias), mlp,
                       (jnp.zeros_like(last.weight), jnp.zeros_like(last.bias)))


def make_rollout(model, layout, state0, horizon):
    """``rollout(policy, q0, u0) -> (q (horizon + 1, nq), u (horizon + 1, nu), controls (horizon // CONTROL_EVERY, 6))``."""
    if horizon % CONTROL_EVERY:
        raise ValueError(f"horizon ({horizon}) must be a multiple of CONTROL_EVERY ({CONTROL_EVERY})")

    def rollout(policy, q0, u0):
        def decide(state, _):
            controls = jnp.tanh(policy(observe(layout, state)))
            state = state.set_controls(controls)

            def step(s, _):
                s = jb.step_semi_explicit_euler(model, s, DT)
                return s, (s.q, s.u)

            state, (q, u) = jax.lax.scan(step, state, None, length=CONTROL_EVERY)
            return state, (q, u, controls)

        start = state0.set_q(q0).set_u(u0)
        _, (q, u, controls) = jax.lax.scan(decide, start, None, length=horizon // CONTROL_EVERY)
        q = jnp.concatenate([q0[None], q.reshape(-1, q0.shape[0])])
        return q, jnp.concatenate([u0[None], u.reshape(-1, u0.shape[0])]), controls

    return rollout


def forward_distance(layout, q):
    """rootx at the end minus at the start (m), over the last axis of q's leading (time) axis."""
    return q[..., -1, layout.x] - q[..., 0, layout.x]


def rollout_loss(layout, q, controls):
    """-forward distance + W_HEIGHT mean(relu(MIN_HEIGHT - rootz)^2) + W_CONTROL mean(controls^2)."""
    drop = jnp.maximum(MIN_HEIGHT - q[:, layout.z], 0.0)
    return -forward_distance(layout, q) + W_HEIGHT * jnp.mean(drop**2) + W_CONTROL * jnp.mean(controls**2)


def train(model, layout, state0, sizes, key):
    """Adam on the batched loss; returns (policy, untrained policy, history dict of per-iteration arrays)."""
    policy_key, data_key = jax.random.split(key)
    policy = make_policy(policy_key, layout, sizes["width"])
    untrained = policy
    rollout = make_rollout(model, layout, state0, sizes["horizon"])
    # a step whose loss or gradient is not finite (a lane that blew up) is skipped, not applied
    optimizer = optax.apply_if_finite(optax.chain(optax.clip_by_global_norm(CLIP), optax.adam(LEARNING_RATE)), 5)
    opt_state = optimizer.init(eqx.filter(policy, eqx.is_array))

    def loss(policy, q0, u0):
        q, u, controls = jax.vmap(lambda a, b: rollout(policy, a, b))(q0, u0)
        losses = jax.vmap(lambda qi, ci: rollout_loss(layout, qi, ci))(q, controls)
        return jnp.mean(losses), jnp.mean(forward_distance(layout, q))

    @eqx.filter_jit
    def update(policy, opt_state, q0, u0):
        (value, distance), grads = eqx.filter_value_and_grad(loss, has_aux=True)(policy, q0, u0)
        norm = optax.global_norm(grads)
        updates, opt_state = optimizer.update(grads, opt_state, eqx.filter(policy, eqx.is_array))
        return eqx.apply_updates(policy, updates), opt_state, value, distance, norm

    history = dict(loss=[], distance=[], grad_norm=[], seconds=[])
    for key_i in jax.random.split(data_key, sizes["iterations"]):
        t0 = time.perf_counter()
        policy, opt_state, value, distance, norm = update(policy, opt_state, *initial_states(layout, state0, key_i, sizes["batch"]))
        history["loss"].append(float(value))
        history["distance"].append(float(distance))
        history["grad_norm"].append(float(norm))
        history["seconds"].append(time.perf_counter() - t0)
    return policy, untrained, {k: np.array(v) for k, v in history.items()}


def make_evaluator(model, layout, state0, horizon):
    """evaluate(policy, q0 (n, nq), u0 (n, nu)) -> (q, u, controls) with a batch axis: vmapped, jitted once."""
    rollout = make_rollout(model, layout, state0, horizon)
    return eqx.filter_jit(lambda policy, q0, u0: jax.vmap(lambda a, b: rollout(policy, a, b))(q0, u0))


def main(small: bool = False, quiet: bool = False) -> dict:
    """Train, evaluate on held-out starts (trained and untrained); returns the numbers and trajectories."""
    sizes = SIZES[bool(small)]
    say = (lambda *a: None) if quiet else print
    walker, model = load_walker()
    layout = Layout(walker, model)
    state0 = walker.default_state(model)
    say(f"walker: {model.get_num_q()} q, {layout.num_controls} motors, "
        f"{walker.contact.subsystem.get_num_contact_pairs(model)} contact pairs (capsules on the floor)")
    policy, untrained, history = train(model, layout, state0, sizes, jax.random.PRNGKey(0))
    say(f"trained {sizes['iterations']} Adam steps on {sizes['batch']} rollouts of {sizes['horizon'] * DT:.2f} s: "
        f"first step (with compilation) {history['seconds'][0]:.1f} s, then "
        f"{np.median(history['seconds'][1:]) if sizes['iterations'] > 1 else float('nan'):.2f} s per step")
    say(f"mean forward distance in training: {history['distance'][0]:.3f} m -> {history['distance'][-1]:.3f} m")
    q0, u0 = initial_states(layout, state0, jax.random.PRNGKey(1), sizes["eval_batch"])
    evaluate = make_evaluator(model, layout, state0, 2 * sizes["horizon"])
    q_untrained = np.asarray(evaluate(untrained, q0, u0)[0])
    q, u, controls = (np.asarray(x) for x in evaluate(policy, q0, u0))
    half = sizes["horizon"]
    result = dict(
        history=history, sizes=sizes,
        distance_trained=float(np.mean(forward_distance(layout, q[:, : half + 1]))),
        distance_untrained=float(np.mean(forward_distance(layout, q_untrained[:, : half + 1]))),
        distance_trained_long=float(np.mean(forward_distance(layout, q))),
        distance_untrained_long=float(np.mean(forward_distance(layout, q_untrained))),
        min_height_trained=float(np.min(q[:, :, layout.z])),
        q=q, u=u, controls=controls, q_untrained=q_untrained, walker=walker, model=model, layout=layout, state0=state0,
    )
    say(f"held-out forward distance over {half * DT:.2f} s: trained {result['distance_trained']:.3f} m, untrained "
        f"{result['distance_untrained']:.3f} m; over {2 * half * DT:.2f} s: trained "
        f"{result['distance_trained_long']:.3f} m, untrained {result['distance_untrained_long']:.3f} m")
    return result


if __name__ == "__main__":
    main()
