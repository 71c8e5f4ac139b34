"""Forward-dynamics benchmark: jaxbody vs MuJoCo MJX, MuJoCo C and Pinocchio, same models, same run.

Driver (default mode) spawns one child process per case so XLA flags can be
set before jax is imported and so a pathological MJX compile can be killed:

    python benchmarks/forward_dynamics.py            # full run (~25 min on 2 cores)
    python benchmarks/forward_dynamics.py --quick    # smoke test (a few minutes)
    python benchmarks/forward_dynamics.py --device gpu --out benchmarks/results_gpu.json   # on a GPU machine

``--device gpu`` runs the jaxbody and MJX children on the first CUDA device (``JAX_PLATFORMS=cuda``),
adds batch 65536, keeps only the default XLA setting (the CPU fusion flag does not apply) and records the
device kind; MuJoCo C and Pinocchio stay on the CPU.

Children (internal): ``--child crosscheck|native|jaxbody|mjx --model NAME``;
they print ``@@RESULT <json>`` lines that the driver merges into
``benchmarks/results.json`` (``--out``). ``--readme`` rewrites the results
section of benchmarks/README.md from the JSON.

What is timed: udot = f(q, u, tau) with gravity, per state, over a batch of
random states. jaxbody and MJX: ``jax.jit(jax.vmap(f))`` compiled per batch
size (compile = ``lower(...).compile()``, i.e. tracing + XLA), median of
repetitions with ``block_until_ready``. MuJoCo C: ``mj_forward`` per state in
a Python loop (single thread; also the bare call cost on one state).
Pinocchio: ``pin.aba`` per state in a Python loop (single thread; also the bare
per-call cost of a loop of aba calls on one state, and ``pin.abaInParallel``
with one thread = Pinocchio's C++ loop over the batch, no Python overhead).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _timing import xla_cpu_settings  # noqa: E402
from models import cast_floats, jaxbody_udot  # noqa: E402

SETTINGS = xla_cpu_settings()
BATCHES = [1, 64, 1024, 8192]
GPU_BATCHES = [1, 64, 1024, 8192, 65536]
QUICK_BATCHES = [1, 64]
GRAD_BATCH = 1024


def emit(path, value):
    print("@@RESULT " + json.dumps({"path": path, "value": value}), flush=True)


# ======================================================================================
# children
# ======================================================================================


def _jax_setup():
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax


def child_crosscheck(args):
    """udot and M agreement between the three engines, and jaxbody's float32 accuracy."""
    jax = _jax_setup()
    import jax.numpy as jnp
    import mujoco
    import numpy as np
    import pinocchio as pin

    import jaxbody as jb
    import models as M

    spec = M.get_model(args.model)
    model, _ = M.build_jaxbody(spec)
    m = M.build_mujoco(spec)
    d = mujoco.MjData(m)
    pm = M.build_pinocchio(spec)
    pd = pm.createData()
    n = 20
    q, u, tau = M.random_states(spec, n, seed=11)
    fd = jax.jit(jax.vmap(lambda q, u, t: jaxbody_udot(model, q, u, t)))
    udot = np.asarray(fd(q, u, tau))
    udot0 = np.asarray(fd(q, 0 * u, tau))
    calc_m = jax.jit(jax.vmap(lambda q: model.calc_m(model.realize(model.default_state().set_q(q), jb.Stage.Position))))
    Mjb = np.asarray(calc_m(q))
    err = {k: 0.0 for k in ("udot_mujoco", "udot_pinocchio", "udot_zero_u_mujoco", "udot_zero_u_pinocchio",
                            "M_mujoco", "M_pinocchio")}
    for i in range(n):
        for eng in ("mujoco", "pinocchio"):
            T = M.velocity_map(spec, q[i], eng)
            for uu, ud, key in ((u[i], udot[i], "udot_"), (0 * u[i], udot0[i], "udot_zero_u_")):
                v = np.linalg.solve(T, uu)  # engine velocity
                f = T.T @ tau[i]  # engine generalized force (power-consistent)
                if eng == "mujoco":
                    d.qpos[:] = M.q_to_mujoco(spec, q[i])
                    d.qvel[:] = v
                    d.qfrc_applied[:] = f
                    mujoco.mj_forward(m, d)
                    a = d.qacc.copy()
                else:
                    a = np.asarray(pin.aba(pm, pd, M.q_to_pinocchio(spec, q[i]), v, f))
                ud_eng = M.udot_from_engine(spec, q[i], v, a, eng)
                err[key + eng] = max(err[key + eng], float(np.abs(ud_eng - ud).max()))
            # Mass matrix: KE = 1/2 u^T M_jb u with u = T v  =>  M_engine = T^T M_jb T.
            if eng == "mujoco":
                d.qpos[:] = M.q_to_mujoco(spec, q[i])
                mujoco.mj_forward(m, d)
                Me = np.zeros((m.nv, m.nv))
                mujoco.mj_fullM(m, d, Me)
            else:
                Me = np.array(pin.crba(pm, pd, M.q_to_pinocchio(spec, q[i])))
                Me = np.triu(Me) + np.triu(Me, 1).T
            err["M_" + eng] = max(err["M_" + eng], float(np.abs(T.T @ Mjb[i] @ T - Me).max()))
    emit(["crosscheck", args.model], {
        "n_states": n, "max_abs_diff": err, "max_abs_udot": float(np.abs(udot).max()),
        "max_abs_M": float(np.abs(Mjb).max()),
    })
    # float32 accuracy of jaxbody (model and inputs cast to float32; compared with float64).
    n32 = 1000
    q, u, tau = M.random_states(spec, n32, seed=12)
    m32 = cast_floats(model, jnp.float32)
    fd32 = jax.jit(jax.vmap(lambda q, u, t: jaxbody_udot(m32, q, u, t)))
    u64 = np.asarray(fd(q, u, tau))
    u32 = np.asarray(fd32(*(jnp.asarray(a, jnp.float32) for a in (q, u, tau))))
    assert u32.dtype == np.float32
    diff = np.abs(u32.astype(np.float64) - u64)
    rel_state = np.linalg.norm(u32 - u64, axis=1) / np.linalg.norm(u64, axis=1)
    emit(["f32_accuracy", args.model], {
        "n_states": n32,
        "max_rel_err_norm": float(rel_state.max()),
        "median_rel_err_norm": float(np.median(rel_state)),
        "max_abs_err": float(diff.max()),
        "max_abs_err_over_max_abs_udot": float(diff.max() / np.abs(u64).max()),
        "finite": bool(np.isfinite(u32).all()),
    })


