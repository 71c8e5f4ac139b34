"""``jaxbody demo --model PATH``: import a URDF, MJCF or OpenSim model, simulate a small batch, draw it.

The model is read with ``jaxbody.io`` (``load_urdf``, ``load_mjcf`` or ``load_osim`` by the file's
extension), its visual geometry becomes decorations (``jaxbody.viz.visuals``), and every lane of the batch
starts at the default configuration with its own random generalized speeds (projected onto the velocity
constraints when the model has any). One ``jit(vmap(simulate))`` integrates the batch with RK4; lane 0 is
written as an animation and its q, u, energy and constraint errors as a PNG. A model with muscles (an OpenSim
file's Thelen, Millard, DeGroote or rigid-tendon muscles) is driven by them instead: every lane starts from the
equilibrated default State at rest and follows a two-phase excitation pattern (``jaxbody.cli.demo_muscles``).
"""

from __future__ import annotations

import pathlib
import time

import numpy as np

from jaxbody.cli import demo_muscles
from jaxbody.cli.timing import compile_and_run

DEFAULT_BATCH = 16
#: s: the model demo's step when neither --dt nor the file (MJCF ``<option timestep>``) gives one.
MODEL_DT = 1e-3
#: With muscles: compliant tendons make the fiber dynamics stiff (arm26 needs 0.1 ms RK4 steps to follow OpenSim's
#: own simulation, examples/arm26_forward_simulation.py), and wrapped paths make each lane costly, so fewer lanes.
MUSCLE_DT = 1e-4
MUSCLE_BATCH = 4

LOADERS = {".urdf": "load_urdf", ".xml": "load_mjcf", ".mjcf": "load_mjcf", ".osim": "load_osim"}


def load_model(path):
    """The import record of ``path`` (``.urdf``, ``.xml``/``.mjcf`` or ``.osim``) from ``jaxbody.io``.

    Enables float64 first, so that the file's frames are built and checked in double precision.
    """
    import jax

    jax.config.update("jax_enable_x64", True)
    check_model_path(path)
    try:
        import jaxbody.io as io
    except ImportError as e:
        raise ImportError(f"--model needs jaxbody.io (the URDF/MJCF/OpenSim importers): {e}") from None
    loader = LOADERS[pathlib.Path(path).suffix.lower()]
    return getattr(io, loader)(str(path))  # MJCF: with contact, load_mjcf's default


def check_model_path(path) -> None:
    """InvalidArgument unless ``path`` is an existing file with one of LOADERS' extensions."""
    from jaxbody.errors import InvalidArgument

    suffix = pathlib.Path(path).suffix.lower()
    if suffix not in LOADERS:
        raise InvalidArgument(f"--model {path}: the extension must be one of {sorted(LOADERS)}")
    if not pathlib.Path(path).is_file():
        raise InvalidArgument(f"--model {path}: no such file")


def check_outputs(animation, out) -> None:
    """InvalidArgument (or ImportError for an MP4 without imageio-ffmpeg) before any simulation: the animation
    must be .gif or .mp4 and the plot a format matplotlib writes, each in an existing folder."""
    from jaxbody.errors import InvalidArgument
    from jaxbody.viz.animation import check_animation_path
    from jaxbody.viz.figure import new_figure

    if animation:
        check_animation_path(animation)  # an MP4 without imageio-ffmpeg: ImportError
    if out:
        formats = sorted(new_figure().canvas.get_supported_filetypes())
        path = pathlib.Path(out)
        if path.suffix.lower().lstrip(".") not in formats:
            raise InvalidArgument(f"--out {out}: the extension must be one of {['.' + f for f in formats]}")
        if not path.parent.is_dir():
            raise InvalidArgument(f"--out {out}: the folder {path.parent} does not exist")


def model_meshes(path):
    """The MeshLibrary for a model file: mesh files searched from the file's folder; for MJCF, MuJoCo's compiled
    mesh assets by name (their vertices in the frame the importer's visual records use)."""
    from jaxbody.viz.meshes import MeshLibrary

    path = pathlib.Path(path)
    meshes = {}
    if LOADERS.get(path.suffix.lower()) == "load_mjcf":
        import mujoco

        m = mujoco.MjModel.from_xml_path(str(path))
        for i in range(m.nmesh):
            v, f = m.mesh_vertadr[i], m.mesh_faceadr[i]
            meshes[mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_MESH, i)] = (
                m.mesh_vert[v:v + m.mesh_vertnum[i]], m.mesh_face[f:f + m.mesh_facenum[i]])
    return MeshLibrary([path.parent], meshes)


def set_view_hints(system, model):
    """Visualization hint for an imported model (the importers already set "up" opposite gravity): a default
    length scale of a quarter of the bodies' reach from Ground's origin (the default body frames are half that
    long), so frames fit the model."""
    import jaxbody as jb

    p_GB = np.asarray(model.realize(model.default_state(), jb.Stage.Position).position.p_GB)
    system.set_default_length_scale(max(float(np.max(np.linalg.norm(p_GB, axis=1))), 0.1) / 4)


def random_speeds(system, model, rng, batch, speed, imported=None):
    """A batch of the file's default State (``imported.default_state(model)``: MuJoCo's qpos0, OpenSim's
    initSystem State, URDF's zero inside the joint limits; ``model.default_state()`` without a record) with
    generalized speeds ~ N(0, speed^2), projected when there are constraints."""
    import jax
    import jax.numpy as jnp

    state = imported.default_state(model) if hasattr(imported, "default_state") else model.default_state()
    u = jnp.asarray(speed * rng.normal(size=(batch, model.get_num_u())), state.u.dtype)
    states = jax.vmap(state.set_u)(u)
    if system.get_matter_subsystem().get_num_constraints():
        states = jax.vmap(lambda s: system.project(s)[0])(states)
    return states


