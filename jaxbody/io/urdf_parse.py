"""URDF text -> plain link and joint records in tree order, every structural error named with its line.

URDF conventions (ROS wiki, urdf/XML): a joint's ``origin`` is the child link frame in the parent link frame at
q = 0, rpy = fixed-axis roll-pitch-yaw (R = Rz(yaw) Ry(pitch) Rx(roll)); ``axis`` is in the joint (= child)
frame; ``inertial/origin`` is the inertial frame in the link frame and ``inertia`` is about the mass center in
that frame; links without ``inertial`` are massless.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxbody._math.inertia import check_inertia_matrix, only_triangle_fails
from jaxbody.errors import InvalidArgument, InvalidInertia
from jaxbody.io._xml import Node

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")


def rpy_matrix(rpy) -> np.ndarray:
    """URDF's fixed-axis roll-pitch-yaw: R = Rz(y) Ry(p) Rx(r)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


@dataclasses.dataclass
class Link:
    name: str
    node: Node
    mass: float                 # kg (0 without <inertial>)
    com: np.ndarray             # mass center in the link frame
    central: np.ndarray         # (3, 3) inertia about the mass center, link axes
    has_inertial: bool
    inertia_problem: str | None = None   # why the link's own inertia is physically impossible (checked after fusing)


@dataclasses.dataclass
class Joint:
    name: str
    node: Node
    type: str
    parent: str
    child: str
    R_PJ: np.ndarray            # joint (= child link) frame in the parent link frame at q = 0
    p_PJ: np.ndarray
    axis: np.ndarray            # unit axis in the joint frame
    limits: tuple[float, float] | None
    damping: float
    friction: float             # <dynamics friction> (N m or N)
    mimic: tuple[str, float, float] | None   # (joint, multiplier, offset)


def _floats(node: Node, key: str, n: int, default, where: Node) -> np.ndarray:
    text = node.attrib.get(key) if node is not None else None
    if text is None:
        return np.asarray(default, dtype=float)
    try:
        values = np.array([float(v) for v in text.split()])
    except ValueError:
        values = np.zeros(0)
    if values.shape != (n,) or not np.all(np.isfinite(values)):
        raise InvalidArgument(f"URDF {where.where()}: {key}={text!r} must be {n} finite number(s)")
    return values


def _origin(node: Node, where: Node):
    origin = node.find("origin") if node is not None else None
    xyz = _floats(origin, "xyz", 3, np.zeros(3), where)
    return rpy_matrix(_floats(origin, "rpy", 3, np.zeros(3), where)), xyz


def _link(node: Node) -> Link:
    if "name" not in node.attrib:
        raise InvalidArgument(f"URDF <link> (line {node.line}) has no name")
    inertial = node.find("inertial")
    if inertial is None:
        return Link(node.attrib["name"], node, 0.0, np.zeros(3), np.zeros((3, 3)), False)
    R, com = _origin(inertial, node)
    mass_node, inertia = inertial.find("mass"), inertial.find("inertia")
    mass = float(_floats(mass_node, "value", 1, [0.0], node)[0])
    keys = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
    xx, yy, zz, xy, xz, yz = (float(_floats(inertia, k, 1, [0.0], node)[0]) for k in keys)
    I_inertial = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    if mass < 0:
        raise InvalidArgument(f"URDF {node.where()}: negative mass {mass}")
    try:  # urdfdom and Pinocchio accept it; what counts is the body it is fused into (check_fused_inertias)
        check_inertia_matrix(I_inertial, "inertia about the mass center")
        problem = None
    except InvalidInertia as e:
        problem = str(e)
    return Link(node.attrib["name"], node, mass, com, R @ I_inertial @ R.T, True, problem)


