"""Inverse dynamics of an OpenSim gait model over a batch of frames, against OpenSim 4.6's InverseDynamicsSolver.

The model is ``tests/models/osim/gait14dof22musc.osim`` (3-D, 17 coordinates of which 3 are locked; knees and
hips are CustomJoints) read by ``jaxbody.io.load_osim`` (muscles are skipped: only gravity is imported). Every
unlocked coordinate follows a smooth periodic "gait cycle" (two harmonics around its default value, inside its
range, ``coordinate_trajectory``); locked ones stay at their default value. For each frame the generalized
forces that produce the motion are Simbody's ``calcResidualForceIgnoringConstraints``, which OpenSim's
InverseDynamicsSolver calls with the forces the model applies (here gravity alone, muscles off): in jaxbody
``model.calc_residual_force_ignoring_constraints(state, 0, gravity_body_forces, udot)``, vmapped over frames.
Being differentiable, the same inverse dynamics also gives the sensitivity of the joint moments to each
segment's mass by ``jax.grad``.

OpenSim's numbers for the same frames are stored by ``tests/workflows/generate_inverse_dynamics_golden.py``
(which uses this module's ``coordinate_trajectory``) in ``tests/workflows/golden/``.

    PYTHONPATH=. python3 examples/opensim_inverse_dynamics.py
"""

from __future__ import annotations

import pathlib
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np

import jaxbody as jb

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODEL_FILE = ROOT / "tests" / "models" / "osim" / "gait14dof22musc.osim"
GOLDEN_FILE = ROOT / "tests" / "workflows" / "golden" / "gait14dof22musc_inverse_dynamics.npz"
CYCLE = 1.0  # s, one gait cycle
N_FRAMES = 150  # frames over the cycle (the golden file's)


def coordinate_trajectory(rank: int, default: float, lo: float, hi: float, locked: bool, times):
    """(q, qdot, qddot) of one coordinate at ``times`` (s): rad or m (and per s, per s^2).

    ``rank``: the coordinate's index among the model's coordinate names sorted alphabetically (sets the phases).
    Two harmonics of the cycle around the default value moved at least a quarter of the range inside the
    range (amplitudes 12% and 4% of the range, at most 2 units wide), so q stays within [lo, hi].
    """
    times = np.asarray(times, float)
    if locked:
        return np.full_like(times, default), np.zeros_like(times), np.zeros_like(times)
    width = hi - lo
    center = np.clip(default, lo + 0.25 * width, hi - 0.25 * width)
    a1, a2 = 0.12 * min(width, 2.0), 0.04 * min(width, 2.0)
    w = 2 * np.pi / CYCLE
    p1, p2 = 0.7 * rank, 1.9 * rank + 0.3
    q = center + a1 * np.sin(w * times + p1) + a2 * np.sin(2 * w * times + p2)
    qdot = a1 * w * np.cos(w * times + p1) + 2 * a2 * w * np.cos(2 * w * times + p2)
    qddot = -a1 * w**2 * np.sin(w * times + p1) - 4 * a2 * w**2 * np.sin(2 * w * times + p2)
    return q, qdot, qddot


def load():
    """(ImportedOsim, Model) of the gait model; the warning listing its skipped muscles is silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imported = jb.io.load_osim(MODEL_FILE)
    return imported, imported.system.realize_topology()


def gait_frames(imported, model, times):
    """q, u, udot (n_frames, nq|nu) of the gait cycle at ``times``, in jaxbody's slots (u = qdot: every joint
    of this model is a Pin or CustomJoint, whose speeds are their coordinates' derivatives)."""
    default = imported.default_state(model)
    n = len(times)
    q = np.tile(np.asarray(default.q), (n, 1))
    u, udot = np.zeros((n, default.u.size)), np.zeros((n, default.u.size))
    for rank, name in enumerate(sorted(imported.coordinate_info)):
        info = imported.coordinate_info[name]
        qi, ui = imported.q_index(name), imported.u_index(name)
        q[:, qi], u[:, ui], udot[:, ui] = coordinate_trajectory(
            rank, info.default_value, *info.range, info.locked, times)
    return jnp.asarray(q), jnp.asarray(u), jnp.asarray(udot)


def make_inverse_dynamics(model):
    """jit(vmap) of one frame's generalized forces (nu,): N m or N, the forces along each mobility.

    ``M udot + c - J^T F_gravity`` (Simbody's calcResidualForceIgnoringConstraints with the applied forces);
    constraints (here the three locks) are ignored, as OpenSim's InverseDynamicsSolver does.
    """
    state0 = model.default_state()
    no_mobility_forces = jnp.zeros(state0.u.shape)

    def one(q, u, udot):
        s = model.realize(state0.set_q(q).set_u(u), jb.Stage.Velocity)
        return model.calc_residual_force_ignoring_constraints(s, no_mobility_forces, model.get_gravity_body_forces(s), udot)

    return jax.jit(jax.vmap(one))