def child_native(args):
    """MuJoCo C (mj_forward) and Pinocchio (aba), single thread, Python loop over states."""
    import mujoco
    import numpy as np
    import pinocchio as pin

    import models as M
    from _timing import median_time

    spec = M.get_model(args.model)
    m = M.build_mujoco(spec)
    d = mujoco.MjData(m)
    pm = M.build_pinocchio(spec)
    pd = pm.createData()
    batches = QUICK_BATCHES if args.quick else BATCHES
    nmax = max(batches)
    q, u, tau = M.random_states(spec, nmax, seed=5)
    qm = np.stack([M.q_to_mujoco(spec, x) for x in q])
    qp = np.stack([M.q_to_pinocchio(spec, x) for x in q])
    aba, fwd = pin.aba, mujoco.mj_forward
    pool = pin.ModelPool(pm, 1)

    # Bare per-call cost on one state (minimal Python overhead).
    d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qm[0], u[0], tau[0]
    K = 2000

    def mj_calls():
        for _ in range(K):
            fwd(m, d)

    q0, v0, t0 = qp[0].copy(), u[0].copy(), tau[0].copy()

    def pin_calls():
        for _ in range(K):
            aba(pm, pd, q0, v0, t0)

    t_mj, _ = median_time(mj_calls, min_reps=5, max_reps=20, target_s=1.0)
    t_pin, _ = median_time(pin_calls, min_reps=5, max_reps=20, target_s=1.0)
    emit(["native", args.model, "mujoco", "call_us"], t_mj / K * 1e6)
    emit(["native", args.model, "pinocchio", "call_us"], t_pin / K * 1e6)

    for B in batches:
        def mj_loop(B=B):
            for i in range(B):
                d.qpos[:] = qm[i]
                d.qvel[:] = u[i]
                d.qfrc_applied[:] = tau[i]
                fwd(m, d)

        def pin_loop(B=B):
            for i in range(B):
                aba(pm, pd, qp[i], u[i], tau[i])

        qpT, uT, tT = (np.asfortranarray(x[:B].T) for x in (qp, u, tau))
        aT = np.zeros_like(uT)

        def pin_cpp(B=B):
            # Pinocchio's own C++ batch loop, one thread: aba cost without Python overhead.
            pin.abaInParallel(1, pool, qpT, uT, tT, aT)

        if B == batches[-1]:
            pin_cpp()
            ref = np.stack([np.asarray(aba(pm, pd, qp[i], u[i], tau[i])) for i in range(min(B, 64))], 1)
            emit(["native", args.model, "pinocchio_cpp_batch_check_max_diff"], float(np.abs(aT[:, :ref.shape[1]] - ref).max()))
        for eng, loop in (("mujoco", mj_loop), ("pinocchio", pin_loop), ("pinocchio_cpp_batch", pin_cpp)):
            t, reps = median_time(loop, min_reps=3, max_reps=30, target_s=0.8)
            emit(["native", args.model, eng, "batches", str(B)],
                 {"us_per_state": t / B * 1e6, "states_per_s": B / t, "reps": reps})


