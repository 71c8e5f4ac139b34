"""MJCF tendon lengths and their limit stops as jaxbody force elements (read from the compiled MjModel).

Tendon kinematics (the length L in m, or in the joints' units for fixed tendons, and its rate Ldot):

* fixed tendon (joint wraps): ``L = sum_i coef_i q_i`` over hinge and slide joints (q = MuJoCo's qpos),
  ``Ldot = sum_i coef_i u_i``; a tension T acts as ``coef_i T`` on u_i.
* spatial tendon (sites, sphere and cylinder wrap geoms with optional side sites, pulleys): MuJoCo 4.0's
  length, a jaxbody._dynamics.paths.mujoco_wrap.MujocoSpatialPath built from the compiled arrays (``spatial_path``:
  sites and geoms at their poses in their bodies, ``mj_tendon``'s segment walk, pulley divisors); ``Ldot`` its
  forward-mode derivative; a tension T acts as the generalized force ``T dL/du`` (body forces along each
  straight segment, the tangent points held on the geom, as MuJoCo's ten_J).

Tendon armature (``armature``, plus what MuJoCo's ``mj_actuatorArmature`` adds from actuators on the tendon:
``actuator_armature gear^2``): a ``jb.TendonArmature.Fixed`` or ``.OnPath`` on the same length function
(jaxbody._dynamics.tendon_armature: M gains ``a J^T J`` and the bias ``a J^T Jdot u``, as MuJoCo's qM and
qfrc_bias; MuJoCo's compiler refuses armature on tendons that wrap geoms). Equality constraints see it: jaxbody's
constrained solve uses ``(M + J^T A J)^-1``, as MuJoCo's constraint solver uses its qM.

Tendon limits (``limited``, ``range`` [L_lo, L_hi]): MuJoCo enforces them as a one-sided constraint (solver
impulse, solref/solimp softness). jaxbody uses the compliant stand-in that it uses for joint limits
(jaxbody.io._passive): Simbody's MobilityLinearStop law on L, ``T = min(0, -k x (1 + d Ldot))`` with
``x = L - L_hi`` above the range, ``T = max(0, -k x (1 - d Ldot))`` with ``x = L - L_lo`` below it, 0 inside,
PE ``k x^2 / 2`` while engaged, with the joint stops' stiffness rule ``k = m_eff / tau^2`` where
``m_eff = J M0 J^T`` (the tendon's generalization of a joint's M_ii: J = dL/du and M0 = MuJoCo's mass matrix,
armature included, both at qpos0) and the importer's ``limit_time_constant`` tau and ``limit_dissipation`` d.
So the stop engages at the same length as MuJoCo's limit (with ``margin`` 0) and pushes in the same direction
(along J), but lets the tendon sink about ``T_load tau^2 / m_eff`` past its bound where MuJoCo's constraint
holds it to within its solref softness; the forces differ while engaged.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.force import Force
from jaxbody._api.tendon_armature import TendonArmature
from jaxbody._dynamics.paths.mujoco_wrap import MujocoSpatialPath
from jaxbody.io._frames import quaternion_matrix

_WRAP_JOINT, _WRAP_PULLEY, _WRAP_GEOMS = 1, 2, (4, 5)   # mjtWrap: sphere 4, cylinder 5
_GEOM_CYLINDER = 5   # mjtGeom
_TRN_TENDON = 3   # mjTRN_TENDON


def dense_tendon_jacobian(m, d) -> np.ndarray:
    """MuJoCo's tendon Jacobian ``ten_J`` (stored sparse, rows ``m.ten_J_rowadr/rownnz/colind``) as (ntendon, nv)."""
    J = np.zeros((m.ntendon, m.nv))
    for t in range(m.ntendon):
        cols = slice(m.ten_J_rowadr[t], m.ten_J_rowadr[t] + m.ten_J_rownnz[t])
        J[t, m.ten_J_colind[cols]] = d.ten_J[cols]
    return J


def tendon_names(mujoco, m) -> list[str]:
    """Each tendon's name (``"tendon<t>"`` for unnamed ones), indexed by MuJoCo's tendon id."""
    return [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_TENDON, t) or f"tendon{t}" for t in range(m.ntendon)]


def local_pose(m, pos, quat, sameframe: int, b: int):
    """``(p, R)``: a site's or geom's pose in its body's frame as MuJoCo's kinematics places it (``mj_local2Global``
    with its ``sameframe``: 1 the body frame, 2 the inertial frame, 3/4 the body's/inertial frame's rotation)."""
    inertial = (np.zeros(3), np.eye(3)) if int(m.body_sameframe[b]) == 1 else (
        np.asarray(m.body_ipos[b], dtype=float), quaternion_matrix(m.body_iquat[b]))
    p = {1: np.zeros(3), 2: inertial[0]}.get(sameframe, np.asarray(pos, dtype=float))
    R = {0: quaternion_matrix(quat), 2: inertial[1], 4: inertial[1]}.get(sameframe, np.eye(3))
    return p, R


