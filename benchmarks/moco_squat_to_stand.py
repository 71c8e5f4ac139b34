"""Moco's squat-to-stand prediction (Dembia et al. 2020, Table 1) solved by jaxbody
(examples/moco_style_squat_to_stand.py) and, in the same run, by OpenSim Moco 4.6 (CasADi + IPOPT) when
``opensim`` is installed.

Both solve the same problem (the example's docstring) on the same file, squatToStand_3dof9musc with its muscles
replaced by rigid-tendon DeGrooteFregly2016Muscles (max isometric force x 2, active force width scale 1.5,
excitations and activations in [0, 1]; tests/io/generate_squat_to_stand_golden.py), T = 1 s, hip -2 -> 0,
knee -2 -> 0, ankle -0.5 -> 0, at rest at both ends, minimum integral of the squared excitations
(MocoControlGoal). One difference: jaxbody runs the example's default, the paths without their WrapCylinders
(they compile for longer than this run can wait), while Moco solves the file as it is, wraps included. Moco runs with the paper's settings (Hermite-Simpson, 50
mesh intervals, tolerances 1e-3) and, with ``--trapezoidal``, with the example's transcription (trapezoidal on the
example's nodes: 2 x intervals).

    PYTHONPATH=. python3 benchmarks/moco_squat_to_stand.py [--no-moco] [--moco-only] [--trapezoidal]
        [--intervals N] [--tol T]

Timings on a shared machine are noisy: the lead reruns them.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from script_runner import load_example  # noqa: E402

example = load_example("moco_style_squat_to_stand")


def moco_model():
    """The example's model file (prepared by OpenSim itself: tests/io/generate_squat_to_stand_golden.py)."""
    import opensim as osim

    model = osim.Model(str(example.SQUAT))
    model.initSystem()
    return model


def solve_with_moco(scheme="hermite-simpson", intervals=50, tolerance=1e-3, threads=os.cpu_count()):
    """(solve seconds, objective, iterations, success, Moco's solution) of the example's problem with Moco."""
    import opensim as osim

    study = osim.MocoStudy()
    problem = study.updProblem()
    problem.setModel(moco_model())
    problem.setTimeBounds(0, example.DURATION)
    for name, (joint, bounds, start, end) in example.COORDINATES.items():
        problem.setStateInfo(f"/jointset/{joint}/{name}/value", list(bounds), start, end)
    problem.setStateInfoPattern("/jointset/.*/speed", [-50, 50], 0, 0)
    problem.setStateInfoPattern("/forceset/.*/activation", list(example.EXCITATION_BOUNDS))
    problem.addGoal(osim.MocoControlGoal("effort"))
    solver = study.initCasADiSolver()
    solver.set_num_mesh_intervals(intervals)
    solver.set_transcription_scheme(scheme)
    solver.set_optim_convergence_tolerance(tolerance)
    solver.set_optim_constraint_tolerance(tolerance)
    solver.set_parallel(threads)
    t0 = time.perf_counter()
    solution = study.solve()
    seconds = time.perf_counter() - t0
    success = solution.success()
    solution.unseal()
    return seconds, solution.getObjective(), solution.getNumIterations(), success, solution


def report_moco(scheme, intervals, tolerance):
    seconds, objective, iterations, success, solution = solve_with_moco(scheme, intervals, tolerance)
    print(f"Moco ({scheme}, {intervals} mesh intervals, tolerance {tolerance:g}, {os.cpu_count()} threads): "
          f"{'converged' if success else 'NOT converged'} in {iterations} iterations, {seconds:.1f} s, "
          f"objective {objective:.6f}", flush=True)
    return solution


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-moco", action="store_true")
    parser.add_argument("--moco-only", action="store_true")
    parser.add_argument("--trapezoidal", action="store_true", help="also run Moco with the example's transcription")
    parser.add_argument("--intervals", type=int, default=example.INTERVALS)
    parser.add_argument("--tol", type=float, default=example.OPTIMALITY_TOL)
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared: timings noisy)")
    if not args.moco_only:
        t0 = time.perf_counter()
        result = example.main(args.intervals, optimality_tol=args.tol,
                              log=lambda line: None if line.startswith("iteration") else print(line))
        print(f"jaxbody: {result['iterations']} iterations, solve {result['solve_s']:.2f} s, compile "
              f"{result['compile_s']:.1f} s, setup {result['setup_s']:.1f} s, total {time.perf_counter() - t0:.1f} s;"
              f" objective {result['objective']:.6f}", flush=True)
    if not args.no_moco:
        report_moco("hermite-simpson", 50, 1e-3)
        if args.trapezoidal:
            report_moco("trapezoidal", 2 * args.intervals, 1e-3)
    print("Moco published (Dembia et al. 2020, Table 1, squat-to-stand predictive, unassisted, HS 50 intervals, "
          "tolerances 1e-3, 3.6 GHz i7, 8 threads): 3 min")


if __name__ == "__main__":
    main()
