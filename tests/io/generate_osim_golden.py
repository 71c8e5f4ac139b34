"""Regenerate the .osim test models and OpenSim 4.6's numbers for them (tests/io/test_osim*.py read them).

    pip install -e ".[golden]"                                    # opensim 4.6 (Simbody 3.9)
    pip download --no-deps --no-binary :all: osim-rl==3.0.11 -d /tmp/osimrl && tar xzf /tmp/osimrl/*.tar.gz -C /tmp/osimrl
    python tests/io/generate_osim_golden.py /tmp/osimrl/osim-rl-3.0.11/osim/models

1. Models: osim-rl ships OpenSim 3.x files; OpenSim 4.6 reads each and writes it as a 4.x file
   (``Model.printToXML``, XML comments removed) into tests/models/osim/<name>.osim.
2. For each model, re-read from that file: all forces (muscles, actuators, limit forces) stop applying forces,
   leaving gravity; at 5 random states (unlocked coordinates uniform in their ranges, locked ones at their
   default values, assembled by ``Model.assemble``
   when the model has constraints; speeds normal(0, 0.5), not projected) it records the State's q and u,
   M (``calcM``), udot under gravity (``realizeAcceleration``, constraints enforced), every body's X_GB,
   QErr and UErr, and QErr at q perturbed by normal(0, 0.05) (not assembled). It also records each
   coordinate's index in OpenSim's q and u (found by setting it alone). Writes tests/io/golden/<name>.npz.
3. A small model written here with OpenSim's API, ``joints_constraints``: every supported joint type (Pin,
   Slider, Universal, Ball, Gimbal, Planar, Free, Weld and a two-coordinate CustomJoint with Polynomial,
   Multiplier(SimmSpline), two-argument Linear and Constant functions whose <coordinates> list is written in
   the opposite order to the SpatialTransform's), offset frames with rotations, and the four geometric
   constraints (Point, ConstantDistance, PointOnLine, Weld between offset frames) plus one PointConstraint
   that is not enforced; same numbers as above.
4. Functions: OpenSim Constant, LinearFunction (1 and 2 arguments), PolynomialFunction, SimmSpline (2, 3, 4,
   9 knots), MultiplierFunction and a NaturalCubicSpline (read by OpenSim as a SimmSpline) written to
   tests/io/golden/osim_functions.xml, with calcValue and first and second calcDerivative at sample points
   in tests/io/golden/osim_functions.npz.
5. OpenSim 3.x documents, read by jaxbody without conversion (jaxbody.io.osim_upgrade): the four osim-rl files
   copied unchanged into tests/models/osim/opensim3/, and tests/models/osim/opensim3/upgrade_rules.osim (written
   by hand: the 3.x fields those four do not use), also written by OpenSim 4.6 as the 4.x file
   tests/models/osim/upgrade_rules.osim. For each, OpenSim 4.6 reads the 3.x file itself and records the numbers
   of step 2 in tests/io/golden/<name>_opensim3.npz.
6. The four osim-rl 3.x gait files that name two joints "back" (DUPLICATE_NAMES), copied unchanged into
   tests/models/osim/opensim3/, with OpenSim 4.6's numbers from each (step 2) in golden/<name>_opensim3.npz.
"""

from __future__ import annotations

import pathlib
import re
import shutil
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np
import opensim as osim

HERE = pathlib.Path(__file__).parent
MODELS = HERE.parent / "models" / "osim"
GOLDEN = HERE / "golden"
OPENSIM3 = MODELS / "opensim3"
SOURCES = {  # name in tests/models/osim -> file in osim-rl 3.0.11's osim/models
    "arm26": "arm26.osim",
    "gait9dof18musc": "gait9dof18musc.osim",
    "gait14dof22musc": "gait14dof22musc_20170320.osim",
    "MoBL_ARMS": "MoBL_ARMS_J.osim",
}
N_STATES = 5


def convert(source: pathlib.Path, target: pathlib.Path):
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / target.name
        osim.Model(str(source)).printToXML(str(out))
        text = re.sub(r"[ \t]*<!--.*?-->[ \t]*\n?", "", out.read_text(), flags=re.S)
    target.write_text(text)


def vector(v):
    return np.array([v.get(i) for i in range(v.size())])


def coordinate_slots(model, state):
    """Each coordinate's index in OpenSim's q and u (set it alone and see which entry moves)."""
    q_index, u_index = [], []
    for c in model.getCoordinateSet():
        s = osim.State(state)
        s.setQ(osim.Vector(s.getNQ(), 0.0))
        s.setU(osim.Vector(s.getNU(), 0.0))
        c.setLocked(s, False)
        c.setValue(s, 0.125, False)
        c.setSpeedValue(s, 0.25)
        q_index.append(int(np.flatnonzero(vector(s.getQ()) == 0.125)[0]))
        u_index.append(int(np.flatnonzero(vector(s.getU()) == 0.25)[0]))
    return q_index, u_index


