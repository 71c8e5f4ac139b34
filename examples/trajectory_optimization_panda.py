"""Trajectory optimization on a Franka Panda (URDF): move the hand through two via-points to a target.

Direct collocation on inverse dynamics, optimized with optax's L-BFGS and exact (reverse-mode) gradients:

* the joint trajectory q(t) is a uniform cubic B-spline (``build_problem``); each control point is
  ``mid + (half - MARGIN) tanh(z)``, a smooth reparametrization that keeps it inside the URDF joint limits,
  and a B-spline lies in the convex hull of its control points, so q(t) holds the limits at every instant;
  the first three control points are the start pose and the last three a free end pose: at rest at both ends;
* at equally spaced collocation points the joint torques are jaxbody's inverse dynamics of the spline's
  (q, qdot, qddot) (``model.calc_residual_force_ignoring_constraints`` with gravity, one ``vmap`` over the
  points), so the transcribed equations of motion hold by construction;
* cost: ``W_TAU h sum (tau / effort)^2`` (torque penalty, per-joint URDF effort limits) + hinge penalties
  where ``|tau| > effort`` or ``|u|`` exceeds the URDF velocity limit + ``W_HIT sum |p_hand - target|^2`` at
  the two via-points' times and the end.

The check of the dynamics is independent of the inverse dynamics used in the optimization: every interval
between collocation points is re-integrated from its start with jaxbody's RK4 (``jb.step_rk4``, forward
dynamics by the articulated-body algorithm, the planned torques linearly interpolated) and compared with the
next point (the shooting defects).

Run ``PYTHONPATH=. python3 examples/trajectory_optimization_panda.py`` from the repository root.
"""

from __future__ import annotations

import pathlib
import re
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

import jaxbody as jb  # noqa: E402

PANDA_URDF = pathlib.Path(__file__).resolve().parents[1] / "tests" / "models" / "panda.urdf"
ARM_JOINTS = [f"panda_joint{i}" for i in range(1, 8)]

#: Problem data: start pose (the Panda's "ready" pose), hand via-points and target in Ground (m), timing.
Q_START = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
VIA_POINTS = np.array([[0.25, 0.44, 0.50], [0.36, 0.57, 0.37]])
TARGET = np.array([0.58, 0.40, 0.41])
DURATION = 2.0  # s; the via-points are due at 1/3 and 2/3 of it
MARGIN = 0.02  # rad kept from every joint limit
W_TAU, W_HIT, W_LIMIT = 1.0, 1e4, 1e2

SIZES = {False: dict(n_segments=15, n_knots=120, iterations=400), True: dict(n_segments=9, n_knots=60, iterations=150)}


def load_panda():
    """The Panda arm with its two fingers welded to the hand (7 Pin mobilizers), gravity -9.81 z.

    The fingers are prismatic joints coupled by a mimic constraint in the URDF; welding them (turning the
    joints ``fixed`` in the text before import) leaves the 7-dof arm the plan is about.
    Returns (ImportedModel, Model).
    """
    text = PANDA_URDF.read_text()
    text = re.sub(r'(<joint name="panda_finger_joint\d" type=")prismatic', r"\1fixed", text)
    text = text.replace('<mimic joint="panda_finger_joint1"/>', "")
    imported = jb.io.load_urdf(text)
    return imported, imported.system.realize_topology()


def spline_basis(n_segments, times, duration):
    """Uniform cubic B-spline basis: (B, dB/dt, d2B/dt2) at ``times``, each (len(times), n_segments + 3)."""
    dt = duration / n_segments
    x = np.clip(np.asarray(times) / dt, 0.0, n_segments - 1e-12)
    j, s = np.floor(x).astype(int), x - np.floor(x)
    local = [  # the four blending functions of a segment at s in [0, 1) and their s-derivatives
        np.stack([(1 - s) ** 3, 3 * s**3 - 6 * s**2 + 4, -3 * s**3 + 3 * s**2 + 3 * s + 1, s**3], 1) / 6,
        np.stack([-3 * (1 - s) ** 2, 9 * s**2 - 12 * s, -9 * s**2 + 6 * s + 3, 3 * s**2], 1) / 6 / dt,
        np.stack([6 * (1 - s), 18 * s - 12, -18 * s + 6, 6 * s], 1) / 6 / dt**2,
    ]
    rows = np.arange(len(x))[:, None]
    out = []
    for blend in local:
        B = np.zeros((len(x), n_segments + 3))
        np.add.at(B, (rows, j[:, None] + np.arange(4)), blend)
        out.append(jnp.asarray(B))
    return out


