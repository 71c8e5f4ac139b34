"""OpenSim 4.6's numbers for MoBL_ARMS's paths over WrapTorus objects (tests/paths/test_wrap_torus.py reads them).

    python tests/paths/generate_torus_golden.py          # needs opensim 4.6 (pip install -e ".[golden]")

Every MoBL_ARMS path whose PathWrapSet has a WrapTorus (11: ECRB and ECU over the torus alone, the others with
ellipsoids, cylinders and a sphere), at N_STATES random states drawn as generate_ellipsoid_golden.py draws them.
For each path: ``getLength``, ``getLengtheningSpeed`` and ``computeMomentArm`` about the coordinates where some
state's arm is nonzero. Writes tests/paths/golden/osim_torus_paths.json.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import opensim as osim
from generate_ellipsoid_golden import MODELS, geometry_path, record, wrap_types

HERE = pathlib.Path(__file__).parent


def main():
    rng = np.random.default_rng(3536)
    model = osim.Model(str(MODELS / "MoBL_ARMS.osim"))
    state = model.initSystem()
    coords = [model.getCoordinateSet().get(i) for i in range(model.getCoordinateSet().getSize())]
    paths = {}
    for i in range(model.getForceSet().getSize()):
        force = model.getForceSet().get(i)
        path = geometry_path(force)
        if path is not None and "WrapTorus" in wrap_types(model, path):
            paths[force.getName()] = path
    out = {"MoBL_ARMS": record(model, state, paths, coords, rng)}
    (HERE / "golden" / "osim_torus_paths.json").write_text(json.dumps(out, separators=(",", ":")))
    print(len(paths), "paths:", " ".join(paths))


if __name__ == "__main__":
    main()
