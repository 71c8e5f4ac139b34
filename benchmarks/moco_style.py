"""The Moco-style problem of examples/moco_style_arm26.py solved by jaxbody and, in the same run, by OpenSim Moco
(OpenSim 4.6's python ``MocoStudy``, CasADi + IPOPT), when ``opensim`` is installed.

Both solve the same problem: arm26 with its muscles replaced by rigid-tendon DeGrooteFregly2016Muscles
(``ModOpReplaceMusclesWithDeGrooteFregly2016`` + ``ModOpIgnoreTendonCompliance``; jaxbody's
``replace_muscles_with_degroote`` does the same on the file), T = 0.8 s, the elbow from 0 to pi/2 at rest, the
shoulder from 0 at rest to rest anywhere, excitations and activations in [0.01, 1], minimum integral of the
squared excitations (MocoControlGoal), trapezoidal transcription on 50 mesh intervals (51 nodes). Moco bounds the
coordinates by their ranges; jaxbody's problem does not (the optimum keeps them inside here: checked below).

    PYTHONPATH=. python3 benchmarks/moco_style.py [--no-moco] [--nodes N]

Timings on a shared machine are noisy: the lead reruns them.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from script_runner import load_example  # noqa: E402

example = load_example("moco_style_arm26")


def solve_with_moco(nodes, threads=os.cpu_count()):
    """(solve seconds, objective, iterations, Moco's solution) of the same problem with OpenSim Moco."""
    import opensim as osim

    processor = osim.ModelProcessor(str(example.ARM26))
    processor.append(osim.ModOpReplaceMusclesWithDeGrooteFregly2016())
    processor.append(osim.ModOpIgnoreTendonCompliance())
    model = processor.process()
    model.initSystem()
    study = osim.MocoStudy()
    problem = study.updProblem()
    problem.setModel(model)
    problem.setTimeBounds(0, example.DURATION)
    problem.setStateInfo("/jointset/r_elbow/r_elbow_flex/value", [0, 2.2689], 0, example.FLEXION)
    problem.setStateInfo("/jointset/r_elbow/r_elbow_flex/speed", [-50, 50], 0, 0)
    problem.setStateInfo("/jointset/r_shoulder/r_shoulder_elev/value", [-1.5708, 3.1416], 0)
    problem.setStateInfo("/jointset/r_shoulder/r_shoulder_elev/speed", [-50, 50], 0, 0)
    problem.setStateInfoPattern("/forceset/.*/activation", [0.01, 1])
    problem.setControlInfoPattern("/forceset/.*", [0.01, 1])
    problem.addGoal(osim.MocoControlGoal("effort"))
    solver = study.initCasADiSolver()
    solver.set_num_mesh_intervals(nodes - 1)
    solver.set_transcription_scheme("trapezoidal")
    solver.set_optim_convergence_tolerance(1e-6)
    solver.set_optim_constraint_tolerance(1e-6)
    solver.set_parallel(threads)
    t0 = time.perf_counter()
    solution = study.solve()
    seconds = time.perf_counter() - t0
    return seconds, solution.getObjective(), solution.getNumIterations(), solution


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-moco", action="store_true")
    parser.add_argument("--nodes", type=int, default=example.NODES)
    args = parser.parse_args()
    example.NODES = args.nodes
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared: timings noisy)")
    t0 = time.perf_counter()
    result = example.main(log=lambda line: None if line.startswith("iteration") else print(line))
    total = time.perf_counter() - t0
    X = result["X"]
    print(f"jaxbody: {result['iterations']} iterations, solve {result['solve_s']:.2f} s, compile "
          f"{result['compile_s']:.1f} s, setup {result['setup_s']:.1f} s, total {total:.1f} s; objective "
          f"(x T: Moco's integral) {result['objective'] * example.DURATION:.6f}; elbow in "
          f"[{X[:, 1].min():.3f}, {X[:, 1].max():.3f}] rad")
    if not args.no_moco:
        with tempfile.TemporaryDirectory() as folder:   # Moco writes its solution files to the working folder
            cwd = os.getcwd()
            os.chdir(folder)
            try:
                seconds, objective, iterations, _ = solve_with_moco(args.nodes)
            finally:
                os.chdir(cwd)
        print(f"OpenSim Moco 4.6 (CasADi/IPOPT, {os.cpu_count()} threads): {iterations} iterations, solve "
              f"{seconds:.2f} s; objective {objective:.6f}")


if __name__ == "__main__":
    main()
