"""Manipulation through contact: a Franka Panda (URDF) pushes a free box across a table, and the push is tuned
by gradients through the contact rollout so that the box ends at a target.

* The arm is ``tests/models/panda.urdf`` read by ``jb.io.load_urdf`` (its two fingers welded: the 7 revolute
  joints stay). Instead of its collision geometry (``collision=True``; the meshes are in ``tests/models/meshes``)
  the script fixes one contact sphere (radius ``PUSHER_RADIUS``) at the hand's tool point ``panda_hand_tcp``:
  pushed by the fingers' collision boxes, the box rattles on its penalty contacts at this dissipation (0.5 s/m)
  and the rollout's derivative is the exact slope of a function that is rough below 1 mm (docs/architecture.md,
  "Gradients through polytope contact"); the sphere's Hertz contact is smooth.
* The table is a ``ContactGeometry.HalfSpace`` on Ground (its surface the plane z = 0, the arm's base on it);
  the box a ``ContactGeometry.Brick`` on a Free mobilizer. One ``jb.CompliantContactSubsystem`` (Simbody's
  laws: brick/half-space penalty for the box on the table, Hertz + Hunt-Crossley for the sphere on the box and on
  the table, Simbody's friction with transition velocity ``TRANSITION_VELOCITY``) tracks the three pairs.
* The arm is driven by seven ``Force.CoordinateActuator`` s (1 N m per unit control): the controls are in the
  State. A computed-torque controller sets them every step: ``tau = ID(q, u, qdd_ref + KP (q_ref - q) +
  KD (qd_ref - u))``, jaxbody's inverse dynamics of the arm under gravity (it knows nothing of the box), clipped
  to the URDF's effort limits.
* The reference ``q_ref(t)`` is differential inverse kinematics of a straight tool-point path: the tool point
  starts ``GAP`` behind the box at the box's mid-height, waits ``T_SETTLE``, moves ``stroke`` along +x with a
  minimum-jerk profile over ``T_PUSH`` and holds for ``T_HOLD``, the hand pointing down all along (two
  Gauss-Newton steps per time step on position and orientation, warm-started from the previous step, the
  joints' velocity and acceleration references by finite differences). Everything is a jnp function of
  ``stroke``, so the box's final position is differentiable in it.
* Simulation: ``jb.step_semi_explicit_euler`` at ``DT`` = 1 ms in one ``lax.scan``.
* Optimization: Newton's method on ``box_dx(stroke) = target`` with ``d box_dx / d stroke`` through the whole
  rollout, every contact step included: forward mode (``jax.jvp``; one parameter, and the trajectory, the value
  and the derivative come from one compilation), checked against central differences; the full run also takes
  it by reverse mode (``jax.grad``, a longer compile) and compares.

Run ``PYTHONPATH=. python3 examples/push_box_panda.py`` from the repository root.
"""

from __future__ import annotations

import pathlib
import re
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxbody as jb  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
PANDA_URDF = ROOT / "tests" / "models" / "panda.urdf"
ARM_JOINTS = [f"panda_joint{i}" for i in range(1, 8)]
Q_READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])  # the Panda's "ready" pose: hand down
EFFORT = np.array([87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0])  # N m, the URDF's <limit effort>

BOX_HALF = np.array([0.05, 0.05, 0.05])  # m, the box's half lengths
BOX_MASS = 0.5  # kg
BOX_START = np.array([0.50, 0.0])  # m, the box centre's start (x, y) on the table
PUSHER_RADIUS = 0.02  # m
GAP = 0.02  # m between the sphere and the box at the start
TABLE_MATERIAL = jb.ContactMaterial(5e4, 0.5, 0.5, 0.4)  # stiffness Pa (N/m per corner for the box), dissipation s/m, static, dynamic friction
BOX_MATERIAL = jb.ContactMaterial(5e4, 0.5, 0.5, 0.4)  # soft enough for explicit 1 ms steps on its four corners
PUSHER_MATERIAL = jb.ContactMaterial(1e6, 0.5, 0.5, 0.4)
TRANSITION_VELOCITY = 0.02  # m/s, friction's transition velocity
DT = 1e-3  # s
KP, KD = 400.0, 40.0  # 1/s^2, 1/s: the computed-torque gains (critical damping at 20 rad/s)

SIZES = {
    False: dict(t_settle=0.2, t_push=1.2, t_hold=0.4, stroke=0.12, target=0.15, newton=3),
    True: dict(t_settle=0.1, t_push=0.5, t_hold=0.2, stroke=0.05, target=0.05, newton=2),
}


