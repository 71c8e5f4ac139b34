"""Moco's muscle-driven squat-to-stand prediction (Dembia et al. 2020, PLoS Comput Biol 16(12):e1008493, Table 1)
by direct collocation with jaxbody's exact derivatives.

The model is Moco's example model ``squatToStand_3dof9musc`` (hip, knee and ankle flexion; the patella's
knee_angle_r_beta follows the knee through a linear CoordinateCouplerConstraint; the foot welded to the ground;
9 muscles on paths with WrapCylinders), prepared as Moco's example helpers prepare it, by OpenSim itself
(``tests/io/generate_squat_to_stand_golden.py``: DeGrooteFregly2016Muscle.replaceMuscles, max isometric force x 2,
active force width scale 1.5, excitations in [0, 1]) with rigid tendons (ModOpIgnoreTendonCompliance). The helpers
also ignore soleus's passive fiber force; jaxbody's importer does not model that switch, so the file keeps it,
and Moco's same-run peer (``benchmarks/moco_squat_to_stand.py``) solves on the same file. The problem (a
MocoStudy with a MocoControlGoal):

    minimize    integral_0^T sum_m e_m(t)^2 dt                         (excitations e, the controls)
    subject to  x' = f(x, e): jaxbody's state derivative, x = (q, u of hip, knee, ankle; 9 activations);
                the patella's q and u follow from the coupler (q = q0 + P q_independent, u = P u_independent,
                exact for a linear coupler), udot comes from a realize to Acceleration with the constraint
                enforced, the activations' derivatives from the Dynamics stage;
                hip -2 -> 0, knee -2 -> 0, ankle -0.5 -> 0 (rad) in T = 1 s, at rest at both ends;
                between the ends hip in [-2, 0.5], knee in [-2, 0], ankle in [-0.5, 0.7], speeds in [-50, 50];
                e and activations in [0, 1].

Transcription: Hermite-Simpson as Moco's default (separated form: mesh points and interval midpoints are nodes;
per interval the Simpson defect x_{i+1} - x_i - h/6 (f_i + 4 f_m + f_{i+1}) and the Hermite interpolation
x_m - (x_i + x_{i+1})/2 - h/8 (f_i - f_{i+1}); the midpoint excitations are the mesh points' mean, as Moco's
interpolate_control_midpoints; Simpson quadrature of the objective), or trapezoidal. Every constraint is linear
in (X, E, F = f(X, E)): its Jacobian is L_X + L_F blockdiag(df/dx) and L_E + L_F blockdiag(df/de) with the per-node
Jacobians from one ``jax.vmap(jax.jacfwd(f))``: exact to rounding, no finite differences.

The solver is ``examples/_collocation.py``'s primal-dual interior-point method with a sparse KKT solve (the
constraint Jacobian is banded), second-order corrections and an adaptive proximal term (Levenberg-Marquardt) in
place of the Lagrangian's curvature; it stops at max |defect| <= 1e-6 with the Lagrangian's stationarity and the
complementarity <= ``OPTIMALITY_TOL`` (1e-3 as the paper's convergence tolerance; ``--tol`` to tighten).

Wraps: with the WrapCylinders, the per-node Jacobians did not finish compiling in 12 min here (the same
pathology as arm26's wrapped paths; with the path code's fixes of 2026-11-29 the state derivative compiles in
136 s instead of 596 s, the Jacobians still take over 7.5 min on the loaded 2-core machine), so the default is
the paths without their wrap sets (``--wraps`` to keep them); the multibody, the coupler, the muscles and the problem are unchanged.

    PYTHONPATH=. python3 examples/moco_style_squat_to_stand.py                    # HS, 50 intervals
    PYTHONPATH=. python3 examples/moco_style_squat_to_stand.py --intervals 10     # smaller
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

import jaxbody as jb

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _collocation import solve  # noqa: E402
from moco_style_arm26 import Problem  # noqa: E402

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[1]
SQUAT = ROOT / "tests" / "models" / "osim" / "squatToStand_3dof9musc_degroote.osim"
DURATION = 1.0      # s
INTERVALS = 50      # mesh intervals, as the paper
NODES = 2 * INTERVALS + 1
EXCITATION_BOUNDS = (0.0, 1.0)
SPEED_BOUND = 50.0  # rad/s, Moco's default speed bounds
#: coordinate -> (its joint, bounds between the ends, start, end) in rad: Moco's problem.setStateInfo
COORDINATES = {"hip_flexion_r": ("hip_r", (-2.0, 0.5), -2.0, 0.0),
               "knee_angle_r": ("knee_r", (-2.0, 0.0), -2.0, 0.0),
               "ankle_angle_r": ("ankle_r", (-0.5, 0.7), -0.5, 0.0)}
OPTIMALITY_TOL = 1e-3  # the paper's convergence tolerance (constraints: 1e-6, tighter than its 1e-3)
GUESS_EXCITATION = 0.2
GUESS_ACTIVATION = 0.1


def coupled_coordinates(imported, model):
    """(P (nq, k), q0 (nq,), independent q indices): every coordinate from the k independent ones, q = q0 + P q_I,
    for a model whose constraints are linear couplers (checked: the position errors vanish at random q_I)."""
    independent = np.array([imported.q_index(c) for c in COORDINATES])
    base = imported.default_state(model)
    nq = model.get_num_q()

    def perr(q):
        return model.calc_constraint_position_errors(model.realize(base.set_q(q), jb.Stage.Position))

    dependent = np.setdiff1d(np.arange(nq), independent)
    Pq = np.asarray(jax.jacfwd(perr)(base.q))                   # the errors' Jacobian (linear couplers)
    q0 = np.zeros(nq)
    q0[dependent] = -np.linalg.solve(Pq[:, dependent], np.asarray(perr(jnp.zeros(nq))))
    P = np.zeros((nq, len(independent)))
    P[independent, np.arange(len(independent))] = 1.0
    P[dependent] = -np.linalg.solve(Pq[:, dependent], Pq[:, independent])
    for q_i in np.random.default_rng(0).uniform(-1, 1, (3, len(independent))):
        residual = np.abs(np.asarray(perr(jnp.asarray(q0 + P @ q_i)))).max()
        if residual > 1e-12:
            raise ValueError(f"the model's constraints are not linear couplers (position error {residual:.1e})")
    return P, q0, independent


def transcription(nodes, nx, ne, h, scheme):
    """The constraints' linear maps (L_X, L_E, L_F) as sparse matrices (defects = L_X X + L_E E + L_F F, X and F
    flattened by node) and the objective's quadrature weights (nodes,)."""
    eye = sp.identity(nx, format="csr")
    if scheme == "trapezoidal":
        k = nodes - 1
        D = sp.diags([-np.ones(k), np.ones(k)], [0, 1], shape=(k, nodes))
        A = sp.diags([np.ones(k), np.ones(k)], [0, 1], shape=(k, nodes)) * (-0.5 * h)
        LX, LF, LE = sp.kron(D, eye), sp.kron(A, eye), sp.csr_matrix((k * nx, nodes * ne))
        weights = np.full(nodes, h)
        weights[[0, -1]] = h / 2
        return LX.tocsr(), LE.tocsr(), LF.tocsr(), weights
    intervals = (nodes - 1) // 2
    rows_x, rows_f, rows_e = [], [], []
    H = 2 * h                                   # an interval spans two nodes
    for i in range(intervals):
        a, m, b = 2 * i, 2 * i + 1, 2 * i + 2
        simpson_x, simpson_f = {a: -1.0, b: 1.0}, {a: -H / 6, m: -4 * H / 6, b: -H / 6}
        hermite_x, hermite_f = {m: 1.0, a: -0.5, b: -0.5}, {a: -H / 8, b: H / 8}
        for x, f in ((simpson_x, simpson_f), (hermite_x, hermite_f)):
            rows_x.append(sp.csr_matrix((list(x.values()), ([0] * len(x), list(x)), ), shape=(1, nodes)))
            rows_f.append(sp.csr_matrix((list(f.values()), ([0] * len(f), list(f))), shape=(1, nodes)))
        rows_e.append(sp.csr_matrix(([1.0, -0.5, -0.5], ([0, 0, 0], [m, a, b])), shape=(1, nodes)))
    LX = sp.vstack([sp.kron(sp.vstack(rows_x), eye), sp.csr_matrix((intervals * ne, nodes * nx))])
    LF = sp.vstack([sp.kron(sp.vstack(rows_f), eye), sp.csr_matrix((intervals * ne, nodes * nx))])
    LE = sp.vstack([sp.csr_matrix((2 * intervals * nx, nodes * ne)), sp.kron(sp.vstack(rows_e), sp.identity(ne))])
    weights = np.zeros(nodes)
    for i in range(intervals):
        weights[[2 * i, 2 * i + 1, 2 * i + 2]] += np.array([1.0, 4.0, 1.0]) * H / 6
    return LX.tocsr(), LE.tocsr(), LF.tocsr(), weights


