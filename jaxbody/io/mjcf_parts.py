"""Pieces of load_mjcf: names, equalities as exact constraints, geoms as visuals (compiled MjModel arrays)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.constraint import Constraint
from jaxbody._math.spatial import Transform
from jaxbody.errors import InvalidArgument
from jaxbody.io._frames import quaternion_matrix
from jaxbody.io.imported import Visual, homogeneous

#: MuJoCo geom type -> Visual kind (planes, height fields and ellipsoids are not drawn)
_GEOM_KINDS = {2: "sphere", 3: "capsule", 5: "cylinder", 6: "box", 7: "mesh"}


def names(mujoco, m, obj, count, prefix) -> list[str]:
    """MuJoCo object names; unnamed ones get "<prefix><id>" (the world body is "world")."""
    return [mujoco.mj_id2name(m, obj, i) or (f"{prefix}{i}" if (prefix, i) != ("body", 0) else "world")
            for i in range(count)]


def joint_polynomial_error(q, params):
    """MuJoCo's joint equality: ``q[0] - sum_k params[k] q[1]^k`` (k = 0..4; q[1] absent: ``q[0] - params[0]``)."""
    x = q[1] if q.shape[0] > 1 else jnp.zeros_like(q[0])
    return q[0] - (params[0] + x * (params[1] + x * (params[2] + x * (params[3] + x * params[4]))))


def add_equalities(mujoco, m, matter, mobods, coordinates, joint_names):
    """Each equality as the exact jaxbody constraint (see jaxbody.io.mjcf); returns name -> Constraint."""
    constraints = {}
    eq_names = names(mujoco, m, mujoco.mjtObj.mjOBJ_EQUALITY, m.neq, "equality")
    for e in range(m.neq):
        kind, data, name = int(m.eq_type[e]), np.asarray(m.eq_data[e], dtype=float), eq_names[e]
        obj1, obj2 = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        if kind in (mujoco.mjtEq.mjEQ_CONNECT, mujoco.mjtEq.mjEQ_WELD) and m.eq_objtype[e] != mujoco.mjtObj.mjOBJ_BODY:
            raise InvalidArgument(f"MJCF equality {name!r}: only body1/body2 connect and weld are supported "
                                  f"(site-based ones are not)")
        if kind == mujoco.mjtEq.mjEQ_CONNECT:
            c = Constraint.Ball(mobods[obj1], data[0:3], mobods[obj2], data[3:6], name=name)
        elif kind == mujoco.mjtEq.mjEQ_WELD:
            frame1 = Transform(quaternion_matrix(data[6:10]), data[3:6])
            c = Constraint.Weld(mobods[obj1], frame1, mobods[obj2], Transform(data[0:3]), name=name)
        elif kind == mujoco.mjtEq.mjEQ_JOINT:
            joints = [joint_names[obj1]] + ([joint_names[obj2]] if obj2 >= 0 else [])  # hinge/slide (MuJoCo checks)
            c = Constraint.CoordinateCoupler(matter, joint_polynomial_error,
                                             [coordinates[j].mobilized_body for j in joints], [0] * len(joints),
                                             params=data[0:5], name=name)
        else:
            raise InvalidArgument(f"MJCF equality {name!r}: type {mujoco.mjtEq(kind).name} is not supported "
                                  f"(connect, weld and joint are)")
        if not m.eq_active0[e]:
            c.set_disabled_by_default(True)
        constraints[name] = c
    return constraints


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
