"""Regenerate jaxbody's own constrained golden cases with real Simbody (inside ``opensim==4.6``).

    pip install -e ".[golden]"      # opensim 4.6 ships Simbody 3.9
    python tests/golden/generate_constraint_cases.py

Writes ``tests/golden/simbody/<case>.json`` and ``<case>.simbody.json`` in the oracle's format
(``tests/golden/simbody/README.md``, FORMAT section): constraints whose Ancestor is a moving body
(so vector equations and multipliers are in a non-Ground frame) and between two non-Ground bodies.
Only pin/slider/universal/gimbal joints are used, so q = u slot by slot. Applied forces are zero
(gravity only); the test suite never imports opensim.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import opensim as osim

OUT = pathlib.Path(__file__).parent / "simbody"
JOINTS = {"pin": (osim.PinJoint, 1), "slider": (osim.SliderJoint, 1), "universal": (osim.UniversalJoint, 2),
          "gimbal": (osim.GimbalJoint, 3)}

# name, parent, joint, (p_PF, xyz_PF), (p_BM, xyz_BM)
CASES = {
    "ancestor_constraints": {
        "bodies": [
            ("b1", "ground", "pin", ([0.1, 0.2, 0.0], [0.3, 0.1, 0.0]), ([0.0, 0.1, 0.0], [0.0, 0.0, 0.2])),
            ("b2", "b1", "pin", ([0.5, 0.0, 0.1], [0.0, 0.4, 0.0]), ([-0.1, 0.0, 0.0], [0.1, 0.0, 0.0])),
            ("b3", "b2", "universal", ([0.4, 0.1, 0.0], [0.2, 0.0, 0.3]), ([0.0, 0.0, 0.1], [0.0, 0.0, 0.0])),
            ("b4", "b1", "gimbal", ([0.2, -0.3, 0.1], [0.0, 0.0, 0.5]), ([0.1, 0.1, 0.0], [0.3, 0.0, 0.0])),
            ("b5", "b4", "pin", ([0.3, 0.0, -0.2], [0.5, 0.0, 0.0]), ([0.0, 0.2, 0.0], [0.0, 0.2, 0.0])),
        ],
        "constraints": [
            {"type": "ball", "body1": "b3", "station1": [0.2, 0.1, 0.0], "body2": "b5", "station2": [0.1, -0.2, 0.3]},
            {"type": "rod", "body1": "b2", "station1": [0.1, 0.0, 0.2], "body2": "b4", "station2": [0.0, 0.3, 0.0],
             "length": 0.8},
            {"type": "point_on_line", "line_body": "b2", "line_direction": [0.2, 0.3, 0.9], "point_on_line": [0.1, 0.0, 0.0],
             "follower_body": "b5", "follower_point": [0.3, 0.1, 0.0]},
        ],
    },
    "ancestor_weld": {
        "bodies": [
            ("d1", "ground", "pin", ([0.0, 0.3, 0.0], [0.0, 0.2, 0.1]), ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0])),
            ("d2", "d1", "gimbal", ([0.4, 0.0, 0.0], [0.1, 0.0, 0.0]), ([0.0, -0.1, 0.0], [0.0, 0.3, 0.0])),
            ("d3", "d1", "slider", ([0.0, 0.2, 0.3], [0.0, 0.0, 0.7]), ([0.1, 0.0, 0.0], [0.2, 0.0, 0.0])),
            ("d4", "d3", "gimbal", ([0.2, 0.0, 0.0], [0.0, 0.1, 0.0]), ([0.0, 0.0, 0.2], [0.0, 0.0, 0.4])),
        ],
        "constraints": [
            {"type": "weld", "body1": "d2", "X_B1F": ([0.1, 0.2, 0.0], [0.1, 0.2, 0.3]),
             "body2": "d4", "X_B2M": ([0.0, 0.1, -0.1], [0.3, -0.2, 0.1])},
        ],
    },
}


def vec3(v):
    return osim.Vec3(*[float(x) for x in v])


def rot_xyz(a):
    def rx(t): return np.array([[1, 0, 0], [0, np.cos(t), -np.sin(t)], [0, np.sin(t), np.cos(t)]])
    def ry(t): return np.array([[np.cos(t), 0, np.sin(t)], [0, 1, 0], [-np.sin(t), 0, np.cos(t)]])
    def rz(t): return np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0], [0, 0, 1]])
    return rx(a[0]) @ ry(a[1]) @ rz(a[2])


def frame(p, xyz):
    return {"p": [float(x) for x in p], "R": rot_xyz(xyz).ravel().tolist(), "opensim_xyz": [float(x) for x in xyz]}


def mat(m):
    return np.array([[m.get(i, j) for j in range(m.ncol())] for i in range(m.nrow())])


def vec(v):
    return np.array([v.get(i) for i in range(v.size())])


def spatial_vec(vs, n):
    return np.array([[vs.get(i).get(0).get(k) for k in range(3)] + [vs.get(i).get(1).get(k) for k in range(3)]
                     for i in range(n)])


def build(spec, rng):
    model = osim.Model()
    model.setGravity(vec3([0.0, -9.81, 0.0]))
    entries, handles = [], {"ground": model.getGround()}
    for name, parent, joint, (p_pf, a_pf), (p_bm, a_bm) in spec["bodies"]:
        mass = float(rng.uniform(0.5, 2.0))
        com = rng.uniform(-0.2, 0.2, 3)
        a = rng.uniform(0.05, 0.2, 3)
        moments = np.array([a[1] + a[2], a[0] + a[2], a[0] + a[1]])  # a physical (triangle-inequality) inertia
        body = osim.Body(name, mass, vec3(com), osim.Inertia(*moments, 0.0, 0.0, 0.0))
        model.addBody(body)
        cls, n = JOINTS[joint]
        j = cls(name + "_joint", handles[parent], vec3(p_pf), vec3(a_pf), body, vec3(p_bm), vec3(a_bm))
        model.addJoint(j)
        handles[name] = body
        entries.append({"name": name, "parent": parent, "joint": joint, "mass": mass, "com": com.tolist(),
                        "inertia_com": [*moments.tolist(), 0.0, 0.0, 0.0], "X_PF": frame(p_pf, a_pf),
                        "X_BM": frame(p_bm, a_bm), "nq": n, "nu": n})
    constraints = []
    for c in spec["constraints"]:
        c = dict(c)
        if c["type"] == "ball":
            k = osim.PointConstraint(handles[c["body1"]], vec3(c["station1"]), handles[c["body2"]], vec3(c["station2"]))
        elif c["type"] == "rod":
            k = osim.ConstantDistanceConstraint(handles[c["body1"]], vec3(c["station1"]), handles[c["body2"]],
                                                vec3(c["station2"]), c["length"])
        elif c["type"] == "point_on_line":
            d = np.asarray(c["line_direction"], float)
            c["line_direction"] = (d / np.linalg.norm(d)).tolist()
            k = osim.PointOnLineConstraint(handles[c["line_body"]], vec3(c["line_direction"]), vec3(c["point_on_line"]),
                                           handles[c["follower_body"]], vec3(c["follower_point"]))
        elif c["type"] == "weld":
            (p1, a1), (p2, a2) = c["X_B1F"], c["X_B2M"]
            k = osim.WeldConstraint(c["type"] + str(len(constraints)), handles[c["body1"]], vec3(p1), vec3(a1),
                                    handles[c["body2"]], vec3(p2), vec3(a2))
            c["X_B1F"], c["X_B2M"] = frame(p1, a1), frame(p2, a2)
        model.addConstraint(k)
        constraints.append(c)
    return model, entries, constraints


def simbody_order(model, entries):
    """Entries sorted by Simbody's MobilizedBodyIndex (OpenSim adds mobilizers level by level), with q/u starts."""
    model.initSystem()
    index = {model.getBodySet().get(i).getName(): int(model.getBodySet().get(i).getMobilizedBodyIndex())
             for i in range(model.getBodySet().getSize())}
    ordered = sorted(entries, key=lambda e: index[e["name"]])
    start = 0
    for e in ordered:
        e["mobod_index"], e["q_start"], e["u_start"] = index[e["name"]], start, start
        start += e["nq"]
    return ordered, start