def build_problem(imported, intervals=INTERVALS, scheme="hermite-simpson", duration=DURATION):
    """The transcribed problem (moco_style_arm26.Problem) for the prepared squat-to-stand model."""
    model = imported.system.realize_topology()
    base = imported.default_state(model)
    P, q0, independent = coupled_coordinates(imported, model)
    k, nz, ne = len(independent), base.z.shape[0], model.num_controls
    nx = 2 * k + nz
    nodes = 2 * intervals + 1 if scheme == "hermite-simpson" else intervals + 1
    h = duration / (nodes - 1)
    P_, q0_ = jnp.asarray(P), jnp.asarray(q0)

    def f(x, e):
        q, u = q0_ + P_ @ x[:k], P_ @ x[k:2 * k]
        s = model.realize(base.set_q(q).set_u(u).set_z(x[2 * k:]).set_controls(e), jb.Stage.Acceleration)
        return jnp.concatenate([x[k:2 * k], s.acceleration.udot[independent], s.dynamics.zdot])

    LX, LE, LF, weights = transcription(nodes, nx, ne, h, scheme)
    start = np.array([v[2] for v in COORDINATES.values()])
    end = np.array([v[3] for v in COORDINATES.values()])
    # boundary conditions: q and u of the first and last nodes (linear, rows of the identity on z)
    first, last = np.arange(2 * k), (nodes - 1) * nx + np.arange(2 * k)
    boundary_rows = np.concatenate([first, last])
    boundary_values = np.concatenate([start, np.zeros(k), end, np.zeros(k)])
    n = nodes * (nx + ne)
    B = sp.csr_matrix((np.ones(len(boundary_rows)), (np.arange(len(boundary_rows)), boundary_rows)),
                      shape=(len(boundary_rows), n))
    LX_, LE_, LF_ = (jsparse(M) for M in (LX, LE, LF))
    w = jnp.asarray(weights)

    def split(z):
        return z[:nodes * nx].reshape(nodes, nx), z[nodes * nx:].reshape(nodes, ne)

    def objective(z):
        return jnp.sum(w * jnp.sum(split(z)[1] ** 2, axis=1))

    def constraints_of(z, F):
        X, E = split(z)
        defects = LX_ @ X.ravel() + LE_ @ E.ravel() + LF_ @ F.ravel()
        return jnp.concatenate([defects, z[boundary_rows] - boundary_values])

    def constraints(z):
        X, E = split(z)
        return constraints_of(z, jax.vmap(f)(X, E))

    @jax.jit
    def node_values(z):
        X, E = split(z)
        F = jax.vmap(f)(X, E)
        A, Bm = jax.vmap(jax.jacfwd(f, argnums=(0, 1)))(X, E)   # (nodes, nx, nx), (nodes, nx, ne)
        return objective(z), constraints_of(z, F), A, Bm

    def evaluate(z):
        J, c, A, Bm = node_values(jnp.asarray(z))
        C_X = LX + LF @ sp.block_diag(list(np.asarray(A)), format="csr")
        C_E = LE + LF @ sp.block_diag(list(np.asarray(Bm)), format="csr")
        return J, c, sp.vstack([sp.hstack([C_X, C_E]), B], format="csr")

    lower, upper, guess = bounds_and_guess(base, nodes, nx, k, ne, start, end)
    problem = Problem(model, imported, "knee_angle_r", nodes, duration, nx, ne, lower, upper, guess, evaluate,
                      jax.jit(constraints), jax.jit(objective))
    return problem, f


