"""Run the scripts that tests check: an ``examples/`` script imported as a module, or a test script in a fresh
Python process on forced CPU devices (the device count is fixed when jax starts, so it cannot be changed in the
process that runs the tests)."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys

from xla_test_flags import xla_flags_for_tests

ROOT = pathlib.Path(__file__).resolve().parent.parent


def load_example(name: str):
    """Import ``examples/<name>.py`` as a module (its ``main(small=True)`` is what the workflow tests run)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_on_cpu_devices(script: str, path: pathlib.Path, devices: int = 4, timeout: int = 600):
    """Write ``script`` to ``path`` and run it with ``devices`` forced host devices, the repository and tests/
    importable, and XLA's cheapest compile settings. Returns the CompletedProcess (text stdout/stderr)."""
    env = dict(os.environ)
    env["XLA_FLAGS"] = " ".join([f"--xla_force_host_platform_device_count={devices}"]
                                + [f"{k}={v}" for k, v in xla_flags_for_tests().items()])
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    path.write_text(script)
    return subprocess.run([sys.executable, str(path)], check=False, env=env, capture_output=True, text=True,
                          timeout=timeout)