def model_golden(name: str, rng, source=None, golden_name=None):
    """Step 2 for tests/models/osim/<name>.osim (or the file ``source``), written to golden/<golden_name or name>.npz."""
    model = osim.Model(str(source or MODELS / f"{name}.osim"))
    state = model.initSystem()
    for force in model.getForceSet():
        force.setAppliesForce(state, False)
    coords = list(model.getCoordinateSet())
    q_index, u_index = coordinate_slots(model, state)
    matter = model.getMatterSubsystem()
    bodies = list(model.getBodySet())
    has_constraints = model.getConstraintSet().getSize() > 0
    out = {k: [] for k in ("q", "u", "M", "udot", "R_GB", "p_GB", "qerr", "uerr", "q_perturbed", "qerr_perturbed")}
    while len(out["q"]) < N_STATES:
        for c in (c for c in coords if not c.getLocked(state)):
            c.setValue(state, rng.uniform(c.getRangeMin(), c.getRangeMax()), False)
        if has_constraints:
            try:
                model.assemble(state)
            except RuntimeError:
                continue
        state.setU(osim.Vector(rng.normal(0.0, 0.5, state.getNU()).tolist()))
        model.realizeAcceleration(state)
        M = osim.Matrix()
        matter.calcM(state, M)
        out["q"].append(vector(state.getQ()))
        out["u"].append(vector(state.getU()))
        out["M"].append(np.array([[M.get(i, j) for j in range(M.ncol())] for i in range(M.nrow())]))
        out["udot"].append(vector(state.getUDot()))
        X = [b.getTransformInGround(state) for b in bodies]
        out["R_GB"].append(np.array([[[x.R().get(i, j) for j in range(3)] for i in range(3)] for x in X]))
        out["p_GB"].append(np.array([[x.p().get(i) for i in range(3)] for x in X]))
        out["qerr"].append(vector(state.getQErr()))
        out["uerr"].append(vector(state.getUErr()))
        perturbed = osim.State(state)
        qp = out["q"][-1] + rng.normal(0.0, 0.05, state.getNQ())
        perturbed.setQ(osim.Vector(qp.tolist()))
        model.realizePosition(perturbed)
        out["q_perturbed"].append(qp)
        out["qerr_perturbed"].append(vector(perturbed.getQErr()))
    arrays = {k: np.array(v) for k, v in out.items()}
    np.savez(GOLDEN / f"{golden_name or name}.npz", coordinate_names=np.array([c.getName() for c in coords]),
             q_index=np.array(q_index), u_index=np.array(u_index), body_names=np.array([b.getName() for b in bodies]),
             gravity=vector(model.getGravity()), opensim_version=np.array(osim.__version__), **arrays)
    print(f"{golden_name or name}: nq={state.getNQ()} nu={state.getNU()} bodies={len(bodies)} qerr rows={arrays['qerr'].shape[1]}")


def spline(x, y):
    s = osim.SimmSpline()
    for a, b in zip(x, y):
        s.addPoint(float(a), float(b))
    return s


def array(values):
    a = osim.ArrayDouble()
    for v in values:
        a.append(v)
    return a


def read_function(path):
    return osim.Function.safeDownCast(osim.OpenSimObject.makeObjectFromFile(str(path)))


