"""Regenerate the FunctionBased golden case with real Simbody: OpenSim's CustomJoint is Simbody's
MobilizedBody::FunctionBased (six axis functions of the coordinates).

    pip install -e ".[golden]"      # opensim 4.6 ships Simbody 3.9
    python tests/golden/generate_function_based_case.py

Writes ``tests/golden/simbody/function_based.json`` (model + samples) and ``function_based.simbody.json``
(X_GB, V_GB, M and tree forward dynamics under gravity and random tau, per sample). Functions are linear,
constant or sine of one coordinate each (Simbody's HDot is exact for that; catalogue 1.20). Rotation
functions all depend on a coordinate: Simbody builds H_FM with the value 0 for a rotation function that has
no coordinates (a constant), so its H is then not the derivative of its X_FM; jaxbody keeps H = dX_FM/dt.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import opensim as osim

from generate_constraint_cases import frame, gravity_body_forces, mat, spatial_vec, vec, vec3

OUT = pathlib.Path(__file__).parent / "simbody"

# Per body: parent, n coordinates, (p_PF, xyz_PF), (p_BM, xyz_BM), six axes (3 rotations, 3 translations),
# each (axis, coordinate (local index) or None, function).
BODIES = [
    ("c1", "ground", 3, ([0.1, 0.0, 0.0], [0.0, 0.0, 0.2]), ([0.0, 0.1, 0.0], [0.1, 0.0, 0.0]), [
        ([0, 0, 1], 0, {"type": "linear", "slope": 1.0, "intercept": 0.0}),
        ([1, 0, 0], 1, {"type": "linear", "slope": 1.0, "intercept": 0.0}),
        ([0, 1, 0], None, {"type": "constant", "value": 0.0}),
        ([1, 0, 0], 0, {"type": "linear", "slope": 0.5, "intercept": 0.1}),
        ([0, 1, 0], 2, {"type": "linear", "slope": 1.0, "intercept": 0.0}),
        ([0, 0, 1], None, {"type": "constant", "value": 0.05}),
    ]),
    ("c2", "c1", 2, ([0.3, -0.1, 0.0], [0.2, 0.0, 0.0]), ([0.0, 0.0, 0.1], [0.0, 0.3, 0.0]), [
        ([0, 0, 1], 0, {"type": "sine", "amplitude": 0.8, "omega": 1.5, "phase": 0.3}),
        ([1, 0.2, 0], 0, {"type": "linear", "slope": 0.5, "intercept": 0.1}),
        ([0, 1, 0], 1, {"type": "linear", "slope": -0.7, "intercept": 0.2}),
        ([1, 0, 0], 1, {"type": "sine", "amplitude": 0.3, "omega": 2.0, "phase": 0.0}),
        ([0, 1, 0], None, {"type": "constant", "value": 0.2}),
        ([0, 0, 1], 0, {"type": "linear", "slope": 0.25, "intercept": 0.0}),
    ]),
]


def opensim_function(spec):
    if spec["type"] == "linear":
        return osim.LinearFunction(spec["slope"], spec["intercept"])
    if spec["type"] == "sine":
        return osim.Sine(spec["amplitude"], spec["omega"], spec["phase"])
    return osim.Constant(spec["value"])


def main():
    rng = np.random.default_rng(7)
    model = osim.Model()
    model.setGravity(vec3([0.0, -9.81, 0.0]))
    handles, entries, q_start = {"ground": model.getGround()}, [], 0
    for name, parent, n, (p_pf, a_pf), (p_bm, a_bm), axes in BODIES:
        mass = float(rng.uniform(0.5, 2.0))
        com = rng.uniform(-0.2, 0.2, 3)
        a = rng.uniform(0.05, 0.2, 3)
        moments = np.array([a[1] + a[2], a[0] + a[2], a[0] + a[1]])
        body = osim.Body(name, mass, vec3(com), osim.Inertia(*moments, 0.0, 0.0, 0.0))
        model.addBody(body)
        st = osim.SpatialTransform()
        for i, (axis, coord, fn) in enumerate(axes):
            ta = st.updTransformAxis(i)
            ta.setAxis(vec3(np.asarray(axis, float) / np.linalg.norm(axis)))
            names = osim.ArrayStr()
            if coord is not None:
                names.append(f"{name}_q{coord}")
            ta.setCoordinateNames(names)
            ta.set_function(opensim_function(fn))
        model.addJoint(osim.CustomJoint(name + "_joint", handles[parent], vec3(p_pf), vec3(a_pf), body, vec3(p_bm),
                                        vec3(a_bm), st))
        handles[name] = body
        entries.append({"name": name, "parent": parent, "joint": "function_based", "n": n, "mass": mass,
                        "com": com.tolist(), "inertia_com": [*moments.tolist(), 0.0, 0.0, 0.0],
                        "X_PF": frame(p_pf, a_pf), "X_BM": frame(p_bm, a_bm), "q_start": q_start,
                        "axes": [{"axis": ax, "coordinate": c, "function": f} for ax, c, f in axes]})
        q_start += n
    state = model.initSystem()
    assert state.getNQ() == q_start
    matter = model.getMatterSubsystem()
    nb = len(entries) + 1
    samples, results = [], []
    for _ in range(3):
        q, u, tau = rng.uniform(-1, 1, q_start), rng.normal(size=q_start), rng.normal(size=q_start)
        state.setQ(osim.Vector(q.tolist()))
        state.setU(osim.Vector(u.tolist()))
        model.realizeVelocity(state)
        M = osim.Matrix()
        matter.calcM(state, M)
        F = gravity_body_forces(model, state, entries)
        model.realizeDynamics(state)
        udot, A = osim.Vector(), osim.VectorOfSpatialVec()
        matter.calcAccelerationIgnoringConstraints(state, osim.Vector(tau.tolist()), F, udot, A)
        X, V = [], []
        for e in entries:
            b = model.getBodySet().get(e["name"])
            T = b.getTransformInGround(state)
            X.append({"R": [T.R().get(r, c) for r in range(3) for c in range(3)], "p": [T.p().get(k) for k in range(3)]})
            Vb = b.getVelocityInGround(state)
            V.append([Vb.get(0).get(k) for k in range(3)] + [Vb.get(1).get(k) for k in range(3)])
        samples.append({"q": q.tolist(), "u": u.tolist(), "tau": tau.tolist()})
        results.append({"X_GB": X, "V_GB": V, "M": mat(M).tolist(), "udot_ignoring_constraints": vec(udot).tolist(),
                        "A_GB_ignoring_constraints": spatial_vec(A, nb).tolist()})
    case = {"case": "function_based", "gravity": [0.0, -9.81, 0.0], "bodies": entries, "nq": q_start,
            "samples": samples, "generator": {"opensim": osim.__version__, "by": "tests/golden/" + pathlib.Path(__file__).name}}
    (OUT / "function_based.json").write_text(json.dumps(case, indent=1))
    (OUT / "function_based.simbody.json").write_text(json.dumps({"format": 1, "case": "function_based",
                                                                  "samples": results}, indent=1))
    print("function_based nq =", q_start)


if __name__ == "__main__":
    main()