def _time_compiled(jax, fn, args, B, budget_s):
    """lower+compile time, then median call time; returns a dict."""
    from _timing import median_time, timed

    compiled, t_compile = timed(lambda: jax.jit(fn).lower(*args).compile())
    _, t_first = timed(lambda: jax.block_until_ready(compiled(*args)))
    # Fewer repetitions for slow calls.
    target = min(1.0, budget_s)
    t, reps = median_time(lambda: compiled(*args), min_reps=1 if t_first > 2.0 else 3, max_reps=50,
                          target_s=target, warmup=0, sync=jax.block_until_ready)
    return {"us_per_state": t / B * 1e6, "states_per_s": B / t, "compile_s": t_compile,
            "first_call_s": t_first, "reps": reps}, compiled


def child_jaxbody(args):
    jax = _jax_setup()
    import jax.numpy as jnp
    import numpy as np

    import models as M

    spec = M.get_model(args.model)
    model64, _ = M.build_jaxbody(spec)
    batches = QUICK_BATCHES if args.quick else (GPU_BATCHES if args.device == "gpu" else BATCHES)
    emit(["devices", "jaxbody"], str(jax.devices()[0].device_kind))
    q, u, tau = M.random_states(spec, max(batches), seed=5)
    base = ["runs", args.setting, args.model, "jaxbody"]
    for dtname, dt in (("f64", jnp.float64), ("f32", jnp.float32)):
        model = model64 if dt == jnp.float64 else cast_floats(model64, dt)

        def fd(q, u, t, model=model):
            return jaxbody_udot(model, q, u, t)

        vfd = jax.vmap(fd)
        fwd_at = {}
        for B in batches:
            a = tuple(jnp.asarray(x[:B], dt) for x in (q, u, tau))
            res, compiled = _time_compiled(jax, vfd, a, B, args.case_budget)
            out = compiled(*a)
            res["finite"] = bool(np.isfinite(np.asarray(out)).all())
            res["dtype"] = str(out.dtype)
            fwd_at[B] = res["us_per_state"]
            emit(base + [dtname, "batches", str(B)], res)
        # One classic RK4 step (4 realizes to Acceleration, prescribe, quaternion normalization) per state.
        RB = GRAD_BATCH if GRAD_BATCH in batches else max(batches)
        a = tuple(jnp.asarray(x[:RB], dt) for x in (q, u, tau))

        def rk4(q, u, t, model=model):
            import jaxbody as jb

            s = model.default_state().set_q(q).set_u(u).set_mobility_forces(t)
            s = jb.step_rk4(model, s, 1e-3)
            return s.q, s.u

        res, _ = _time_compiled(jax, jax.vmap(rk4), a, RB, args.case_budget)
        res["batch"] = RB
        res["ratio_vs_forward"] = res["us_per_state"] / fwd_at[RB]
        emit(base + [dtname, "rk4_step"], res)
        # Reverse-mode gradient of sum(udot) w.r.t. (q, u), per state under vmap.
        if dtname == "f64":  # f64 only: grad compiles dominate the run time
            GB = GRAD_BATCH if GRAD_BATCH in batches else max(batches)
            a = tuple(jnp.asarray(x[:GB], dt) for x in (q, u, tau))
            g = jax.vmap(jax.grad(lambda q, u, t: fd(q, u, t).sum(), argnums=(0, 1)))
            res, compiled = _time_compiled(jax, g, a, GB, args.case_budget)
            gq, gu = compiled(*a)
            res["finite"] = bool(np.isfinite(np.asarray(gq)).all() and np.isfinite(np.asarray(gu)).all())
            res["batch"] = GB
            res["ratio_vs_forward"] = res["us_per_state"] / fwd_at[GB]
            emit(base + [dtname, "grad"], res)


