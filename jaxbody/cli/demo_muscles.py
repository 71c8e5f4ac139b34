"""``jaxbody demo --model FILE.osim`` on a model with muscles: a muscle-driven forward simulation.

The demo picks the coordinate that the most muscles span (ties: the largest summed |moment arm|; arm26: the
elbow), calls the muscles with a positive moment arm about it the agonists (arm26: biceps and brachialis) and
the others the antagonists (the triceps). Every lane starts from the file's default State with its muscles
equilibrated (``jb.equilibrate_muscles``: fiber lengths at rest for the default activations) and follows a
two-phase excitation pattern: for the first half of the run the agonists are excited to the lane's level
(lane 0: 1.0, then evenly down to 0.2) and the antagonists to the minimum 0.01; for the second half both
groups swap (the antagonists at the lane's level). Controls are held constant within a phase (the
integrators' zero-order hold) and the two phases are one ``lax.scan`` over the same RK4 ``jb.simulate``, so
the model's realize is traced and compiled once. Moment arms are the exact ``-d(lengthening speed)/du``.
"""

from __future__ import annotations

import numpy as np

#: Excitation of a muscle that is off (OpenSim's default minimum control of a Thelen2003Muscle).
EXCITATION_OFF = 0.01
#: The lanes' excitation levels run from 1.0 (lane 0) down to this.
LOWEST_LEVEL = 0.2
#: m: a muscle spans a coordinate when |moment arm| exceeds this.
SPANS = 1e-4


def muscle_handles(imported) -> dict:
    """Name -> MuscleHandle of every muscle ``load_osim`` built (``forces_by_name``), in file order."""
    from jaxbody._api.force_muscles import MuscleHandle

    return {n: h for n, h in getattr(imported, "forces_by_name", {}).items() if isinstance(h, MuscleHandle)}


def moment_arms(model, state, handles):
    """(muscles, nu) moment arms (m or dimensionless) at ``state``: ``-d(lengthening speed)/du``, the lengthening
    speeds at unit generalized speeds (the speed is linear in u). One jit of the muscles' paths."""
    import jax
    import jax.numpy as jnp

    import jaxbody as jb

    def speeds(u):
        s = model.realize(state.set_u(u), jb.Stage.Velocity)
        return jnp.stack([h.get_lengthening_speed(s, model) for h in handles])

    eye = jnp.eye(model.get_num_u(), dtype=state.u.dtype)
    return -np.asarray(jax.jit(jax.vmap(speeds))(eye)).T


def choose_agonists(imported, arms, names):
    """(coordinate name, agonist names, antagonist names) from ``arms`` (muscles, nu): the coordinate most muscles
    span (ties: largest summed |moment arm|), its positive-moment-arm muscles as agonists."""
    coordinates = list(imported.coordinate_info)
    columns = [imported.u_index(c) for c in coordinates]
    spans = np.abs(arms[:, columns]) > SPANS
    score = [(spans[:, k].sum(), np.abs(arms[:, columns[k]]).sum()) for k in range(len(coordinates))]
    best = max(range(len(coordinates)), key=lambda k: score[k])
    flex = arms[:, columns[best]] > SPANS
    return (coordinates[best], [n for n, f in zip(names, flex) if f], [n for n, f in zip(names, flex) if not f])


def excitation_levels(batch):
    """Each lane's excitation level (batch,): 1.0 for lane 0, evenly down to LOWEST_LEVEL."""
    return np.linspace(1.0, LOWEST_LEVEL, batch) if batch > 1 else np.ones(1)


def phase_controls(model, handles, agonists, levels):
    """(batch, 2, num_controls): phase 0 agonists at the lane's level, antagonists off; phase 1 swapped."""
    controls = np.zeros((len(levels), 2, model.num_controls))
    for name, h in handles.items():
        on = np.asarray(levels) if name in agonists else np.full(len(levels), EXCITATION_OFF)
        off = np.full(len(levels), EXCITATION_OFF) if name in agonists else np.asarray(levels)
        controls[:, 0, h.control_slice] = on[:, None]
        controls[:, 1, h.control_slice] = off[:, None]
    return controls


def muscle_driven_run(model, state0, controls, dt, steps_per_phase, save_every):
    """A jit-able function of ``controls`` (phases, num_controls) -> the trajectory (phases * frames per phase):
    RK4 from ``state0`` with each phase's controls held for ``steps_per_phase`` steps."""
    import jax

    import jaxbody as jb

    def phase(state, c):
        final, trajectory = jb.simulate(model, state.set_controls(c), dt, steps_per_phase, method="rk4",
                                        save_every=save_every)
        return final, trajectory

    _, trajectory = jax.lax.scan(phase, state0, controls)
    return jax.tree_util.tree_map(lambda x: x.reshape((x.shape[0] * x.shape[1],) + x.shape[2:]), trajectory)


def equilibrated_default_state(imported, model):
    """The file's default State with every muscle's fiber at equilibrium (``jb.equilibrate_muscles``)."""
    import jax

    import jaxbody as jb

    return jax.jit(lambda s: jb.equilibrate_muscles(model, s))(imported.default_state(model))


def report(imported, trajectory, coordinate, handles, agonists, levels, log):
    """Log and return what lane 0 did: the driven coordinate's start, extremes and end (deg for a rotation),
    and every muscle's peak activation; plus the extreme excursion over the lanes."""
    q = np.asarray(trajectory.q[..., imported.q_index(coordinate)])  # (batch, frames)
    z = np.asarray(trajectory.z)
    peak = {n: float(z[0, :, h.z_slice][:, 0].max()) for n, h in handles.items()}
    deg = np.degrees(q)
    results = dict(coordinate=coordinate, agonists=list(agonists), start_deg=float(deg[0, 0]),
                   max_deg=float(deg[0].max()), end_deg=float(deg[0, -1]), peak_activation=peak,
                   lane_max_deg=[float(v) for v in deg.max(axis=1)])
    log(f"muscles: agonists of {coordinate} {list(agonists)} on for the first half (lane 0 excitation "
        f"{levels[0]:.2f}), antagonists {[n for n in handles if n not in agonists]} on for the second")
    log(f"lane 0: {coordinate} {results['start_deg']:.1f} deg -> max {results['max_deg']:.1f} deg -> "
        f"{results['end_deg']:.1f} deg at the end; peak activations "
        + ", ".join(f"{n} {a:.2f}" for n, a in peak.items()))
    log(f"all lanes (excitation {levels[0]:.2f} .. {levels[-1]:.2f}): max {coordinate} "
        f"{min(results['lane_max_deg']):.1f} .. {max(results['lane_max_deg']):.1f} deg")
    return results


__all__ = ["muscle_handles", "moment_arms", "choose_agonists", "excitation_levels", "phase_controls",
           "muscle_driven_run", "equilibrated_default_state", "report"]
