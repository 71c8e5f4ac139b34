"""The smallest reproduction of issue 34 (gradients through a Brick pushing a Brick): a free box (Brick) on a
table (HalfSpace z < 0), pushed along +x by a second body on a Slider (x) with a PD-tracked minimum-jerk
reference, every number like ``examples/push_box_panda.py`` (materials, 1 ms semi-explicit Euler steps).

``pusher`` is ``"brick"`` (a Brick whose front face is parallel to the box's: the Panda's finger pads) or
``"sphere"`` (the example's contact sphere). ``make_push(pusher, n_steps, ..., dt, material)`` returns
``rollout(stroke) -> q`` ((n_steps + 1, nq)), the box's q slice and the controlled step (for Jacobians).
Used by push_brick_tangent.py; as a script it prints jax.jvp of the box's final x displacement against
central differences at strokes around 5 cm (not a test: several minutes on 2 cores)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxbody as jb

MATERIAL = jb.ContactMaterial(5e4, 0.5, 0.5, 0.4)  # the example's table, box and arm material
BOX_HALF, BOX_MASS, PUSH_HEIGHT, GAP, DT = 0.05, 0.5, 0.07, 0.02, 1e-3
PUSHER_HALF = np.array([0.01, 0.02, 0.02])  # m, a finger-pad-sized Brick
PUSHER_RADIUS = 0.01  # m
KP, KD, PUSHER_MASS = 400.0, 40.0, 1.0


def make_push(pusher="brick", n_steps=800, t_settle=0.1, t_push=0.5, dt=DT, material=MATERIAL):
    """(rollout, box_q, step): see the module docstring; ``step(state, (ref, dref, ddref)) -> (state, q)`` is one
    controlled step of ``dt`` s."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, 0.0, -9.81])
    tracker = jb.ContactTrackerSubsystem(system)
    contact = jb.CompliantContactSubsystem(system, tracker)
    contact.set_transition_velocity(0.02)
    ground = matter.Ground()
    down = jb.Transform(jb.Rotation(np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])))
    ground.update_body().add_contact_surface(down, jb.ContactSurface(jb.ContactGeometry.HalfSpace(), material))
    inertia = BOX_MASS / 3 * 2 * BOX_HALF**2
    box_body = jb.Body.Rigid(jb.MassProperties(BOX_MASS, np.zeros(3), jb.Inertia(inertia, inertia, inertia)))
    box_body.add_contact_surface(None, jb.ContactSurface(jb.ContactGeometry.Brick([BOX_HALF] * 3), material))
    box = jb.MobilizedBody.Free(ground, jb.Transform(), box_body, jb.Transform(), name="box")
    front = PUSHER_HALF[0] if pusher == "brick" else PUSHER_RADIUS
    geometry = (jb.ContactGeometry.Brick(list(PUSHER_HALF)) if pusher == "brick"
                else jb.ContactGeometry.Sphere(PUSHER_RADIUS))
    pusher_body = jb.Body.Rigid(jb.MassProperties(PUSHER_MASS, np.zeros(3), jb.Inertia(1e-3, 1e-3, 1e-3)))
    pusher_body.add_contact_surface(None, jb.ContactSurface(geometry, material))
    x0 = -BOX_HALF - front - GAP
    slider = jb.MobilizedBody.Slider(ground, jb.Transform([x0, 0.0, PUSH_HEIGHT]), pusher_body, jb.Transform(),
                                     name="pusher")
    jb.Force.CoordinateActuator(forces, slider, 0, 1.0, name="push")
    model = system.realize_topology()
    state0 = model.default_state()
    sink = BOX_MASS * 9.81 / 4 / (0.5 * material.get_stiffness())  # each corner's static depth
    box_q = slice(box.q_start, box.q_start + 7)
    state0 = state0.set_q(state0.q.at[box_q].set(jnp.array([1.0, 0, 0, 0, 0, 0, BOX_HALF - sink])))
    times = dt * jnp.arange(n_steps)
    i_q, i_u = slider.q_start, slider.u_start

    def step(state, r):
        force = PUSHER_MASS * (r[2] + KP * (r[0] - state.q[i_q]) + KD * (r[1] - state.u[i_u]))
        state = jb.step_semi_explicit_euler(model, state.set_controls(force[None]), dt)
        return state, state.q

    def rollout(stroke):
        s = jnp.clip((times - t_settle) / t_push, 0.0, 1.0)
        ref = stroke * s**3 * (10 - 15 * s + 6 * s**2)
        dref = jnp.gradient(ref, dt)
        ddref = jnp.gradient(dref, dt)

        _, q = jax.lax.scan(step, state0, jnp.stack([ref, dref, ddref], -1))
        return jnp.concatenate([state0.q[None], q])

    rollout.state0 = state0
    return rollout, box_q, step


if __name__ == "__main__":
    import sys
    import time

    jax.config.update("jax_enable_x64", True)
    pusher = sys.argv[1] if len(sys.argv) > 1 else "brick"
    rollout, box_q, _ = make_push(pusher)

    @jax.jit
    def run(stroke):
        q, dq = jax.jvp(rollout, (stroke,), (jnp.ones_like(stroke),))
        return q[-1, box_q.start + 4] - q[0, box_q.start + 4], dq[-1, box_q.start + 4], q[:, box_q]

    t0 = time.perf_counter()
    run(jnp.asarray(0.05))
    print(pusher, f"compile {time.perf_counter() - t0:.1f} s", flush=True)
    h = 1e-4
    for s in [0.049, 0.0495, 0.04999, 0.05, 0.05001, 0.0505, 0.051]:
        dx, slope, box = run(jnp.asarray(s))
        fd = (float(run(jnp.asarray(s + h))[0]) - float(run(jnp.asarray(s - h))[0])) / (2 * h)
        box = np.asarray(box)
        tilt = np.degrees(np.max(2 * np.arccos(np.clip(np.abs(box[:, 0]), 0, 1))))
        print(f"stroke {s:.5f} dx {float(dx):.6f} jvp {float(slope):.6g} central {fd:.6g} max tilt {tilt:.3f} deg "
              f"dy {box[-1, 5] - box[0, 5]:.2e}", flush=True)