def child_mjx(args):
    """MJX forward (qacc) under jit(vmap); batches that would blow the case budget are skipped."""
    jax = _jax_setup()
    if args.dtype == "f32":
        jax.config.update("jax_enable_x64", False)
    import jax.numpy as jnp
    import numpy as np
    from mujoco import mjx

    import models as M

    t_case = time.perf_counter()
    spec = M.get_model(args.model)
    m = M.build_mujoco(spec)
    mx = mjx.put_model(m, impl="jax")
    dx = mjx.make_data(mx, impl="jax")
    dt = jnp.float64 if args.dtype == "f64" else jnp.float32
    batches = QUICK_BATCHES if args.quick else (GPU_BATCHES if args.device == "gpu" else BATCHES)
    q, u, tau = M.random_states(spec, max(batches), seed=5)
    qm = np.stack([M.q_to_mujoco(spec, x) for x in q])
    base = ["runs", args.setting, args.model, "mjx", args.dtype]
    emit(base + ["info"], {"qpos_dtype": str(dx.qpos.dtype), "disableflags": int(mx.opt.disableflags)})

    def f(qp, qv, t):
        return mjx.forward(mx, dx.replace(qpos=qp, qvel=qv, qfrc_applied=t)).qacc

    vf = jax.vmap(f)
    prev = None  # (B, seconds per call)
    skip_reason = None
    for B in batches:
        if skip_reason is None and prev is not None:
            projected = prev[1] * B / prev[0]
            left = args.case_budget - (time.perf_counter() - t_case)
            if projected > min(args.max_call_s, left / 3):
                skip_reason = (f"skipped: projected call {projected:.1f} s at batch {B} "
                               f"(from {prev[1]:.3g} s at batch {prev[0]}) exceeds budget")
        if skip_reason:
            emit(base + ["batches", str(B)], {"skipped": skip_reason})
            continue
        a = (jnp.asarray(qm[:B], dt), jnp.asarray(u[:B], dt), jnp.asarray(tau[:B], dt))
        res, compiled = _time_compiled(jax, vf, a, B, args.case_budget)
        res["dtype"] = str(compiled(*a).dtype)
        emit(base + ["batches", str(B)], res)
        prev = (B, res["us_per_state"] * B * 1e-6)
        if args.grad and B == (GRAD_BATCH if GRAD_BATCH in batches else max(batches)):
            left = args.case_budget - (time.perf_counter() - t_case)
            if left < 4 * res["compile_s"] + 20 * prev[1]:
                emit(base + ["grad"], {"skipped": f"not enough case budget left ({left:.0f} s)"})
                continue
            g = jax.vmap(jax.grad(lambda qp, qv, t: f(qp, qv, t).sum(), argnums=(0, 1)))
            gres, _ = _time_compiled(jax, g, a, B, args.case_budget)
            gres["batch"] = B
            gres["ratio_vs_forward"] = gres["us_per_state"] / res["us_per_state"]
            emit(base + ["grad"], gres)


# ======================================================================================
# driver
# ======================================================================================


def _set(tree, path, value):
    for k in path[:-1]:
        tree = tree.setdefault(k, {})
    tree[path[-1]] = value