def _joint(node: Node, links: dict[str, Link]) -> Joint:
    name = node.attrib.get("name")
    if name is None:
        raise InvalidArgument(f"URDF <joint> (line {node.line}) has no name")
    jtype = node.attrib.get("type")
    if jtype not in JOINT_TYPES:
        raise InvalidArgument(f"URDF {node.where()}: unknown joint type {jtype!r} (known: {', '.join(JOINT_TYPES)})")
    ends = {}
    for end in ("parent", "child"):
        e = node.find(end)
        if e is None or "link" not in e.attrib:
            raise InvalidArgument(f"URDF {node.where()}: missing <{end} link=...>")
        if e.attrib["link"] not in links:
            raise InvalidArgument(f"URDF {node.where()}: unknown {end} link {e.attrib['link']!r}")
        ends[end] = e.attrib["link"]
    R, p = _origin(node, node)
    if jtype in ("fixed", "floating"):  # urdfdom does not read <axis> on these: it has no meaning there
        axis = np.array([1.0, 0.0, 0.0])
    else:
        axis = _floats(node.find("axis"), "xyz", 3, [1.0, 0.0, 0.0], node)
    if np.linalg.norm(axis) == 0:
        raise InvalidArgument(f"URDF {node.where()}: zero joint axis")
    limit = node.find("limit")
    limits = None
    if limit is not None and jtype in ("revolute", "prismatic"):
        limits = (float(_floats(limit, "lower", 1, [0.0], node)[0]), float(_floats(limit, "upper", 1, [0.0], node)[0]))
    damping = float(_floats(node.find("dynamics"), "damping", 1, [0.0], node)[0])
    friction = float(_floats(node.find("dynamics"), "friction", 1, [0.0], node)[0])
    mimic_node = node.find("mimic")
    mimic = None
    if mimic_node is not None:
        if "joint" not in mimic_node.attrib:
            raise InvalidArgument(f"URDF {node.where()}: <mimic> without joint=")
        mimic = (mimic_node.attrib["joint"], float(_floats(mimic_node, "multiplier", 1, [1.0], node)[0]),
                 float(_floats(mimic_node, "offset", 1, [0.0], node)[0]))
    return Joint(name, node, jtype, ends["parent"], ends["child"], R, p, axis / np.linalg.norm(axis), limits,
                 damping, friction, mimic)


def parse_urdf(root: Node) -> tuple[str, dict[str, Link], list[Joint]]:
    """(root link name, links by name, joints in depth-first tree order); raises on any structural error."""
    if root.tag != "robot":
        raise InvalidArgument(f"URDF: the root element is <{root.tag}> (line {root.line}), expected <robot>")
    links: dict[str, Link] = {}
    for node in root.findall("link"):
        link = _link(node)
        if link.name in links:
            raise InvalidArgument(f"URDF {node.where()}: a second link named {link.name!r} (the first: "
                                  f"{links[link.name].node.where()})")
        links[link.name] = link
    if not links:
        raise InvalidArgument("URDF: no <link> in <robot>")
    joints = [_joint(n, links) for n in root.findall("joint")]
    first_joint: dict[str, Joint] = {}
    for j in joints:
        if j.name in first_joint:
            raise InvalidArgument(f"URDF {j.node.where()}: a second joint named {j.name!r} (the first: "
                                  f"{first_joint[j.name].node.where()}); joint names must be unique")
        first_joint[j.name] = j
    parent_joint: dict[str, Joint] = {}
    children: dict[str, list[Joint]] = {name: [] for name in links}
    for j in joints:
        if j.child in parent_joint:
            raise InvalidArgument(f"URDF {j.node.where()}: link {j.child!r} has two parents "
                                  f"({parent_joint[j.child].parent!r} and {j.parent!r})")
        parent_joint[j.child] = j
        children[j.parent].append(j)
    roots = [name for name in links if name not in parent_joint]
    if len(roots) != 1:
        what = "no root link (every link has a parent: a loop)" if not roots else f"several root links {roots}"
        raise InvalidArgument(f"URDF: {what}")
    ordered: list[Joint] = []
    stack = list(reversed(children[roots[0]]))
    while stack:
        j = stack.pop()
        ordered.append(j)
        stack.extend(reversed(children[j.child]))
    if len(ordered) != len(joints):
        loop = sorted({j.child for j in joints} - {j.child for j in ordered})
        raise InvalidArgument(f"URDF: links {loop} are not reachable from the root {roots[0]!r} (a loop)")
    return roots[0], links, ordered


#: A moment of inertia (kg m^2) about a revolute axis at or below this counts as zero.
ZERO_ROTATIONAL_INERTIA = 1e-12