def run_model_demo(imported, batch=DEFAULT_BATCH, steps=1000, dt=MODEL_DT, out="jaxbody_model_trajectory.png",
                   animation="jaxbody_model.gif", n_frames=40, speed=0.5, seed=0, cylinder_axis="z", verbose=True,
                   meshes=None):
    """Simulate ``batch`` lanes of an imported model and draw lane 0; returns a dict of timings and outputs.

    ``imported`` is a ``jaxbody.io`` import record before ``realize_topology()``: ``.system``, ``.bodies``,
    ``.visuals`` (see ``jaxbody.viz.visuals``; those that cannot be drawn are skipped with a warning;
    ``cylinder_axis`` "y" for OpenSim's, "z" for URDF's and MJCF's); the importer has set the up direction.
    Lanes start from the file's default State (``random_speeds``), or, with muscles, equilibrated at rest and
    driven by them (``results["muscles"]``: what the driven coordinate did). ``steps`` is rounded down to
    ``n_frames`` times the save interval ``steps // n_frames``, so the animation has exactly ``n_frames`` frames
    (one per saved sample; at most ``steps``; with muscles, rounded down to even: half per phase); ``meshes`` (see
    ``jaxbody.viz.plot_state``) finds the mesh files, and the plots name coordinates by the record's
    ``.coordinates``. The output paths are checked before anything is simulated. Enables float64.
    """
    import jax

    jax.config.update("jax_enable_x64", True)
    import jaxbody as jb
    from jaxbody import viz

    check_outputs(animation, out)
    log = print if verbose else (lambda *a, **k: None)
    n_decorations = viz.add_visual_decorations(imported.bodies, getattr(imported, "visuals", ()),
                                               cylinder_axis=cylinder_axis, on_error="warn")
    system = imported.system
    model = system.realize_topology()
    set_view_hints(system, model)
    handles = demo_muscles.muscle_handles(imported)
    phases = 2 if handles else 1                      # muscles: agonists on, then antagonists on
    n_frames = max(phases, min(n_frames, steps)) // phases * phases
    save_every = steps // n_frames
    steps = save_every * n_frames                    # exactly n_frames saved samples
    log(f"jaxbody demo --model: {system.get_matter_subsystem().get_num_bodies() - 1} bodies, "
        f"nq={model.get_num_q()}, nu={model.get_num_u()}, {len(handles)} muscles, {n_decorations} decorations; "
        f"{batch} lanes, RK4 dt={dt:g} s x {steps} steps, float64, backend={jax.default_backend()}")
    jb.compiled_available()   # builds the kernels on a machine's first run (timed on its own line), not in compile time
    if handles:
        state0 = demo_muscles.equilibrated_default_state(imported, model)
        arms = demo_muscles.moment_arms(model, state0, list(handles.values()))
        coordinate, agonists, _ = demo_muscles.choose_agonists(imported, arms, list(handles))
        levels = demo_muscles.excitation_levels(batch)
        inputs = jax.numpy.asarray(demo_muscles.phase_controls(model, handles, agonists, levels))
        run = jax.jit(jax.vmap(lambda c: demo_muscles.muscle_driven_run(model, state0, c, dt, steps // 2,
                                                                        save_every)))
    else:
        inputs = random_speeds(system, model, np.random.default_rng(seed), batch, speed, imported)
        run = jax.jit(jax.vmap(lambda s: jb.simulate(model, s, dt, steps, method="rk4", save_every=save_every)[1]))
    trajectory, compile_s, wall_s = compile_and_run(run, inputs)
    log(f"compile time: {compile_s:.2f} s; wall time: {wall_s:.3f} s "
        f"({batch * steps / wall_s:.4g} system-steps/s)")

    lane0 = jax.tree_util.tree_map(lambda x: x[0], trajectory)
    results = dict(batch=batch, steps=steps, dt=dt, compile_s=compile_s, wall_s=wall_s, frames=0, out=None,
                   animation=None, finite=bool(np.all(np.isfinite(np.asarray(trajectory.q)))))
    if handles:
        results["muscles"] = demo_muscles.report(imported, trajectory, coordinate, handles, agonists, levels, log)
    if animation:
        t0 = time.perf_counter()
        results["frames"] = viz.animate(system, model, lane0, animation, fps=max(1.0, 1.0 / (dt * save_every)),
                                        meshes=meshes)
        results["animation"], results["animation_s"] = str(animation), time.perf_counter() - t0
        log(f"wrote {animation} ({results['frames']} frames of lane 0 in {results['animation_s']:.2f} s)")
    if out:
        _, data = viz.plot_trajectory(model, lane0, path=out, coordinates=getattr(imported, "coordinates", None))
        e = data["energy"]
        results["out"] = str(out)
        log(f"wrote {out}; lane 0 energy {e[0]:.6g} -> {e[-1]:.6g} J, max |qErr| {data['q_err'].max():.3g}")
        every = pathlib.Path(out).with_name(f"{pathlib.Path(out).stem}_coordinates{pathlib.Path(out).suffix}")
        viz.plot_coordinates(lane0, every, coordinates=getattr(imported, "coordinates", None))
        results["coordinates_out"] = str(every)
        log(f"wrote {every} (every q and u, 12 to a panel)")
    return results


__all__ = ["load_model", "run_model_demo", "random_speeds", "check_model_path", "check_outputs", "model_meshes"]