def load_scene():
    """(system, model, parts): the Panda on a table with a free box and a pusher sphere at its tool point.

    parts: dict with ``tcp`` (mobilized body, station) of the tool point, ``box`` (its MobilizedBody), ``contact``
    (the CompliantContactSubsystem), ``arm_q`` (the 7 arm q indices), ``box_q`` (slice of the box's q: quaternion
    (w, x, y, z) then position, m)."""
    text = PANDA_URDF.read_text()
    text = re.sub(r'(<joint name="panda_finger_joint\d" type=")prismatic', r"\1fixed", text)
    text = text.replace('<mimic joint="panda_finger_joint1"/>', "")
    panda = jb.io.load_urdf(text)
    system, matter, forces = panda.system, panda.matter, panda.forces
    for name in ARM_JOINTS:
        coordinate = panda.coordinates[name]
        jb.Force.CoordinateActuator(forces, coordinate.mobilized_body, 0, 1.0, name=name)
    tracker = jb.ContactTrackerSubsystem(system)
    contact = jb.CompliantContactSubsystem(system, tracker)
    contact.set_transition_velocity(TRANSITION_VELOCITY)

    ground = matter.Ground()
    down = jb.Transform(jb.Rotation(np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])))  # half-space x_H = -z: solid below z = 0
    ground.update_body().add_contact_surface(down, jb.ContactSurface(jb.ContactGeometry.HalfSpace(), TABLE_MATERIAL))
    ground.add_body_decoration(jb.Transform([0.45, 0.0, -0.01]),
                               jb.DecorativeBrick([0.35, 0.25, 0.01]).set_color([0.75, 0.65, 0.5]))

    inertia = BOX_MASS / 3 * np.array([BOX_HALF[1] ** 2 + BOX_HALF[2] ** 2, BOX_HALF[0] ** 2 + BOX_HALF[2] ** 2,
                                       BOX_HALF[0] ** 2 + BOX_HALF[1] ** 2])
    box_body = jb.Body.Rigid(jb.MassProperties(BOX_MASS, np.zeros(3), jb.Inertia.from_matrix(np.diag(inertia))))
    box_body.add_contact_surface(None, jb.ContactSurface(jb.ContactGeometry.Brick(list(BOX_HALF)), BOX_MATERIAL))
    box = jb.MobilizedBody.Free(ground, jb.Transform(), box_body, jb.Transform(), name="box")
    box.add_body_decoration(jb.Transform(), jb.DecorativeBrick(list(BOX_HALF)).set_color([0.85, 0.35, 0.2]))

    tcp = panda.frames["panda_hand_tcp"]  # a frame fixed on panda_link7 (the fixed hand links are fused)
    tcp.mobilized_body.update_body().add_contact_surface(
        tcp.X_BF, jb.ContactSurface(jb.ContactGeometry.Sphere(PUSHER_RADIUS), PUSHER_MATERIAL))
    tcp.mobilized_body.add_body_decoration(tcp.X_BF, jb.DecorativeSphere(PUSHER_RADIUS).set_color([0.2, 0.3, 1.0]))
    system.set_default_length_scale(0.1)
    system.set_up_direction("+z")
    model = system.realize_topology()
    assert model.control_names == tuple(ARM_JOINTS), model.control_names  # the controls: the arm's torques, in order
    parts = dict(tcp=(tcp.mobilized_body, jnp.asarray(tcp.X_BF.p)), box=box, contact=contact,
                 arm_q=np.array([panda.q_index(j) for j in ARM_JOINTS]),
                 box_q=slice(box.q_start, box.q_start + 7), box_u=slice(box.u_start, box.u_start + 6))
    return system, model, parts


def initial_state(model, parts):
    """The arm at ``Q_READY`` (replaced by the IK start pose in ``make_reference``), the box resting on the table."""
    state = model.default_state()
    q = state.q.at[parts["arm_q"]].set(jnp.asarray(Q_READY))
    sink = BOX_MASS * 9.81 / 4 / (0.5 * TABLE_MATERIAL.get_stiffness())  # each corner's static depth (penalty law)
    q = q.at[parts["box_q"]].set(jnp.array([1.0, 0, 0, 0, BOX_START[0], BOX_START[1], BOX_HALF[2] - sink]))
    return state.set_q(q)


