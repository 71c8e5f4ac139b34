"""OpenSim 4.6's muscle numbers (tests/muscles/generate_muscle_golden.py) as arrays: one row per (state, muscle)."""

from __future__ import annotations

import json
import pathlib

import jax
import jax.numpy as jnp
import numpy as np

GOLDEN = pathlib.Path(__file__).parent / "golden"


def load(name: str):
    """(golden dict, rows: {field: (n,) array; NaN where a muscle has no such entry}, muscle names (n,)) for
    golden/<name>.json."""
    data = json.loads((GOLDEN / f"{name}.json").read_text())
    entries = [(muscle, values) for record in data["states"] for muscle, values in record["muscles"].items()]
    keys = {key for _, values in entries for key in values}
    rows = {key: np.asarray([values.get(key, np.nan) for _, values in entries]) for key in keys}
    return data, rows, [muscle for muscle, _ in entries]


def stacked_parameters(cls, data, names):
    """``cls`` (a parameters Module) with each leaf the per-row values (n,) of the named muscles."""
    fields = data["parameters"][names[0]].keys()
    return cls(**{f: jnp.asarray([data["parameters"][n][f] for n in names]) for f in fields})


def one_muscle(parameters, i: int):
    """Row i of stacked parameters (scalar leaves)."""
    return jax.tree_util.tree_map(lambda x: x[i], parameters)


def unit_direction(parameters, field: str):
    """A tangent of scalar parameters: 1 in ``field``, 0 elsewhere."""
    return type(parameters)(**{f: jnp.asarray(float(f == field)) for f in parameters.__dataclass_fields__})
