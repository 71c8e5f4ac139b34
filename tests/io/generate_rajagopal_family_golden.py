"""OpenSim 4.6's numbers for tests/models/osim/rajagopal_family.osim (read by tests/io/test_osim_rajagopal_family.py).

    pip install -e ".[golden]"                                    # opensim 4.6 (Simbody 3.9)
    python tests/io/generate_rajagopal_family_golden.py

The model file is written by hand (tests/models/osim/README.md). OpenSim reads it, all forces off (it has
none), and records at 5 random assembled states (coordinates uniform in their ranges, speeds normal(0, 0.5))
q, u, M, udot under gravity with the patellofemoral coupler enforced, X_GB, QErr and UErr, and QErr off the
constraint manifold: step 2 of tests/io/generate_osim_golden.py, whose function this script calls. Writes
tests/io/golden/rajagopal_family.npz.
"""

from __future__ import annotations

import numpy as np

import generate_osim_golden as osim_golden

if __name__ == "__main__":
    osim_golden.model_golden("rajagopal_family", np.random.default_rng(2037))