def min_jerk(s):
    """Minimum-jerk profile 10 s^3 - 15 s^4 + 6 s^5 on s clipped to [0, 1]."""
    s = jnp.clip(s, 0.0, 1.0)
    return s**3 * (10 - 15 * s + 6 * s**2)


def make_reference(model, parts, sizes):
    """``reference(stroke) -> (q_ref, qd_ref, qdd_ref)``, each (n_steps, 7): the arm's joint references at every
    step (see the module docstring), and ``n_steps``."""
    mobod, station = parts["tcp"]
    state0 = initial_state(model, parts)
    arm_q = parts["arm_q"]
    n_steps = int(round((sizes["t_settle"] + sizes["t_push"] + sizes["t_hold"]) / DT))
    times = DT * jnp.arange(n_steps)
    start = jnp.array([BOX_START[0] - BOX_HALF[0] - PUSHER_RADIUS - GAP, BOX_START[1], BOX_HALF[2]])

    def pose(q_arm):
        s = model.realize(state0.set_q(state0.q.at[arm_q].set(q_arm)), jb.Stage.Position)
        return mobod.find_station_location_in_ground(s, station), mobod.get_body_rotation(s)

    R_down = jax.jit(pose)(jnp.asarray(Q_READY))[1]  # keep the ready pose's hand orientation (pointing down)

    def error(q_arm, target):
        p, R = pose(q_arm)
        rotation = 0.5 * jnp.sum(jnp.cross(R, R_down, axisa=0, axisb=0), axis=0)  # small-angle R -> R_down
        return jnp.concatenate([p - target, -rotation])

    def gauss_newton(q_arm, target):
        r = error(q_arm, target)
        J = jax.jacfwd(error)(q_arm, target)
        posture = 1e-4 * (q_arm - jnp.asarray(Q_READY))  # a weak pull to the ready pose (the arm is redundant)
        H = J.T @ J + 1e-4 * jnp.eye(7)
        return q_arm - jnp.linalg.solve(H, J.T @ r + posture)

    def solve(q_arm, target, iterations):
        for _ in range(iterations):
            q_arm = gauss_newton(q_arm, target)
        return q_arm

    q_start = jax.jit(lambda: solve(jnp.asarray(Q_READY), start, 12))()

    def reference(stroke):
        s = min_jerk((times - sizes["t_settle"]) / sizes["t_push"])
        targets = start + stroke * s[:, None] * jnp.array([1.0, 0.0, 0.0])

        def track(q_arm, target):
            q_arm = solve(q_arm, target, 2)
            return q_arm, q_arm

        _, q_ref = jax.lax.scan(track, q_start, targets)
        qd_ref = jnp.gradient(q_ref, DT, axis=0)
        return q_ref, qd_ref, jnp.gradient(qd_ref, DT, axis=0)

    return reference, n_steps, q_start


def make_closed_loop(model, parts, state0):
    """``closed_loop(q_ref, qd_ref, qdd_ref) -> (q, u, tau)``: the computed-torque controller and the simulation
    from ``state0`` over the given joint references (each (n_steps, 7)): (n_steps + 1, nq), (n_steps + 1, nu),
    (n_steps, 7)."""
    arm_q = parts["arm_q"]
    arm_u = jnp.asarray(arm_q)  # Pin joints: the arm's u sit where its q do (the box's Free q/u follow them)
    effort = jnp.asarray(EFFORT)

    def controller(state, q_ref, qd_ref, qdd_ref):
        udot = jnp.zeros_like(state.u).at[arm_u].set(
            qdd_ref + KP * (q_ref - state.q[arm_q]) + KD * (qd_ref - state.u[arm_u]))
        realized = model.realize(state, jb.Stage.Velocity)
        gravity = model.get_gravity_body_forces(realized)
        tau = model.calc_residual_force_ignoring_constraints(realized, jnp.zeros_like(state.u), gravity, udot)[arm_u]
        return jnp.clip(tau, -effort, effort)

    def closed_loop(*refs):
        def step(state, ref):
            tau = controller(state, *ref)
            state = jb.step_semi_explicit_euler(model, state.set_controls(tau), DT)
            return state, (state.q, state.u, tau)

        _, (q, u, tau) = jax.lax.scan(step, state0, refs)
        return jnp.concatenate([state0.q[None], q]), jnp.concatenate([state0.u[None], u]), tau

    return closed_loop