def _get(tree, *path, default=None):
    for k in path:
        if not isinstance(tree, dict) or k not in tree:
            return default
        tree = tree[k]
    return tree


def run_child(results, argv, env_flags, timeout_s, skip_path, log, out_path=None, platform_name=None):
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    if env_flags:
        env["XLA_FLAGS"] = env_flags
    if platform_name:
        env["JAX_PLATFORMS"] = platform_name
    env.setdefault("OMP_NUM_THREADS", "1")
    cmd = [sys.executable, os.path.abspath(__file__)] + argv
    t0 = time.perf_counter()
    load0 = os.getloadavg()[0]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    got = 0
    timed_out = False
    lines = []
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        timed_out = True
    for line in out.splitlines():
        if line.startswith("@@RESULT "):
            r = json.loads(line[len("@@RESULT "):])
            _set(results, r["path"], r["value"])
            got += 1
        elif "warp" not in line:
            lines.append(line)
    dt = time.perf_counter() - t0
    status = "timeout" if timed_out else f"rc={proc.returncode}"
    log(f"  {' '.join(argv)} [{env_flags or 'default flags'}]: {status}, {got} results, {dt:.0f} s, "
        f"loadavg {load0:.1f} -> {os.getloadavg()[0]:.1f}")
    results.setdefault("loadavg_1min", {})[" ".join(argv) + f" [{env_flags}]"] = [load0, os.getloadavg()[0]]
    if timed_out or proc.returncode != 0:
        _set(results, ["child_errors", " ".join(argv) + f" [{env_flags}]"],
             {"status": status, "wall_s": dt, "tail": "\n".join(lines[-15:])})
        if timed_out and skip_path is not None:
            _set(results, skip_path + ["timeout"], f"skipped: case exceeded its {timeout_s:.0f} s budget "
                                                   f"(compile+run); results before that are kept")
    if out_path:
        _write(results, out_path)
    return dt


