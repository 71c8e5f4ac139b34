"""Muscle-driven forward simulation of OpenSim's arm26 from excitations, batched over excitation levels, checked
against OpenSim 4.6's own forward simulation of the same excitations.

* ``tests/models/osim/arm26.osim`` read by ``jb.io.load_osim``: 2 coordinates (shoulder elevation, elbow
  flexion), six Thelen2003Muscles with compliant tendons on GeometryPaths with their WrapCylinder and WrapEllipsoid
  objects; each muscle's activation and fiber length are ``State.z`` entries, its excitation a control.
* Every lane starts from the file's default State (arm hanging, elbow straight) with its fibers equilibrated
  (``jb.equilibrate_muscles``) and follows a reach-and-hold pattern of piecewise-constant excitations:

  - 0 - 0.1 s: the elbow's flexors (the muscles with a positive moment arm about it: biceps long and short,
    brachialis) at the lane's level, the triceps off (0.01);
  - 0.1 - 0.4 s: the flexors at 0.35 x the level and the triceps at 0.6 x the level (they brake the swing and
    hold the forearm against gravity).

  The lanes' levels run from 1.0 down to 0.25. The flexors are chosen from the exact moment arms
  (``jaxbody.cli.demo_muscles``, as ``jaxbody demo --model`` does), and the four 0.1 s phases are one ``lax.scan``
  over RK4 steps of ``jb.simulate``, so the realize is compiled once for all lanes and phases.
* Step: RK4 at 0.1 ms. Thelen's compliant tendons make the fiber dynamics stiff, most where a muscle at minimum
  activation is stretched fast (the triceps while the flexors swing the forearm). At 1 ms the fully excited lane
  leaves OpenSim's trajectory within 0.1 s (the elbow falls back to -28 deg where OpenSim reaches 99 deg); at
  0.25 ms it follows it to 0.04 deg but TRIlong's fiber jumps 5 mm for one frame (its tendon force drops from
  48 N to 0); at 0.1 ms the first 0.1 s agrees with OpenSim (error-controlled RungeKuttaMerson, accuracy 1e-9) to
  0.003 deg and 1.4 N (the quarter-excited lane: 3e-8 deg), ``tests/workflows/test_arm26_forward_simulation.py``
  against ``tests/workflows/generate_arm26_forward_golden.py``. Held fully on, the flexors drive the elbow past
  its range (OpenSim's own run of that ends in NaN at 0.28 s): the hold phase is what keeps this protocol
  physical.
* Output: the elbow and shoulder angles, every muscle's activation, normalized fiber length and tendon force over
  time, per lane. Tendon forces come from one vmapped realize of the saved frames to the Dynamics stage
  (``MuscleHandle.get_tendon_force``).

Cost on the project's 2-core CPU: see notebook 13 (compile one to two minutes, then about 70 s per 1000 steps
of two lanes: TRIlong's three wrap objects take OpenSim's multi-wrap passes, and the ellipsoids' iterative
searches run as XLA while loops of many small kernels).

    PYTHONPATH=. python3 examples/arm26_forward_simulation.py
"""

from __future__ import annotations

import pathlib

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxbody as jb  # noqa: E402
from jaxbody.cli import demo_muscles  # noqa: E402
from jaxbody.cli.timing import compile_and_run  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
ARM26 = ROOT / "tests" / "models" / "osim" / "arm26.osim"
LEVELS = (1.0, 0.25)   # the lanes' excitation levels
EXCITATION_OFF = 0.01  # OpenSim's minimum control of a Thelen2003Muscle
#: (duration s, flexors' excitation, triceps' excitation) with ``None`` = off and numbers as fractions of the
#: lane's level.
PROTOCOL = ((0.1, 1.0, None), (0.3, 0.35, 0.6))
PHASE = 0.1            # s: the scan's phase (every protocol duration is a multiple of it)
DT = 1e-4              # s: RK4 step
FRAME = 0.01           # s: a saved frame every 10 ms