def build_problem(imported, model, n_segments, n_knots):
    """Functions of the decision variables z (n_segments - 2, 7): the trajectory, the torques and the cost.

    q(t) is a uniform cubic B-spline with n_segments + 3 control points: the first three are the start pose
    and the last three one free end pose (so the arm starts and ends at rest), the others free. Each control
    point is ``mid + half tanh(z)``; a B-spline lies in the convex hull of its control points, so q(t) stays
    within the joint limits (less MARGIN) at every instant, not only at the knots. Inverse dynamics runs at
    n_knots + 1 equally spaced collocation points.
    """
    state0 = model.default_state()
    lower = jnp.array([imported.joint_limits[j][0] for j in ARM_JOINTS])
    upper = jnp.array([imported.joint_limits[j][1] for j in ARM_JOINTS])
    effort = jnp.array([87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0])  # N m, the URDF <limit effort>
    speed_limit = jnp.array([2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61])  # rad/s, the URDF <limit velocity>
    mid, half = (lower + upper) / 2, (upper - lower) / 2 - MARGIN
    tcp = imported.frames["panda_hand_tcp"]  # the hand's tool point, a frame fixed on panda_link7
    hand, station = tcp.mobilized_body, jnp.asarray(tcp.X_BF.p)
    h = DURATION / n_knots
    times = np.linspace(0.0, DURATION, n_knots + 1)
    basis = spline_basis(n_segments, times, duration=DURATION)
    hit_times = DURATION * np.array([1 / 3, 2 / 3, 1.0])
    hit_basis = spline_basis(n_segments, hit_times, duration=DURATION)[0]
    targets = jnp.asarray(np.vstack([VIA_POINTS, TARGET]))
    z_start = jnp.arctanh((jnp.asarray(Q_START) - mid) / half)

    def control_points(z):
        """(n_segments + 3, 7) joint-space control points: start pose x3, the free ones, end pose x3."""
        return mid + half * jnp.tanh(jnp.concatenate([jnp.tile(z_start, (3, 1)), z[:-1], jnp.tile(z[-1], (3, 1))]))

    def hand_position(q):
        """Hand tool point in Ground (3,) m at joint angles q (7,)."""
        return hand.find_station_location_in_ground(model.realize(state0.set_q(q), jb.Stage.Position), station)

    def trajectory(z):
        """q, u, udot (n_knots + 1, 7) at the collocation points (rad, rad/s, rad/s^2)."""
        P = control_points(z)
        return tuple(B @ P for B in basis)

    def torque(q, u, udot):
        """Inverse dynamics at one point: the joint torques (7,) N m that produce udot under gravity."""
        state = model.realize(state0.set_q(q).set_u(u), jb.Stage.Velocity)
        gravity = model.get_gravity_body_forces(state)
        return model.calc_residual_force_ignoring_constraints(state, jnp.zeros(7), gravity, udot)

    def hit_errors(z):
        """Hand minus via-point 1, via-point 2 and target (3, 3) m, at their times."""
        return jax.vmap(hand_position)(hit_basis @ control_points(z)) - targets

    def terms(z):
        q, u, udot = trajectory(z)
        tau = jax.vmap(torque)(q, u, udot) / effort
        hits = hit_errors(z)
        return dict(
            torque=W_TAU * h * jnp.sum(tau**2),
            torque_limit=W_LIMIT * h * jnp.sum(jax.nn.relu(jnp.abs(tau) - 1.0) ** 2),
            speed_limit=W_LIMIT * h * jnp.sum(jax.nn.relu(jnp.abs(u) / speed_limit - 1.0) ** 2),
            hit=W_HIT * jnp.sum(hits**2),
        )

    def cost(z):
        return sum(terms(z).values())

    z0 = jnp.tile(z_start, (n_segments - 2, 1))  # initial guess: stand still in the start pose
    return dict(cost=cost, terms=terms, trajectory=trajectory, torque=jax.vmap(torque), hand_position=hand_position,
                z0=z0, h=h, times=times, effort=effort, speed_limit=speed_limit, lower=lower, upper=upper,
                hit_errors=hit_errors, targets=targets, state0=state0)


def make_interval_integrator(model, state0, h, substeps=4):
    """(q, u, tau0, tau1) -> (q, u) after one knot interval h: ``substeps`` RK4 steps of jaxbody, each with
    the torque linearly interpolated between the knots' to the substep's middle."""

    def integrate(q, u, tau0, tau1):
        def substep(state, s):
            tau = tau0 + (s + 0.5) / substeps * (tau1 - tau0)
            return jb.step_rk4(model, state.set_mobility_forces(tau), h / substeps), None

        state, _ = jax.lax.scan(substep, state0.set_q(q).set_u(u), jnp.arange(substeps))
        return state.q, state.u

    return integrate


