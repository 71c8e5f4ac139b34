"""Rebuild the Simbody oracle cases (tests/golden/simbody/*.json) with jaxbody's builder API."""

from __future__ import annotations

import json
import pathlib

import numpy as np

import jaxbody as jb

GOLDEN_DIR = pathlib.Path(__file__).parent / "golden" / "simbody"
TREE_CASES = ["pendulum", "chain5_planar", "chain3d_mixed", "chain3d_more", "floating_tree"]
CONSTRAINED_CASES = ["fourbar", "fourbar_planar", "rod_chain", "weld_constraint", "coordinate_coupler"]
ALL_CASES = TREE_CASES + CONSTRAINED_CASES
# jaxbody's own cases (tests/golden/generate_constraint_cases.py): constraints whose Ancestor is a moving body.
GENERATED_CONSTRAINED_CASES = ["ancestor_constraints", "ancestor_weld"]
#: Tolerance of every comparison with the oracle: max error <= RTOL * max(1, max|expected|) (helpers.assert_close).
RTOL = 1e-10

_FACTORY = {
    "pin": jb.MobilizedBody.Pin,
    "slider": jb.MobilizedBody.Slider,
    "universal": jb.MobilizedBody.Universal,
    "gimbal": jb.MobilizedBody.Gimbal,
    "planar": jb.MobilizedBody.Planar,
    "ball": jb.MobilizedBody.Ball,
    "free": jb.MobilizedBody.Free,
    "weld": jb.MobilizedBody.Weld,
    "translation": jb.MobilizedBody.Translation,
    "cylinder": jb.MobilizedBody.Cylinder,
}


def load_case(name):
    case = json.loads((GOLDEN_DIR / f"{name}.json").read_text())
    results = json.loads((GOLDEN_DIR / f"{name}.simbody.json").read_text())
    return case, results


def transform_from_json(d):
    return jb.Transform(jb.Rotation(np.array(d["R"]).reshape(3, 3)), np.array(d["p"]))


def build_case(case, use_euler_angles=True, with_constraints=False):
    """Build the case's tree (and its constraints if asked). Returns (model, {name: MobilizedBody})."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, case["gravity"])
    handles = {"ground": matter.Ground()}
    for b in case["bodies"]:
        xx, yy, zz, xy, xz, yz = b["inertia_com"]
        mp = jb.MassProperties.from_central_inertia(b["mass"], b["com"], jb.Inertia(xx, yy, zz, xy, xz, yz))
        args = (handles[b["parent"]], transform_from_json(b["X_PF"]), jb.Body.Rigid(mp), transform_from_json(b["X_BM"]))
        joint = b["joint"]
        if joint == "screw":
            mobod = jb.MobilizedBody.Screw(*args, pitch=b["joint_params"]["pitch"], name=b["name"])
        elif joint == "ellipsoid":
            mobod = jb.MobilizedBody.Ellipsoid(*args, radii=b["joint_params"]["radii"], name=b["name"])
        else:
            mobod = _FACTORY[joint](*args, name=b["name"])
        assert mobod.q_start == b["q_start"] and mobod.u_start == b["u_start"], b["name"]
        handles[b["name"]] = mobod
    if with_constraints:
        for c in case["constraints"]:
            add_constraint(matter, handles, c)
    matter.set_use_euler_angles(use_euler_angles)
    return system.realize_topology(), handles


def _linear_coupler(x, p):
    """OpenSim's CoordinateCouplerConstraint with a LinearFunction: slope * q_indep + intercept - q_dep."""
    return p[0] * x[0] + p[1] - x[1]


def add_constraint(matter, handles, c):
    """Add one oracle constraint entry (FORMAT.md "Constraint entry") with jaxbody's Constraint API."""
    kind = c["type"]
    if kind == "ball":
        return jb.Constraint.Ball(handles[c["body1"]], c["station1"], handles[c["body2"]], c["station2"])
    if kind == "rod":
        return jb.Constraint.Rod(handles[c["body1"]], c["station1"], handles[c["body2"]], c["station2"], c["length"])
    if kind == "weld":
        return jb.Constraint.Weld(handles[c["body1"]], transform_from_json(c["X_B1F"]), handles[c["body2"]], transform_from_json(c["X_B2M"]))
    if kind == "point_on_line":
        return jb.Constraint.PointOnLine(
            handles[c["line_body"]], c["line_direction"], c["point_on_line"], handles[c["follower_body"]], c["follower_point"]
        )
    if kind == "coordinate_coupler":
        coords = [c["independent_coordinate"], c["dependent_coordinate"]]
        bodies = [handles[n.rsplit("_q", 1)[0]] for n in coords]
        indices = [int(n.rsplit("_q", 1)[1]) for n in coords]
        return jb.Constraint.CoordinateCoupler(
            matter, _linear_coupler, bodies, indices, params=[c["slope"], c["intercept"]]
        )
    raise ValueError(f"unknown constraint type {kind}")


def sample_state(model, sample):
    state = model.default_state()
    return state.set_q(np.array(sample["q"])).set_u(np.array(sample["u"]))