def jsparse(M):
    """A scipy sparse matrix as a JAX BCOO matrix (its products trace as gathers and segment sums)."""
    from jax.experimental import sparse as jsp
    return jsp.BCOO.from_scipy_sparse(M.tocoo())


def bounds_and_guess(base, nodes, nx, k, ne, start, end):
    """Bounds (Moco's: coordinates between the ends, speeds, activations, excitations; the first and last nodes'
    q and u are fixed by constraints, so their bounds are left open) and the guess (coordinates linear from start
    to end, speeds their constant slope, activations GUESS_ACTIVATION, excitations GUESS_EXCITATION)."""
    lo, hi = np.full((nodes, nx), -np.inf), np.full((nodes, nx), np.inf)
    q_lo = np.array([v[1][0] for v in COORDINATES.values()])
    q_hi = np.array([v[1][1] for v in COORDINATES.values()])
    lo[1:-1, :k], hi[1:-1, :k] = q_lo, q_hi
    lo[1:-1, k:2 * k], hi[1:-1, k:2 * k] = -SPEED_BOUND, SPEED_BOUND
    lo[:, 2 * k:], hi[:, 2 * k:] = EXCITATION_BOUNDS
    s = np.linspace(0.0, 1.0, nodes)[:, None]
    X = np.concatenate([start + s * (end - start), np.tile((end - start) / DURATION, (nodes, 1)),
                        np.full((nodes, nx - 2 * k), GUESS_ACTIVATION)], axis=1)
    X[[0, -1], k:2 * k] = 0.0
    lower = np.concatenate([lo.ravel(), np.full(nodes * ne, EXCITATION_BOUNDS[0])])
    upper = np.concatenate([hi.ravel(), np.full(nodes * ne, EXCITATION_BOUNDS[1])])
    guess = np.concatenate([X.ravel(), np.full(nodes * ne, GUESS_EXCITATION)])
    margin = 1e-2 * np.where(np.isfinite(upper - lower), upper - lower, 0.0)
    return lower, upper, np.clip(guess, lower + margin, upper - margin)


