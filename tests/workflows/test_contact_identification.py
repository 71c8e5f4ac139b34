"""Workflow: a box's contact material identified from its trajectories (examples/contact_identification.py).

CI run (``main(small=True)``: 0.2 s, 200 RK4 steps x 2 experiments in windows of 20 steps, start 35-40% off):
the Jacobian of the residuals by ``jax.jacfwd`` through the contact rollouts equals central differences, and
Levenberg-Marquardt brings all four material numbers (stiffness, dissipation, static and dynamic friction) to
1e-6 (the task: 1%). ``--long``: the full run (0.6 s, 60 windows) to 1e-8, and with 1 um / 0.1 mm/s noise on the
measured states to 1%.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/: script_runner

from script_runner import load_example


@pytest.fixture(scope="module")
def example():
    return load_example("contact_identification")


@pytest.fixture(scope="module")
def small(example):
    return example.main(small=True, quiet=True)


def test_jacobian_through_contact_equals_central_differences(small):
    fd = small["central_differences"]
    assert np.all(np.max(np.abs(fd), 0) > 1e-3)  # each parameter moves the residuals
    assert np.max(small["jacobian_error"]) < 1e-5, (small["jacobian_error"])


def test_material_recovered_to_one_percent(small):
    assert np.all(np.abs(small["start_error"]) > 0.3)
    assert small["history"][-1] < 1e-12 * small["history"][0]
    np.testing.assert_array_less(np.abs(small["relative_error"]), 1e-6)


@pytest.mark.long
def test_full_run_recovers_material(example):
    full = example.main(small=False, quiet=True)
    assert np.max(full["jacobian_error"]) < 1e-5
    np.testing.assert_array_less(np.abs(full["relative_error"]), 1e-8)


@pytest.mark.long
def test_noisy_states_still_give_one_percent(example):
    """1 um / 0.1 mm/s Gaussian noise on every measured q / u entry (0.6 s of data)."""
    noisy = example.main(small=False, quiet=True, noise=(1e-6, 1e-4))
    np.testing.assert_array_less(np.abs(noisy["relative_error"]), 0.01)