def gravity_body_forces(model, state, entries):
    """Simbody's uniform gravity as spatial forces at each body origin in G (Ground row zero)."""
    g = np.array([0.0, -9.81, 0.0])
    F = osim.VectorOfSpatialVec(len(entries) + 1, osim.SpatialVec(osim.Vec3(0), osim.Vec3(0)))
    bodies = model.getBodySet()
    for i, e in enumerate(entries):  # entries are in MobilizedBodyIndex order
        X = bodies.get(e["name"]).getTransformInGround(state)
        R = np.array([[X.R().get(r, c) for c in range(3)] for r in range(3)])
        f = e["mass"] * g
        F.set(i + 1, osim.SpatialVec(vec3(np.cross(R @ np.asarray(e["com"]), f)), vec3(f)))
    return F


def evaluate(model, state, entries):
    matter = model.getMatterSubsystem()
    nb = len(entries) + 1
    model.realizeVelocity(state)
    out = {"position_errors": vec(state.getQErr()).tolist(), "velocity_errors": vec(state.getUErr()).tolist()}
    G, P, Pq, W = osim.Matrix(), osim.Matrix(), osim.Matrix(), osim.Matrix()
    matter.calcG(state, G)
    matter.calcP(state, P)
    matter.calcPq(state, Pq)
    matter.calcProjectedMInv(state, W)
    bias = osim.Vector()
    matter.calcBiasForAccelerationConstraints(state, bias)
    out.update(G=mat(G).tolist(), P=mat(P).tolist(), Pq=mat(Pq).tolist(), G_Minv_GT=mat(W).tolist(),
               accel_bias=vec(bias).tolist())
    F = gravity_body_forces(model, state, entries)
    tau = osim.Vector(state.getNU(), 0.0)
    udot, A = osim.Vector(), osim.VectorOfSpatialVec()
    matter.calcAcceleration(state, tau, F, udot, A)
    out.update(udot=vec(udot).tolist(), A_GB=spatial_vec(A, nb).tolist())
    model.realizeAcceleration(state)
    lam = matter.getConstraintMultipliers(state)
    Fc, fc = osim.VectorOfSpatialVec(), osim.Vector()
    matter.calcConstraintForcesFromMultipliers(state, lam, Fc, fc)
    R = osim.VectorOfSpatialVec()
    matter.calcMobilizerReactionForces(state, R)
    residual = osim.Vector()
    matter.calcResidualForce(state, tau, F, state.getUDot(), lam, residual)
    qdd = state.getQDotDot()
    A_real = osim.VectorOfSpatialVec()
    matter.calcBodyAccelerationFromUDot(state, state.getUDot(), A_real)
    out["realized"] = {
        "udot": vec(state.getUDot()).tolist(), "qdotdot": vec(qdd).tolist(), "A_GB": spatial_vec(A_real, nb).tolist(),
        "udot_err": vec(state.getUDotErr()).tolist(), "multipliers": vec(lam).tolist(),
        "constraint_body_forces": spatial_vec(Fc, nb).tolist(), "constraint_mobility_forces": vec(fc).tolist(),
        "constraint_power": matter.calcConstraintPower(state), "mobilizer_reaction_forces": spatial_vec(R, nb).tolist(),
        "residual_with_multipliers": vec(residual).tolist(),
        "mass_center_acceleration": [matter.calcSystemMassCenterAccelerationInGround(state).get(k) for k in range(3)],
    }
    return out


