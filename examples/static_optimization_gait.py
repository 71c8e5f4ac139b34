"""Static optimization over a gait cycle of gait9dof18musc, every frame solved at once (one jit(vmap)), against
OpenSim 4.6's StaticOptimization analysis on the same frames.

The problem, as OpenSim's ``StaticOptimizationTarget`` states it (read from opensim-core's
``OpenSim/Analyses/StaticOptimization*.cpp``): at each frame (q, u, udot) find the controls x of every actuator,
bounded by its min/max control, minimizing sum_i x_i^2 (activation exponent 2) such that the model's accelerations of
every unconstrained coordinate equal the desired ones when each actuator's force is overridden to ``x_i F_i``:

- a muscle's F_i (``use_muscle_physiology``) is its ``calcInextensibleTendonActiveFiberForce(s, 1)``: for a
  Thelen2003Muscle the fiber of a rigid tendon, l_M cos(phi) = l_MT - l_T^slack, fiber velocity
  ldot_MT cos(phi), and F_iso fal fv cos(phi) at activation 1 (fv by inverting Thelen's force-velocity curve);
  0 when the fiber is at its minimum length. No passive fiber force enters: the override replaces the muscle force.
- a reserve (CoordinateActuator) has F_i = its optimal force.

The accelerations are linear in x, so "udot(x) = udot_desired" is the linear system ``A x = tau_ID`` over the
unconstrained coordinates: tau_ID = M udot + c - g (inverse dynamics with gravity, the model's only other force
here), and column i of A is the generalized force of actuator i at x_i = 1. For a muscle that column is
F_i R_i with R_i = -d(ldot_MT)/du: jaxbody's exact derivative of the imported path's lengthening speed (the moment
arms), no finite differences. The QP (strictly convex, equality and box constraints) is solved by a semismooth
Newton method on its dual: x(lam) = clip(A^T lam / 2, lo, hi), Newton steps on A x(lam) = tau_ID with the
Jacobian A D A^T / 2 (D: the free controls; the reserves, unbounded on every coordinate, keep it nonsingular)
and a backtracking line search on the dual function. Every frame runs the same iterations under vmap.

The model has no ground contact in this workflow: its contact and coordinate-limit forces are left out (in the
OpenSim generator too), so the pelvis residuals carry the body's weight. ``RESERVES`` are the actuators that
OpenSim's run adds to the model (tests/workflows/generate_static_optimization_golden.py uses them).

    PYTHONPATH=. python3 examples/static_optimization_gait.py
"""

from __future__ import annotations

import json
import pathlib
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np

import jaxbody as jb
from jaxbody._dynamics.muscles import pennation
from jaxbody._dynamics.muscles import thelen_curves as curves

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODEL_FILE = ROOT / "tests" / "models" / "osim" / "gait9dof18musc.osim"
GOLDEN_FILE = ROOT / "tests" / "workflows" / "golden" / "gait9dof18musc_static_optimization.json"
CYCLE = 1.0  # s, one gait cycle
N_FRAMES = 1000  # frames solved together at full size
GOLDEN_TIMES = tuple(0.05 + 0.1 * k for k in range(10))  # the frames compared with OpenSim (s)
#: Reserve CoordinateActuators (coordinate -> optimal force, N m or N), unbounded controls: residuals on the
#: pelvis (which no muscle can move) and weak reserves on each joint.
RESERVES = {"pelvis_tilt": 1000.0, "pelvis_tx": 1000.0, "pelvis_ty": 1000.0,
            "hip_flexion_r": 10.0, "knee_angle_r": 10.0, "ankle_angle_r": 10.0,
            "hip_flexion_l": 10.0, "knee_angle_l": 10.0, "ankle_angle_l": 10.0}
MUSCLE_BOUNDS = (0.01, 1.0)  # every muscle's min/max control in OpenSim 4.6 (min: Thelen's minimum activation)
NEWTON_ITERATIONS = 30


