"""A Moco-style predictive problem on arm26, muscle-driven, by direct collocation with jaxbody's exact derivatives.

The model is prepared as Moco's examples prepare theirs (``ModOpReplaceMusclesWithDeGrooteFregly2016`` and
``ModOpIgnoreTendonCompliance``): arm26's six Thelen2003Muscles become DeGrooteFregly2016Muscles with rigid tendons
on the same wrapped paths (``replace_muscles_with_degroote``); the State is (q, u, activations). The problem
(Moco's MocoStudy with a MocoControlGoal):

    minimize    (1/T) integral_0^T sum_m e_m(t)^2 dt                       (excitations e, the controls)
    subject to  x' = f(x, e): jaxbody's state derivative (q' = u, u' = udot from a realize to Acceleration,
                the muscles' State.z' from the Dynamics stage)
                elbow from 0 at rest to FLEXION rad at rest in T s; the other coordinates start at their default
                value at rest and end at rest anywhere; (with compliant tendons: each fiber starts at rest)
                e in [0.01, 1], activations in [0.01, 1] (fiber lengths in [0.2, 1.8] x optimal).
The coordinates are not bounded by their ranges (the elbow dips below 0 on the way when the model allows it).

Trapezoidal collocation on N nodes (Moco's "trapezoidal" transcription): unknowns x_k and e_k at every node,
defects x_{k+1} - x_k - h/2 (f_k + f_{k+1}) = 0. f is evaluated at all nodes by one ``jax.vmap``, and its
Jacobians (df/dx, df/de) per node by ``jax.vmap(jax.jacfwd(f))``: exact to rounding, no finite differences.
They are assembled into the dense constraint Jacobian C (small enough here).

The solver is ``examples/_collocation.py``'s primal-dual interior-point method (the one the squat-to-stand
example uses), stopping at max |defect| <= DEFECT_TOL with the Lagrangian's stationarity and the complementarity
<= OPTIMALITY_TOL. The solution is checked by forward simulation (``forward_simulation``: RK4 of the optimal
excitations).

Why DeGroote: Thelen's activation dynamics switch time constants at e = a and its fiber velocity is clamped;
at such kinks the Newton-KKT iteration stalled here (defects stuck near 3e-3 on a two-muscle elbow), which is
also why Moco uses DeGrooteFregly2016 muscles for optimal control.

    PYTHONPATH=. python3 examples/moco_style_arm26.py            # arm26, N = 51 nodes, T = 0.8 s
"""

from __future__ import annotations

import pathlib
import sys
import time
import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import jaxbody as jb

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _collocation import solve  # noqa: E402

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[1]
ARM26 = ROOT / "tests" / "models" / "osim" / "arm26.osim"
FLEXION = np.pi / 2   # rad, the elbow's final angle
DURATION = 0.8        # s
NODES = 51
EXCITATION_BOUNDS = (0.01, 1.0)
FIBER_BOUNDS = (0.2, 1.8)  # x optimal fiber length
DEFECT_TOL = 1e-6
GUESS_EXCITATION = 0.2  # the guess: excitations 0.2, activations 0.1 (off the kink of the activation dynamics at e = a)
OPTIMALITY_TOL = 1e-6   # max |projected gradient of the Lagrangian|


#: What a Thelen2003Muscle has and a DeGrooteFregly2016Muscle does not (``replace_muscles_with_degroote``).
THELEN_ONLY = ("FmaxTendonStrain", "FmaxMuscleStrain", "KshapeActive", "KshapePassive", "Af", "Flen",
               "fv_linear_extrap", "minimum_activation", "ignore_activation_dynamics", "default_fiber_length",
               "maximum_pennation_angle", "minimum_fiber_length")