def spatial_path(m, t: int, mobods) -> MujocoSpatialPath:
    """Spatial tendon t (sites, sphere/cylinder wrap geoms with optional side sites, pulleys) as a
    jaxbody._dynamics.paths.mujoco_wrap.MujocoSpatialPath, its segments read as MuJoCo's ``mj_tendon`` walks them."""
    adr, num = int(m.tendon_adr[t]), int(m.tendon_num[t])
    kind = lambda j: int(m.wrap_type[adr + j])  # noqa: E731
    obj = lambda j: int(m.wrap_objid[adr + j])  # noqa: E731
    sites, geoms, divisors, segments = [], [], [], []
    slot = lambda items, x: items.index(x) if x in items else items.append(x) or len(items) - 1  # noqa: E731
    j, pulley = 0, -1
    while j < num - 1:
        if _WRAP_PULLEY in (kind(j), kind(j + 1)):
            if kind(j) == _WRAP_PULLEY:
                divisors.append(float(m.wrap_prm[adr + j]))
                pulley = len(divisors) - 1
            j += 1
            continue
        if kind(j + 1) in _WRAP_GEOMS:
            side = int(round(float(m.wrap_prm[adr + j + 1])))
            segments.append((slot(sites, obj(j)), slot(sites, obj(j + 2)), slot(geoms, obj(j + 1)),
                             -1 if side < 0 else slot(sites, side), pulley))
            j += 2
        else:
            segments.append((slot(sites, obj(j)), slot(sites, obj(j + 1)), -1, -1, pulley))
            j += 1
    site_poses = [local_pose(m, m.site_pos[s], m.site_quat[s], int(m.site_sameframe[s]), int(m.site_bodyid[s]))
                  for s in sites]
    geom_poses = [local_pose(m, m.geom_pos[g], m.geom_quat[g], int(m.geom_sameframe[g]), int(m.geom_bodyid[g]))
                  for g in geoms]
    arr = lambda x, shape: jnp.asarray(np.array(x, dtype=float).reshape(shape))  # noqa: E731
    return MujocoSpatialPath(
        site_bodies=tuple(mobods[m.site_bodyid[s]].index for s in sites),
        geom_bodies=tuple(mobods[m.geom_bodyid[g]].index for g in geoms),
        cylinders=tuple(int(m.geom_type[g]) == _GEOM_CYLINDER for g in geoms), segments=tuple(segments),
        site_stations=arr([p for p, _ in site_poses], (-1, 3)), geom_positions=arr([p for p, _ in geom_poses], (-1, 3)),
        geom_rotations=arr([R for _, R in geom_poses], (-1, 3, 3)),
        geom_radii=arr([m.geom_size[g, 0] for g in geoms], (-1,)), divisors=arr(divisors, (-1,)))


def tendon_path(m, t: int, coordinates, joint_names, mobods):
    """``(static, params)`` describing tendon t's length function. ``static``: ("fixed", q indices, u indices) or
    ("spatial",); ``params``: {"coef": (n,)} or {"path": its MujocoSpatialPath} (Model leaves)."""
    wraps = range(m.tendon_adr[t], m.tendon_adr[t] + m.tendon_num[t])
    if all(int(m.wrap_type[w]) == _WRAP_JOINT for w in wraps):
        mobs = [coordinates[joint_names[m.wrap_objid[w]]].mobilized_body for w in wraps]
        return (("fixed", tuple(b.q_start for b in mobs), tuple(b.u_start for b in mobs)),
                {"coef": jnp.asarray([float(m.wrap_prm[w]) for w in wraps])})
    return ("spatial",), {"path": spatial_path(m, t, mobods)}


def length_and_rate(static, params, state):
    """``(L, Ldot)`` of a tendon (see the module doc) at a state realized to Velocity."""
    if static[0] == "fixed":
        return params["coef"] @ state.q[jnp.array(static[1])], params["coef"] @ state.u[jnp.array(static[2])]
    path = params["path"]
    return path.calc_length(None, state), path.calc_lengthening_speed(None, state)


