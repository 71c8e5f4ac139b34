"""One shared model description, built into jaxbody, MuJoCo (MJCF text) and Pinocchio.

A model is a list of ``BodySpec`` (parent index, -1 = Ground; joint type
"free" | "ball" | "pin"; X_PF as (R_PF, p_PF) in the parent body frame; mass;
com in the body frame; central inertia about the com in the body frame) plus
a gravity vector. X_BM is the identity everywhere, so the body frame is the
mobilizer's M frame and every joint sits at its body's origin.

Coordinate conventions (q, u) per engine and the maps between them:

=========  ==========================  =============================================
engine     Free joint                  Ball joint                 Pin joint
=========  ==========================  =============================================
jaxbody    q = (quat wxyz, p_FM)       q = quat wxyz              q = angle about z
           u = (w_FM in F, v_FM in F)  u = w_FM in F              u = angle rate
MuJoCo     qpos = (p, quat wxyz)       qpos = quat wxyz           hinge axis 0 0 1
           qvel = (v in F, w in M)     qvel = w in M
Pinocchio  q = (p, quat xyzw)          q = quat xyzw              JointModelRZ
           v = (R^T v, w in M)         v = w in M
=========  ==========================  =============================================

The velocity maps are linear, u_jaxbody = T(q) v_engine with T block
diagonal (identity or R_FM blocks); generalized forces map with T^T. For the
accelerations the angular blocks need no extra term (d/dt(R w_M) = R dw_M/dt
because w_M x w_M = 0); Pinocchio's free-flyer linear part needs
``pddot = R (a_lin + w_M x v_lin)``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

NQ = {"free": 7, "ball": 4, "pin": 1}
NU = {"free": 6, "ball": 3, "pin": 1}


@dataclasses.dataclass(frozen=True)
class BodySpec:
    name: str
    parent: int  # index into the body list, -1 = Ground
    joint: str  # "free" | "ball" | "pin"
    R_PF: np.ndarray  # (3, 3)
    p_PF: np.ndarray  # (3,)
    mass: float
    com: np.ndarray  # (3,) in the body frame
    inertia: np.ndarray  # (3, 3) about the com, in the body frame


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    name: str
    bodies: tuple
    gravity: np.ndarray

    @property
    def nq(self):
        return sum(NQ[b.joint] for b in self.bodies)

    @property
    def nu(self):
        return sum(NU[b.joint] for b in self.bodies)


# -- small rotation helpers (numpy) -----------------------------------------------


def rot_axis(axis, angle):
    axis = np.asarray(axis, float)
    axis = axis / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def quat_wxyz_from_R(R):
    """Unit quaternion (w, x, y, z), w >= 0, of a rotation matrix."""
    R = np.asarray(R, float)
    t = np.trace(R)
    if t > 0:
        s = np.sqrt(t + 1.0) * 2
        q = np.array([0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s])
    else:
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k]) * 2
        q = np.zeros(4)
        q[0] = (R[k, j] - R[j, k]) / s
        q[1 + i] = 0.25 * s
        q[1 + j] = (R[j, i] + R[i, j]) / s
        q[1 + k] = (R[k, i] + R[i, k]) / s
    q = q / np.linalg.norm(q)
    return q if q[0] >= 0 else -q


def R_from_quat_wxyz(q):
    w, x, y, z = np.asarray(q, float) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _inertia(rng, scale):
    """A valid, non-diagonal central inertia: R diag(d) R^T with d obeying the triangle inequality."""
    d = scale * np.array([1.0, 1.3, 1.6]) * (1 + 0.2 * rng.random(3))
    R = rot_axis(rng.normal(size=3), rng.uniform(0, np.pi))
    return R @ np.diag(d) @ R.T


# -- the benchmark models ------------------------------------------------------------


def pin_chain(n, link=0.3, seed=0):
    """n Pin links (rotation about z), each offset ``link`` m along the parent's x; gravity -y (in-plane swing)."""
    rng = np.random.default_rng(seed)
    bodies = []
    for i in range(n):
        bodies.append(
            BodySpec(
                name=f"link{i}",
                parent=i - 1,
                joint="pin",
                R_PF=np.eye(3),
                p_PF=np.array([link, 0.0, 0.0]) if i > 0 else np.zeros(3),
                mass=float(1.0 + 0.2 * rng.random()),
                com=np.array([0.5 * link, 0.01 * rng.normal(), 0.01 * rng.normal()]),
                inertia=_inertia(rng, 0.01),
            )
        )
    return ModelSpec(name=f"chain{n}", bodies=tuple(bodies), gravity=np.array([0.0, -9.81, 0.0]))


