"""Generate tests/forces/golden/opensim_forces.npz: Simbody's own force elements, through OpenSim 4.6.

Run: ``python3 tests/forces/generate_force_golden.py`` (needs ``opensim``; the tests never import it).

The model (written into the file as plain data so the test rebuilds it in jaxbody): Ground -Pin-> A -Slider->
B, Ground -Pin-> C, OpenSim's joint frames given as (location, body-fixed XYZ angles), mass properties about
the mass center. Force elements and their Simbody counterparts:

* gravity (OpenSim's Force::Gravity, zero height 0)                    -> jb.Force.UniformGravity
* SpringGeneralizedForce on qA and on qB (-k (q - q0) - c qdot)        -> MobilityLinearSpring + MobilityLinearDamper
* PointToPointSpring B -> C (Simbody's TwoPointLinearSpring)           -> TwoPointLinearSpring
* BushingForce A -> C (OpenSim's bushing on Simbody's LinearBushing convention, checked here)  -> LinearBushing

For each sampled state (q, u) the file holds udot and the potential energy with every element on
("all") and with gravity plus one element (gravity alone for "gravity"; OpenSim's gravity cannot be switched
off per State), from Simbody's realizeAcceleration
and calcPotentialEnergy.
"""

from __future__ import annotations

import pathlib

import numpy as np
import opensim as osim

OUT = pathlib.Path(__file__).parent / "golden" / "opensim_forces.npz"
G = np.array([0.0, -9.80665, 0.0])
BODIES = {  # name: mass, com, central inertia (xx, yy, zz, xy, xz, yz)
    "A": (1.3, [0.3, 0.05, 0.0], [0.02, 0.05, 0.06, 0.001, 0.0, 0.002]),
    "B": (0.7, [0.0, 0.1, 0.02], [0.01, 0.02, 0.015, 0.0, 0.001, 0.0]),
    "C": (0.9, [0.1, -0.3, 0.05], [0.03, 0.02, 0.04, 0.0, 0.0, -0.001]),
}
JOINTS = {  # name: kind, parent, location/orientation in parent, location/orientation in child
    "A": ("pin", "ground", [0.1, 0.3, 0.0], [0.3, 0.1, 0.0], [-0.2, 0.0, 0.05], [0.0, 0.2, 0.1]),
    "B": ("slider", "A", [0.5, 0.0, 0.0], [0.0, 0.0, -0.4], [0.0, 0.0, 0.0], [0.1, 0.0, 0.0]),
    "C": ("pin", "ground", [-0.6, 0.2, 0.1], [0.2, -0.3, 0.1], [0.0, 0.1, 0.0], [0.0, 0.0, 0.0]),
}
SPRINGS = {"A": (3.0, 0.2, 0.4), "B": (40.0, 0.1, 0.9)}  # coordinate: stiffness, rest q0, viscosity
P2P = ("B", [0.1, 0.0, 0.0], "C", [0.0, 0.2, 0.0], 15.0, 0.3)  # body1, point1, body2, point2, k, rest length
BUSHING = ("A", "C", [20.0, 30.0, 25.0], [2.0, 3.0, 4.0], [1.0, 0.8, 1.2], [0.1, 0.2, 0.15])  # trans/rot k, trans/rot c
ELEMENTS = ("gravity", "springA", "springB", "p2p", "bushing")


def build():
    model = osim.Model()
    model.setGravity(osim.Vec3(*G))
    bodies = {"ground": model.getGround()}
    for name, (m, com, inertia) in BODIES.items():
        body = osim.Body(name, m, osim.Vec3(*com), osim.Inertia(*inertia))
        model.addBody(body)
        bodies[name] = body
    for name, (kind, parent, p_loc, p_ori, c_loc, c_ori) in JOINTS.items():
        cls = osim.PinJoint if kind == "pin" else osim.SliderJoint
        joint = cls("j" + name, bodies[parent], osim.Vec3(*p_loc), osim.Vec3(*p_ori),
                    bodies[name], osim.Vec3(*c_loc), osim.Vec3(*c_ori))
        joint.upd_coordinates(0).setName("q" + name)
        model.addJoint(joint)
    forces = {}
    for coord, (k, q0, c) in SPRINGS.items():
        spring = osim.SpringGeneralizedForce("q" + coord)
        spring.setName("spring" + coord)
        spring.setStiffness(k)
        spring.setRestLength(q0)
        spring.setViscosity(c)
        model.addForce(spring)
        forces["spring" + coord] = spring
    b1, s1, b2, s2, k, x0 = P2P
    p2p = osim.PointToPointSpring(bodies[b1], osim.Vec3(*s1), bodies[b2], osim.Vec3(*s2), k, x0)
    p2p.setName("p2p")
    model.addForce(p2p)
    forces["p2p"] = p2p
    f1, f2, kt, kr, ct, cr = BUSHING
    bushing = osim.BushingForce("bushing", bodies[f1], bodies[f2], osim.Vec3(*kt), osim.Vec3(*kr), osim.Vec3(*ct), osim.Vec3(*cr))
    model.addForce(bushing)
    forces["bushing"] = bushing
    return model, forces


def sample(model, forces, rng, n=4):
    state = model.initSystem()
    coords = [model.getCoordinateSet().get("q" + name) for name in BODIES]
    # q and u recorded in Simbody's State order (mobilized bodies A, C, B), as the test's model lays them out.
    qs, us, udot, pe = [], [], {e: [] for e in ("all",) + ELEMENTS}, {e: [] for e in ("all",) + ELEMENTS}
    for _ in range(n):
        q, u = rng.uniform(-0.8, 0.8, 3), rng.uniform(-1.5, 1.5, 3)  # in coordinate order (A, B, C)
        for c, qi, ui in zip(coords, q, u):
            c.setValue(state, float(qi), False)
            c.setSpeedValue(state, float(ui))
        qs.append([state.getQ().get(i) for i in range(3)])
        us.append([state.getU().get(i) for i in range(3)])
        for only in ("all",) + ELEMENTS:
            for c, qi, ui in zip(coords, q, u):
                c.setValue(state, float(qi), False)
                c.setSpeedValue(state, float(ui))
            for name, f in forces.items():
                f.setAppliesForce(state, only in ("all", name))
            model.realizeAcceleration(state)
            udot[only].append([state.getUDot().get(i) for i in range(3)])
            pe[only].append(model.calcPotentialEnergy(state))
    return np.array(qs), np.array(us), udot, pe


def main():
    model, forces = build()
    q, u, udot, pe = sample(model, forces, np.random.default_rng(3))
    data = {"q": q, "u": u, "gravity": G}
    for name, (m, com, inertia) in BODIES.items():
        data[f"body_{name}"] = np.array([m, *com, *inertia])
    for name, (kind, parent, p_loc, p_ori, c_loc, c_ori) in JOINTS.items():
        data[f"joint_{name}"] = np.array([*p_loc, *p_ori, *c_loc, *c_ori])
    for coord, v in SPRINGS.items():
        data[f"spring_{coord}"] = np.array(v)
    data["p2p"] = np.array([*P2P[1], *P2P[3], P2P[4], P2P[5]])
    data["bushing"] = np.array([*BUSHING[2], *BUSHING[3], *BUSHING[4], *BUSHING[5]])
    for e in udot:
        data[f"udot_{e}"] = np.array(udot[e])
        data[f"pe_{e}"] = np.array(pe[e])
    OUT.parent.mkdir(exist_ok=True)
    np.savez(OUT, **data)
    print(f"wrote {OUT}: {len(q)} states; udot_all[0] = {data['udot_all'][0]}")


if __name__ == "__main__":
    main()
