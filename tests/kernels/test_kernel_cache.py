"""The kernel cache cannot take a process down (issue 36 item 2; jaxbody._kernels.build), in fresh processes.

A "compiler" that succeeds without building the handlers (the real one, given an empty source) leaves a
library with a size-and-hash record: loading it falls back to the JAX path with one warning. The library is
then truncated (a killed build, a full disk): the next process notices before mapping it (mapping a truncated
library is SIGBUS), warns and rebuilds. Invalid JAXBODY_* values raise naming the variable; an empty
JAXBODY_CACHE_DIR is the default.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import jaxbody as jb
from jaxbody._kernels import backend, build

SCRIPT = r"""
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import jaxbody as jb
    from jaxbody._kernels import build
    available = jb.compiled_available()
print(json.dumps({"how": build.last_load["how"], "compiled": available,
                  "warnings": [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]}))
"""

FAKE_COMPILER = """#!{python}
import subprocess, sys
args = [{empty!r} if a.endswith("cpu_ffi.cc") else a for a in sys.argv[1:]]
sys.exit(subprocess.call([{real!r}] + args))
"""


def run(env_changes):
    out = subprocess.run([sys.executable, "-c", SCRIPT], env={**os.environ, **env_changes}, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, f"exit {out.returncode} (SIGBUS is -7): {out.stderr[-3000:]}"
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


@pytest.fixture
def handlerless_compiler(tmp_path):
    real = shutil.which("c++") or shutil.which("g++")
    if real is None:
        pytest.skip("no C++ compiler")
    (tmp_path / "empty.cc").write_text("// nothing: no FFI handlers\n")
    fake = tmp_path / "fake-c++"
    fake.write_text(FAKE_COMPILER.format(python=sys.executable, empty=str(tmp_path / "empty.cc"), real=real))
    fake.chmod(0o755)
    return str(fake)


def test_handlerless_then_truncated_library(tmp_path, handlerless_compiler):
    cache = tmp_path / "cache"
    env = {"JAXBODY_CACHE_DIR": str(cache), "CXX": handlerless_compiler}
    first, stderr = run(env)
    assert first["how"] == "unavailable" and not first["compiled"]
    assert len(first["warnings"]) == 1 and "has no handler" in first["warnings"][0]
    assert "building the compiled kernels" in stderr                 # the progress line
    (library,) = cache.glob("jaxbody_kernels_*.so")
    record = Path(str(library) + ".sha256")
    assert record.read_text().split()[0] == str(library.stat().st_size)
    library.write_bytes(library.read_bytes()[: library.stat().st_size // 2])   # truncated
    second, _ = run(env)
    assert any("is damaged" in w and "rebuilding" in w for w in second["warnings"]), second["warnings"]
    assert record.read_text().split()[0] == str(library.stat().st_size)        # rebuilt whole
    record.unlink()                                                            # a library without its record
    third, _ = run(env)
    assert any("record is missing" in w for w in third["warnings"]), third["warnings"]


@pytest.mark.parametrize("name, value", [("JAXBODY_KERNEL_THREADS", "four"), ("JAXBODY_KERNEL_THREADS", "0"),
                                         ("JAXBODY_KERNEL_PACK", "off"), ("JAXBODY_CUDA_BLOCK", "16"),
                                         ("JAXBODY_CUDA_SCRATCH", "shared"), ("JAXBODY_BACKEND", "fast")])
def test_invalid_environment_values_raise_naming_the_variable(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(jb.InvalidArgument, match=f"{name}={value!r}"):
        build.load.__wrapped__()
    if name == "JAXBODY_BACKEND":
        with pytest.raises(jb.InvalidArgument, match=name):
            backend._from_environment()


def test_valid_and_empty_environment_values(monkeypatch):
    for name, value in [("JAXBODY_KERNEL_THREADS", "1"), ("JAXBODY_KERNEL_PACK", "0"), ("JAXBODY_CUDA_BLOCK", "128"),
                        ("JAXBODY_CUDA_SCRATCH", "global"), ("JAXBODY_BACKEND", ""), ("JAXBODY_CACHE_DIR", "")]:
        monkeypatch.setenv(name, value)
    build.check_environment()
    assert backend._from_environment() == "compiled"
    assert build.cache_dir() == Path.home() / ".cache" / "jaxbody"
