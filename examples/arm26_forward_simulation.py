"""Muscle-driven forward simulation of OpenSim's arm26 from excitations, batched over excitation levels.

* ``tests/models/osim/arm26.osim`` read by ``jb.io.load_osim``: 2 coordinates (shoulder elevation, elbow
  flexion), six Thelen2003Muscles with compliant tendons on GeometryPaths with their WrapCylinder and WrapEllipsoid
  objects; each muscle's activation and fiber length are ``State.z`` entries, its excitation a control.
* Every lane starts from the file's default State with its fibers equilibrated (``jb.equilibrate_muscles``) and
  follows two phases of constant excitations: the elbow's agonists (the muscles with a positive moment arm about
  it: biceps long and short, brachialis) at the lane's level with the triceps off (0.01), then the reverse. The
  lanes' levels run from 1.0 down to 0.25. These are the pieces ``jaxbody demo --model`` uses
  (``jaxbody.cli.demo_muscles``): the agonists are chosen from the exact moment arms, and both phases are one
  ``lax.scan`` over RK4 steps of ``jb.simulate``, so the realize is compiled once for all lanes and phases.
* Output: the elbow angle, every muscle's activation, normalized fiber length and tendon force over time, per lane.
  Tendon forces come from one vmapped realize of the saved frames to the Dynamics stage
  (``MuscleHandle.get_tendon_force``).

Cost on the project's 2-core CPU (quiet; see the notebook for the measured run): the compile (equilibration,
the RK4 scan, the tendon-force pass) dominates; arm26's TRIlong crosses three wrap objects in OpenSim's eight
multi-wrap passes, all evaluated every time (README, "Not supported yet").

    PYTHONPATH=. python3 examples/arm26_forward_simulation.py
"""

from __future__ import annotations

import pathlib
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxbody as jb  # noqa: E402
from jaxbody.cli import demo_muscles  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
ARM26 = ROOT / "tests" / "models" / "osim" / "arm26.osim"
LANES = 4            # excitation levels 1.0 .. LOWEST_LEVEL
LOWEST_LEVEL = 0.25
DT = 1e-3            # s: RK4 step (Thelen's compliant tendons are stiff)
PHASE_STEPS = 300    # steps per phase: 0.3 s agonists, then 0.3 s antagonists
SAVE_EVERY = 10      # a frame every 10 ms


def simulate_arm26(lanes=LANES, phase_steps=PHASE_STEPS, dt=DT, save_every=SAVE_EVERY, log=print):
    """Run the two-phase simulation for ``lanes`` excitation levels. Returns a dict: ``t`` (frames,) s,
    ``levels`` (lanes,), ``muscles`` (names), ``agonists``, ``elbow_deg`` (lanes, frames), ``activation``,
    ``fiber_length`` (normalized by the optimal fiber length) and ``tendon_force`` (N), each (lanes, frames,
    muscles), plus ``compile_s`` and ``run_s`` of the simulation."""
    imported = jb.io.load_osim(str(ARM26))
    model = imported.system.realize_topology()
    handles = demo_muscles.muscle_handles(imported)
    names = list(handles)
    state0 = demo_muscles.equilibrated_default_state(imported, model)
    arms = demo_muscles.moment_arms(model, state0, list(handles.values()))
    coordinate, agonists, _ = demo_muscles.choose_agonists(imported, arms, names)
    levels = np.linspace(1.0, LOWEST_LEVEL, lanes) if lanes > 1 else np.ones(1)
    controls = jnp.asarray(demo_muscles.phase_controls(model, handles, agonists, levels))

    run = jax.jit(jax.vmap(lambda c: demo_muscles.muscle_driven_run(model, state0, c, dt, phase_steps, save_every)))
    t0 = time.perf_counter()
    compiled = run.lower(controls).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    trajectory = jax.block_until_ready(compiled(controls))
    run_s = time.perf_counter() - t0
    log(f"arm26: {lanes} lanes x {2 * phase_steps} RK4 steps of {dt * 1e3:g} ms: compile {compile_s:.1f} s, "
        f"run {run_s:.1f} s; agonists of {coordinate}: {agonists}")

    def tendon_forces(q, u, z, c):
        s = model.realize(state0.set_q(q).set_u(u).set_z(z).set_controls(c), jb.Stage.Dynamics)
        return jnp.stack([h.get_tendon_force(s, model) for h in handles.values()])

    frames = trajectory.q.shape[1]
    per_frame_controls = jnp.repeat(controls, frames // 2, axis=1)     # (lanes, frames, controls)
    forces = jax.jit(jax.vmap(jax.vmap(tendon_forces)))(trajectory.q, trajectory.u, trajectory.z,
                                                          per_frame_controls)
    z = np.asarray(trajectory.z)
    index = {v: [h.z_slice.start + h.state_names.index(v) for h in handles.values()] for v in ("activation",
                                                                                          "fiber_length")}
    activation = z[..., index["activation"]]
    optimal = np.array([float(h.get_parameter(model, "optimal_fiber_length")) for h in handles.values()])
    fiber = z[..., index["fiber_length"]] / optimal
    elbow = np.degrees(np.asarray(trajectory.q[..., imported.q_index(coordinate)]))
    t = dt * save_every * np.arange(1, frames + 1)
    return dict(t=t, levels=levels, muscles=names, agonists=agonists, coordinate=coordinate, elbow_deg=elbow,
                activation=activation, fiber_length=fiber, tendon_force=np.asarray(forces), compile_s=compile_s,
                run_s=run_s)


def main(small=False, log=print):
    """The notebook's run (four lanes, 0.3 s per phase), or a small one (two lanes, 20 ms per phase)."""
    out = simulate_arm26(lanes=2, phase_steps=20, save_every=5, log=log) if small else simulate_arm26(log=log)
    for lane, level in enumerate(out["levels"]):
        log(f"excitation {level:.2f}: elbow {out['elbow_deg'][lane, 0]:.1f} -> max "
            f"{out['elbow_deg'][lane].max():.1f} -> {out['elbow_deg'][lane, -1]:.1f} deg; peak tendon force "
            f"{out['tendon_force'][lane].max():.0f} N")
    return out


if __name__ == "__main__":
    main()
