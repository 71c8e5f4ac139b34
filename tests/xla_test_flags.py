"""XLA flags the test suite compiles with (tests/conftest.py, tests/script_runner.py), for the installed jaxlib.

The tests check numbers, not speed, so they compile with LLVM at -O0 and, where jaxlib has the switch, XLA:CPU's
fusion emitters off (jaxlib 0.11 removed ``--xla_cpu_use_fusion_emitters``; an unknown flag in XLA_FLAGS aborts
the process when the backend starts). Read without importing jax: the flags must be set before it starts.
"""

from __future__ import annotations

from importlib.metadata import version


def _jaxlib_at_least(major: int, minor: int) -> bool:
    parts = version("jaxlib").split(".")
    return (int(parts[0]), int(parts[1])) >= (major, minor)


def xla_flags_for_tests() -> dict[str, str]:
    """{flag: value} to add to XLA_FLAGS for fast test compiles on this jaxlib."""
    flags = {"--xla_backend_optimization_level": "0"}
    if not _jaxlib_at_least(0, 11):
        flags["--xla_cpu_use_fusion_emitters"] = "false"
    return flags