def humanoid(seed=1):
    """27-dof floating humanoid-like tree (12 bodies).

    pelvis: Free (6); per leg: hip Ball (3), knee Pin (1), ankle Pin (1);
    per arm: shoulder Ball (3), elbow Pin (1); neck Ball (3).
    Pin axes are turned onto the body's lateral (y) axis via X_PF rotations.
    """
    rng = np.random.default_rng(seed)
    lateral = rot_axis([1, 0, 0], -np.pi / 2)  # F z = parent y (pin about the lateral axis), F y = parent -z (down)
    B = []

    def add(name, parent, joint, R_PF, p_PF, mass, com, scale):
        B.append(BodySpec(name, parent, joint, np.asarray(R_PF, float), np.asarray(p_PF, float), float(mass),
                          np.asarray(com, float), _inertia(rng, scale)))
        return len(B) - 1

    pelvis = add("pelvis", -1, "free", np.eye(3), np.zeros(3), 10.0, [0.0, 0.0, 0.1], 0.08)
    for side, s in (("l", 1.0), ("r", -1.0)):
        hip = add(f"thigh_{side}", pelvis, "ball", rot_axis([1, 0, 0], 0.05 * s), [0.0, 0.1 * s, -0.05], 7.0,
                  [0.0, 0.0, -0.2], 0.1)
        knee = add(f"shank_{side}", hip, "pin", lateral, [0.0, 0.0, -0.42], 3.5, [0.0, 0.2, 0.0], 0.05)
        # The shank frame is the lateral-rotated one: its +y points down the leg.
        add(f"foot_{side}", knee, "pin", np.eye(3), [0.0, 0.40, 0.0], 1.2, [0.06, 0.03, 0.0], 0.005)
    chest = pelvis
    for side, s in (("l", 1.0), ("r", -1.0)):
        sh = add(f"upperarm_{side}", chest, "ball", rot_axis([0, 1, 0], 0.1 * s), [0.0, 0.2 * s, 0.45], 2.0,
                 [0.0, 0.0, -0.14], 0.015)
        add(f"forearm_{side}", sh, "pin", lateral, [0.0, 0.0, -0.28], 1.3, [0.0, 0.12, 0.0], 0.008)
    add("head", chest, "ball", np.eye(3), [0.0, 0.0, 0.6], 5.0, [0.0, 0.0, 0.1], 0.025)
    spec = ModelSpec(name="humanoid27", bodies=tuple(B), gravity=np.array([0.0, 0.0, -9.81]))
    assert spec.nu == 27, spec.nu
    return spec


def all_models(quick=False):
    if quick:
        return [humanoid(), pin_chain(4), pin_chain(16)]
    return [humanoid(), pin_chain(4), pin_chain(16), pin_chain(64)]


def get_model(name):
    if name == "humanoid27":
        return humanoid()
    if name.startswith("chain"):
        return pin_chain(int(name[5:]))
    raise KeyError(name)


# -- builders -----------------------------------------------------------------------


def cast_floats(tree, dtype):
    """``tree`` (a Model, State, ...) with every floating-point array leaf cast to ``dtype``."""
    import jax
    import jax.numpy as jnp

    return jax.tree_util.tree_map(
        lambda x: jnp.asarray(x, dtype) if hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jnp.floating) else x, tree)