def replace_muscles_with_degroote(osim_text, ignore_tendon_compliance=True):
    """The model's text with every Thelen2003Muscle replaced by a DeGrooteFregly2016Muscle, as Moco's
    ``ModOpReplaceMusclesWithDeGrooteFregly2016`` does (same name, path, max isometric force, optimal fiber and
    tendon slack lengths, pennation, maximum contraction velocity, activation and deactivation time constants),
    and with ``ModOpIgnoreTendonCompliance`` (rigid tendons: the muscle's only state is its activation).
    DeGroote's curves and activation dynamics are smooth, which Newton-type NLP solvers need; Thelen's
    activation dynamics switch time constants at e = a and its force-velocity inverse is clamped."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(osim_text)
    for muscle in root.iter("Thelen2003Muscle"):
        muscle.tag = "DeGrooteFregly2016Muscle"
        for child in [c for c in muscle if c.tag in THELEN_ONLY]:
            muscle.remove(child)
        ET.SubElement(muscle, "ignore_tendon_compliance").text = "true" if ignore_tendon_compliance else "false"
    return ET.tostring(root, encoding="unicode")


class Problem(NamedTuple):
    """The transcribed problem: sizes, index sets and the jit-compiled evaluations."""

    model: object
    imported: object
    coordinate: str
    nodes: int
    duration: float
    nx: int
    ne: int
    lower: np.ndarray
    upper: np.ndarray
    guess: np.ndarray
    evaluate: object          # z -> (c, J, C): objective, constraints, their Jacobian (dense)
    constraints: object       # z -> c
    objective: object         # z -> J

    def split(self, z):
        """(X (nodes, nx), E (nodes, ne)) from the unknowns z."""
        n = self.nodes * self.nx
        return z[..., :n].reshape(z.shape[:-1] + (self.nodes, self.nx)), z[..., n:].reshape(
            z.shape[:-1] + (self.nodes, self.ne))


def build_problem(imported, coordinate="r_elbow_flex", flexion=FLEXION, duration=DURATION, nodes=NODES):
    """The trapezoidal transcription of the module's problem for an imported OpenSim model with muscles."""
    model = imported.system.realize_topology()
    base = imported.default_state(model)
    nq, nu, nz, ne = model.get_num_q(), model.get_num_u(), base.z.shape[0], model.num_controls
    nx, h = nq + nu + nz, duration / (nodes - 1)
    muscles = [m for m in imported.forces_by_name.values() if hasattr(m, "state_names")]
    fiber = np.array([nq + nu + m.z_slice.start + m.state_names.index("fiber_length") for m in muscles
                      if "fiber_length" in m.state_names], dtype=int)
    iq = imported.q_index(coordinate)

    def f(x, e):
        s = model.realize(base.set_q(x[:nq]).set_u(x[nq:nq + nu]).set_z(x[nq + nu:]).set_controls(e),
                          jb.Stage.Acceleration)
        return jnp.concatenate([s.u, s.acceleration.udot, s.dynamics.zdot])

    def split(z):
        return z[:nodes * nx].reshape(nodes, nx), z[nodes * nx:].reshape(nodes, ne)

    def objective(z):
        e2 = jnp.sum(split(z)[1] ** 2, axis=1)
        return h * (jnp.sum(e2) - 0.5 * (e2[0] + e2[-1])) / duration

    def boundary(X, F0):
        return jnp.concatenate([X[0, :nq] - base.q, X[0, nq:nq + nu], X[-1, nq:nq + nu],
                                X[-1, iq:iq + 1] - flexion, F0[fiber]])

    def constraints_of(X, F):
        defects = X[1:] - X[:-1] - 0.5 * h * (F[1:] + F[:-1])
        return jnp.concatenate([defects.ravel(), boundary(X, F[0])])

    def constraints(z):
        X, E = split(z)
        return constraints_of(X, jax.vmap(f)(X, E))

    def evaluate(z):
        X, E = split(z)
        F = jax.vmap(f)(X, E)
        A, B = jax.vmap(jax.jacfwd(f, argnums=(0, 1)))(X, E)  # (nodes, nx, nx), (nodes, nx, ne)
        k = jnp.arange(nodes - 1)
        eye = jnp.eye(nx)
        dX = jnp.zeros((nodes - 1, nx, nodes, nx)).at[k, :, k, :].set(-eye - 0.5 * h * A[:-1])
        dX = dX.at[k, :, k + 1, :].set(eye - 0.5 * h * A[1:])
        dE = jnp.zeros((nodes - 1, nx, nodes, ne)).at[k, :, k, :].set(-0.5 * h * B[:-1])
        dE = dE.at[k, :, k + 1, :].set(-0.5 * h * B[1:])
        rows = (nodes - 1) * nx
        C_defects = jnp.concatenate([dX.reshape(rows, -1), dE.reshape(rows, -1)], 1)
        C_boundary = jax.jacfwd(lambda z_: boundary(split(z_)[0], F[0]))(z)  # linear part (F0 held)
        C_fiber = jnp.concatenate([jnp.zeros((len(fiber), nodes * nx)).at[:, :nx].set(A[0][fiber]),
                                   jnp.zeros((len(fiber), nodes * ne)).at[:, :ne].set(B[0][fiber])], 1)
        C_boundary = C_boundary.at[C_boundary.shape[0] - len(fiber):].set(C_fiber)
        return objective(z), constraints_of(X, F), jnp.concatenate([C_defects, C_boundary])

    lower, upper, guess = _bounds_and_guess(imported, model, base, muscles, coordinate, flexion, nodes, nx, ne)
    X, E = split(jnp.asarray(guess))   # the guess's fibers at equilibrium for its q, u and activations

    @jax.jit
    @jax.vmap
    def equilibrium(x):
        s = jb.equilibrate_muscles(model, base.set_q(x[:nq]).set_u(x[nq:nq + nu]).set_z(x[nq + nu:]))
        return jnp.concatenate([s.q, s.u, s.z])

    guess = np.concatenate([np.asarray(equilibrium(X)).ravel(), np.asarray(E).ravel()])
    margin = 1e-2 * np.where(np.isfinite(upper - lower), upper - lower, 0.0)
    guess = np.clip(guess, lower + margin, upper - margin)    # strictly inside the bounds
    return Problem(model, imported, coordinate, nodes, duration, nx, ne, lower, upper, guess,
                   jax.jit(evaluate), jax.jit(constraints), jax.jit(objective))


