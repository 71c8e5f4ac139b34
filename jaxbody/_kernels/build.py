"""Compiling and loading the CPU kernels: the C++ in this folder, built once per machine and cached on disk.

The source (``tree_lane.h``: one lane of the tree recursions; ``cpu_ffi.cc``: the XLA FFI handlers over a
batch) is compiled with the machine's C++ compiler against jaxlib's FFI headers (``jax.ffi.include_dir()``)
the first time a process needs it, into ``$JAXBODY_CACHE_DIR`` (default ``~/.cache/jaxbody``) under a name
that hashes the sources, the compiler's version, the flags, jaxlib's version and the CPU model. A later
process finds the library there and only loads it (milliseconds). Nothing is downloaded.

Without a C++ compiler (``$CXX``, else ``c++``/``g++``/``clang++`` on PATH) or when the build fails, ``load()``
returns None and warns once; jaxbody then uses its JAX path (jaxbody._kernels.backend).
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
SOURCES = ("tree_lane.h", "batch.h", "cpu_ffi.cc")
FLAGS = ("-O3", "-march=native", "-ffp-contract=off", "-std=c++17", "-fPIC", "-shared", "-w")
TARGETS = ("jaxbody_forward_dynamics_f64", "jaxbody_forward_dynamics_f32", "jaxbody_m_inverse_f64",
           "jaxbody_m_inverse_f32")

#: What the last ``load()`` did: "compiled", "cached" or "unavailable" (tests read it).
last_load = {"how": None, "path": None, "seconds": None}


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


def library_key(compiler: str) -> str:
    """Content hash naming the built library: sources, compiler version, flags, jaxlib version, CPU model."""
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout
    h = hashlib.sha256()
    for name in SOURCES:
        h.update((HERE / name).read_bytes())
    for part in (version, " ".join(FLAGS), jax.__version__, _cpu_model(), platform.machine()):
        h.update(part.encode())
    return h.hexdigest()[:20]


def _compile(compiler: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        out = Path(tmp) / target.name
        cmd = [compiler, *FLAGS, f"-I{jax.ffi.include_dir()}", str(HERE / "cpu_ffi.cc"), "-o", str(out)]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{result.stderr[-2000:]}")
        os.replace(out, target)  # atomic: a concurrent process sees the whole library or none


@functools.cache
def load():
    """The loaded kernel library (ctypes.CDLL) with its FFI targets registered, or None (warned once)."""
    import time

    start = time.perf_counter()
    compiler = find_compiler()
    if compiler is None:
        warnings.warn("jaxbody: no C++ compiler found (set CXX or install g++); using the JAX path, which is "
                      "slower. jb.set_backend('jax') silences this.", RuntimeWarning, stacklevel=3)
        last_load.update(how="unavailable", path=None)
        return None
    target = cache_dir() / f"jaxbody_kernels_{library_key(compiler)}.so"
    how = "cached"
    try:
        if not target.exists():
            _compile(compiler, target)
            how = "compiled"
        lib = ctypes.CDLL(str(target))
    except (RuntimeError, OSError) as error:
        warnings.warn(f"jaxbody: building the compiled kernels failed; using the JAX path. {error}",
                      RuntimeWarning, stacklevel=3)
        last_load.update(how="unavailable", path=None)
        return None
    for name in TARGETS:
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(getattr(lib, name)), platform="cpu")
    last_load.update(how=how, path=str(target), seconds=time.perf_counter() - start)
    return lib