def jaxbody_udot(model, q, u, tau):
    """udot of a jaxbody Model at (q, u) with mobility forces tau (gravity from the model): the benchmarks'
    forward dynamics."""
    import jaxbody as jb

    s = model.default_state().set_q(q).set_u(u).set_mobility_forces(tau)
    return model.realize(s, jb.Stage.Acceleration).acceleration.udot


def build_jaxbody(spec: ModelSpec):
    """Return (model, fd) with ``fd(q, u, tau) -> udot`` (gravity on)."""
    import jaxbody as jb

    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, list(spec.gravity))
    handles = []
    for b in spec.bodies:
        parent = matter.Ground() if b.parent < 0 else handles[b.parent]
        I = b.inertia
        mp = jb.MassProperties.from_central_inertia(
            b.mass, b.com, jb.Inertia(I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2])
        )
        factory = {"free": jb.MobilizedBody.Free, "ball": jb.MobilizedBody.Ball, "pin": jb.MobilizedBody.Pin}[b.joint]
        handles.append(factory(parent, jb.Transform(jb.Rotation(b.R_PF), b.p_PF), jb.Body.Rigid(mp), jb.Transform(),
                               name=b.name))
    model = system.realize_topology()
    assert model.get_num_q() == spec.nq and model.get_num_u() == spec.nu

    return model, lambda q, u, tau: jaxbody_udot(model, q, u, tau)


def _fmt(a):
    return " ".join(repr(float(x)) for x in np.ravel(a))


def mjcf(spec: ModelSpec) -> str:
    """MJCF text: no geoms, contacts/springs/damping/armature off, inertias given explicitly."""
    children = {i: [] for i in range(-1, len(spec.bodies))}
    for i, b in enumerate(spec.bodies):
        children[b.parent].append(i)

    def body_xml(i, depth):
        b = spec.bodies[i]
        ind = "  " * depth
        I = b.inertia
        full = [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]
        joint = {"free": '<freejoint name="{n}"/>', "ball": '<joint name="{n}" type="ball"/>',
                 "pin": '<joint name="{n}" type="hinge" axis="0 0 1"/>'}[b.joint].format(n="j_" + b.name)
        lines = [f'{ind}<body name="{b.name}" pos="{_fmt(b.p_PF)}" quat="{_fmt(quat_wxyz_from_R(b.R_PF))}">',
                 f'{ind}  <inertial pos="{_fmt(b.com)}" mass="{b.mass!r}" fullinertia="{_fmt(full)}"/>',
                 f"{ind}  {joint}"]
        for c in children[i]:
            lines += body_xml(c, depth + 1)
        lines.append(f"{ind}</body>")
        return lines

    body_lines = []
    for c in children[-1]:
        body_lines += body_xml(c, 2)
    return "\n".join(
        [
            f'<mujoco model="{spec.name}">',
            '  <compiler inertiafromgeom="false" angle="radian" autolimits="true"/>',
            f'  <option gravity="{_fmt(spec.gravity)}" timestep="0.001">',
            '    <flag contact="disable" constraint="disable" spring="disable" damper="disable" actuation="disable"/>',
            "  </option>",
            "  <worldbody>",
            *body_lines,
            "  </worldbody>",
            "</mujoco>",
        ]
    )


def build_mujoco(spec: ModelSpec):
    import mujoco

    m = mujoco.MjModel.from_xml_string(mjcf(spec))
    assert m.nv == spec.nu and m.nq == spec.nq
    assert np.all(m.dof_armature == 0) and np.all(m.dof_damping == 0) and m.ngeom == 0
    return m


