"""Compiling and loading the kernels: the C++ (and CUDA) in this folder, built once per machine, cached on disk.

The source (``tree_lane.h``: one lane of the tree recursions; ``cpu_ffi.cc``: the XLA FFI handlers over a
batch) is compiled with the machine's C++ compiler against jaxlib's FFI headers (``jax.ffi.include_dir()``)
the first time a process needs it, into ``$JAXBODY_CACHE_DIR`` (default ``~/.cache/jaxbody``) under a name
that hashes the sources, the compiler's version, the flags, jaxlib's version and the CPU model. A later
process finds the library there and only loads it (milliseconds). Nothing is downloaded.

Without a C++ compiler (``$CXX``, else ``c++``/``g++``/``clang++`` on PATH) or when the build fails, ``load()``
returns None and warns once; jaxbody then uses its JAX path (jaxbody._kernels.backend).

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
import tempfile
import warnings
from pathlib import Path

import jax

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


def cache_dir() -> Path:
    return Path(os.environ.get("JAXBODY_CACHE_DIR", Path.home() / ".cache" / "jaxbody"))


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
                 machine):
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
        os.replace(out, target)  # atomic: a concurrent process sees the whole library or none


def _build_and_register(compiler, flags, source, target, symbol, platform, record, failure, parts=None):
    """Compile ``source`` into ``target`` unless cached, load it and register its TARGETS for ``platform``
    (``symbol(name)``: the exported handler of each); None with ``failure`` warned if any step fails."""
    import time

    start = time.perf_counter()
    how = "cached"
    try:
        if not target.exists():
            _compile([compiler, *flags], source, target, parts)
            how = "compiled"
        lib = ctypes.CDLL(str(target))
    except (RuntimeError, OSError) as error:
        warnings.warn(f"{failure} {error}", RuntimeWarning, stacklevel=4)
        record.update(how="unavailable", path=None)
        return None
    for name in TARGETS:
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(getattr(lib, symbol(name))), platform=platform)
    record.update(how=how, path=str(target), seconds=time.perf_counter() - start)
    return lib


def _unavailable(record, message):
    if message:
        warnings.warn(message, RuntimeWarning, stacklevel=4)
    record.update(how="unavailable", path=None)
    return None


@functools.cache
def load():
    """The loaded kernel library (ctypes.CDLL) with its FFI targets registered, or None (warned once)."""
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
