"""OpenSim 4.6's numbers for the paths that wrap over WrapEllipsoids (tests/paths/test_wrap_ellipsoid.py reads them).

    python tests/paths/generate_ellipsoid_golden.py          # needs opensim 4.6 (pip install -e ".[golden]")

arm26's TRIlong and BIClong and every MoBL_ARMS path whose PathWrapSet has a WrapEllipsoid (and no WrapTorus), at
N_STATES random states (every unlocked coordinate uniform in its range, locked ones at their defaults, speeds
normal(0, 1); not assembled: a path's numbers need no constraint to hold). For each path: ``getLength``,
``getLengtheningSpeed`` and ``computeMomentArm`` about the coordinates where some state's arm is nonzero (the
others are 0 to the last bit; on MoBL_ARMS that includes the coordinates coupled by its
CoordinateCouplerConstraints, which OpenSim's MomentArmSolver projects through). Also
``arm26_ellipsoid_variants``: arm26 with copies of TRIlong and BIClong
(written to golden/arm26_ellipsoid_variants.osim) whose PathWraps use the ``midpoint`` and ``axial`` methods and
other quadrants (the models only use ``hybrid``).
Writes tests/paths/golden/osim_ellipsoid_paths.json.
"""

from __future__ import annotations

import copy
import json
import pathlib
import xml.etree.ElementTree as ET

import numpy as np
import opensim as osim

HERE = pathlib.Path(__file__).parent
MODELS = HERE.parent / "models" / "osim"
N_STATES = 20
#: (name, source path, method, quadrant of the ellipsoid copy) for the method/quadrant variants on arm26.
VARIANTS = [("TRIlong_midpoint", "TRIlong", "midpoint", "z"), ("TRIlong_axial", "TRIlong", "axial", "z"),
            ("BIClong_midpoint", "BIClong", "midpoint", "-y"), ("BIClong_axial", "BIClong", "axial", "-y"),
            ("TRIlong_all", "TRIlong", "hybrid", "all"), ("TRIlong_minus_z", "TRIlong", "hybrid", "-z"),
            ("BIClong_plus_x", "BIClong", "hybrid", "x"), ("BIClong_minus_x", "BIClong", "hybrid", "-x"),
            ("BIClong_plus_y", "BIClong", "hybrid", "y")]


def geometry_path(force):
    f = osim.PathActuator.safeDownCast(force)
    return None if f is None else osim.GeometryPath.safeDownCast(f.updPath())


def wrap_types(model, path) -> list:
    wraps = path.getWrapSet()
    return [wraps.get(i).getWrapObject().getConcreteClassName() for i in range(wraps.getSize())]


def record(model, state, paths, coords, rng, arms=True) -> dict:
    """Numbers at N_STATES random states for ``paths`` ({name: GeometryPath}); moment arms when ``arms``."""
    out = {"coordinates": [c.getName() for c in coords], "q": [], "u": [],
           "paths": {n: {"length": [], "speed": [], "moment_arms": {}} for n in paths}}
    moments = {n: [] for n in paths}
    for _ in range(N_STATES):
        for c in coords:
            if not c.getLocked(state):
                c.setValue(state, float(rng.uniform(c.getRangeMin(), c.getRangeMax())), False)
            c.setSpeedValue(state, float(rng.normal()))
        model.realizeVelocity(state)
        out["q"].append([c.getValue(state) for c in coords])
        out["u"].append([c.getSpeedValue(state) for c in coords])
        for n, p in paths.items():
            out["paths"][n]["length"].append(p.getLength(state))
            out["paths"][n]["speed"].append(p.getLengtheningSpeed(state))
            moments[n].append([p.computeMomentArm(state, c) for c in coords] if arms else [])
    for n in paths if arms else ():
        a = np.array(moments[n])
        out["paths"][n]["moment_arms"] = {coords[j].getName(): a[:, j].tolist() for j in range(len(coords))
                                          if np.any(a[:, j] != 0.0)}
    return out


def model_numbers(name: str, rng, arms=True) -> dict:
    model = osim.Model(str(MODELS / f"{name}.osim"))
    state = model.initSystem()
    coords = [model.getCoordinateSet().get(i) for i in range(model.getCoordinateSet().getSize())]
    paths = {}
    for i in range(model.getForceSet().getSize()):
        force = model.getForceSet().get(i)
        path = geometry_path(force)
        if path is not None:
            types = wrap_types(model, path)
            if "WrapEllipsoid" in types and "WrapTorus" not in types:
                paths[force.getName()] = path
    return record(model, state, paths, coords, rng, arms)


def write_variants(path: pathlib.Path):
    """arm26.osim with the VARIANTS added (XML copies of the muscles over copies of their WrapEllipsoids)."""
    tree = ET.parse(MODELS / "arm26.osim")
    root = tree.getroot()
    wraps = {w.get("name"): (holder, w) for holder in root.iter("WrapObjectSet")
             for w in holder.find("objects") if w.tag == "WrapEllipsoid"}
    forces = root.find("Model/ForceSet/objects")
    for name, source, method, quadrant in VARIANTS:
        muscle = copy.deepcopy(next(f for f in forces if f.get("name") == source))
        muscle.set("name", name)
        for pw in muscle.iter("PathWrap"):
            if pw.findtext("wrap_object") in wraps:
                holder, original = wraps[pw.findtext("wrap_object")]
                ellipsoid = copy.deepcopy(original)
                ellipsoid.set("name", f"{original.get('name')}_{name}")
                ellipsoid.find("quadrant").text = quadrant
                holder.find("objects").append(ellipsoid)
                pw.find("wrap_object").text = ellipsoid.get("name")
                pw.find("method").text = method
        forces.append(muscle)
    tree.write(path)


def variant_numbers(rng) -> dict:
    path = HERE / "golden" / "arm26_ellipsoid_variants.osim"
    write_variants(path)
    model = osim.Model(str(path))
    state = model.initSystem()
    coords = [model.getCoordinateSet().get(i) for i in range(model.getCoordinateSet().getSize())]
    paths = {n: geometry_path(model.getForceSet().get(n)) for n, *_ in VARIANTS}
    return record(model, state, paths, coords, rng)


def main():
    rng = np.random.default_rng(3535)
    (HERE / "golden").mkdir(exist_ok=True)
    out = {"arm26": model_numbers("arm26", rng), "MoBL_ARMS": model_numbers("MoBL_ARMS", rng),
           "arm26_ellipsoid_variants": variant_numbers(rng)}
    (HERE / "golden" / "osim_ellipsoid_paths.json").write_text(json.dumps(out, separators=(",", ":")))
    for name, data in out.items():
        print(name, len(data["paths"]), "paths:", " ".join(data["paths"]))


if __name__ == "__main__":
    main()
