"""jaxbody's (q, u) to and from the coordinates of the engine a file was written for (MuJoCo, Pinocchio).

An importer records, for each joint of the file, an ``EngineJoint``: its name (a key of the ImportedModel's
``coordinates``), its kind and where its coordinates start in the engine's position and velocity vectors. The
functions here gather and re-express them; they are pure ``jax.numpy`` on arrays with any leading batch
dimensions (``(..., n)``), so they work under ``jax.jit``, ``jax.vmap`` and ``jax.grad``.

Conventions (R = R_FM, the joint's rotation: for a free joint R_GB; quaternions (w, x, y, z) in jaxbody):

=====================  =====================================  ==========================================
joint                  jaxbody q / u                          engine q / v
=====================  =====================================  ==========================================
hinge/slide, revolute  q = angle (rad) or offset (m), u = q'  the same (MuJoCo qpos/qvel, Pinocchio q/v)
MuJoCo ball            q = (w, x, y, z), u = w_FM in F         qpos = (w, x, y, z), qvel = R^T u (in M)
MuJoCo free            q = (w, x, y, z, p), u = (w, v) in G    qpos = (p, w, x, y, z), qvel = (v, R^T w)
Pinocchio continuous   q = angle, u = q'                      q = (cos, sin), v = u
Pinocchio free flyer   q = (w, x, y, z, p), u = (w, v) in G    q = (p, x, y, z, w), v = (R^T v, R^T w)
=====================  =====================================  ==========================================

Accelerations map as velocities (MuJoCo: exactly; Pinocchio's free flyer adds ``w x (R^T v)``: see
tests/io/test_io_urdf.py). Engine quaternions are normalized before use; returned quaternions are as given.
Cost: a few gathers and one 3x3 rotation per ball or free joint.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jaxbody._math.spatial import rotation_from_quaternion
from jaxbody.errors import InvalidArgument

#: EngineJoint.kind values and their (engine nq, engine nv, jaxbody nq, jaxbody nu).
KINDS = {"scalar": (1, 1, 1, 1), "continuous": (2, 1, 1, 1), "mujoco_ball": (4, 3, 4, 3),
         "mujoco_free": (7, 6, 7, 6), "pinocchio_free": (7, 6, 7, 6)}


class EngineJoint(NamedTuple):
    """One joint of the file in the engine's vectors: ``name`` (key of ``coordinates``), ``kind`` (a key of
    ``KINDS``), ``q_adr`` and ``v_adr``: its first entry in the engine's position and velocity vectors."""

    name: str
    kind: str
    q_adr: int
    v_adr: int


def _slots(coordinates, joints):
    """(joint, first jaxbody q, first jaxbody u) for each engine joint."""
    out = []
    for j in joints:
        if j.kind not in KINDS:
            raise InvalidArgument(f"joint {j.name!r}: no conversion for its {j.kind} coordinates (supported: "
                                  f"{', '.join(KINDS)})")
        c = coordinates[j.name]
        before = sum(o.nu for o in coordinates.values()
                     if o.mobilized_body is c.mobilized_body and o.q_index < c.q_index)
        out.append((j, c.mobilized_body.q_start + c.q_index, c.mobilized_body.u_start + before))
    return out


def _sizes(joints):
    """The engine's nq and nv (a joint of unknown kind: Pinocchio's planar, q = (x, y, cos, sin), v of 3)."""
    nq = max((j.q_adr + KINDS.get(j.kind, (4, 3))[0] for j in joints), default=0)
    nv = max((j.v_adr + KINDS.get(j.kind, (4, 3))[1] for j in joints), default=0)
    return nq, nv


def _check(what, x, n):
    x = jnp.asarray(x)
    if x.ndim < 1 or x.shape[-1] != n:
        raise InvalidArgument(f"{what}: expected an array of shape (..., {n}), got {x.shape}")
    return x


