"""Compiling and loading the kernels: the C++ (and CUDA) in this folder, built once per machine, cached on disk.

The source (``tree_lane.h``: one lane of the tree recursions; ``cpu_ffi.cc``: the XLA FFI handlers over a
batch) is compiled with the machine's C++ compiler against jaxlib's FFI headers (``jax.ffi.include_dir()``)
the first time a process needs it, into ``$JAXBODY_CACHE_DIR`` (default ``~/.cache/jaxbody``) under a name
that hashes the sources, the compiler's version, the flags, jaxlib's version and the CPU model. A later
process finds the library there and only loads it (milliseconds). Nothing is downloaded.

Without a C++ compiler (``$CXX``, else ``c++``/``g++``/``clang++`` on PATH) or when the build fails, ``load()``
returns None and warns once; jaxbody then uses its JAX path (jaxbody._kernels.backend).

The cache cannot take a process down: a library is compiled under a temporary name and renamed into place
atomically, its size and SHA-256 are recorded beside it (``<name>.so.sha256``, written first), and a library
whose record is missing or does not match (a killed build, a full disk, a truncated copy) is rebuilt with a
warning instead of being mapped (mapping a truncated library kills the process with SIGBUS). A library that
builds but lacks the FFI handlers falls back to the JAX path with one warning. A first build prints one
progress line on stderr. ``JAXBODY_*`` environment variables with invalid values raise InvalidArgument naming
the variable (``check_environment``); an empty ``JAXBODY_CACHE_DIR`` means the default.

On a machine whose JAX runs on an NVIDIA GPU, ``load_cuda()`` does the same for ``cuda_ffi.cu`` with nvcc
(``$NVCC``, else ``nvcc`` on PATH, ``$CUDA_HOME/bin``, ``/usr/local/cuda/bin``) for the GPU's compute
capability, and registers its handlers for platform "CUDA" under the CPU targets' names, so one
``jax.ffi.ffi_call`` runs on whichever device the computation is placed on. No nvcc: one warning, the JAX
path on the GPU.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import jax

from jaxbody.errors import InvalidArgument

HERE = Path(__file__).parent
SOURCES = ("tree_lane.h", "tree_adjoint.h", "batch.h", "lane_pack.h", "cpu_ffi.cc")
FLAGS = ("-O3", "-march=native", "-ffp-contract=off", "-std=c++17", "-fPIC", "-shared", "-w")
#: cpu_ffi.cc compiles as two objects side by side, one per dtype's handlers (half the wall time on 2 cores).
CPU_PARTS = (["-DJB_ONLY_F64"], ["-DJB_ONLY_F32"])
CUDA_SOURCES = ("tree_lane.h", "tree_adjoint.h", "batch.h", "cuda_ffi.cu")
CUDA_FLAGS = ("-O3", "-std=c++17", "-Xcompiler", "-fPIC", "-shared", "-w")
TARGETS = ("jaxbody_forward_dynamics_f64", "jaxbody_forward_dynamics_f32", "jaxbody_m_inverse_f64",
           "jaxbody_m_inverse_f32", "jaxbody_residual_adjoint_f64", "jaxbody_residual_adjoint_f32")

#: What the last ``load()`` / ``load_cuda()`` did: "compiled", "cached" or "unavailable" (tests read it).
last_load = {"how": None, "path": None, "seconds": None}
last_load_cuda = {"how": None, "path": None, "seconds": None}


#: Bumped when the cache's layout changes (3: the size-and-hash record beside each library).
CACHE_FORMAT = "3"
#: JAXBODY_* variables with a fixed set of values, and integer ones with their (min, max).
ENV_CHOICES = {"JAXBODY_BACKEND": ("compiled", "jax"), "JAXBODY_KERNEL_PACK": ("0", "1"),
               "JAXBODY_CUDA_SCRATCH": ("local", "global")}
ENV_INTEGERS = {"JAXBODY_KERNEL_THREADS": (1, 1 << 16), "JAXBODY_CUDA_BLOCK": (32, 1024)}


def check_environment(environ=None) -> None:
    """Raise InvalidArgument naming the variable for a JAXBODY_* environment value jaxbody cannot use
    (``ENV_CHOICES``, ``ENV_INTEGERS``); unset or empty variables mean their defaults."""
    environ = os.environ if environ is None else environ
    for name, choices in ENV_CHOICES.items():
        value = environ.get(name, "")
        if value and value not in choices:
            raise InvalidArgument(f"environment variable {name}={value!r}: expected one of {choices} (or unset)")
    for name, (lo, hi) in ENV_INTEGERS.items():
        value = environ.get(name, "")
        if value and not (value.strip().isdigit() and lo <= int(value) <= hi):
            raise InvalidArgument(f"environment variable {name}={value!r}: expected an integer in [{lo}, {hi}] "
                                  f"(or unset)")


def cache_dir() -> Path:
    """``$JAXBODY_CACHE_DIR``, or ``~/.cache/jaxbody`` when it is unset or empty."""
    return Path(os.environ.get("JAXBODY_CACHE_DIR") or Path.home() / ".cache" / "jaxbody")


def find_compiler() -> str | None:
    """The C++ compiler to use: ``$CXX`` if set and found, else the first of c++, g++, clang++ on PATH."""
    for name in ([os.environ["CXX"]] if os.environ.get("CXX") else []) + ["c++", "g++", "clang++"]:
        path = shutil.which(name)
        if path:
            return path
    return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line
    except OSError:
        pass
    return platform.processor()


def find_nvcc() -> str | None:
    """CUDA's compiler: ``$NVCC``, else ``nvcc`` on PATH, in ``$CUDA_HOME/bin`` or ``/usr/local/cuda/bin``."""
    candidates = [os.environ.get("NVCC"), shutil.which("nvcc")]
    candidates += [str(Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin" / "nvcc")]
    return next((c for c in candidates if c and Path(c).is_file()), None)


def library_key(compiler: str, sources=SOURCES, flags=FLAGS, machine: str = "") -> str:
    """Content hash naming a built library: sources, compiler version, flags, jaxlib version, CPU model
    (and ``machine``: the GPU's compute capability for the CUDA library)."""
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout
    h = hashlib.sha256()
    for name in sources:
        h.update((HERE / name).read_bytes())
    for part in (version, " ".join(flags), repr(CPU_PARTS), jax.__version__, _cpu_model(), platform.machine(),
                 machine, CACHE_FORMAT):
        h.update(part.encode())
    return h.hexdigest()[:20]


def _run(cmds: list[list[str]]) -> None:
    """Run compiler commands side by side (the machine's cores build the parts at once); raise on a failure."""
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for cmd in cmds]
    for cmd, proc in zip(cmds, procs):
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{err[-2000:]}")


def _compile(cmd_head: list[str], source: str, target: Path, parts=None) -> None:
    """Compile ``source`` into the shared library ``target``. ``parts`` (lists of extra flags), if given,
    compile one object each, in parallel, linked into the library (CPU_PARTS: the float64 and float32
    handlers)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    include = f"-I{jax.ffi.include_dir()}"
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        out = Path(tmp) / target.name
        if parts:
            objects = [str(Path(tmp) / f"part{i}.o") for i in range(len(parts))]
            _run([[*cmd_head, *extra, include, "-c", str(HERE / source), "-o", obj]
                  for extra, obj in zip(parts, objects)])
            _run([[*cmd_head, *objects, "-o", str(out)]])
        else:
            _run([[*cmd_head, include, str(HERE / source), "-o", str(out)]])
        record = Path(tmp) / "record"
        record.write_text(_fingerprint(out))
        os.replace(record, _record_path(target))   # the record first: a library never sits without its own
        os.replace(out, target)  # atomic: a concurrent process sees the whole library or none


def _record_path(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def _fingerprint(path: Path) -> str:
    """"<size> <sha256>" of a file."""
    data = path.read_bytes()
    return f"{len(data)} {hashlib.sha256(data).hexdigest()}"


def _verified(target: Path) -> str | None:
    """None when ``target`` matches the size and hash recorded beside it, else why not (never maps the file)."""
    try:
        recorded = _record_path(target).read_text().strip()
    except OSError:
        return "its size-and-hash record is missing"
    try:
        found = _fingerprint(target)
    except OSError as error:
        return f"it cannot be read ({error})"
    return None if found == recorded else f"it is {found.split()[0]} bytes with another hash than recorded"


def _build_and_register(compiler, flags, source, target, symbol, platform, record, failure, parts=None):
    """Compile ``source`` into ``target`` unless a verified copy is cached, load it and register its TARGETS for
    ``platform`` (``symbol(name)``: the exported handler of each); None with ``failure`` warned if any step
    fails (a library without the handlers included)."""
    start = time.perf_counter()
    how = "cached"
    try:
        problem = _verified(target) if target.exists() else None
        if problem is not None:
            warnings.warn(f"jaxbody: the cached kernel library {target} is damaged ({problem}); rebuilding it",
                          RuntimeWarning, stacklevel=4)
        if problem is not None or not target.exists():
            print(f"jaxbody: building the compiled kernels for this machine, once (about 30 s on 2 cores; "
                  f"cached in {target.parent})...", file=sys.stderr, flush=True)
            _compile([compiler, *flags], source, target, parts)
            print(f"jaxbody: kernels built in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
            how = "compiled"
        lib = ctypes.CDLL(str(target))
        handlers = {name: getattr(lib, symbol(name)) for name in TARGETS}
    except AttributeError as error:
        return _unavailable(record, f"{failure} The library {target} has no handler {error}: the compiler "
                                    "did not build what it was given.")
    except (RuntimeError, OSError) as error:
        return _unavailable(record, f"{failure} {error}")
    for name in TARGETS:
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(handlers[name]), platform=platform)
    record.update(how=how, path=str(target), seconds=time.perf_counter() - start)
    return lib


def _unavailable(record, message):
    if message:
        warnings.warn(message, RuntimeWarning, stacklevel=4)
    record.update(how="unavailable", path=None)
    return None


@functools.cache
def load():
    """The loaded kernel library (ctypes.CDLL) with its FFI targets registered, or None (warned once). Raises
    InvalidArgument for an invalid JAXBODY_* environment value."""
    check_environment()
    compiler = find_compiler()
    if compiler is None:
        return _unavailable(last_load, "jaxbody: no C++ compiler found (set CXX or install g++); using the JAX "
                                       "path, which is slower. jb.set_backend('jax') silences this.")
    target = cache_dir() / f"jaxbody_kernels_{library_key(compiler)}.so"
    return _build_and_register(compiler, FLAGS, "cpu_ffi.cc", target, lambda name: name, "cpu", last_load,
                               "jaxbody: building the compiled kernels failed; using the JAX path.", CPU_PARTS)


def cuda_compute_capability() -> str | None:
    """The first CUDA device's compute capability as nvcc names it ("90" for an H100), or None."""
    try:
        device = jax.devices("cuda")[0]
    except RuntimeError:
        return None
    return str(getattr(device, "compute_capability", "")).replace(".", "") or None


@functools.cache
def load_cuda():
    """The loaded CUDA kernel library with its targets registered for platform "CUDA", or None (warned once
    when JAX has a CUDA device but the library cannot be built)."""
    check_environment()
    arch = cuda_compute_capability()
    if arch is None:
        return _unavailable(last_load_cuda, None)
    nvcc = find_nvcc()
    if nvcc is None:
        return _unavailable(last_load_cuda, "jaxbody: no nvcc found (set NVCC or CUDA_HOME); the GPU runs "
                                            "jaxbody's JAX path, which is slower. jb.set_backend('jax') silences this.")
    flags = (*CUDA_FLAGS, f"-arch=sm_{arch}")
    target = cache_dir() / f"jaxbody_cuda_kernels_{library_key(nvcc, CUDA_SOURCES, flags, arch)}.so"
    return _build_and_register(nvcc, flags, "cuda_ffi.cu", target, lambda name: f"{name}_cuda", "CUDA",
                               last_load_cuda, "jaxbody: building the CUDA kernels failed; the GPU runs the JAX path.")