def without_wraps(osim_text):
    """The model's text with every path's wrap set emptied (the paths then run straight between their points)."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(osim_text)
    for wraps in root.iter("PathWrapSet"):
        for child in list(wraps.find("objects")):
            wraps.find("objects").remove(child)
    return ET.tostring(root, encoding="unicode")


def load(model_file=SQUAT, wraps=True):
    """The imported model (``wraps=False``: its paths without their WrapCylinders, see ``without_wraps``)."""
    text = pathlib.Path(model_file).read_text()
    return jb.io.load_osim(text if wraps else without_wraps(text))


def main(intervals=INTERVALS, scheme="hermite-simpson", model_file=SQUAT, wraps=False, max_iterations=500,
         optimality_tol=OPTIMALITY_TOL, log=print):
    """Solve the problem; returns the solve's dict plus the problem, X (nodes, nx), E (nodes, ne), setup time."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # the prepared model imports without a warning
        imported = load(model_file, wraps)
    t0 = time.perf_counter()
    problem, f = build_problem(imported, intervals, scheme)
    setup_s = time.perf_counter() - t0
    result = solve(problem, max_iterations=max_iterations, optimality_tol=optimality_tol, log=log)
    X, E = problem.split(result["z"])
    result.update(problem=problem, f=f, setup_s=setup_s, X=X, E=E)
    log(f"{scheme}, {problem.nodes} nodes, {problem.guess.size} unknowns, {result['iterations']} Newton "
        f"iterations; max |defect| {result['violation']:.1e}, stationarity {result['stationarity']:.1e}, "
        f"objective {result['objective']:.5f}; setup {setup_s:.1f} s, compile {result['compile_s']:.1f} s, "
        f"solve {result['solve_s']:.2f} s")
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--intervals", type=int, default=INTERVALS)
    parser.add_argument("--trapezoidal", action="store_true")
    parser.add_argument("--wraps", action="store_true", help="keep the paths' WrapCylinders (slow to compile)")
    parser.add_argument("--tol", type=float, default=OPTIMALITY_TOL, help="stationarity and complementarity")
    args = parser.parse_args()
    main(args.intervals, "trapezoidal" if args.trapezoidal else "hermite-simpson", wraps=args.wraps,
         optimality_tol=args.tol)