def optimize(problem, iterations):
    """L-BFGS (optax, backtracking Armijo line search on the cost alone); returns (z, cost history)."""
    cost = problem["cost"]
    solver = optax.lbfgs(linesearch=optax.scale_by_backtracking_linesearch(max_backtracking_steps=20, store_grad=False))
    value_and_grad = jax.value_and_grad(cost)

    @jax.jit
    def step(z, opt_state):
        value, grad = value_and_grad(z)
        updates, opt_state = solver.update(grad, opt_state, z, value=value, grad=grad, value_fn=cost)
        return optax.apply_updates(z, updates), opt_state, value

    z, opt_state, history = problem["z0"], solver.init(problem["z0"]), []
    for _ in range(iterations):
        z, opt_state, value = step(z, opt_state)
        history.append(float(value))
    return z, np.array(history)


def check_dynamics(model, problem, z):
    """Shooting defects of the plan under jaxbody's forward dynamics (RK4 on the articulated-body algorithm,
    independent of the inverse dynamics the plan was made with): every knot interval integrated from its start
    knot with the planned torques, minus the next knot. Also the planned hand path and torques.

    (An open-loop replay of the whole plan is no check: the arm is unstable under gravity, so any defect
    grows by about e^(5 t) without feedback.)
    """
    q, u, udot = problem["trajectory"](z)
    tau = problem["torque"](q, u, udot)
    integrate = make_interval_integrator(model, problem["state0"], problem["h"])
    q1, u1 = jax.jit(jax.vmap(integrate))(q[:-1], u[:-1], tau[:-1], tau[1:])
    hand = jax.jit(jax.vmap(problem["hand_position"]))
    return dict(defect_q=float(jnp.max(jnp.abs(q1 - q[1:]))), defect_u=float(jnp.max(jnp.abs(u1 - u[1:]))),
                hand_path=np.asarray(hand(q)), tau=np.asarray(tau))


def main(small: bool = False) -> dict:
    """Plan, optimize and check; returns the numbers that matter (costs in the cost's units, errors in m/rad)."""
    sizes = SIZES[bool(small)]
    imported, model = load_panda()
    problem = build_problem(imported, model, sizes["n_segments"], sizes["n_knots"])
    start = time.perf_counter()
    z, history = optimize(problem, sizes["iterations"])
    wall = time.perf_counter() - start
    q, u, _ = problem["trajectory"](z)
    check = check_dynamics(model, problem, z)
    hit_errors = np.linalg.norm(np.asarray(jax.jit(problem["hit_errors"])(z)), axis=1)
    return dict(
        n_knots=sizes["n_knots"], iterations=sizes["iterations"], wall_time_s=wall,
        cost_initial=float(history[0]), cost_final=float(history[-1]), cost_history=history,
        hit_errors_m=hit_errors, target_error_m=float(hit_errors[-1]),
        defect_q_rad=check["defect_q"], defect_u_rad_s=check["defect_u"],
        max_torque_over_effort=float(np.max(np.abs(check["tau"]) / np.asarray(problem["effort"]))),
        min_limit_clearance_rad=float(jnp.min(jnp.minimum(q - problem["lower"], problem["upper"] - q))),
        max_speed_over_limit=float(jnp.max(jnp.abs(u) / problem["speed_limit"])), q=np.asarray(q), tau=check["tau"],
        hand_path=check["hand_path"], h=problem["h"],
    )


if __name__ == "__main__":
    r = main()
    print(f"{r['n_knots']} knots, {r['iterations']} L-BFGS iterations in {r['wall_time_s']:.1f} s (compile included)")
    print(f"cost {r['cost_initial']:.4g} -> {r['cost_final']:.4g}")
    print("hand errors at via-point 1, via-point 2, target (mm):", np.round(1e3 * r["hit_errors_m"], 3))
    print(f"RK4 shooting defects: max |dq| {r['defect_q_rad']:.2e} rad, max |du| {r['defect_u_rad_s']:.2e} rad/s")
    print(f"max |tau|/effort {r['max_torque_over_effort']:.3f}, max |u|/velocity limit {r['max_speed_over_limit']:.3f}, "
          f"min joint-limit clearance {r['min_limit_clearance_rad']:.4f} rad")