def make_rollout(model, parts, sizes):
    """``rollout(stroke) -> (q, u, tau)``: the closed loop over the push's references (``make_closed_loop``);
    also returns the start state (arm at its IK start pose) and the number of steps."""
    reference, n_steps, q_start = make_reference(model, parts, sizes)
    state0 = initial_state(model, parts)
    state0 = state0.set_q(state0.q.at[parts["arm_q"]].set(q_start))
    closed_loop = make_closed_loop(model, parts, state0)
    return (lambda stroke: closed_loop(*reference(stroke))), state0, n_steps


def box_displacement(q, parts):
    """The box centre's displacement along x at the end (m)."""
    box = q[:, parts["box_q"]]
    return box[-1, 4] - box[0, 4]


def make_run(rollout, parts):
    """``run(stroke) -> (q, u, tau, dx, d dx / d stroke)``: the rollout and the box displacement with its
    derivative by forward mode (``jax.jvp``, one tangent: one parameter), jitted: the trajectories, the value
    and the derivative from one compilation."""

    def run(stroke):
        (q, u, tau), (dq, _, _) = jax.jvp(rollout, (stroke,), (jnp.ones_like(stroke),))
        return q, u, tau, box_displacement(q, parts), box_displacement(dq, parts)

    return jax.jit(run)


def main(small: bool = False, quiet: bool = False) -> dict:
    """Push with the initial stroke, check the derivative, Newton on the stroke so the box moves ``target``
    (full size: also ``jax.grad``, reverse mode, against the forward-mode derivative); returns the numbers."""
    sizes = SIZES[bool(small)]
    say = (lambda *a: None) if quiet else print
    system, model, parts = load_scene()
    rollout, state0, n_steps = make_rollout(model, parts, sizes)
    run = make_run(rollout, parts)
    stroke = jnp.asarray(sizes["stroke"])
    t0 = time.perf_counter()
    q, u, tau, dx, slope = jax.block_until_ready(run(stroke))
    t_compile = time.perf_counter() - t0
    t0 = time.perf_counter()
    jax.block_until_ready(run(stroke))
    t_run = time.perf_counter() - t0
    box = np.asarray(q[:, parts["box_q"]])
    first = dict(dx=float(dx), dy=float(box[-1, 5] - box[0, 5]), dz=float(box[-1, 6] - box[0, 6]),
                 max_tilt=float(np.max(2 * np.arccos(np.clip(np.abs(box[:, 0]), 0.0, 1.0)))))
    say(f"{n_steps} steps of {DT * 1e3:.0f} ms with their forward-mode derivative: compile + run {t_compile:.1f} s, "
        f"run {t_run:.2f} s")
    say(f"stroke {sizes['stroke'] * 100:.1f} cm: box moved dx {first['dx'] * 100:.2f} cm, dy {first['dy'] * 100:.3f} cm, "
        f"dz {first['dz'] * 1000:.3f} mm, tilted at most {np.degrees(first['max_tilt']):.2f} deg")
    h = 1e-4
    fd = (float(run(stroke + h)[3]) - float(run(stroke - h)[3])) / (2 * h)
    say(f"d box_dx / d stroke: jax.jvp {float(slope):.7f}, central differences (h = {h:g} m) {fd:.7f}")
    result = dict(first=first, derivative=float(slope), central_difference=fd, compile_s=t_compile, run_s=t_run,
                  n_steps=n_steps, q_first=np.asarray(q), target=sizes["target"])
    if not small:
        grad = jax.jit(jax.grad(lambda s: box_displacement(rollout(s)[0], parts)))
        t0 = time.perf_counter()
        result["reverse_mode"] = float(grad(stroke))
        result["reverse_compile_s"] = time.perf_counter() - t0
        say(f"jax.grad (reverse mode through the {n_steps} contact steps) {result['reverse_mode']:.7f} "
            f"(compile + run {result['reverse_compile_s']:.1f} s)")

    history = [(float(stroke), float(dx))]
    for _ in range(sizes["newton"]):
        stroke = stroke - (dx - sizes["target"]) / slope
        q, u, tau, dx, slope = run(stroke)
        history.append((float(stroke), float(dx)))
        say(f"Newton: stroke {float(stroke) * 100:.4f} cm -> box moves {float(dx) * 100:.4f} cm "
            f"(target {sizes['target'] * 100:.1f} cm)")
    result.update(stroke=float(stroke), history=np.array(history), q=np.asarray(q), u=np.asarray(u),
                  tau=np.asarray(tau), system=system, model=model, parts=parts, state0=state0)
    return result


if __name__ == "__main__":
    main()