def make_mass_sensitivity(imported, model, q, u, udot):
    """jit(value_and_grad) of the mean square joint moment over the frames (N^2 m^2) with respect to each
    segment's mass scale factor (nbodies,) (mass and inertia scaled together, mass center kept: a uniform
    density change). The pelvis's six residuals are not joint moments and are left out."""
    joints = np.array(sorted(imported.u_index(n) for n in imported.coordinate_info if not n.startswith("pelvis_")))
    state0 = model.default_state()
    no_mobility_forces = jnp.zeros(state0.u.shape)

    def cost(scale):
        p = model.parameters
        m = jb.replace_parameters(model, mass=p.mass * scale, inertia_Bo_B=p.inertia_Bo_B * scale[:, None, None])

        def one(q, u, udot):
            s = m.realize(state0.set_q(q).set_u(u), jb.Stage.Velocity)
            return m.calc_residual_force_ignoring_constraints(s, no_mobility_forces, m.get_gravity_body_forces(s), udot)

        return jnp.mean(jax.vmap(one)(q, u, udot)[:, joints] ** 2)

    return jax.jit(jax.value_and_grad(cost))


def opensim_reference(imported):
    """OpenSim's frames and forces from the golden file, permuted into jaxbody's q and u slots."""
    g = np.load(GOLDEN_FILE)
    names = list(g["coordinate_names"])
    jq = np.array([imported.q_index(n) for n in names])
    ju = np.array([imported.u_index(n) for n in names])
    out = {"times": g["times"]}
    for key, (index, golden_index) in {"q": (jq, g["q_index"]), "u": (ju, g["u_index"]),
                                       "udot": (ju, g["u_index"]), "tau": (ju, g["u_index"])}.items():
        a = np.zeros_like(g[key])
        a[:, index] = g[key][:, golden_index]
        out[key] = a
    return out


def main(small: bool = False, frame_stride: int | None = None) -> dict:
    """Inverse dynamics over the golden file's frames (every ``frame_stride``-th: 10 when small, else all)."""
    stride = frame_stride or (10 if small else 1)
    imported, model = load()
    ref = opensim_reference(imported)
    times = ref["times"][::stride]
    q, u, udot = gait_frames(imported, model, times)
    input_mismatch = max(float(np.max(np.abs(np.asarray(a) - ref[k][::stride]))) for k, a in
                         (("q", q), ("u", u), ("udot", udot)))

    inverse_dynamics = make_inverse_dynamics(model)
    t0 = time.perf_counter()
    tau = np.asarray(jax.block_until_ready(inverse_dynamics(q, u, udot)))
    first_call = time.perf_counter() - t0

    tau_ref = ref["tau"][::stride]
    error = np.abs(tau - tau_ref) / np.maximum(1.0, np.abs(tau_ref))

    # Throughput: a batch of many frames (the cycle's frames repeated; small: the same batch, no new compile),
    # compiled once, best of 3 runs.
    reps = 1 if small else 200
    big = [jnp.tile(a, (reps, 1)) for a in (q, u, udot)]
    jax.block_until_ready(inverse_dynamics(*big))
    walls = []
    for _ in range(3):
        t0 = time.perf_counter()
        jax.block_until_ready(inverse_dynamics(*big))
        walls.append(time.perf_counter() - t0)

    # Differentiable inverse dynamics: d(mean square joint moment)/d(segment mass scale), checked on the right
    # femur by a central difference.
    sensitivity = make_mass_sensitivity(imported, model, q, u, udot)
    ones = jnp.ones(model.parameters.mass.shape)
    cost, d_scale = sensitivity(ones)
    k, h = imported.bodies["femur_r"].index, 1e-6
    fd = (sensitivity(ones.at[k].add(h))[0] - sensitivity(ones.at[k].add(-h))[0]) / (2 * h)

    return {
        "n_frames": len(times),
        "coordinates": sorted(imported.coordinate_info),
        "u_index": {n: imported.u_index(n) for n in imported.coordinate_info},
        "times": times,
        "tau": tau,
        "tau_opensim": tau_ref,
        "input_mismatch": input_mismatch,
        "max_relative_error": float(error.max()),
        "first_call_s": first_call,
        "throughput_frames": big[0].shape[0],
        "frames_per_s": big[0].shape[0] / min(walls),
        "mean_square_joint_moment": float(cost),
        "mass_sensitivity": {name: float(d_scale[body.index]) for name, body in imported.bodies.items()},
        "sensitivity_fd_relative_error": float(abs(d_scale[k] - fd) / abs(fd)),
    }


if __name__ == "__main__":
    r = main()
    print(f"{r['n_frames']} frames; inputs equal OpenSim's to {r['input_mismatch']:.1e}")
    print(f"max |tau - tau_OpenSim| / max(1, |tau_OpenSim|) = {r['max_relative_error']:.2e}")
    print(f"compile + first call {r['first_call_s']:.1f} s; batched ID: {r['frames_per_s']:.3g} frames/s "
          f"({r['throughput_frames']} frames per call)")
    print(f"d(mean square joint moment)/d(segment mass scale), {r['mean_square_joint_moment']:.4g} N^2 m^2 at 1: "
          + ", ".join(f"{k} {v:.3g}" for k, v in r["mass_sensitivity"].items() if k != "ground")
          + f"; vs central difference (femur_r): {r['sensitivity_fd_relative_error']:.1e}")