def build_pinocchio(spec: ModelSpec):
    import pinocchio as pin

    model = pin.Model()
    model.gravity.linear = np.asarray(spec.gravity, float)
    jids = []
    for b in spec.bodies:
        parent = 0 if b.parent < 0 else jids[b.parent]
        jm = {"free": pin.JointModelFreeFlyer, "ball": pin.JointModelSpherical, "pin": pin.JointModelRZ}[b.joint]()
        jid = model.addJoint(parent, jm, pin.SE3(np.asarray(b.R_PF), np.asarray(b.p_PF)), "j_" + b.name)
        model.appendBodyToJoint(jid, pin.Inertia(b.mass, np.asarray(b.com), np.asarray(b.inertia)), pin.SE3.Identity())
        jids.append(jid)
    assert model.nv == spec.nu and model.nq == spec.nq
    return model


# -- states and coordinate maps ----------------------------------------------------------


def random_states(spec: ModelSpec, n, seed=0, vel_scale=1.0, tau_scale=1.0):
    """n random (q, u, tau) in jaxbody's convention (unit quaternions, w >= 0)."""
    rng = np.random.default_rng(seed)
    qs = []
    for b in spec.bodies:
        if b.joint == "pin":
            qs.append(rng.uniform(-np.pi, np.pi, (n, 1)))
        else:
            quat = rng.normal(size=(n, 4))
            quat /= np.linalg.norm(quat, axis=1, keepdims=True)
            quat *= np.sign(quat[:, :1])
            qs.append(quat)
            if b.joint == "free":
                qs.append(rng.normal(size=(n, 3)))
    q = np.concatenate(qs, axis=1)
    u = vel_scale * rng.normal(size=(n, spec.nu))
    tau = tau_scale * rng.normal(size=(n, spec.nu))
    return q, u, tau


def _blocks(spec, q):
    """Per body: (joint, q slice, u slice, R_FM) for one jaxbody q."""
    out, qi, ui = [], 0, 0
    for b in spec.bodies:
        nq, nu = NQ[b.joint], NU[b.joint]
        R = R_from_quat_wxyz(q[qi : qi + 4]) if b.joint != "pin" else None
        out.append((b.joint, slice(qi, qi + nq), slice(ui, ui + nu), R))
        qi += nq
        ui += nu
    return out


def velocity_map(spec, q, engine):
    """T with u_jaxbody = T v_engine (engine = "mujoco" | "pinocchio")."""
    T = np.zeros((spec.nu, spec.nu))
    for joint, _, us, R in _blocks(spec, q):
        a = us.start
        if joint == "pin":
            T[a, a] = 1.0
        elif joint == "ball":
            T[a : a + 3, a : a + 3] = R
        else:  # jaxbody (w_F, v_F); mujoco (v_F, w_M); pinocchio (R^T v_F, w_M)
            T[a : a + 3, a + 3 : a + 6] = R
            T[a + 3 : a + 6, a : a + 3] = R if engine == "pinocchio" else np.eye(3)
    return T


def q_to_mujoco(spec, q):
    out = []
    for joint, qs, _, _ in _blocks(spec, q):
        x = q[qs]
        out.append(np.concatenate([x[4:7], x[0:4]]) if joint == "free" else x)
    return np.concatenate(out)


def q_to_pinocchio(spec, q):
    out = []
    for joint, qs, _, _ in _blocks(spec, q):
        x = q[qs]
        if joint == "free":
            out.append(np.concatenate([x[4:7], x[1:4], x[0:1]]))
        elif joint == "ball":
            out.append(np.concatenate([x[1:4], x[0:1]]))
        else:
            out.append(x)
    return np.concatenate(out)


def udot_from_engine(spec, q, v_engine, a_engine, engine):
    """jaxbody's udot from an engine's acceleration (includes Pinocchio's free-flyer w x v term)."""
    T = velocity_map(spec, q, engine)
    udot = T @ a_engine
    if engine == "pinocchio":
        for joint, _, us, R in _blocks(spec, q):
            if joint == "free":
                a = us.start
                v_lin, w_loc = v_engine[a : a + 3], v_engine[a + 3 : a + 6]
                udot[a + 3 : a + 6] += R @ np.cross(w_loc, v_lin)
    return udot
