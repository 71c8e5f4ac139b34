"""How long a user waits, run as a new user would: each workflow in a fresh Python process, per backend.

    PYTHONPATH=. python3 benchmarks/wait_times.py [--backends compiled,jax] [--out benchmarks/wait_times.json]

Workflows (each a child process with ``JAXBODY_BACKEND`` set; the compiled kernels' library is already in the
cache, as on any run after the first on a machine):

* ``readme``: the README's python blocks executed in order; the wall time of each block (compilation
  included), and that of the four-bar under RungeKuttaMerson with an event handler.
* ``notebook06``: notebooks/06_policy_learning_cartpole.ipynb with 128 lanes, 100-step rollouts and three Adam
  steps; the first step's time (the compilation of the rollout gradient, which dominates it) and a later
  step's.
* ``demo``: ``jaxbody demo --out ''`` (256 five-link chains, RK4, 1000 steps); its compile time and throughput.

Prints one line per workflow and writes the numbers as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def child_readme():
    import jax

    jax.config.update("jax_enable_x64", True)
    text = open(os.path.join(ROOT, "README.md")).read()
    namespace, seconds, rkm = {}, [], None
    for block in re.findall(r"```python\n(.*?)```", text, flags=re.S):
        start = time.perf_counter()
        exec(compile(block, "README.md", "exec"), namespace)
        jax.block_until_ready([v for v in namespace.values() if isinstance(v, jax.Array)])
        seconds.append(time.perf_counter() - start)
        if "RungeKuttaMersonIntegrator" in block:
            rkm = seconds[-1]
    return {"block_seconds": seconds, "rkm_event_block_s": rkm}


def child_notebook06():
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import contextlib
    import io

    import matplotlib

    matplotlib.use("Agg")
    from notebook_runner import NOTEBOOKS, code_cells

    namespace = {"__name__": "__notebook__"}
    overrides = {"BATCH": 128, "TRAIN_STEPS": 100, "ITERATIONS": 3, "WRITE_FIGURES": False}
    out = io.StringIO()
    os.chdir(ROOT)
    for source, is_parameters in code_cells(NOTEBOOKS / "06_policy_learning_cartpole.ipynb"):
        with contextlib.redirect_stdout(out):
            exec(compile(source, "notebook06", "exec"), namespace)
        if is_parameters:
            namespace.update(overrides)
        if "history" in namespace:  # the training cell has run
            break
    seconds = namespace["seconds"]
    return {"first_step_s": float(seconds[0]), "later_step_s": float(seconds[-1]), "lanes": 128, "steps": 100}


def child_demo():
    import contextlib
    import io

    from jaxbody.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["demo", "--out", ""])
    text = out.getvalue()
    compile_s = float(re.search(r"compile time:\s+([\d.]+) s", text).group(1))
    throughput = float(re.search(r"throughput:\s+([\d.e+]+) system-steps/s", text).group(1))
    return {"compile_s": compile_s, "system_steps_per_s": throughput}


CHILDREN = {"readme": child_readme, "notebook06": child_notebook06, "demo": child_demo}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backends", default="compiled,jax")
    p.add_argument("--out", default=os.path.join(HERE, "wait_times.json"))
    p.add_argument("--child", choices=sorted(CHILDREN))
    args = p.parse_args()
    if args.child:
        print("@@RESULT " + json.dumps(CHILDREN[args.child]()), flush=True)
        return
    results = {}
    for backend in args.backends.split(","):
        for name in CHILDREN:
            env = dict(os.environ, JAXBODY_BACKEND=backend, PYTHONPATH=ROOT)
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, __file__, "--child", name], env=env, capture_output=True,
                                  text=True, cwd=ROOT)
            line = [x for x in proc.stdout.splitlines() if x.startswith("@@RESULT ")]
            if proc.returncode or not line:
                raise SystemExit(f"{name} on {backend} failed:\n{proc.stderr[-3000:]}")
            result = json.loads(line[-1][len("@@RESULT "):])
            result["process_s"] = time.perf_counter() - start
            results[f"{backend}/{name}"] = result
            print(backend, name, json.dumps(result), flush=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