def phase_controls(model, handles, flexors, levels):
    """(lanes, phases, num_controls): the protocol's excitations per PHASE-long phase."""
    rows = []
    for duration, flexor, triceps in PROTOCOL:
        for _ in range(int(round(duration / PHASE))):
            c = np.zeros((len(levels), model.num_controls))
            for name, h in handles.items():
                share = flexor if name in flexors else triceps
                c[:, h.control_slice] = (np.full(len(levels), EXCITATION_OFF) if share is None
                                         else share * np.asarray(levels))[:, None]
            rows.append(c)
    return np.stack(rows, axis=1)


def simulate_arm26(levels=LEVELS, duration=None, dt=DT, log=print):
    """Run the protocol (its first ``duration`` s if given, a multiple of PHASE) for each excitation level.
    Returns a dict: ``t`` (frames,) s, ``levels``, ``muscles`` (names), ``flexors``, ``elbow_deg`` and
    ``shoulder_deg`` (lanes, frames), ``activation``, ``fiber_length`` (normalized by the optimal fiber length) and
    ``tendon_force`` (N), each (lanes, frames, muscles), plus ``compile_s`` and ``run_s`` of the simulation."""
    imported = jb.io.load_osim(str(ARM26))
    model = imported.system.realize_topology()
    handles = demo_muscles.muscle_handles(imported)
    names = list(handles)
    state0 = demo_muscles.equilibrated_default_state(imported, model)
    arms = demo_muscles.moment_arms(model, state0, list(handles.values()))
    coordinate, flexors, _ = demo_muscles.choose_agonists(imported, arms, names)
    controls = phase_controls(model, handles, flexors, levels)
    if duration is not None:
        controls = controls[:, :int(round(duration / PHASE))]
    controls = jnp.asarray(controls)
    steps, save_every = int(round(PHASE / dt)), int(round(FRAME / dt))

    run = jax.jit(jax.vmap(lambda c: demo_muscles.muscle_driven_run(model, state0, c, dt, steps, save_every)))
    trajectory, compile_s, run_s = compile_and_run(run, controls)
    log(f"arm26: {len(levels)} lanes x {controls.shape[1] * steps} RK4 steps of {dt * 1e3:g} ms: compile "
        f"{compile_s:.1f} s, run {run_s:.1f} s; flexors of {coordinate}: {flexors}")

    def tendon_forces(q, u, z, c):
        s = model.realize(state0.set_q(q).set_u(u).set_z(z).set_controls(c), jb.Stage.Dynamics)
        return jnp.stack([h.get_tendon_force(s, model) for h in handles.values()])

    frames = trajectory.q.shape[1]
    per_frame_controls = jnp.repeat(controls, frames // controls.shape[1], axis=1)   # (lanes, frames, controls)
    forces = jax.jit(jax.vmap(jax.vmap(tendon_forces)))(trajectory.q, trajectory.u, trajectory.z,
                                                          per_frame_controls)
    z = np.asarray(trajectory.z)
    index = {v: [h.z_slice.start + h.state_names.index(v) for h in handles.values()]
             for v in ("activation", "fiber_length")}
    optimal = np.array([float(h.get_parameter(model, "optimal_fiber_length")) for h in handles.values()])
    q = np.degrees(np.asarray(trajectory.q))
    return dict(t=FRAME * np.arange(1, frames + 1), levels=np.asarray(levels), muscles=names, flexors=flexors,
                coordinate=coordinate, elbow_deg=q[..., imported.q_index(coordinate)],
                shoulder_deg=q[..., imported.q_index("r_shoulder_elev")],
                activation=z[..., index["activation"]], fiber_length=z[..., index["fiber_length"]] / optimal,
                tendon_force=np.asarray(forces), compile_s=compile_s, run_s=run_s)


def main(small=False, log=print):
    """The notebook's run (0.4 s), or a small one (the first 0.1 s phase)."""
    out = simulate_arm26(duration=PHASE if small else None, log=log)
    for lane, level in enumerate(out["levels"]):
        log(f"excitation {level:.2f}: elbow {out['elbow_deg'][lane, 0]:.1f} -> max "
            f"{out['elbow_deg'][lane].max():.1f} -> {out['elbow_deg'][lane, -1]:.1f} deg; peak tendon force "
            f"{out['tendon_force'][lane].max():.0f} N")
    return out


if __name__ == "__main__":
    main()
