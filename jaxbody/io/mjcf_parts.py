"""Pieces of load_mjcf: names and geoms as visuals (compiled MjModel arrays; equalities: jaxbody.io.mjcf_equalities)."""

from __future__ import annotations

import numpy as np

from jaxbody.io._frames import quaternion_matrix
from jaxbody.io.imported import Visual, homogeneous

#: MuJoCo geom type -> Visual kind (planes, height fields and ellipsoids are not drawn)
_GEOM_KINDS = {2: "sphere", 3: "capsule", 5: "cylinder", 6: "box", 7: "mesh"}


def names(mujoco, m, obj, count, prefix) -> list[str]:
    """MuJoCo object names; unnamed ones get "<prefix><id>" (the world body is "world")."""
    return [mujoco.mj_id2name(m, obj, i) or (f"{prefix}{i}" if (prefix, i) != ("body", 0) else "world")
            for i in range(count)]


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
