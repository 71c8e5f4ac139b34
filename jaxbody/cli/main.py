"""Command-line interface: ``jaxbody demo [--model PATH] [--batch N] [--steps N] [--dt S] [--out PNG]``.

Only the CLI turns on float64 (inside the command); importing jaxbody never
changes JAX's global configuration. Arguments are checked before anything is simulated; a user's error
(a bad number, a missing or unreadable model file, an unsupported output format) is one line on stderr,
``jaxbody: error: ...``, and exit status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import math
import sys

from jaxbody.errors import JaxbodyError

#: What a user's input can raise: jaxbody's own errors (bad files, bad paths), unreadable files and missing
#: optional packages. Anything else is a bug and keeps its traceback.
USER_ERRORS = (JaxbodyError, OSError, ImportError)
DEFAULT_ANIMATION = "jaxbody_model.gif"
DEFAULT_FRAMES = 40  # frames of a model's animation


class UsageError(Exception):
    """A bad command line: argparse's message, and ``prog`` the (sub)command it is about."""

    def __init__(self, prog, message):
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(self.prog, message)


def _integer_at_least(minimum: int):
    """An argparse ``type``: the text as an integer >= ``minimum``."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {value}")
        return value
    return parse


_positive_int, _seed = _integer_at_least(1), _integer_at_least(0)


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    from jaxbody.cli import demo

    parser = _Parser(prog="jaxbody", description="jaxbody: Simbody's multibody dynamics in JAX.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser(
        "demo",
        help="simulate a batch of 3D pendulum chains (vmap + RK4) and report speed and energy drift",
        description=(
            "Simulate a batch of five-link 3D pendulum chains (Ball/Pin joints, gravity) with per-system "
            "link masses and lengths and random initial states, vmapped RK4 in float64. Prints compile "
            "time, wall time, throughput and relative energy drift, and writes a PNG."
        ),
    )
    p.add_argument("--model", default=None, metavar="PATH",
                   help="import this URDF (.urdf), MJCF (.xml) or OpenSim (.osim) model instead of the chains: "
                        "simulate a small batch and write an animation of lane 0 and its trajectory plots")
    p.add_argument("--animation", default=None,
                   help=f"with --model: the animation's path, .gif or .mp4 (default {DEFAULT_ANIMATION}); '' for none")
    p.add_argument("--frames", type=_positive_int, default=None,
                   help=f"with --model: frames of the animation (samples saved; default {DEFAULT_FRAMES})")
    p.add_argument("--batch", type=_positive_int, default=None,
                   help=f"number of systems (default {demo.DEFAULT_BATCH}; with --model 16, 4 with muscles)")
    p.add_argument("--steps", type=_positive_int, default=demo.DEFAULT_STEPS, help="RK4 steps (default %(default)s)")
    p.add_argument("--dt", type=_positive_float, default=None,
                   help=f"step size in s (default {demo.DEFAULT_DT}; with --model an MJCF file's <option timestep>, "
                        f"else 0.0001 with muscles, 0.001 without)")
    p.add_argument("--out", default=None,
                   help="PNG path (default jaxbody_demo.png; with --model jaxbody_model_trajectory.png); '' for none")
    p.add_argument("--seed", type=_seed, default=0, help="random seed for parameters and initial states")
    sub.add_parser("info", help="print the backend, device, whether the compiled kernels load, and the cache path",
                   description="Print JAX's backend and devices, jaxbody's backend setting, whether the compiled "
                               "kernels are built and loaded (building them on first use), and the kernel cache path.")
    return parser


def info() -> list[str]:
    """The lines ``jaxbody info`` prints (loads the kernels, building them on first use)."""
    import jax

    import jaxbody as jb
    from jaxbody import __version__
    from jaxbody._kernels import build

    available = jb.compiled_available()
    loaded = build.last_load_cuda if jax.default_backend() in ("gpu", "cuda") else build.last_load
    how = {"compiled": "built now", "cached": "loaded from the cache"}.get(loaded["how"], "not available (JAX path)")
    return [f"jaxbody {__version__}, jax {jax.__version__}, float64 "
            f"{'on' if jax.config.read('jax_enable_x64') else 'off (enable with jax_enable_x64)'}",
            f"JAX backend: {jax.default_backend()}; devices: {', '.join(str(d) for d in jax.devices())}",
            f"jaxbody backend: {jb.get_backend()}; compiled kernels: {how if available else 'not available (JAX path)'}"
            + (f" ({loaded['path']})" if available and loaded["path"] else ""),
            f"kernel cache: {build.cache_dir()}",
            f"C++ compiler: {build.find_compiler() or 'none found (set CXX)'}"]


def main(argv=None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit status (2 for a user's error)."""
    try:
        return _run(build_parser(), sys.argv[1:] if argv is None else list(argv))
    except (UsageError, *USER_ERRORS) as e:
        print(f"{getattr(e, 'prog', 'jaxbody')}: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2


def _run(parser, argv) -> int:
    args = parser.parse_args(argv)
    if args.version:
        from jaxbody import __version__

        print(f"jaxbody {__version__}")
        return 0
    if args.command == "info":
        print("\n".join(info()))
        return 0
    if args.command == "demo" and args.model:
        from jaxbody.cli.demo_model import (
            DEFAULT_BATCH,
            MODEL_DT,
            MUSCLE_BATCH,
            MUSCLE_DT,
            check_model_path,
            check_outputs,
            load_model,
            model_meshes,
            run_model_demo,
        )
        from jaxbody.cli.demo_muscles import muscle_handles

        out = "jaxbody_model_trajectory.png" if args.out is None else args.out
        animation = DEFAULT_ANIMATION if args.animation is None else args.animation
        check_model_path(args.model)
        check_outputs(animation, out)
        axis = "y" if args.model.lower().endswith(".osim") else "z"  # OpenSim's cylinders are along y, as Simbody's
        imported = load_model(args.model)
        muscles = bool(muscle_handles(imported))
        dt = args.dt or getattr(imported, "timestep", None) or (MUSCLE_DT if muscles else MODEL_DT)
        batch = args.batch or (MUSCLE_BATCH if muscles else DEFAULT_BATCH)
        run_model_demo(imported, batch=batch, steps=args.steps, dt=dt,
                       out=out or None, animation=animation or None, n_frames=args.frames or DEFAULT_FRAMES,
                       seed=args.seed, cylinder_axis=axis, meshes=model_meshes(args.model))
        return 0
    if args.command == "demo":
        from jaxbody.cli.demo import DEFAULT_BATCH, DEFAULT_DT, run_demo
        from jaxbody.cli.demo_model import check_outputs

        for option, value in (("--animation", args.animation), ("--frames", args.frames)):
            if value is not None:
                parser.error(f"{option} applies to a model's demo only: add --model FILE")
        out = "jaxbody_demo.png" if args.out is None else args.out
        check_outputs(None, out)
        run_demo(batch=args.batch or DEFAULT_BATCH, steps=args.steps, dt=args.dt or DEFAULT_DT, out=out or None,
                 seed=args.seed)
        return 0
    parser.print_help()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
