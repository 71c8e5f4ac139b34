"""Pieces of load_urdf: the joints' places in Pinocchio's q and v, and the file's default configuration.

Pinocchio (through urdfdom) numbers joints depth first from the root link, a link's child joints in the
order of their names (urdfdom keeps joints in a name-sorted map), fixed joints taking no slots; a floating
base is its first joint ("root_joint"). Its neutral configuration is zero (identity quaternion, continuous
joints at angle 0), which may lie outside a joint's ``<limit>``: the default State moves such a joint to its
nearest limit, with one warning naming the joints.
"""

from __future__ import annotations

import warnings

import numpy as np

from jaxbody.io.engine_coordinates import KINDS, EngineJoint

#: URDF joint type -> EngineJoint kind (Pinocchio's planar joint, q = (x, y, cos, sin), is not mapped).
_KINDS = {"revolute": "scalar", "prismatic": "scalar", "continuous": "continuous", "floating": "pinocchio_free"}


def pinocchio_joints(root: str, joints, floating_base: bool) -> tuple[EngineJoint, ...]:
    """Each moving joint's (name, kind, first q, first v) in Pinocchio's vectors; a planar joint gets kind
    "planar", which the converters refuse naming it."""
    children: dict[str, list] = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j)
    out, q_adr, v_adr = [], 0, 0
    if floating_base:
        out.append(EngineJoint("root_joint", "pinocchio_free", 0, 0))
        q_adr, v_adr = 7, 6
    stack = sorted(children.get(root, []), key=lambda j: j.name, reverse=True)
    while stack:
        j = stack.pop()
        if j.type != "fixed":
            kind = _KINDS.get(j.type, "planar")
            out.append(EngineJoint(j.name, kind, q_adr, v_adr))
            nq, nv = KINDS[kind][:2] if kind in KINDS else (4, 3)
            q_adr, v_adr = q_adr + nq, v_adr + nv
        stack += sorted(children.get(j.child, []), key=lambda c: c.name, reverse=True)
    return tuple(out)


def default_q(coordinates, joints, nq: int) -> np.ndarray | None:
    """jaxbody q of Pinocchio's neutral configuration (zero; identity quaternions) with each revolute or
    prismatic joint whose ``<limit>`` excludes zero moved to its nearest limit (one warning names them);
    None when no joint moves (the Model's default State is then the neutral configuration)."""
    q = np.zeros(nq)
    moved = []
    for j in joints:
        if j.type in ("revolute", "prismatic") and j.limits is not None and not j.limits[0] <= 0.0 <= j.limits[1]:
            c = coordinates[j.name]
            q[c.mobilized_body.q_start + c.q_index] = j.limits[0] if j.limits[0] > 0 else j.limits[1]
            moved.append(f"{j.name!r} -> {q[c.mobilized_body.q_start + c.q_index]:g}")
    if not moved:
        return None
    for c in coordinates.values():
        if c.nq == 7:
            q[c.mobilized_body.q_start + c.q_index] = 1.0
    warnings.warn(f"URDF: zero is outside these joints' <limit>; the default State (ImportedModel.default_state) "
                  f"puts them at their nearest limit: {', '.join(moved)}", stacklevel=3)
    return q