def meta():
    import importlib.metadata as md

    def ver(p):
        try:
            return md.version(p)
        except md.PackageNotFoundError:
            return None

    cpu = None
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                cpu = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return {
        "cpu_model": cpu, "cpu_count": os.cpu_count(), "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": {p: ver(p) for p in ("jax", "jaxlib", "mujoco", "mujoco-mjx", "pin", "numpy", "jaxbody")},
        "command": "python " + " ".join([os.path.relpath(os.path.abspath(__file__), os.getcwd())] + sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def driver(args):
    import models as M

    t0 = time.perf_counter()
    models = [s.name for s in M.all_models(quick=args.quick)]
    gpu = args.device == "gpu"
    settings = {"default": None} if gpu else SETTINGS
    platform_name = "cuda" if gpu else None
    results = {"meta": meta(), "config": {
        "batches": QUICK_BATCHES if args.quick else (GPU_BATCHES if gpu else BATCHES), "models": models,
        "settings": settings, "device": args.device,
        "grad_batch": GRAD_BATCH, "quick": args.quick, "mjx_case_budget_s": args.mjx_budget,
        "mjx_dtypes": args.mjx_dtypes}}

    def log(msg):
        print(f"[{time.perf_counter() - t0:6.0f} s] {msg}", flush=True)

    common = (["--quick"] if args.quick else []) + ["--device", args.device]
    log("cross-checks and float32 accuracy")
    for name in models:
        run_child(results, ["--child", "crosscheck", "--model", name], None, 600, None, log)
    log("MuJoCo C and Pinocchio")
    for name in models:
        run_child(results, ["--child", "native", "--model", name] + common, None, 600, None, log)
    for setting, flags in settings.items():
        log(f"XLA setting {setting!r} ({flags or 'no XLA_FLAGS'})")
        for name in models:
            run_child(results, ["--child", "jaxbody", "--model", name, "--setting", setting,
                                "--case-budget", str(args.jaxbody_budget)] + common,
                      flags, args.jaxbody_budget, ["runs", setting, name, "jaxbody"], log,
                      platform_name=platform_name)
            for i, dt in enumerate(args.mjx_dtypes.split(",")):
                argv = ["--child", "mjx", "--model", name, "--setting", setting, "--dtype", dt,
                        "--case-budget", str(args.mjx_budget), "--max-call-s", str(args.mjx_max_call_s)] + common
                if i == 0 and not args.no_mjx_grad:
                    argv.append("--grad")
                run_child(results, argv, flags, args.mjx_budget, ["runs", setting, name, "mjx", dt], log, args.out,
                          platform_name=platform_name)
        _write(results, args.out)
    results["meta"]["total_wall_s"] = time.perf_counter() - t0
    _write(results, args.out)
    log(f"wrote {args.out}")
    if args.readme:
        write_readme(results, os.path.join(HERE, "README.md"))
        log("updated README.md")


def _write(results, path):
    with open(path, "w") as f:
        json.dump(results, f, indent=1, sort_keys=False)


# ======================================================================================
# README table
# ======================================================================================

BEGIN = "<!-- BEGIN RESULTS (generated by forward_dynamics.py --readme / --table-only) -->"
END = "<!-- END RESULTS -->"


def _f(x, nd=1):
    if x is None:
        return "–"
    if isinstance(x, str):
        return x
    if x >= 1000:
        return f"{x:,.0f}"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.{max(nd - 1, 0)}f}" if nd > 1 else f"{x:.0f}" if x >= 20 else f"{x:.1f}"
    return f"{x:.{nd}f}" if x >= 1 else f"{x:.2g}"


def _us(entry):
    if entry is None:
        return None
    if "skipped" in entry:
        return "skip"
    return entry.get("us_per_state")


def tables(results):
    cfg = results["config"]
    lines = []
    m = results["meta"]
    v = m["versions"]
    lines.append(f"Machine: {m['cpu_model']}, {m['cpu_count']} cores; Python {m['python']}; "
                 f"jax {v['jax']}, jaxlib {v['jaxlib']}, mujoco {v['mujoco']} (MJX from the mujoco wheel, "
                 f"mujoco-mjx {v['mujoco-mjx']}), pin {v['pin']}; {m['date']}. "
                 f"Total wall time {_f(m.get('total_wall_s'), 0)} s.")
    lines.append("")
    lines.append(f"Command: `{m['command']}`")
    lines.append("")
    for setting in cfg["settings"]:
        flags = cfg["settings"][setting]
        lines.append(f"### XLA setting `{setting}` ({'XLA_FLAGS=' + flags if flags else 'no XLA_FLAGS'})")
        lines.append("")
        lines.append("us/state (lower is better); states/s = 1e6 / (us/state). jaxbody and MJX use both cores "
                     "(XLA); MuJoCo C and Pinocchio are one thread (Python loop over states; 'C++ batch' = "
                     "`pin.abaInParallel` with 1 thread, no Python overhead); their columns do not depend "
                     "on the XLA setting.")
        lines.append("")
        lines.append("| model | batch | jaxbody f64 | jaxbody f32 | MJX f64 | MJX f32 | MuJoCo C loop | "
                     "Pinocchio loop | Pinocchio C++ batch | jb f64 / MJX f64 | jb f32 / MJX f32 | jb f64 / Pin C++ | "
                     "jaxbody f64 states/s |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name in cfg["models"]:
            run = _get(results, "runs", setting, name, default={})
            for B in cfg["batches"]:
                b = str(B)
                jb64 = _us(_get(run, "jaxbody", "f64", "batches", b))
                jb32 = _us(_get(run, "jaxbody", "f32", "batches", b))
                mx64 = _us(_get(run, "mjx", "f64", "batches", b))
                mx32 = _us(_get(run, "mjx", "f32", "batches", b))
                if mx64 is None and _get(run, "mjx", "f64", "timeout"):
                    mx64 = "timeout"
                if mx32 is None and _get(run, "mjx", "f32", "timeout"):
                    mx32 = "timeout"
                mj = _us(_get(results, "native", name, "mujoco", "batches", b))
                pn = _us(_get(results, "native", name, "pinocchio", "batches", b))
                pc = _us(_get(results, "native", name, "pinocchio_cpp_batch", "batches", b))

                def ratio(a, c):
                    return f"{a / c:.2f}" if isinstance(a, float) and isinstance(c, float) else "–"

                sps = _get(run, "jaxbody", "f64", "batches", b, "states_per_s")
                lines.append(f"| {name} | {B} | {_f(jb64)} | {_f(jb32)} | {_f(mx64)} | {_f(mx32)} | {_f(mj)} | "
                             f"{_f(pn)} | {_f(pc)} | {ratio(jb64, mx64)} | {ratio(jb32, mx32)} | {ratio(jb64, pc)} | "
                             f"{_f(sps, 0) if sps else '–'} |")
        lines.append("")
        lines.append("Compile time (s, `jax.jit(vmap(f)).lower(args).compile()`, per batch size) and reverse-mode "
                     f"gradient cost (grad of sum(udot) w.r.t. (q, u) under vmap, batch {cfg['grad_batch']}, "
                     "time ratio to the forward pass):")
        lines.append("")
        lines.append("| model | jaxbody f64 compile (per batch) | jaxbody f32 compile | MJX f64 compile | "
                     "MJX f32 compile | jaxbody grad/fwd f64 (compile s) | jaxbody grad/fwd f32 | MJX grad/fwd f64 |")
        lines.append("|---|---|---|---|---|---|---|---|")
        for name in cfg["models"]:
            run = _get(results, "runs", setting, name, default={})

            def comp(*p):
                vals = []
                for B in cfg["batches"]:
                    e = _get(run, *p, "batches", str(B))
                    vals.append("–" if e is None or "compile_s" not in e else f"{e['compile_s']:.1f}")
                return " / ".join(vals)

            def grad(*p):
                e = _get(run, *p, "grad")
                if e is None:
                    return "–"
                if "skipped" in e:
                    return e["skipped"]
                return f"{e['ratio_vs_forward']:.1f}x ({e['compile_s']:.0f} s)" + ("" if e.get("finite", True)
                                                                                    else " NON-FINITE")

            lines.append(f"| {name} | {comp('jaxbody', 'f64')} | {comp('jaxbody', 'f32')} | {comp('mjx', 'f64')} | "
                         f"{comp('mjx', 'f32')} | {grad('jaxbody', 'f64')} | {grad('jaxbody', 'f32')} | "
                         f"{grad('mjx', 'f64')} |")
        lines.append("")
        lines.append(f"One classic RK4 step per state (`jb.step_rk4`: 4 realizes to Acceleration), batch "
                     f"{cfg['grad_batch']}: us/state and ratio to one forward dynamics:")
        lines.append("")
        lines.append("| model | RK4 step f64 | / forward | RK4 step f32 | / forward |")
        lines.append("|---|---:|---:|---:|---:|")
        for name in cfg["models"]:
            run = _get(results, "runs", setting, name, default={})
            r64, r32 = _get(run, "jaxbody", "f64", "rk4_step"), _get(run, "jaxbody", "f32", "rk4_step")
            cells = [f"{_f(r['us_per_state'])} | {r['ratio_vs_forward']:.1f}" if r else "– | –" for r in (r64, r32)]
            lines.append(f"| {name} | {cells[0]} | {cells[1]} |")
        lines.append("")
        skips = []
        for name in cfg["models"]:
            for dt in ("f64", "f32"):
                e = _get(results, "runs", setting, name, "mjx", dt, default={})
                if "timeout" in e:
                    skips.append(f"- MJX {dt} {name}: {e['timeout']}")
                for B, be in (e.get("batches") or {}).items():
                    if "skipped" in be:
                        skips.append(f"- MJX {dt} {name} batch {B}: {be['skipped']}")
        if skips:
            lines.append("MJX skips in this setting:")
            lines.append("")
            lines += skips
            lines.append("")
    lines.append("### Bare per-call cost of the single-thread peers (one state, loop of calls)")
    lines.append("")
    lines.append("| model | MuJoCo `mj_forward` us/call | Pinocchio `aba` us/call |")
    lines.append("|---|---:|---:|")
    for name in cfg["models"]:
        lines.append(f"| {name} | {_f(_get(results, 'native', name, 'mujoco', 'call_us'), 2)} | "
                     f"{_f(_get(results, 'native', name, 'pinocchio', 'call_us'), 2)} |")
    lines.append("")
    lines.append("### Cross-check (float64, 20 random states, max abs difference after mapping conventions)")
    lines.append("")
    lines.append("| model | udot vs MuJoCo | udot vs Pinocchio | udot (u=0) vs MuJoCo | udot (u=0) vs Pinocchio | "
                 "M vs MuJoCo | M vs Pinocchio | max abs udot | max abs M |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in cfg["models"]:
        c = _get(results, "crosscheck", name)
        if c is None:
            lines.append(f"| {name} | missing |||||||")
            continue
        e = c["max_abs_diff"]
        lines.append(f"| {name} | {e['udot_mujoco']:.1e} | {e['udot_pinocchio']:.1e} | {e['udot_zero_u_mujoco']:.1e} "
                     f"| {e['udot_zero_u_pinocchio']:.1e} | {e['M_mujoco']:.1e} | {e['M_pinocchio']:.1e} | "
                     f"{c['max_abs_udot']:.3g} | {c['max_abs_M']:.3g} |")
    lines.append("")
    lines.append("### jaxbody float32 accuracy (1000 random states, model and inputs in float32 vs float64)")
    lines.append("")
    lines.append("| model | max rel err ‖Δudot‖/‖udot‖ | median rel err | max abs err / max abs udot |")
    lines.append("|---|---:|---:|---:|")
    for name in cfg["models"]:
        a = _get(results, "f32_accuracy", name)
        if a:
            lines.append(f"| {name} | {a['max_rel_err_norm']:.1e} | {a['median_rel_err_norm']:.1e} | "
                         f"{a['max_abs_err_over_max_abs_udot']:.1e} |")
    errs = results.get("child_errors")
    if errs:
        lines.append("")
        lines.append("Child processes that timed out or failed: " + "; ".join(
            f"`{k}` ({v['status']}, {v['wall_s']:.0f} s)" for k, v in errs.items()))
    return "\n".join(lines)


def write_readme(results, path):
    text = open(path).read() if os.path.exists(path) else ""
    block = BEGIN + "\n\n" + tables(results) + "\n\n" + END
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(text)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="batches 1 and 64, chains 4/16 + humanoid")
    p.add_argument("--out", default=None, help="results JSON (default benchmarks/results.json, "
                                               "benchmarks/results_quick.json with --quick)")
    p.add_argument("--readme", action="store_true", help="rewrite the results block of benchmarks/README.md")
    p.add_argument("--table-only", action="store_true", help="only regenerate README.md from --out")
    p.add_argument("--mjx-budget", type=float, default=80.0, help="wall budget (s) per MJX case (model, setting, dtype)")
    p.add_argument("--mjx-max-call-s", type=float, default=8.0, help="skip MJX batches projected slower than this per call")
    p.add_argument("--mjx-dtypes", default="f64", help="comma list; f32 runs MJX with jax_enable_x64 off")
    p.add_argument("--no-mjx-grad", action="store_true")
    p.add_argument("--jaxbody-budget", type=float, default=300.0)
    # child mode
    p.add_argument("--child", choices=["crosscheck", "native", "jaxbody", "mjx"])
    p.add_argument("--model")
    p.add_argument("--setting", default="default")
    p.add_argument("--dtype", default="f64")
    p.add_argument("--case-budget", type=float, default=120.0)
    p.add_argument("--max-call-s", type=float, default=8.0)
    p.add_argument("--grad", action="store_true")
    p.add_argument("--device", choices=["cpu", "gpu"], default="cpu", help="where jaxbody and MJX run")
    args = p.parse_args()
    if args.out is None:
        args.out = os.path.join(HERE, "results_quick.json" if args.quick else "results.json")
    if args.child:
        {"crosscheck": child_crosscheck, "native": child_native, "jaxbody": child_jaxbody, "mjx": child_mjx}[args.child](args)
    elif args.table_only:
        with open(args.out) as f:
            write_readme(json.load(f), os.path.join(HERE, "README.md"))
    else:
        driver(args)


if __name__ == "__main__":
    main()