def generate(name, spec, seed):
    rng = np.random.default_rng(seed)
    model, entries, constraints = build(spec, rng)
    entries, n = simbody_order(model, entries)
    state = model.initSystem()
    assert state.getNQ() == n and state.getNU() == n, (state.getNQ(), state.getNU())
    samples, results = [], []
    for k in range(3):
        q = rng.uniform(-1.0, 1.0, n)
        u = rng.normal(size=n)
        state.setQ(osim.Vector(q.tolist()))
        state.setU(osim.Vector(u.tolist()))
        samples.append({"q": q.tolist(), "u": u.tolist(), "tau": [0.0] * n,
                        "body_forces": [[0.0] * 6 for _ in range(len(entries) + 1)], "udot_known": [0.0] * n})
        results.append(evaluate(model, state, entries))
    m = len(results[0]["accel_bias"])
    case = {"case": name, "gravity": [0.0, -9.81, 0.0], "bodies": entries, "constraints": constraints, "nq": n,
            "nu": n, "samples": samples, "generator": {"opensim": osim.__version__, "by": "tests/golden/" + pathlib.Path(__file__).name}}
    res = {"format": 1, "case": name, "n_constraint_equations": m, "n_holonomic": len(results[0]["position_errors"]),
           "samples": results}
    (OUT / f"{name}.json").write_text(json.dumps(case, indent=1))
    (OUT / f"{name}.simbody.json").write_text(json.dumps(res, indent=1))
    print(name, "m =", m)


if __name__ == "__main__":
    for i, (name, spec) in enumerate(CASES.items()):
        generate(name, spec, 100 + i)
