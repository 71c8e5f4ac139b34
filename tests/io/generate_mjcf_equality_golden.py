"""Write MuJoCo's equality rows for tests/io/test_io_mjcf_equalities.py (run: python3 tests/io/generate_mjcf_equality_golden.py).

Needs mujoco (the generator only; the test reads tests/io/golden/mujoco_site_tendon_equalities.npz). Model:
tests/models/site_tendon_equalities.xml (site connect, site weld with torquescale 2, fixed-tendon polynomial
and single-tendon equalities). Only the equality rows are instantiated (contacts, limits, friction loss off).

Consistent states, assembled by MuJoCo's own rows (independent of jaxbody): from qpos0 plus a seeded
perturbation, Gauss-Newton on efc_pos (least-norm steps ``-pinv(efc_J) efc_pos`` through mj_integratePos)
until ``max|efc_pos| < 1e-14``; qvel random, projected on the null space of efc_J. Stored there: qpos, qvel,
a random qfrc (tau), M = mj_fullM, qfrc_bias (gravity, Coriolis), efc_pos, efc_J and jdotv = d(efc_J)/dt
qvel, the acceleration-level drift of every row, ``d^2 efc_pos / dt^2 = efc_J qacc + jdotv``: connect and
weld from mj_jacDot at the two anchors, the weld's rotational rows by the product rule of MuJoCo's
``0.5 vec(neg(q2) (w1 - w2) q1) torquescale`` (MuJoCo's mj_Jdotv), tendon rows ``-poly''(x) (J2 qvel)^2``.
jdotv and efc_J are checked here against central differences along qvel (efc_pos' = efc_J qvel,
(efc_J qvel)' = jdotv). Random states (seeded, not consistent): qpos_random and MuJoCo's efc_pos there.
"""

from __future__ import annotations

import os

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FILE = os.path.join(HERE, "..", "models", "site_tendon_equalities.xml")
OUT = os.path.join(HERE, "golden", "mujoco_site_tendon_equalities.npz")
N_STATES = 6


def random_qpos(m, rng, scale):
    """qpos0 perturbed: hinges/slides by scale * U(-1, 1) (slides / 5), free positions by scale / 5 N(0, 1),
    quaternions by a rotation of up to scale rad."""
    qpos = m.qpos0.copy()
    for j in range(m.njnt):
        a = m.jnt_qposadr[j]
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            qpos[a:a + 3] += scale / 5 * rng.normal(size=3)
            dq = np.zeros(m.nv)
            dq[m.jnt_dofadr[j] + 3:m.jnt_dofadr[j] + 6] = scale * rng.uniform(-1, 1, size=3)
            mujoco.mj_integratePos(m, qpos, dq, 1.0)
        elif m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE:
            qpos[a] += scale * rng.uniform(-1, 1)
        elif m.jnt_type[j] == mujoco.mjtJoint.mjJNT_SLIDE:
            qpos[a] += scale / 5 * rng.uniform(-1, 1)
        else:
            raise ValueError(f"joint {j}: type {m.jnt_type[j]} not generated")
    return qpos


def rows(m, d, qpos, qvel=None):
    """(efc_pos, efc_J, efc_id) of the equality rows at qpos (and qvel)."""
    d.qpos[:] = qpos
    d.qvel[:] = 0.0 if qvel is None else qvel
    mujoco.mj_forward(m, d)
    assert d.nefc == d.ne, "only equality rows are instantiated"
    return d.efc_pos[:d.nefc].copy(), d.efc_J[:d.nefc * m.nv].reshape(d.nefc, m.nv).copy(), d.efc_id[:d.nefc].copy()


def assemble(m, d, qpos):
    """qpos moved onto MuJoCo's equality manifold (Gauss-Newton, least-norm steps; in place and returned)."""
    for _ in range(50):
        r, J, _ = rows(m, d, qpos)
        if np.max(np.abs(r)) < 1e-14:
            return qpos
        mujoco.mj_integratePos(m, qpos, -np.linalg.pinv(J) @ r, 1.0)
    raise RuntimeError(f"no assembly: max|efc_pos| = {np.max(np.abs(r)):.2e}")


def _point_jdotv(m, d, point, body):
    """(Jdot_p qvel, Jdot_r qvel) of a world point attached to body (mj_jacDot)."""
    jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
    mujoco.mj_jacDot(m, d, jacp, jacr, point, body)
    return jacp @ d.qvel, jacr @ d.qvel


def _quat(*factors):
    """Product of quaternions; a 3-vector factor is the pure quaternion (0, v)."""
    out = np.array([1.0, 0, 0, 0])
    for f in factors:
        q = np.concatenate([[0.0], f]) if len(f) == 3 else np.asarray(f, dtype=float)
        res = np.zeros(4)
        mujoco.mju_mulQuat(res, out, q)
        out = res
    return out


def _neg(q):
    return np.array([q[0], -q[1], -q[2], -q[3]])


