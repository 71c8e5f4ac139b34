"""Pieces of load_mjcf: names, geoms as visuals, the joints in MuJoCo's qpos/qvel and the keyframes (compiled MjModel
arrays; equalities: jaxbody.io.mjcf_equalities)."""

from __future__ import annotations

import numpy as np

from jaxbody.errors import InvalidArgument
from jaxbody.io._frames import quaternion_matrix
from jaxbody.io.engine_coordinates import EngineJoint
from jaxbody.io.imported import Keyframe, Visual, homogeneous

#: MuJoCo geom type -> Visual kind (planes, height fields and ellipsoids are not drawn)
_GEOM_KINDS = {2: "sphere", 3: "capsule", 5: "cylinder", 6: "box", 7: "mesh"}


def names(mujoco, m, obj, count, prefix) -> list[str]:
    """MuJoCo object names (unique per type, MuJoCo's compiler checks); unnamed ones get "<prefix><id>", with "_"
    appended as often as needed to differ from every name the file gives (the world body is "world"), so a
    generated name never takes the place of a named element in a name map."""
    given = [mujoco.mj_id2name(m, obj, i) for i in range(count)]
    taken = {n for n in given if n}
    out = []
    for i, name in enumerate(given):
        if not name:
            name = "world" if (prefix, i) == ("body", 0) else f"{prefix}{i}"
            while name in taken:
                name += "_"
            taken.add(name)
        out.append(name)
    return out


def unique_key(mapping: dict, key: str, what: str) -> str:
    """``key`` if it is not yet in ``mapping``, else InvalidArgument naming ``what``: importers build their name
    maps through this so that no entry is ever overwritten."""
    if key in mapping:
        raise InvalidArgument(f"MJCF: two {what} named {key!r} (the importer's intermediate body names are "
                              f"'<body>/<joint>'; rename the body or joint)")
    return key


def mjcf_visuals(mujoco, m, body_names) -> list[Visual]:
    """Sphere, capsule, cylinder, box and mesh geoms as Visual records on their bodies."""
    visuals = []
    for g in range(m.ngeom):
        kind = _GEOM_KINDS.get(int(m.geom_type[g]))
        if kind is None:
            continue
        size = np.array(m.geom_size[g], dtype=float)
        size = {"sphere": size[:1], "capsule": size[:2], "cylinder": size[:2], "box": size, "mesh": np.ones(3)}[kind]
        mesh = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_MESH, int(m.geom_dataid[g])) if kind == "mesh" else None
        X_BV = homogeneous(quaternion_matrix(m.geom_quat[g]), m.geom_pos[g])
        visuals.append(Visual(body_names[m.geom_bodyid[g]], X_BV, kind, size, mesh, np.array(m.geom_rgba[g])))
    return visuals


_ENGINE_KINDS = {0: "mujoco_free", 1: "mujoco_ball", 2: "scalar", 3: "scalar"}


def mujoco_joints(m, joint_names) -> tuple[EngineJoint, ...]:
    """Each joint's place in MuJoCo's qpos and qvel (jaxbody.io.engine_coordinates)."""
    return tuple(EngineJoint(joint_names[j], _ENGINE_KINDS[int(m.jnt_type[j])], int(m.jnt_qposadr[j]),
                             int(m.jnt_dofadr[j])) for j in range(m.njnt))


def keyframes(mujoco, m) -> dict[str, Keyframe]:
    """The ``<keyframe>`` s by name ("key<i>" when unnamed): MuJoCo's compiled key_time, key_qpos, key_qvel."""
    return {names(mujoco, m, mujoco.mjtObj.mjOBJ_KEY, m.nkey, "key")[k]:
            Keyframe(float(m.key_time[k]), np.array(m.key_qpos[k], dtype=float), np.array(m.key_qvel[k], dtype=float))
            for k in range(m.nkey)}