def tension_forces(model, state, static, params, tension):
    """``(body_forces (nbodies, 2, 3), mobility_forces (nu,))`` of a tendon tension (N, or N m per unit of L):
    the generalized force ``tension dL/du``."""
    nb, nu = model.topology.nbodies, model.topology.nu
    F, f = jnp.zeros((nb, 2, 3), state.u.dtype), jnp.zeros(nu, state.u.dtype)
    if static[0] == "fixed":
        return F, f.at[jnp.array(static[2])].add(params["coef"] * tension)
    return params["path"].calc_tension_forces(model, state, -tension)   # its tension pulls the ends together


def _limit_stop(forces, static, params, name):
    """The tendon's limit stop (module doc) as a Force.Custom; ``params`` holds stiffness, dissipation, lower,
    upper and the path's leaves."""

    def engaged(state, p):
        L, Ldot = length_and_rate(static, p, state)
        above, below = L > p["upper"], L < p["lower"]
        return jnp.where(above, L - p["upper"], jnp.where(below, L - p["lower"], 0.0)), Ldot, above, below

    def calc_force(model, state, p):
        x, Ldot, above, below = engaged(state, p)
        k, d = p["stiffness"], p["dissipation"]
        tension = jnp.where(above, jnp.minimum(0.0, -k * x * (1 + d * Ldot)),
                            jnp.where(below, jnp.maximum(0.0, -k * x * (1 - d * Ldot)), 0.0))
        return tension_forces(model, state, static, p, tension)

    def calc_potential_energy(model, state, p):
        x = engaged(state, p)[0]
        return 0.5 * p["stiffness"] * x * x

    return Force.Custom(forces, calc_force, calc_potential_energy, params, name=f"MJCF tendon limit {name}")


def add_tendon_limits(mujoco, m, forces, coordinates, joint_names, mobods, time_constant: float,
                      dissipation: float):
    """A limit stop (module doc) for every limited tendon of ``m`` that has a length function here, added to
    ``forces``. Returns ``(stops, unmodelled)``: tendon name -> its Force.Custom handle, and the names of the
    limited tendons left out (for the caller to warn): those whose effective mass J M0 J^T at qpos0 is 0 (the
    stiffness rule gives no stiffness)."""
    names, stops, unmodelled = tendon_names(mujoco, m), {}, []
    if not np.any(m.tendon_limited):
        return stops, unmodelled
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    M0 = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M0)
    J0 = dense_tendon_jacobian(m, d)
    for t in np.flatnonzero(m.tendon_limited):
        path = tendon_path(m, t, coordinates, joint_names, mobods)
        m_eff = float(J0[t] @ M0 @ J0[t])
        if not m_eff > 0:
            unmodelled.append(names[t])   # no stiffness by the rule: the length does not move at qpos0
            continue
        lower, upper = map(float, m.tendon_range[t])
        params = {**path[1], "stiffness": jnp.asarray(m_eff / time_constant**2),
                  "dissipation": jnp.asarray(float(dissipation)), "lower": jnp.asarray(lower),
                  "upper": jnp.asarray(upper)}
        stops[names[t]] = _limit_stop(forces, path[0], params, names[t])
    return stops, unmodelled


def actuator_armature(m, t: int) -> float:
    """MuJoCo's ``mj_actuatorArmature`` for tendon t: ``actuator_armature gear_0^2`` of the actuators on it."""
    k = int(m.tendon_actuatorid[t])
    if k == -1:
        return 0.0
    actuators = [k] if k >= 0 else [a for a in range(m.nu) if m.actuator_trnid[a, 0] == t
                                     and m.actuator_trntype[a] == _TRN_TENDON]
    return float(sum(m.actuator_armature[a] * m.actuator_gear[a, 0] ** 2 for a in actuators))


def add_tendon_armature(mujoco, m, matter, coordinates, joint_names, mobods) -> dict:
    """A ``jb.TendonArmature`` (module doc) for every tendon of ``m`` with armature (MuJoCo's compiler refuses it on
    tendons that wrap geoms, so every such tendon has a length function here). Returns tendon name -> its index
    in ``model.tendon_armatures``."""
    names, added = tendon_names(mujoco, m), {}
    for t in range(m.ntendon):
        a = float(m.tendon_armature[t]) + actuator_armature(m, t)
        if a == 0:
            continue
        wraps = range(m.tendon_adr[t], m.tendon_adr[t] + m.tendon_num[t])
        if all(int(m.wrap_type[w]) == _WRAP_JOINT for w in wraps):
            cs = [coordinates[joint_names[m.wrap_objid[w]]] for w in wraps]
            added[names[t]] = TendonArmature.Fixed(matter, names[t], a, [
                (c.mobilized_body, c.q_index, float(m.wrap_prm[w])) for c, w in zip(cs, wraps)])
        else:
            added[names[t]] = TendonArmature.OnPath(matter, names[t], a, spatial_path(m, t, mobods))
    return added
