"""URDF text -> plain link and joint records in tree order, every structural error named with its line.

URDF conventions (ROS wiki, urdf/XML): a joint's ``origin`` is the child link frame in the parent link frame at
q = 0, rpy = fixed-axis roll-pitch-yaw (R = Rz(yaw) Ry(pitch) Rx(roll)); ``axis`` is in the joint (= child)
frame; ``inertial/origin`` is the inertial frame in the link frame and ``inertia`` is about the mass center in
that frame; links without ``inertial`` are massless.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxbody._math.inertia import check_inertia_matrix
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
    try:
        check_inertia_matrix(I_inertial, "inertia about the mass center")
    except InvalidInertia as e:
        raise InvalidArgument(f"URDF {node.where()}: {e}") from None
    return Link(node.attrib["name"], node, mass, com, R @ I_inertial @ R.T, True)


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
            raise InvalidArgument(f"URDF {node.where()}: a second link named {link.name!r}")
        links[link.name] = link
    if not links:
        raise InvalidArgument("URDF: no <link> in <robot>")
    joints = [_joint(n, links) for n in root.findall("joint")]
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


def check_rotational_inertia(root: str, links: dict, joints: list) -> None:
    """Raise naming the joint and link when a revolute or continuous joint turns a subtree that has no moment
    of inertia about the joint's axis at q = 0 (a link on its own axis with zero inertia about it): the mass
    matrix would be singular there and udot NaN, the rotational twin of a massless moving link.

    Frames: every link frame placed in the root's frame at q = 0 (``R_PJ``, ``p_PJ`` chained, parents first).
    """
    R_world, p_world, parent_of = {root: np.eye(3)}, {root: np.zeros(3)}, {}
    for j in joints:
        R_world[j.child] = R_world[j.parent] @ j.R_PJ
        p_world[j.child] = R_world[j.parent] @ j.p_PJ + p_world[j.parent]
        parent_of[j.child] = j.parent

    def in_subtree(name, top):
        while name != top and name in parent_of:
            name = parent_of[name]
        return name == top

    for j in joints:
        if j.type not in ("revolute", "continuous"):
            continue
        axis, origin = R_world[j.child] @ j.axis, p_world[j.child]
        moment = 0.0
        for name, link in links.items():
            if not in_subtree(name, j.child):
                continue
            R = R_world[name]
            r = R @ link.com + p_world[name] - origin
            r_perp = r - axis * (axis @ r)
            moment += axis @ (R @ link.central @ R.T) @ axis + link.mass * (r_perp @ r_perp)
        if moment <= ZERO_ROTATIONAL_INERTIA:
            raise InvalidArgument(
                f"URDF {j.node.where()}: joint {j.name!r} turns link {j.child!r} (and what it carries) about an axis "
                f"along which it has no moment of inertia ({moment:.3g} kg m^2): the mass matrix would be singular "
                f"and udot NaN; give the link inertia about the joint axis or make the joint fixed")