def functions_golden(rng):
    knots = np.sort(rng.uniform(-1.5, 2.0, 9))
    multiplied = spline(knots, np.cos(knots))
    multiplied.thisown = False  # the MultiplierFunction owns (and deletes) its inner function
    specs = [  # (name, OpenSim function, number of arguments, abscissae for samples)
        ("constant", osim.Constant(1.7), 1, None),
        ("linear", osim.LinearFunction(2.5, -0.3), 1, None),
        ("linear2", osim.LinearFunction(array([0.7, -1.1, 0.4])), 2, None),
        ("polynomial", osim.PolynomialFunction(osim.Vector([0.5, -1.2, 0.3, 2.0])), 1, None),
        ("spline2", spline([0.0, 2.61799], [0.0, -0.633555]), 1, [0.0, 2.61799]),
        ("spline3", spline([-1.0, 0.2, 1.5], [0.3, -0.4, 0.9]), 1, [-1.0, 0.2, 1.5]),
        ("spline4", spline([-1.0, 0.0, 0.5, 2.0], [0.0, 1.0, 0.5, 2.0]), 1, [-1.0, 0.0, 0.5, 2.0]),
        ("spline9", spline(knots, np.sin(2 * knots) + 0.1 * knots), 1, knots),
        ("multiplier", osim.MultiplierFunction(multiplied, -1.7), 1, knots),
    ]
    root = ET.Element("functions")
    values = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, function, nargs, x_knots in specs:
            path = pathlib.Path(tmp) / f"{name}.xml"
            function.printToXML(str(path))
            function = read_function(path)  # as written: the file rounds the numbers
            element = list(ET.parse(path).getroot())[0]
            element.set("name", name)
            root.append(element)
            if x_knots is None:
                xs = rng.uniform(-3, 3, (12, nargs))
            else:
                k = np.asarray(x_knots, float)
                mid = 0.5 * (k[1:] + k[:-1])
                xs = np.concatenate([k, mid, rng.uniform(k[0], k[-1], 8), [k[0] - 0.7, k[-1] + 0.9]])[:, None]
            values[f"{name}_x"] = xs
            values[f"{name}_value"] = np.array([function.calcValue(osim.Vector(list(x))) for x in xs])
            for order, components in (("d1", [0]), ("d2", [0, 0])):
                values[f"{name}_{order}"] = np.array(
                    [function.calcDerivative(osim.StdVectorInt(components), osim.Vector(list(x))) for x in xs])
        # NaturalCubicSpline (OpenSim 3's name): OpenSim 4.6 reads it as a SimmSpline.
        ncs = ET.fromstring(ET.tostring(root.find("SimmSpline[@name='spline9']")))
        ncs.tag, ncs.attrib["name"] = "NaturalCubicSpline", "natural_cubic_spline"
        wrapped = pathlib.Path(tmp) / "ncs.xml"
        wrapped.write_text(f'<?xml version="1.0"?><OpenSimDocument Version="40600">{ET.tostring(ncs, "unicode")}</OpenSimDocument>')
        read_back = read_function(wrapped)
        assert read_back.getConcreteClassName() == "SimmSpline", read_back.getConcreteClassName()
        root.append(ncs)
        xs = values["spline9_x"]
        values["natural_cubic_spline_x"] = xs
        values["natural_cubic_spline_value"] = np.array([read_back.calcValue(osim.Vector(list(x))) for x in xs])
    ET.indent(root)
    (GOLDEN / "osim_functions.xml").write_text(ET.tostring(root, "unicode") + "\n")
    np.savez(GOLDEN / "osim_functions.npz", **values)
    print("functions:", ", ".join(name for name, *_ in specs), "+ natural_cubic_spline")


def vec3(v):
    return osim.Vec3(*[float(a) for a in v])


def random_body(name, rng):
    moments = rng.uniform(0.02, 0.1, 3)
    moments = np.array([moments[1] + moments[2], moments[0] + moments[2], moments[0] + moments[1]])
    products = rng.uniform(-0.005, 0.005, 3)
    return osim.Body(name, float(rng.uniform(0.5, 3.0)), vec3(rng.uniform(-0.1, 0.1, 3)),
                     osim.Inertia(*moments, *products))


def custom_transform():
    st = osim.SpatialTransform()
    inner = spline([-2, -1, 0, 1, 2], [0.0, 0.02, 0.05, 0.03, -0.01])
    inner.thisown = False  # the MultiplierFunction owns (and deletes) its inner function
    specs = [  # axis, coordinates, function
        ([0, 0, 1], ["c_a"], osim.PolynomialFunction(osim.Vector([0.2, -0.1, 0.9, 0.05]))),
        ([1, 0, 0], ["c_b"], osim.LinearFunction(0.8, 0.0)),
        ([0, 1, 0], [], osim.Constant(0.0)),
        ([1, 0, 0], ["c_a"], osim.MultiplierFunction(inner, 1.5)),
        ([0, 1, 0], ["c_a", "c_b"], osim.LinearFunction(array([0.03, -0.02, 0.1]))),
        ([0, 0, 1], [], osim.Constant(0.04)),
    ]
    for i, (axis, coords, function) in enumerate(specs):
        axis_i = st.updTransformAxis(i)
        axis_i.setAxis(vec3(axis))
        names = osim.ArrayStr()
        for c in coords:
            names.append(c)
        axis_i.setCoordinateNames(names)
        axis_i.set_function(function)
    return st


