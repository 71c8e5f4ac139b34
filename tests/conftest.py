"""Test-suite setup: float64 for Simbody parity, fast XLA compiles; shared helpers live in tests/helpers.py
and tests/systems.py.

Compilation dominates the suite's time (a 30-body tree test spends 177 of 207 s in XLA's backend compile).
The tests check numbers, not speed, so they compile with XLA:CPU's fusion emitters off and LLVM at -O0:
measured on this project's 2-core machine, the 30-body tree's forward dynamics compiles in 2.2 s instead of
7.2 s and its gradient in 10.8 s instead of 27.8 s (``benchmarks/README.md`` times both flag settings for
speed). Flags the caller already set in ``XLA_FLAGS`` win.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from xla_test_flags import xla_flags_for_tests  # noqa: E402

_TEST_XLA_FLAGS = xla_flags_for_tests()
_given = os.environ.get("XLA_FLAGS", "")
os.environ["XLA_FLAGS"] = " ".join(
    [_given] + [f"{k}={v}" for k, v in _TEST_XLA_FLAGS.items() if k not in _given]
).strip()

import jax  # noqa: E402  (after XLA_FLAGS: the CPU backend reads them when it starts)

jax.config.update("jax_enable_x64", True)

# Hypothesis profiles (tests/api/test_fuzz_construction.py): "ci" (default: small, reproducible) and "long"
# (select with `pytest --hypothesis-profile=long`: more examples, trees up to 60 bodies).
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("ci", max_examples=40, derandomize=True, deadline=None, database=None, print_blob=True)
_hypothesis_settings.register_profile("long", max_examples=400, deadline=None, database=None, print_blob=True)
_hypothesis_settings.load_profile("ci")


# ``@pytest.mark.long``: checks too slow for CI's budget (25 min on 2 cores); `pytest --long` runs them.
import pytest  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--long", action="store_true", default=False, help="also run tests marked @pytest.mark.long")


def pytest_configure(config):
    config.addinivalue_line("markers", "long: slow check, run only with --long")
    from helpers import count_trace
    from jaxbody._api.stage_operator import set_trace_hook

    set_trace_hook(count_trace)  # every compiled entry point's traces, counted for the whole session


# Files that took longest (per-test times of a full `pytest -n 2` run, 2026-11-29, --long checks excluded; the
# kernel files from the 2026-11-28 CI's --durations), longest first. pytest-xdist hands out whole files
# (`--dist loadfile`) in collection order (`--no-loadscope-reorder`, pyproject.toml), so starting these first keeps
# one worker from running a long file alone at the end.
LONGEST_FILES_FIRST = (
    "tests/kernels/test_kernel_derivatives.py",
    "tests/kernels/test_kernel_build.py",
    "tests/workflows/test_closed_chain_fourbar.py",
    "tests/workflows/test_contact_identification.py",
    "tests/paths/test_mobl_moment_arms.py",
    "tests/integrators/test_events.py",
    "tests/io/test_io_mjcf_spatial_wrap.py",
    "tests/io/test_io_mjcf_tendon_armature.py",
    "tests/kernels/test_cuda_source.py",
    "tests/test_readme.py",
    "tests/mobilizers/test_mobilizer_reverse_custom.py",
    "tests/unilateral/test_stepper_batching.py",
    "tests/io/test_io_mjcf_fluid.py",
    "tests/io/test_io_mjcf_names_options.py",
    "tests/golden/test_golden_simbody.py",
    "tests/constraints/test_constraints.py",
    "tests/constraints/test_golden_constraints.py",
    "tests/mobilizers/test_mobilizer_catalogue.py",
    "tests/contact/test_mesh_batch.py",
    "tests/integrators/test_integrators.py",
    "tests/unilateral/test_unilateral_physics.py",
    "tests/io/test_io_mjcf.py",
    "tests/integrators/test_batched_constrained.py",
    "tests/contact/test_gjk_trackers.py",
)


def _run_order(item):
    path = item.nodeid.split("::")[0]
    return LONGEST_FILES_FIRST.index(path) if path in LONGEST_FILES_FIRST else len(LONGEST_FILES_FIRST)


def pytest_collection_modifyitems(config, items):
    items.sort(key=_run_order)  # stable: files and tests keep their order otherwise
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="long check: run with --long")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


# Memory: JAX keeps every compiled program of every jitted function for the life of the process, so an xdist
# worker grows with each test file it runs (issue 38: 7-7.8 GB per worker). A file's programs are not reused by
# the next file (each builds its own models), so they are dropped when a worker moves on to another file.
def pytest_runtest_teardown(item, nextitem):
    if nextitem is None or nextitem.path != item.path:
        jax.clear_caches()
