"""``jaxbody demo``: a batch of 3D pendulum chains with varied parameters, RK4 under ``vmap``.

The chain has five slender links joined by Ball, Pin (about z), Ball, Pin
(about x) and Ball mobilizers and hangs in gravity. Every system in the batch
gets its own link masses and lengths (a batched Parameters pytree built with
``jb.replace_parameters``) and its own random initial state; one jit-compiled
``vmap(simulate)`` integrates them all. The demo reports compile time, wall
time, throughput and the relative energy drift of every system, and writes a
PNG of a few tip trajectories and the drift.

This module is only imported by the CLI (``jaxbody demo``) and by users who
call it; it turns on float64 inside :func:`run_demo`, never on import.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from jaxbody.cli.timing import compile_and_run

DEFAULT_BATCH = 256
DEFAULT_STEPS = 1000
DEFAULT_DT = 1e-3

# (joint kind, nominal mass kg, nominal length m) of each link, base to tip.
LINKS = (
    ("ball", 1.0, 0.5),
    ("pin_z", 0.8, 0.45),
    ("ball", 0.6, 0.4),
    ("pin_x", 0.5, 0.35),
    ("ball", 0.4, 0.3),
)
LINK_RADIUS = 0.02  # m, for the rods' inertia
GRAVITY = 9.81  # m/s^2 along -y
# Gravity's zero height lies below the lowest point any chain in the batch can
# reach (sum of lengths at the largest scale), so the potential energy and
# hence E(0) are positive and the relative drift |E(t)-E(0)|/|E(0)| is well scaled.
MASS_SCALE = (0.5, 1.5)
LENGTH_SCALE = (0.7, 1.3)
ZERO_HEIGHT = -1.05 * LENGTH_SCALE[1] * sum(length for _, _, length in LINKS)


def rod_mass_properties(mass, length, radius=LINK_RADIUS, xp=np):
    """(com_B, inertia about Bo in B) of a solid rod along -y from the body origin.

    Works on numpy (host construction) or jax.numpy (traced parameters) via ``xp``.
    """
    mass = xp.asarray(mass)
    length = xp.asarray(length)
    zero = xp.zeros_like(length)
    com = xp.stack([zero, -0.5 * length, zero], -1)
    transverse = mass * (3 * radius**2 + length**2) / 12
    axial = mass * radius**2 / 2
    central = xp.stack(
        [
            xp.stack([transverse, zero, zero], -1),
            xp.stack([zero, axial * xp.ones_like(length), zero], -1),
            xp.stack([zero, zero, transverse], -1),
        ],
        -2,
    )
    # Parallel-axis shift to the body origin: I_Bo = I_c + m (|c|^2 1 - c c^T).
    c2 = xp.sum(com * com, -1)
    shift = mass[..., None, None] * (c2[..., None, None] * xp.eye(3) - com[..., :, None] * com[..., None, :])
    return com, central + shift


def build_chain(gravity=GRAVITY, zero_height=ZERO_HEIGHT):
    """The nominal five-link chain. Returns (model, list of the links' MobilizedBody handles)."""
    import jaxbody as jb

    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.Gravity(forces, matter, [0.0, -1.0, 0.0], gravity, zero_height=zero_height)
    # A Pin turns about the common z of F and M; rotating both frames by 90
    # degrees about y makes it turn about the parent's (and body's) x axis.
    about_x = jb.Rotation.about_y(np.pi / 2)
    parent, parent_length, links = matter.Ground(), 0.0, []
    for i, (kind, mass, length) in enumerate(LINKS):
        com, inertia = rod_mass_properties(mass, length)
        body = jb.Body.Rigid(jb.MassProperties(mass, com, jb.Inertia.from_matrix(inertia)))
        offset = np.array([0.0, -parent_length, 0.0])
        name = f"link{i + 1}"
        if kind == "ball":
            mobod = jb.MobilizedBody.Ball(parent, jb.Transform(offset), body, jb.Transform(), name=name)
        elif kind == "pin_z":
            mobod = jb.MobilizedBody.Pin(parent, jb.Transform(offset), body, jb.Transform(), name=name)
        elif kind == "pin_x":
            mobod = jb.MobilizedBody.Pin(parent, jb.Transform(about_x, offset), body, jb.Transform(about_x), name=name)
        else:  # pragma: no cover - LINKS is fixed above
            raise ValueError(kind)
        links.append(mobod)
        parent, parent_length = mobod, length
    return system.realize_topology(), links


def with_link_parameters(model, masses, lengths, xp=None):
    """``model`` with link masses and lengths (..., nlinks) replaced.

    Updates mass, mass center, inertia about Bo and the joint locations (each
    child's X_PF sits at the end of its parent's rod). With leading batch axes
    (..., nlinks) every Parameters leaf gets those axes, so the result vmaps;
    ``xp=jax.numpy`` (default) makes it traceable (jit/grad), ``xp=numpy``
    builds a batch on the host without compiling anything.
    """
    import jax.numpy as jnp

    import jaxbody as jb

    xp = jnp if xp is None else xp
    prm = model.parameters
    dtype = prm.mass.dtype
    masses = xp.asarray(masses, dtype)
    lengths = xp.asarray(lengths, dtype)
    batch = masses.shape[:-1]
    com, inertia = rod_mass_properties(masses, lengths, xp=xp)
    zeros = xp.zeros_like(lengths)
    joint_y = -xp.concatenate([zeros[..., :1], lengths[..., :-1]], -1)
    p_PF = xp.stack([zeros, joint_y, zeros], -1)

    def rows(ground, links):  # Ground's row from the model, then the links
        ground = xp.broadcast_to(xp.asarray(ground, dtype), batch + (1,) + ground.shape)
        return xp.concatenate([ground, links], len(batch))

    def broadcast(x):
        return xp.broadcast_to(xp.asarray(x), batch + x.shape)

    new = jb.replace_parameters(
        model,
        mass=rows(prm.mass[0], masses),
        com_B=rows(prm.com_B[0], com),
        inertia_Bo_B=rows(prm.inertia_Bo_B[0], inertia),
        p_PF=rows(prm.p_PF[0], p_PF),
    )
    if not batch:
        return new
    # Give every other leaf (frames, force constants, default q) the batch axes too.
    done = {id(new.parameters.mass), id(new.parameters.com_B), id(new.parameters.inertia_Bo_B), id(new.parameters.p_PF)}
    return _tree_map(lambda x: x if id(x) in done else broadcast(x), new)


def _tree_map(f, tree):
    import jax

    return jax.tree_util.tree_map(f, tree)


def random_link_parameters(rng, batch):
    """Per-system link masses and lengths (batch, nlinks): nominal values times uniform scales.

    ``rng`` is a ``numpy.random.Generator``.
    """
    nominal_m = np.array([m for _, m, _ in LINKS])
    nominal_l = np.array([length for _, _, length in LINKS])
    shape = (batch, len(LINKS))
    masses = nominal_m * rng.uniform(*MASS_SCALE, size=shape)
    lengths = nominal_l * rng.uniform(*LENGTH_SCALE, size=shape)
    return masses, lengths


def random_states(model, links, rng, batch, max_angle=0.8, speed=1.0):
    """A batch of random initial states (leaves with a leading batch axis), built with numpy.

    Joint rotations up to ``max_angle`` rad (Ball: random axis; Pin: uniform
    angle), generalized speeds ~ N(0, speed^2).
    """
    import jax.numpy as jnp

    state = model.default_state()
    dtype = state.q.dtype
    q = np.broadcast_to(np.asarray(state.q), (batch, model.get_num_q())).copy()
    for mobod in links:
        if mobod.get_num_u() == 3:  # Ball, quaternion mode: q = (cos(a/2), sin(a/2) axis)
            axis = rng.normal(size=(batch, 3))
            axis /= np.linalg.norm(axis, axis=1, keepdims=True)
            angle = rng.uniform(0.0, max_angle, size=(batch, 1))
            block = np.concatenate([np.cos(angle / 2), np.sin(angle / 2) * axis], 1)
        else:  # Pin
            block = rng.uniform(-max_angle, max_angle, size=(batch, 1))
        q[:, mobod.q_start : mobod.q_start + block.shape[1]] = block
    u = speed * rng.normal(size=(batch, model.get_num_u()))
    batched = _tree_map(lambda x: jnp.asarray(np.broadcast_to(np.asarray(x), (batch,) + x.shape)), state)
    return dataclasses.replace(batched, q=jnp.asarray(q, dtype), u=jnp.asarray(u, dtype))


def energy(model, state):
    """Total energy (J) of an unrealized state: realize to Dynamics, then ``model.calc_energy``."""
    import jaxbody as jb

    return model.calc_energy(model.realize(state, jb.Stage.Dynamics))


def tip_position(model, link, length, state):
    """Ground location of the far end of ``link`` (station (0, -length, 0) in its body frame)."""
    import jaxbody as jb

    X = link.get_body_transform(model.realize(state, jb.Stage.Position))
    return X.R @ np.array([0.0, -1.0, 0.0]) * length + X.p


def run_demo(batch=DEFAULT_BATCH, steps=DEFAULT_STEPS, dt=DEFAULT_DT, out="jaxbody_demo.png", seed=0,
             n_frames=100, n_plot=4, verbose=True):
    """Run the demo; returns a dict of timings and energy-drift statistics (and writes ``out`` if given).

    ``n_frames`` states per system are saved (``steps`` is rounded down to a
    multiple of the save interval). Enables float64 (``jax_enable_x64``).
    """
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    import jaxbody as jb

    if batch < 1 or steps < 1 or not dt > 0:
        raise ValueError("batch and steps must be >= 1 and dt > 0")
    save_every = max(1, steps // max(1, n_frames))
    steps = (steps // save_every) * save_every
    log = print if verbose else (lambda *a, **k: None)

    model, links = build_chain()
    t_setup = time.perf_counter()
    rng = np.random.default_rng(seed)
    masses, lengths = random_link_parameters(rng, batch)
    models = with_link_parameters(model, masses, lengths, xp=np)  # host-built batch: nothing to compile
    models = _tree_map(jnp.asarray, models)
    states0 = random_states(model, links, rng, batch)
    setup_s = time.perf_counter() - t_setup

    def simulate_one(m, s):
        final, traj = jb.simulate(m, s, dt, steps, method="rk4", save_every=save_every)
        e0 = energy(m, s)
        e = jax.vmap(lambda st: energy(m, st))(traj)
        return final, traj, e0, e

    run = jax.jit(jax.vmap(simulate_one))
    log(f"jaxbody demo: {batch} five-link 3D pendulum chains (Ball/Pin/Ball/Pin/Ball, "
        f"nq={model.get_num_q()}, nu={model.get_num_u()}), RK4 dt={dt:g} s x {steps} steps "
        f"= {steps * dt:g} s, float64, backend={jax.default_backend()}")

    jb.compiled_available()   # builds the kernels on a machine's first run (timed on its own line), not in compile time
    (final, traj, e0, e), compile_s, wall_s = compile_and_run(run, models, states0)

    e0, e = np.asarray(e0), np.asarray(e)
    drift = np.abs(e - e0[:, None]) / np.abs(e0[:, None])  # (batch, frames)
    drift_max = drift.max(axis=1)
    finite = bool(np.all(np.isfinite(drift)))
    results = dict(
        batch=batch, steps=steps, dt=dt, setup_s=setup_s, compile_s=compile_s, wall_s=wall_s,
        system_steps_per_s=batch * steps / wall_s, batched_steps_per_s=steps / wall_s,
        max_drift=float(np.max(drift_max)) if finite else float("nan"),
        median_drift=float(np.median(drift_max)) if finite else float("nan"),
        out=None,
    )
    log(f"setup (params + states): {setup_s:8.2f} s")
    log(f"compile time:            {compile_s:8.2f} s (simulation + energy, vmapped)")
    log(f"wall time:               {wall_s:8.2f} s")
    log(f"throughput:              {results['system_steps_per_s']:.4g} system-steps/s "
        f"({results['batched_steps_per_s']:.4g} steps of all {batch} states per s)")
    log(f"max relative energy drift:    {results['max_drift']:.3e}")
    log(f"median relative energy drift: {results['median_drift']:.3e}")

    if out:
        n_plot = min(n_plot, batch)
        head = lambda tree: jax.tree_util.tree_map(lambda x: x[:n_plot], tree)  # noqa: E731
        tips = jax.jit(jax.vmap(  # over systems, then over saved frames
            lambda m, length, tr: jax.vmap(lambda st: tip_position(m, links[-1], length, st))(tr)
        ))(head(models), lengths[:n_plot, -1], head(traj))
        t = np.asarray(traj.t[0])
        _plot(out, np.asarray(tips), t, drift, drift_max, results)
        results["out"] = str(out)
        log(f"wrote {out}")
    return results


def _plot(out, tips, t, drift, drift_max, results):
    # An Agg canvas of our own: no pyplot, so the caller's matplotlib backend is left alone.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(15, 4.5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 3, 1, projection="3d")
    for i, tip in enumerate(tips):
        ax.plot(tip[:, 0], tip[:, 2], tip[:, 1], label=f"system {i}")
        ax.scatter(tip[0, 0], tip[0, 2], tip[0, 1], s=12)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("z (m)")
    ax.set_zlabel("y (m, up)")
    ax.set_title("tip trajectories")
    ax.legend(fontsize=7)

    ax = fig.add_subplot(1, 3, 2)
    floor = 1e-18
    for i in range(min(16, drift.shape[0])):
        ax.semilogy(t, np.maximum(drift[i], floor), lw=0.8)
    ax.set_xlabel("t (s)")
    ax.set_ylabel("|E(t) - E(0)| / |E(0)|")
    ax.set_title("energy drift (first systems)")

    ax = fig.add_subplot(1, 3, 3)
    ax.hist(np.log10(np.maximum(drift_max, floor)), bins=30)
    ax.set_xlabel("log10 max relative energy drift")
    ax.set_ylabel("systems")
    ax.set_title(f"{results['batch']} systems, RK4 dt={results['dt']:g}")
    fig.tight_layout()
    fig.savefig(out, dpi=100)


__all__ = ["build_chain", "with_link_parameters", "random_link_parameters", "random_states", "energy",
           "tip_position", "run_demo"]
