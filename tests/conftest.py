"""Test-suite setup: float64 for Simbody parity; shared helpers live in tests/systems.py."""

import os
import sys

import jax

jax.config.update("jax_enable_x64", True)
sys.path.insert(0, os.path.dirname(__file__))