def coordinate_trajectory(rank: int, default: float, lo: float, hi: float, locked: bool, times):
    """(q, qdot, qddot) of one coordinate at ``times`` (s): rad or m (and per s, per s^2).

    ``rank``: the coordinate's index among the model's coordinate names sorted alphabetically (sets the phases).
    Two harmonics of the cycle around the default value moved at least a quarter of the range inside the range
    (amplitudes 12% and 4% of the range, at most 2 units wide), as in examples/opensim_inverse_dynamics.py.
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
    """(ImportedOsim, Model, muscle names, muscle handles) of gait9dof18musc (import warnings silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imported = jb.io.load_osim(MODEL_FILE)
    model = imported.system.realize_topology()
    names = [n for n, h in imported.forces_by_name.items() if hasattr(h, "get_muscle_info")]
    return imported, model, names, [imported.forces_by_name[n] for n in names]


def gait_frames(imported, model, times):
    """q, u, udot (n_frames, nq|nu) of the gait cycle at ``times``, in jaxbody's slots (u = qdot)."""
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


def rigid_tendon_optimal_force(p, length, lengthening_speed):
    """A Thelen2003Muscle's force along its tendon (N) at activation 1 with a rigid tendon: OpenSim's
    ``Thelen2003Muscle::calcInextensibleTendonActiveFiberForce(s, 1)``. p: Thelen2003Parameters; length (m),
    lengthening_speed (m/s) of the path."""
    lce = pennation.fiber_length_from_tendon(length, p.tendon_slack_length, p.optimal_fiber_length,
                                             p.pennation_angle_at_optimal, p.maximum_pennation_angle)
    l_min = p.minimum_fiber_length
    phi = p.pennation_angle(lce)
    cos_phi = jnp.cos(phi)
    lce_n = jnp.maximum(lce, l_min) / p.optimal_fiber_length
    dlce_n = lengthening_speed * cos_phi / (p.optimal_fiber_length * p.max_contraction_velocity)
    fal = curves.active_force_length(lce_n, p.k_shape_active)
    fv = curves.force_velocity_inverse(1.0, fal, dlce_n, p.af, p.flen, p.fv_linear_extrap_threshold)
    return jnp.where(lce > l_min, p.max_isometric_force * fal * fv * cos_phi, 0.0)


def solve_qp(A, b, lo, hi, iterations: int = NEWTON_ITERATIONS):
    """min ||x||^2 s.t. A x = b, lo <= x <= hi for one frame. A (m, n), b (m,), lo/hi (n,) (+-inf allowed).

    Semismooth Newton on the dual: x(lam) = clip(A^T lam / 2, lo, hi), g(lam) = ||x||^2 - lam.(A x - b) is
    concave with gradient b - A x(lam). It starts at the bound-free solution lam = 2 (A A^T)^-1 b; each step solves
    (A D A^T / 2) d = b - A x(lam) (D: controls off their bounds) and takes the longest of 1, 1/2, ..., 2^-39 that
    raises g by Armijo's rule (a full step once the active set settles: finite termination on this piecewise
    quadratic), until |A x - b|_inf <= 1e-12 max(1, |b|_inf) (then lam is dual optimal) or ``iterations`` steps
    (under vmap the loop runs until the slowest frame is done). Returns (x, |A x - b|_inf)."""
    def primal(lam):
        return jnp.clip(A.T @ lam / 2.0, lo, hi)

    def dual(lam):
        x = primal(lam)
        return x @ x - lam @ (A @ x - b)

    steps = 0.5 ** jnp.arange(40.0)

    def newton(carry):
        k, lam, _ = carry
        x = primal(lam)
        grad = b - A @ x
        free = ((x > lo) & (x < hi)).astype(A.dtype)
        d = jnp.linalg.solve((A * free) @ A.T / 2.0, grad)
        g0 = dual(lam)
        gains = jax.vmap(lambda t: dual(lam + t * d))(steps) - g0
        ok = gains >= 1e-4 * steps * (grad @ d)
        t = jnp.where(ok.any(), steps[jnp.argmax(ok)], 0.0)
        lam = lam + t * d
        return k + 1, lam, jnp.max(jnp.abs(A @ primal(lam) - b))

    def unfinished(carry):
        k, _, residual = carry
        return (k < iterations) & (residual > tol)

    lam0 = 2.0 * jnp.linalg.solve(A @ A.T, b)
    tol = 1e-12 * jnp.maximum(1.0, jnp.max(jnp.abs(b)))
    _, lam, _ = jax.lax.while_loop(unfinished, newton, (0, lam0, jnp.asarray(jnp.inf, A.dtype)))
    x = primal(lam)
    return x, jnp.max(jnp.abs(A @ x - b))


def make_static_optimization(imported, model, handles):
    """jit(vmap) of the per-frame static optimization: (q, u, udot) (n, nq|nu) -> (muscle controls (n, n_muscles),
    reserve controls (n, n_reserves) in ``RESERVES`` order, constraint residual (n,) in N m or N)."""
    state0 = imported.default_state(model)
    if state0.q.size != state0.u.size:
        raise jb.errors.InvalidArgument("static optimization needs u = qdot (a model of 1-dof and planar joints)")
    rows = np.array([imported.u_index(n) for n in imported.coordinate_info if not imported.coordinate_info[n].locked])
    reserve_u = np.array([imported.u_index(n) for n in RESERVES])
    reserve_columns = np.zeros((state0.u.size, len(RESERVES)))
    reserve_columns[reserve_u, np.arange(len(RESERVES))] = list(RESERVES.values())
    reserve_columns = jnp.asarray(reserve_columns[rows])
    params = [h._element(model).parameters for h in handles]
    n_muscles = len(handles)
    lo = jnp.concatenate([jnp.full(n_muscles, MUSCLE_BOUNDS[0]), jnp.full(len(RESERVES), -jnp.inf)])
    hi = jnp.concatenate([jnp.full(n_muscles, MUSCLE_BOUNDS[1]), jnp.full(len(RESERVES), jnp.inf)])
    no_mobility_forces = jnp.zeros(state0.u.shape)

    def lengths(qq):
        sq = model.realize(state0.set_q(qq), jb.Stage.Position)
        values = jnp.stack([h.get_length(sq, model) for h in handles])
        return values, values

    def one(q, u, udot):
        s = model.realize(state0.set_q(q).set_u(u), jb.Stage.Velocity)
        tau = model.calc_residual_force_ignoring_constraints(s, no_mobility_forces, model.get_gravity_body_forces(s),
                                                             udot)
        dl_dq, length = jax.jacfwd(lengths, has_aux=True)(q)  # (n_muscles, nq): u = qdot in an imported model
        f_opt = jnp.stack([rigid_tendon_optimal_force(p, length[i], dl_dq[i] @ u) for i, p in enumerate(params)])
        moment_arms = -dl_dq
        A = jnp.concatenate([(moment_arms.T * f_opt)[rows], reserve_columns], axis=1)
        x, residual = solve_qp(A, tau[rows], lo, hi)
        return x[:n_muscles], x[n_muscles:], residual

    return jax.jit(jax.vmap(one))


def opensim_reference():
    """OpenSim's StaticOptimization at ``GOLDEN_TIMES`` (the golden JSON), or None where it is absent."""
    return json.loads(GOLDEN_FILE.read_text()) if GOLDEN_FILE.exists() else None


def main(small: bool = False) -> dict:
    """Solve at OpenSim's frames and time the batched solve over ``N_FRAMES`` frames (10 when small)."""
    imported, model, names, handles = load()
    solve = make_static_optimization(imported, model, handles)
    t0 = time.perf_counter()
    muscles, reserves, residual = jax.block_until_ready(solve(*gait_frames(imported, model, np.array(GOLDEN_TIMES))))
    first_call = time.perf_counter() - t0
    out = {"muscle_names": names, "times": np.array(GOLDEN_TIMES), "activations": np.asarray(muscles),
           "reserve_controls": np.asarray(reserves), "max_constraint_residual": float(np.max(residual)),
           "first_call_s": first_call}

    ref = opensim_reference()
    if ref is not None:
        order = [ref["muscle_names"].index(n) for n in names]
        out["activations_opensim"] = np.array(ref["activations"])[:, order]
        out["reserve_controls_opensim"] = np.array([ref["reserve_controls"][n] for n in RESERVES]).T
        out["max_activation_error"] = float(np.max(np.abs(out["activations"] - out["activations_opensim"])))
        out["objective"], out["objective_opensim"] = (
            np.sum(a**2, 1) + np.sum(r**2, 1) for a, r in ((out["activations"], out["reserve_controls"]),
                                                          (out["activations_opensim"], out["reserve_controls_opensim"])))
        out["opensim_s_per_frame"] = ref["seconds_per_frame"]

    n = 10 if small else N_FRAMES
    frames = gait_frames(imported, model, np.arange(n) * CYCLE / n)
    jax.block_until_ready(solve(*frames))
    walls = []
    for _ in range(3):
        t0 = time.perf_counter()
        _, _, residual = jax.block_until_ready(solve(*frames))
        walls.append(time.perf_counter() - t0)
    out.update(n_frames=n, batched_solve_s=min(walls), cycle_max_constraint_residual=float(np.max(residual)))
    return out


if __name__ == "__main__":
    r = main()
    print(f"{len(r['muscle_names'])} muscles, {len(RESERVES)} reserves; at OpenSim's {len(r['times'])} frames: "
          f"compile + first call {r['first_call_s']:.1f} s, max |A x - tau| {r['max_constraint_residual']:.1e}")
    if "max_activation_error" in r:
        print(f"max |activation - OpenSim StaticOptimization's| = {r['max_activation_error']:.2e}; "
              f"objective sum x^2 jaxbody - OpenSim, relative: "
              f"{np.max((r['objective'] - r['objective_opensim']) / r['objective_opensim']):.1e} (max)")
        print(f"OpenSim 4.6 StaticOptimization: {1e3 * r['opensim_s_per_frame']:.2f} ms per frame (one thread)")
    print(f"batched solve, {r['n_frames']} frames: {r['batched_solve_s']:.3f} s "
          f"({1e6 * r['batched_solve_s'] / r['n_frames']:.1f} us per frame); max |A x - tau| "
          f"{r['cycle_max_constraint_residual']:.1e}")