def axis_inertias_at_zero(root: str, links: dict, joints: list) -> dict[str, float]:
    """Moving joint name -> what the joint carries along its axis at q = 0: for revolute and continuous joints
    the moment of inertia (kg m^2) of the child's subtree about the joint's axis line, for prismatic joints the
    subtree's mass (kg); the joint's mass-matrix diagonal entry at q = 0. Planar and floating joints are left out.

    Frames: every link frame placed in the root's frame at q = 0 (``R_PJ``, ``p_PJ`` chained, parents first).
    Cost: linear in the number of links (subtree mass, mass center and central inertia summed leaves first).
    """
    R_world, p_world = {root: np.eye(3)}, {root: np.zeros(3)}
    for j in joints:  # tree order: the parent's pose is known
        R_world[j.child] = R_world[j.parent] @ j.R_PJ
        p_world[j.child] = R_world[j.parent] @ j.p_PJ + p_world[j.parent]
    subtree = {}  # link -> (mass, mass center in the root frame, inertia about the mass center, root axes)
    for name, link in links.items():
        R = R_world.get(name, np.eye(3))
        subtree[name] = (link.mass, R @ link.com + p_world.get(name, np.zeros(3)), R @ link.central @ R.T)
    for j in reversed(joints):  # children before parents
        subtree[j.parent] = _combine(subtree[j.parent], subtree[j.child])
    inertias = {}
    for j in joints:
        mass, com, central = subtree[j.child]
        if j.type == "prismatic":
            inertias[j.name] = float(mass)
        elif j.type in ("revolute", "continuous"):
            axis = R_world[j.child] @ j.axis
            arm = np.cross(axis, com - p_world[j.child])
            inertias[j.name] = float(axis @ central @ axis + mass * arm @ arm)
    return inertias


def _combine(a, b):
    """Two rigid pieces (mass, mass center, central inertia; one frame) as one (parallel-axis theorem)."""
    (ma, ca, Ia), (mb, cb, Ib) = a, b
    m = ma + mb
    if m == 0:
        return 0.0, ca, Ia + Ib
    c = (ma * ca + mb * cb) / m
    shift = lambda mass, r: mass * (r @ r * np.eye(3) - np.outer(r, r))  # noqa: E731
    return m, c, Ia + shift(ma, ca - c) + Ib + shift(mb, cb - c)


def check_rotational_inertia(joints: list, inertias: dict[str, float]) -> None:
    """Raise naming the joint and link when a revolute or continuous joint turns a subtree that has no moment
    of inertia about the joint's axis at q = 0 (``inertias`` from ``axis_inertias_at_zero``; a link on its own
    axis with zero inertia about it): the mass matrix would be singular there and udot NaN, the rotational twin
    of a massless moving link."""
    for j in joints:
        if j.type not in ("revolute", "continuous"):
            continue
        moment = inertias[j.name]
        if moment <= ZERO_ROTATIONAL_INERTIA:
            raise InvalidArgument(
                f"URDF {j.node.where()}: joint {j.name!r} turns link {j.child!r} (and what it carries) about an axis "
                f"along which it has no moment of inertia ({moment:.3g} kg m^2): the mass matrix would be singular "
                f"and udot NaN; give the link inertia about the joint axis or make the joint fixed")


def check_fused_inertias(links: dict, host: dict, X_host: dict, strict_inertia: bool = True) -> tuple[list, dict]:
    """Check each body's inertia after fixed-joint fusing (urdfdom and Pinocchio check no link on its own).

    ``host``: link -> the link whose body it was fused into; ``X_host``: link -> (R, p) of the link frame in
    that body. Returns ``(repaired, accepted)``: "'link' (line n): why" for each link whose own inertia was
    invalid but whose body's is valid, and {body link: why} for each body whose fused inertia violates only the
    triangle inequality when ``strict_inertia`` is False (Pinocchio loads those; the caller warns for both).
    Raises InvalidArgument naming the body's link (and line) and the links fused into it for any other
    physically impossible inertia about the mass center, or for a triangle violation when ``strict_inertia``.
    """
    fused: dict[str, list[str]] = {}
    for name in links:
        fused.setdefault(host[name], []).append(name)
    repaired, accepted = [], {}
    for body, members in fused.items():
        pieces = [(links[n].mass, X_host[n][0] @ links[n].com + X_host[n][1],
                   X_host[n][0] @ links[n].central @ X_host[n][0].T) for n in members]
        total = pieces[0]
        for piece in pieces[1:]:
            total = _combine(total, piece)
        bad = [n for n in members if links[n].inertia_problem]
        try:
            check_inertia_matrix(total[2], "inertia about the mass center")
        except InvalidInertia as e:
            others = f" (with the links fused into it: {[n for n in members if n != body]})" if len(members) > 1 else ""
            if strict_inertia or not only_triangle_fails(total[2]):
                raise InvalidArgument(f"URDF {links[body].node.where()}{others}: {e}") from None
            accepted[body] = f"{links[body].node.where()}{others}: {e}"
            continue
        repaired += [f"{n!r} (line {links[n].node.line}): {links[n].inertia_problem}" for n in bad]
    return repaired, accepted
