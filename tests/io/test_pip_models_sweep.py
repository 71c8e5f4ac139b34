"""Every robot file the test extra's pip packages ship, loaded as a new user would and compared with its engine.

URDF: every ``*.urdf`` of example-robot-data (fixed base) vs Pinocchio (``buildModelFromUrdf``, mimic ignored as
Pinocchio does by default; jaxbody loads with ``mimic="ignore"``, no limit stops, no friction, dampers off):
M = crba and udot = aba at a random state. MJCF: every ``*.xml`` of dm_control, mujoco-mjx's test data and
gymnasium's MuJoCo assets vs MuJoCo (springs, dampers, friction and limits off on both sides): M = mj_fullM
and udot = M^-1 (tau - qfrc_bias). Files the engine itself refuses (include fragments, missing meshes) are
counted apart. Each file ends in one class: matched (1e-8 relative), mismatched, refused by jaxbody (its reason),
refused by the engine, skipped (a joint type the sweep's coordinate map does not cover) or error in jaxbody.

CI runs a small fixed subset; ``pytest --long`` walks everything and prints the counts per package
(``-s`` to see them). Needs no network; skips cleanly when a package is absent.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import warnings
import zlib
from collections import Counter

import jax
import numpy as np
import pytest

import jaxbody as jb

SITE = os.path.dirname(os.path.dirname(jax.__file__))
URDF_ROOT = os.path.join(SITE, "cmeel.prefix", "share", "example-robot-data", "robots")
MJCF_ROOTS = {"dm_control": os.path.join(SITE, "dm_control"),
              "mujoco-mjx": os.path.join(SITE, "mujoco", "mjx", "test_data"),
              "gymnasium": os.path.join(SITE, "gymnasium", "envs", "mujoco", "assets")}
CI_URDF = ["ur_description/urdf/ur5_robot.urdf"]
CI_MJCF = [("dm_control", "suite/acrobot.xml"), ("gymnasium", "reacher.xml"),
           ("mujoco-mjx", "tendon/armature.xml")]   # tendon armature (J^T a J in M, bias in qacc)
TOLERANCE = 1e-8


def _files(root, pattern):
    return sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "**", pattern), recursive=True))


def _rng(path):
    return np.random.default_rng(zlib.crc32(path.encode()))


def _relative(a, b):
    return float(np.max(np.abs(a - b), initial=0.0) / max(1.0, float(np.max(np.abs(b), initial=0.0))))


def _evaluate(imported, q, u, tau):
    """(M, udot) of an imported record at one state, its passive elements switched off."""
    model = imported.system.realize_topology()
    state = model.default_state()
    for handle in (h for hs in imported.passive_forces.values() for h in hs):
        state = imported.forces.set_force_is_disabled(state, handle, True)

    @jax.jit
    def evaluate(q, u, tau):
        s = model.realize(state.set_q(q).set_u(u).set_mobility_forces(tau), jb.Stage.Dynamics)
        udot, _ = model.calc_acceleration_ignoring_constraints(s, s.dynamics.mobility_forces, s.dynamics.body_forces)
        return model.calc_m(s), udot

    return [np.asarray(x) for x in evaluate(q, u, tau)]


def urdf_case(relpath):
    """("matched" | "mismatched" | "refused by jaxbody" | "refused by Pinocchio" | "skipped", detail)."""
    import pinocchio as pin

    path = os.path.join(URDF_ROOT, relpath)
    try:
        pm = pin.buildModelFromUrdf(path)
    except Exception as e:  # noqa: BLE001 - the engine's own refusal, whatever its type
        return "refused by Pinocchio", str(e).splitlines()[0][:120]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            imported = jb.io.load_urdf(path, joint_limits=False, friction="ignore", mimic="ignore")
    except jb.InvalidArgument as e:
        return "refused by jaxbody", str(e)[:200]
    if pm.nv == 0:
        return "matched", "no degrees of freedom"
    rng = _rng(relpath)
    q_pin, v, tau = pin.neutral(pm), rng.normal(size=pm.nv), rng.normal(size=pm.nv)
    q_jb, perm = np.zeros(imported.system.realize_topology().topology.nq), np.zeros(pm.nv, int)
    for j in range(1, pm.njoints):
        joint, name = pm.joints[j], pm.names[j]
        if name not in imported.coordinates or joint.nv != 1:
            return "skipped", f"joint {name!r} ({joint.shortname()})"
        angle = rng.uniform(-1.5, 1.5)
        if joint.nq == 2:      # continuous: (cos, sin)
            q_pin[joint.idx_q:joint.idx_q + 2] = np.cos(angle), np.sin(angle)
        else:
            q_pin[joint.idx_q] = angle
        q_jb[imported.q_index(name)] = angle
        perm[joint.idx_v] = imported.u_index(name)
    data = pin.Data(pm)
    M_pin = pin.crba(pm, data, q_pin)
    M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
    a_pin = pin.aba(pm, data, q_pin, v, tau)
    u, f = np.zeros(pm.nv), np.zeros(pm.nv)
    u[perm], f[perm] = v, tau
    M, udot = _evaluate(imported, q_jb, u, f)
    err = max(_relative(M[np.ix_(perm, perm)], M_pin), _relative(udot[perm], a_pin))
    return ("matched" if err <= TOLERANCE else "mismatched"), f"max relative error {err:.2e}"


def _mjcf_map(imported, m, qpos):
    """(q_jb, T) with qvel = T u_jb (jaxbody.io.mjcf's coordinate map), joints in MuJoCo's order."""
    from jaxbody.io._frames import quaternion_matrix

    q_jb, T = np.zeros(m.nq), np.zeros((m.nv, m.nv))
    for c, jtype, a, d in zip(imported.coordinates.values(), m.jnt_type, m.jnt_qposadr, m.jnt_dofadr):
        jq, ju = c.mobilized_body.get_first_q_index() + c.q_index, c.mobilized_body.get_first_u_index()
        if jtype == 0:
            q_jb[jq:jq + 4], q_jb[jq + 4:jq + 7] = qpos[a + 3:a + 7], qpos[a:a + 3]
            T[d:d + 3, ju + 3:ju + 6], T[d + 3:d + 6, ju:ju + 3] = np.eye(3), quaternion_matrix(qpos[a + 3:a + 7]).T
        elif jtype == 1:
            q_jb[jq:jq + 4] = qpos[a:a + 4]
            T[d:d + 3, ju:ju + 3] = quaternion_matrix(qpos[a:a + 4]).T
        else:
            q_jb[jq], T[d, ju] = qpos[a], 1.0
    return q_jb, T


def mjcf_case(package, relpath):
    import mujoco

    path = os.path.join(MJCF_ROOTS[package], relpath)
    try:
        m = mujoco.MjModel.from_xml_path(path)
    except Exception as e:  # noqa: BLE001
        return "refused by MuJoCo", str(e).splitlines()[0][:120]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # M and qacc against MuJoCo with its constraints (contact too) off: contact-free by design
            imported = jb.io.load_mjcf(path, joint_limits=False, friction="ignore", contact=False)
    except jb.InvalidArgument as e:
        return "refused by jaxbody", str(e)[:200]
    if m.nv == 0:
        return "matched", "no degrees of freedom"
    rng = _rng(package + relpath)
    qpos = m.qpos0.copy()
    for j in range(m.njnt):
        a = m.jnt_qposadr[j]
        if m.jnt_type[j] in (0, 1):
            k = 3 if m.jnt_type[j] == 0 else 0
            if k:
                qpos[a:a + 3] = rng.normal(size=3)
            quat = rng.normal(size=4)
            qpos[a + k:a + k + 4] = quat / np.linalg.norm(quat)
        else:
            qpos[a] += rng.uniform(-1.0, 1.0)
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = qpos, rng.normal(size=m.nv)
    tau = rng.normal(size=m.nv)
    mujoco.mj_forward(m, d)
    M_mj = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M_mj)
    try:
        qacc = np.linalg.solve(M_mj, tau - d.qfrc_bias)
    except np.linalg.LinAlgError:
        return "refused by MuJoCo", "singular mass matrix (MuJoCo warns: too close to singular)"
    q_jb, T = _mjcf_map(imported, m, qpos)
    M, udot = _evaluate(imported, q_jb, np.linalg.solve(T, d.qvel), T.T @ tau)
    err = max(_relative(M, T.T @ M_mj @ T), _relative(T @ udot, qacc))
    return ("matched" if err <= TOLERANCE else "mismatched"), f"max relative error {err:.2e}"


def _needs(module):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")


@pytest.mark.parametrize("relpath", CI_URDF)
def test_urdf_subset(relpath):
    _needs("pinocchio")
    if not os.path.isdir(URDF_ROOT):
        pytest.skip("example-robot-data is not installed")
    outcome, detail = urdf_case(relpath)
    assert outcome == "matched", (relpath, outcome, detail)


@pytest.mark.parametrize("package, relpath", CI_MJCF)
def test_mjcf_subset(package, relpath):
    _needs("mujoco")
    if not os.path.isdir(MJCF_ROOTS[package]):
        pytest.skip(f"{package} is not installed")
    outcome, detail = mjcf_case(package, relpath)
    assert outcome == "matched", (relpath, outcome, detail)


@pytest.mark.long
def test_full_sweep():
    """Every file of every installed package; prints the counts and the non-matching files (``-s``). Fails only
    on a mismatch that is not a known, warned omission (none expected: a mismatch is a silent difference)."""
    def guarded(case, *args):
        try:
            return case(*args)
        except Exception as e:  # noqa: BLE001 - a crash is a finding of the sweep, reported with the others
            return "error in jaxbody", f"{type(e).__name__}: {str(e).splitlines()[0][:150]}"

    results = {}
    if importlib.util.find_spec("pinocchio") and os.path.isdir(URDF_ROOT):
        results["example-robot-data"] = {p: guarded(urdf_case, p) for p in _files(URDF_ROOT, "*.urdf")}
    if importlib.util.find_spec("mujoco"):
        for package, root in MJCF_ROOTS.items():
            if os.path.isdir(root):
                results[package] = {p: guarded(mjcf_case, package, p) for p in _files(root, "*.xml")}
    for package, cases in results.items():
        print(f"\n{package}: {dict(Counter(outcome for outcome, _ in cases.values()))}")
        for path, (outcome, detail) in cases.items():
            if outcome != "matched":
                print(f"  {outcome:22s} {path}: {detail}")
    assert results, "no package installed"