def jdotv(m, d, efc_id):
    """(efc_J qvel)' along qvel for each equality row (see the module docstring); d after mj_forward."""
    out = []
    for e in dict.fromkeys(efc_id.tolist()):
        kind, obj1, obj2, data = int(m.eq_type[e]), int(m.eq_obj1id[e]), int(m.eq_obj2id[e]), m.eq_data[e]
        if kind in (mujoco.mjtEq.mjEQ_CONNECT, mujoco.mjtEq.mjEQ_WELD):
            assert m.eq_objtype[e] == mujoco.mjtObj.mjOBJ_SITE, "the model's connect and weld are by site"
            b1, b2 = m.site_bodyid[obj1], m.site_bodyid[obj2]
            (v1, w1), (v2, w2) = _point_jdotv(m, d, d.site_xpos[obj1], b1), _point_jdotv(m, d, d.site_xpos[obj2], b2)
            out.extend(v1 - v2)
            if kind == mujoco.mjtEq.mjEQ_WELD:
                q1, q2 = _quat(d.xquat[b1], m.site_quat[obj1]), _quat(d.xquat[b2], m.site_quat[obj2])
                om1, om2 = d.cvel[b1, :3], d.cvel[b2, :3]
                dq1, dq2 = np.zeros(4), np.zeros(4)
                mujoco.mju_derivQuat(dq1, q1, om1)
                mujoco.mju_derivQuat(dq2, q2, om2)
                t = _quat(_neg(dq2), om1 - om2, q1) + _quat(_neg(q2), w1 - w2, q1) + _quat(_neg(q2), om1 - om2, dq1)
                out.extend(0.5 * t[1:] * data[10])
        elif kind == mujoco.mjtEq.mjEQ_TENDON:
            if obj2 < 0:
                out.append(0.0)
                continue
            x = d.ten_length[obj2] - m.tendon_length0[obj2]
            J2, adr, nnz = np.zeros(m.nv), m.ten_J_rowadr[obj2], m.ten_J_rownnz[obj2]   # ten_J is sparse
            J2[m.ten_J_colind[adr:adr + nnz]] = d.ten_J[adr:adr + nnz]
            out.append(-(2 * data[2] + 6 * data[3] * x + 12 * data[4] * x * x) * (J2 @ d.qvel) ** 2)
        else:
            raise ValueError(f"equality {e}: type {kind} not generated")
    return np.array(out)


def check_derivatives(m, d, qpos, qvel, J, drift, h=1e-6):
    """efc_J qvel and jdotv against central differences of efc_pos and efc_J qvel along qvel."""
    def at(sign):
        q = qpos.copy()
        mujoco.mj_integratePos(m, q, qvel, sign * h)
        r, Jh, _ = rows(m, d, q)
        return r, Jh @ qvel
    (rp, jvp), (rm, jvm) = at(1.0), at(-1.0)
    assert np.max(np.abs((rp - rm) / (2 * h) - J @ qvel)) < 1e-7, "efc_J is efc_pos' along qvel"
    assert np.max(np.abs((jvp - jvm) / (2 * h) - drift)) < 1e-6, "jdotv is (efc_J qvel)' along qvel"


def main():
    m = mujoco.MjModel.from_xml_path(FILE)
    m.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    m.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT
                           | mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(41)
    out = {k: [] for k in ("qpos", "qvel", "tau", "M", "bias", "efc_pos", "efc_J", "jdotv", "qpos_random", "efc_pos_random")}
    for _ in range(N_STATES):
        qpos = assemble(m, d, random_qpos(m, rng, 0.4))
        _, J, efc_id = rows(m, d, qpos)
        qvel = rng.normal(size=m.nv)
        qvel -= np.linalg.pinv(J) @ (J @ qvel)
        r, J, efc_id = rows(m, d, qpos, qvel)
        drift = jdotv(m, d, efc_id)
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        for k, x in (("qpos", qpos), ("qvel", qvel), ("tau", rng.normal(size=m.nv)), ("M", M), ("bias", d.qfrc_bias),
                     ("efc_pos", r), ("efc_J", J), ("jdotv", drift)):
            out[k].append(np.array(x))
        check_derivatives(m, d, qpos, qvel, J, drift)
        qpos_random = random_qpos(m, rng, 1.0)
        out["qpos_random"].append(qpos_random)
        out["efc_pos_random"].append(rows(m, d, qpos_random)[0])
    name = lambda obj, i: mujoco.mj_id2name(m, obj, i)  # noqa: E731
    np.savez_compressed(OUT, **{k: np.array(v) for k, v in out.items()}, efc_id=efc_id, jnt_type=m.jnt_type.copy(),
                        jnt_qposadr=m.jnt_qposadr.copy(), jnt_dofadr=m.jnt_dofadr.copy(), qpos0=m.qpos0.copy(),
                        joint_names=np.array([name(mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]),
                        eq_names=np.array([name(mujoco.mjtObj.mjOBJ_EQUALITY, e) for e in range(m.neq)]))


if __name__ == "__main__":
    main()