def _bounds_and_guess(imported, model, base, muscles, coordinate, flexion, nodes, nx, ne):
    nq, nu = model.get_num_q(), model.get_num_u()
    lo, hi = np.full(nx, -np.inf), np.full(nx, np.inf)
    guess_x = np.tile(np.concatenate([np.asarray(base.q), np.zeros(nu), np.asarray(base.z)]), (nodes, 1))
    guess_x[:, imported.q_index(coordinate)] = np.linspace(base.q[imported.q_index(coordinate)], flexion, nodes)
    for m in muscles:
        a = nq + nu + m.z_slice.start
        lo[a], hi[a] = EXCITATION_BOUNDS
        guess_x[:, a] = 0.1
        if "fiber_length" in m.state_names:
            lce = nq + nu + m.z_slice.start + m.state_names.index("fiber_length")
            optimal = float(m.get_parameter(model, "optimal_fiber_length"))
            lo[lce], hi[lce] = FIBER_BOUNDS[0] * optimal, FIBER_BOUNDS[1] * optimal
            guess_x[:, lce] = optimal
    lower = np.concatenate([np.tile(lo, nodes), np.full(nodes * ne, EXCITATION_BOUNDS[0])])
    upper = np.concatenate([np.tile(hi, nodes), np.full(nodes * ne, EXCITATION_BOUNDS[1])])
    guess = np.clip(np.concatenate([guess_x.ravel(), np.full(nodes * ne, GUESS_EXCITATION)]), lower, upper)
    return lower, upper, guess


def forward_simulation(problem, z, substeps=10):
    """The nodes' states (nodes, nx) from RK4 (``jb.simulate``, h / substeps per step) of the optimal excitations
    from the first node's state: excitations linear between nodes, evaluated at each step's midpoint and held
    over the step (the integrators' zero-order hold). One jit; the muscles' derivative is jaxbody's own."""
    model, nq, nu = problem.model, problem.model.get_num_q(), problem.model.get_num_u()
    base = problem.imported.default_state(model)
    X, E = (jnp.asarray(a) for a in problem.split(z))
    dt = problem.duration / (problem.nodes - 1) / substeps
    fractions = (jnp.arange(substeps) + 0.5) / substeps

    @jax.jit
    def run(X, E):
        def interval(state, k):
            def step(s, w):
                return jb.simulate(model, s.set_controls((1 - w) * E[k] + w * E[k + 1]), dt, 1)[0], None
            state, _ = jax.lax.scan(step, state, fractions)
            return state, jnp.concatenate([state.q, state.u, state.z])
        state0 = base.set_q(X[0, :nq]).set_u(X[0, nq:nq + nu]).set_z(X[0, nq + nu:])
        return jnp.concatenate([X[:1], jax.lax.scan(interval, state0, jnp.arange(problem.nodes - 1))[1]])

    return np.asarray(run(X, E))


def main(small=False, model_file=ARM26, coordinate="r_elbow_flex", log=print):
    """Solve the problem on ``model_file`` (its Thelen muscles replaced as Moco's examples do) and check it by
    forward simulation; ``small``: 11 nodes. Returns the solve's dict plus the problem and the check's errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the replaced muscles' Thelen-only fields are not read
        imported = jb.io.load_osim(replace_muscles_with_degroote(pathlib.Path(model_file).read_text()))
    t0 = time.perf_counter()
    problem = build_problem(imported, coordinate, nodes=11 if small else NODES)
    setup_s = time.perf_counter() - t0
    result = solve(problem, constraint_tol=DEFECT_TOL, optimality_tol=OPTIMALITY_TOL, log=log)
    X, E = problem.split(result["z"])
    simulated = forward_simulation(problem, result["z"])
    nq = problem.model.get_num_q()
    result.update(problem=problem, setup_s=setup_s, X=X, E=E, simulated=simulated,
                  q_error=float(np.abs(simulated[:, :nq] - X[:, :nq]).max()),
                  final_angle_error=float(abs(simulated[-1, imported.q_index(coordinate)] - FLEXION)))
    log(f"{problem.nodes} nodes, {problem.guess.size} unknowns, {result['iterations']} Newton iterations; "
        f"max |defect| {result['violation']:.1e}, stationarity {result['stationarity']:.1e}, objective "
        f"{result['objective']:.5f}; setup {setup_s:.1f} s, compile {result['compile_s']:.1f} s, solve "
        f"{result['solve_s']:.2f} s")
    log(f"forward simulation of the optimal excitations: max |q - q_collocation| {result['q_error']:.2e} rad, "
        f"final {coordinate} off by {np.degrees(result['final_angle_error']):.3f} deg")
    return result


if __name__ == "__main__":
    main()