def to_jaxbody(coordinates, joints, nq: int, nu: int, engine: str, q_engine, v_engine=None):
    """(q, u) of jaxbody (shapes (..., nq), (..., nu)) from the engine's position and velocity vectors (see the
    module table). ``v_engine`` None: u = 0. Raises InvalidArgument for a wrong last dimension."""
    enq, env = _sizes(joints)
    q_engine = _check(f"from_{engine}: positions", q_engine, enq)
    v_engine = jnp.zeros(q_engine.shape[:-1] + (env,), q_engine.dtype) if v_engine is None else v_engine
    v_engine = _check(f"from_{engine}: velocities", v_engine, env)
    batch = jnp.broadcast_shapes(q_engine.shape[:-1], v_engine.shape[:-1])
    dtype = jnp.result_type(q_engine, v_engine, float)
    q, u = jnp.zeros(batch + (nq,), dtype), jnp.zeros(batch + (nu,), dtype)
    q_engine, v_engine = (jnp.broadcast_to(x, batch + x.shape[-1:]).astype(dtype) for x in (q_engine, v_engine))
    for j, iq, iu in _slots(coordinates, joints):
        a, d = j.q_adr, j.v_adr
        if j.kind == "scalar":
            q, u = q.at[..., iq].set(q_engine[..., a]), u.at[..., iu].set(v_engine[..., d])
        elif j.kind == "continuous":
            q = q.at[..., iq].set(jnp.arctan2(q_engine[..., a + 1], q_engine[..., a]))
            u = u.at[..., iu].set(v_engine[..., d])
        elif j.kind == "mujoco_ball":
            quat = q_engine[..., a:a + 4]
            w = jnp.einsum("...ij,...j->...i", rotation_from_quaternion(quat), v_engine[..., d:d + 3])
            q, u = q.at[..., iq:iq + 4].set(quat), u.at[..., iu:iu + 3].set(w)
        else:
            mujoco = j.kind == "mujoco_free"
            p = q_engine[..., a:a + 3]
            quat = q_engine[..., a + 3:a + 7] if mujoco else jnp.roll(q_engine[..., a + 3:a + 7], 1, axis=-1)
            R = rotation_from_quaternion(quat)
            w_local, v = v_engine[..., d + 3:d + 6], v_engine[..., d:d + 3]
            if not mujoco:
                v = jnp.einsum("...ij,...j->...i", R, v)
            q = q.at[..., iq:iq + 4].set(quat).at[..., iq + 4:iq + 7].set(p)
            u = u.at[..., iu:iu + 3].set(jnp.einsum("...ij,...j->...i", R, w_local)).at[..., iu + 3:iu + 6].set(v)
    return q, u


def from_jaxbody(coordinates, joints, nq: int, nu: int, engine: str, q, u):
    """The engine's (positions, velocities) from jaxbody's q (..., nq) and u (..., nu); inverse of ``to_jaxbody``."""
    enq, env = _sizes(joints)
    q, u = _check(f"to_{engine}: q", q, nq), _check(f"to_{engine}: u", u, nu)
    batch = jnp.broadcast_shapes(q.shape[:-1], u.shape[:-1])
    dtype = jnp.result_type(q, u, float)
    q, u = (jnp.broadcast_to(x, batch + x.shape[-1:]).astype(dtype) for x in (q, u))
    qe, ve = jnp.zeros(batch + (enq,), dtype), jnp.zeros(batch + (env,), dtype)
    tr = lambda R, x: jnp.einsum("...ji,...j->...i", R, x)  # noqa: E731  R^T x
    for j, iq, iu in _slots(coordinates, joints):
        a, d = j.q_adr, j.v_adr
        if j.kind == "scalar":
            qe, ve = qe.at[..., a].set(q[..., iq]), ve.at[..., d].set(u[..., iu])
        elif j.kind == "continuous":
            qe = qe.at[..., a].set(jnp.cos(q[..., iq])).at[..., a + 1].set(jnp.sin(q[..., iq]))
            ve = ve.at[..., d].set(u[..., iu])
        elif j.kind == "mujoco_ball":
            quat = q[..., iq:iq + 4]
            qe = qe.at[..., a:a + 4].set(quat)
            ve = ve.at[..., d:d + 3].set(tr(rotation_from_quaternion(quat), u[..., iu:iu + 3]))
        else:
            mujoco = j.kind == "mujoco_free"
            quat, p = q[..., iq:iq + 4], q[..., iq + 4:iq + 7]
            R = rotation_from_quaternion(quat)
            w, v = u[..., iu:iu + 3], u[..., iu + 3:iu + 6]
            qe = qe.at[..., a:a + 3].set(p).at[..., a + 3:a + 7].set(quat if mujoco else jnp.roll(quat, -1, axis=-1))
            ve = ve.at[..., d:d + 3].set(v if mujoco else tr(R, v)).at[..., d + 3:d + 6].set(tr(R, w))
    return qe, ve