def write_joints_constraints(rng):
    """The synthetic model (see the module docstring) as tests/models/osim/joints_constraints.osim."""
    model = osim.Model()
    model.setName("joints_constraints")
    model.setGravity(vec3([0.3, -9.81, 0.2]))
    ground = model.getGround()
    b = {n: random_body(n, rng) for n in ("pin", "slider", "universal", "ball", "gimbal", "planar", "free", "weld", "custom")}
    for body in b.values():
        model.addBody(body)

    def place():
        return vec3(rng.uniform(-0.3, 0.3, 3)), vec3(rng.uniform(-0.5, 0.5, 3))

    joints = [
        (osim.PinJoint, "j_pin", ground, b["pin"]), (osim.SliderJoint, "j_slider", b["pin"], b["slider"]),
        (osim.UniversalJoint, "j_universal", b["slider"], b["universal"]), (osim.BallJoint, "j_ball", b["pin"], b["ball"]),
        (osim.GimbalJoint, "j_gimbal", b["ball"], b["gimbal"]), (osim.PlanarJoint, "j_planar", ground, b["planar"]),
        (osim.FreeJoint, "j_free", ground, b["free"]), (osim.WeldJoint, "j_weld", b["free"], b["weld"]),
    ]
    for cls, name, parent, child in joints:
        model.addJoint(cls(name, parent, *place(), child, *place()))
    model.addJoint(osim.CustomJoint("j_custom", b["planar"], *place(), b["custom"], *place(), custom_transform()))
    constraints = [
        ("point", osim.PointConstraint(b["slider"], vec3([0.1, 0.0, 0.0]), b["gimbal"], vec3([0.0, 0.1, 0.0]))),
        ("distance", osim.ConstantDistanceConstraint(b["universal"], vec3([0.05, 0, 0]), b["planar"], vec3([0, 0.05, 0]), 0.6)),
        ("point_on_line", osim.PointOnLineConstraint(b["weld"], vec3([1, 1, 0]), vec3([0.1, 0, 0]), b["custom"], vec3([0, 0.1, 0]))),
        ("weld_to_ground", osim.WeldConstraint("weld_to_ground", ground, vec3([0.2, 0.4, 0.1]), vec3([0.1, 0.2, 0.3]),
                                               b["free"], vec3([0.0, 0.1, 0.0]), vec3([0.3, 0.0, -0.2]))),
        ("not_enforced", osim.PointConstraint(b["pin"], vec3([0, 0, 0]), b["custom"], vec3([0, 0, 0]))),
    ]
    for name, constraint in constraints:
        constraint.setName(name)
        model.addConstraint(constraint)
    constraints[-1][1].set_isEnforced(False)
    model.finalizeConnections()
    for c in model.getCoordinateSet():
        if c.getMotionType() == 2:  # translational
            c.setRangeMin(-0.3)
            c.setRangeMax(0.3)
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "joints_constraints.osim"
        model.printToXML(str(out))
        text = re.sub(r"[ \t]*<!--.*?-->[ \t]*\n?", "", out.read_text(), flags=re.S)
    # The CustomJoint's <coordinates> in the opposite order to its SpatialTransform's: OpenSim reorders them.
    first, second = (re.search(rf"<Coordinate name=\"{n}\">.*?</Coordinate>", text, flags=re.S) for n in ("c_a", "c_b"))
    text = text[:first.start()] + second.group(0) + text[first.end():second.start()] + first.group(0) + text[second.end():]
    (MODELS / "joints_constraints.osim").write_text(text)


def opensim3_golden(source_dir: pathlib.Path, rng):
    """Step 5: the 3.x originals, the 4.x copy of upgrade_rules, and OpenSim's numbers from each 3.x file."""
    for name, file in SOURCES.items():
        shutil.copyfile(source_dir / file, OPENSIM3 / f"{name}.osim")
    convert(OPENSIM3 / "upgrade_rules.osim", MODELS / "upgrade_rules.osim")
    for name in [*SOURCES, "upgrade_rules"]:
        model_golden(name, rng, OPENSIM3 / f"{name}.osim", f"{name}_opensim3")


#: Step 6: osim-rl 3.x files naming two joints "back" (torso's PinJoint, head's WeldJoint), which OpenSim 4.6
#: renames "back" and "back_0"; copied unchanged into tests/models/osim/opensim3/, numbers from OpenSim reading them.
DUPLICATE_NAMES = ("gait9dof18musc_20170320", "gait14dof22musc_pros_20180507", "gait14dof22musc_planar_pros_20180507",
                   "gait9dof18musc_pros_20180507")


def duplicate_names_golden(source_dir: pathlib.Path, rng):
    """Step 6 (see DUPLICATE_NAMES): golden/<name>_opensim3.npz."""
    for name in DUPLICATE_NAMES:
        shutil.copyfile(source_dir / f"{name}.osim", OPENSIM3 / f"{name}.osim")
        model_golden(name, rng, OPENSIM3 / f"{name}.osim", f"{name}_opensim3")


def main():
    source_dir = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/osimrl/osim-rl-3.0.11/osim/models")
    MODELS.mkdir(parents=True, exist_ok=True)
    GOLDEN.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(2026)
    for name, file in SOURCES.items():
        convert(source_dir / file, MODELS / f"{name}.osim")
        model_golden(name, rng)
    write_joints_constraints(rng)
    model_golden("joints_constraints", rng)
    functions_golden(rng)
    opensim3_golden(source_dir, np.random.default_rng(2030))
    duplicate_names_golden(source_dir, np.random.default_rng(2031))


if __name__ == "__main__":
    main()
