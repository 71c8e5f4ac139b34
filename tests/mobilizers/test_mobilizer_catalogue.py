"""The full mobilizer catalogue: the six newer types, fitting for all 18, quaternion bookkeeping, singularities.

Per type (batches of K bodies): H_FM is the derivative of X_FM along qdot = N u (jvp and finite differences),
HDot_FM the derivative of H_FM, NInv inverts N, and every q/u fit reproduces representable targets (or
Simbody's documented quirk formula, computed independently here). On whole models: Simbody's equivalences
(Bushing = Translation + 3 Pins, BendStretch = Pin + Slider, SphericalCoords = Pin/Pin/Slider,
LineOrientation/FreeLine vs Ball/Free), quaternion vs Euler mode, jit = eager, vmap and grad on a 38-body tree
using every type at least twice.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody import _mobilizers as mob
from jaxbody._mobilizers import fitting

import systems as S
from helpers import assert_close, assert_grad_matches_fd, central_difference

K = 5

CASES = [
    ("pin", mob.Pin()), ("slider", mob.Slider()), ("universal", mob.Universal()), ("cylinder", mob.Cylinder()),
    ("screw", mob.Screw()), ("planar", mob.Planar()), ("gimbal", mob.Gimbal()),
    ("ball-quat", mob.Ball()), ("ball-euler", mob.Ball(euler=True)), ("translation", mob.Translation()),
    ("free-quat", mob.Free()), ("free-euler", mob.Free(euler=True)),
    ("ellipsoid-quat", mob.Ellipsoid()), ("ellipsoid-euler", mob.Ellipsoid(euler=True)), ("weld", mob.Weld()),
    ("bend_stretch", mob.BendStretch()), ("spherical", mob.SphericalCoords()),
    ("spherical-nx", mob.SphericalCoords(negate_azimuth=True, negate_zenith=True, translation_axis=0, negate_translation=True)),
    ("line-quat", mob.LineOrientation()), ("line-euler", mob.LineOrientation(euler=True)),
    ("freeline-quat", mob.FreeLine()), ("freeline-euler", mob.FreeLine(euler=True)),
    ("bushing", mob.Bushing()), ("cfbeam", mob.CantileverFreeBeam()),
]
IDS = [c[0] for c in CASES]
MOBS = [c[1] for c in CASES]
NEW = [m for m in MOBS if type(m) in (mob.BendStretch, mob.SphericalCoords, mob.LineOrientation, mob.FreeLine, mob.Bushing, mob.CantileverFreeBeam)]
NEW_IDS = [i for i, m in CASES if m in NEW]


def sample(m, seed=0, normalized=False):
    """(q, u, params) for K bodies; quaternions scaled by random factors unless ``normalized``."""
    rng = np.random.default_rng(seed + 97 * IDS.index(next(i for i, mm in CASES if mm == m)))
    q = S.random_catalogue_q(m, rng, (K,))
    if m.uses_quaternion and not normalized:
        q[:, :4] *= rng.uniform(0.7, 1.4, (K, 1))
    params = {
        "Screw": lambda: rng.uniform(0.1, 0.3, (K, 1)) * rng.choice([-1, 1], (K, 1)),
        "Ellipsoid": lambda: rng.uniform(0.2, 0.8, (K, 3)),
        "SphericalCoords": lambda: rng.uniform(-0.3, 0.3, (K, 2)),
        "CantileverFreeBeam": lambda: rng.uniform(0.3, 1.0, (K, 1)),
    }.get(m.simbody_name, lambda: np.zeros((K, m.n_params)))()
    return jnp.asarray(q), jnp.asarray(rng.normal(size=(K, m.nu))), jnp.asarray(params)


def vee(W):
    return jnp.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], -1)


def V_of(m, q, u, prm):
    return jnp.einsum("kij,kj->ki", m.calc_H_FM(q, prm), u)


# ---------------------------------------------------------------------------------------------
# Kinematics of each type


@pytest.mark.parametrize("m", NEW, ids=NEW_IDS)
def test_H_is_jvp_of_X_FM_and_N_matches_finite_differences(m):
    q, u, prm = sample(m)
    qdot = m.multiply_by_n(q, u)
    assert qdot.shape == (K, m.nq_alloc) and m.calc_H_FM(q, prm).shape == (K, 6, m.nu)
    (R, p), (Rd, pd) = jax.jvp(lambda x: m.calc_X_FM(x, prm), (q,), (qdot,))
    assert_close(R @ jnp.swapaxes(R, -1, -2), np.broadcast_to(np.eye(3), (K, 3, 3)), 1e-13, "R orthonormal")
    V = V_of(m, q, u, prm)
    assert_close(vee(Rd @ jnp.swapaxes(R, -1, -2)), V[:, :3], 1e-12, "angular")
    assert_close(pd, V[:, 3:], 1e-12, "linear")
    h = 1e-6
    Rd_fd, pd_fd = central_difference(lambda x: m.calc_X_FM(x, prm), q, h, direction=qdot)
    assert_close(vee(Rd_fd @ jnp.swapaxes(R, -1, -2)), V[:, :3], 1e-8, "angular FD")
    assert_close(pd_fd, V[:, 3:], 1e-8, "linear FD")


@pytest.mark.parametrize("m", NEW, ids=NEW_IDS)
def test_HDot_is_jvp_of_H_and_qdotdot(m):
    q, u, prm = sample(m, seed=1)
    udot = jnp.asarray(np.random.default_rng(5).normal(size=u.shape))
    qdot = m.multiply_by_n(q, u)
    _, Hd = jax.jvp(lambda x: m.calc_H_FM(x, prm), (q,), (qdot,))
    assert_close(m.calc_HDot_FM(q, u, prm), Hd, 1e-12, "HDot (closed form) vs jvp")
    _, d_Nu = jax.jvp(m.multiply_by_n, (q, u), (qdot, udot))
    assert_close(m.calc_qdotdot(q, u, udot), d_Nu, 1e-12, "qdotdot")


@pytest.mark.parametrize("m", NEW, ids=NEW_IDS)
def test_N_NInv_identity(m):
    """NInv N = identity on u space (unit quaternions); N NInv is the identity on the range of N."""
    q, u, prm = sample(m, seed=2, normalized=True)
    assert_close(m.multiply_by_n_inv(q, m.multiply_by_n(q, u)), u, 1e-12, "NInv N u")
    qd = m.multiply_by_n(q, u[::-1])
    assert_close(m.multiply_by_n(q, m.multiply_by_n_inv(q, qd)), qd, 1e-12, "N NInv qdot")
    if m.has_quaternion_mode and m.euler:
        assert_close(m.multiply_by_n(q, u)[:, m.nq_alloc - 1 if m.nq_alloc == 4 else 6], np.zeros(K), 0.0, "unused slot")


def test_closed_forms_of_new_types():
    """H_FM of the new types against the catalogue's formulas (1.5, 1.7, 1.12, 1.17, 1.18)."""
    m = mob.BendStretch()
    q, u, prm = sample(m)
    R, p = m.calc_X_FM(q, prm)
    c0, s0 = np.cos(q[:, 0]), np.sin(q[:, 0])
    assert_close(p, np.stack([q[:, 1] * c0, q[:, 1] * s0, 0 * c0], -1), 1e-15, "BendStretch p")
    H = m.calc_H_FM(q, prm)
    assert_close(H[:, :, 0], np.stack([0 * c0, 0 * c0, 1 + 0 * c0, -q[:, 1] * s0, q[:, 1] * c0, 0 * c0], -1), 1e-15, "col0")
    assert_close(H[:, :, 1], np.stack([0 * c0, 0 * c0, 0 * c0, c0, s0, 0 * c0], -1), 1e-15, "col1")

    m = CASES[IDS.index("spherical-nx")][1]
    q, u, prm = sample(m)
    az, ze = -q[:, 0] + prm[:, 0], -q[:, 1] + prm[:, 1]
    R_expected = np.einsum("kij,kjl->kil", np.asarray(jb.Rotation.about_z(az).R), np.asarray(jb.Rotation.about_y(ze).R))
    R, p = m.calc_X_FM(q, prm)
    assert_close(R, R_expected, 1e-14, "SphericalCoords R")
    assert_close(p, -q[:, 2:3] * R_expected[:, :, 0], 1e-14, "SphericalCoords p along -Mx")

    m = mob.CantileverFreeBeam()
    q, u, L = sample(m)
    R, p = m.calc_X_FM(q, L)
    L = L[:, 0]
    assert_close(p, np.stack([2 / 3 * L * q[:, 1], -2 / 3 * L * q[:, 0], L - 4 / 15 * L * (q[:, 0] ** 2 + q[:, 1] ** 2)], -1), 1e-15, "CFB p")
    assert_close(R, jb.Rotation.from_body_fixed_xyz(q).R, 1e-15, "CFB R")

    for m in (mob.LineOrientation(), mob.FreeLine(euler=True)):
        q, u, prm = sample(m)
        R, _ = m.calc_X_FM(q, prm)
        H = m.calc_H_FM(q, prm)
        assert_close(H[:, :3, :2], R[:, :, :2], 1e-15, "LineOrientation H = (Mx_F, My_F)")

    m = mob.Bushing()
    q, u, prm = sample(m)
    H = m.calc_H_FM(q, prm)
    assert_close(H[:, :3, :3], mob.Gimbal().calc_H_FM(q[:, :3], prm)[:, :3], 0.0, "Bushing = Gimbal angular")
    assert_close(H[:, 3:, 3:], np.broadcast_to(np.eye(3), (K, 3, 3)), 0.0, "Bushing translation")


def test_default_q_and_params():
    for m in NEW:
        q0 = jnp.asarray(np.broadcast_to(m.default_q(), (K, m.nq_alloc)))
        prm = jnp.asarray(np.broadcast_to(m.default_params(), (K, m.n_params)))
        R, p = m.calc_X_FM(q0, prm)
        assert_close(R, np.broadcast_to(np.eye(3), (K, 3, 3)), 0.0, f"{m} R(default)")
        expected = np.zeros((K, 3))
        if m.simbody_name == "CantileverFreeBeam":
            expected[:, 2] = 0.5  # Simbody's default length, Mo at (0, 0, L)
        assert_close(p, expected, 0.0, f"{m} p(default)")


# ---------------------------------------------------------------------------------------------
# Fitting


def _reference_direction_rotation(p, spin):
    """Numpy restatement of Simbody's Ellipsoid/CFB translation fit rotation (space-fixed X, Y then spin)."""
    e = p / np.linalg.norm(p, axis=-1, keepdims=True)
    lat, lon = np.arctan2(-e[:, 1], e[:, 2]), np.arctan2(e[:, 0], e[:, 2])
    Ry, Rx, Rz = (np.asarray(f(a).R) for f, a in ((jb.Rotation.about_y, lon), (jb.Rotation.about_x, lat), (jb.Rotation.about_z, spin)))
    return Ry @ Rx @ Rz


def _start(m, seed):
    """A different current q to fit from."""
    q, _, _ = sample(m, seed=seed)
    return q


@pytest.mark.parametrize("m", MOBS, ids=IDS)
def test_q_fit_round_trip(m):
    """Fitting X_FM(q_true) from another q reproduces X_FM; 6-mobility types reproduce random transforms."""
    q_true, _, prm = sample(m, seed=3)
    name = m.simbody_name
    if name == "BendStretch":
        q_true = q_true.at[:, 1].set(jnp.abs(q_true[:, 1]))  # the fit returns q1 = |(p_x, p_y)| >= 0
    if name == "SphericalCoords":
        # The translation fit dots with a row of R_FM [quirk]: exact where row = column, i.e. zenith 0, axis z.
        q_true = q_true.at[:, 1].set(-prm[:, 1] * (-1 if m.negate_zenith else 1))
    R, p = m.calc_X_FM(q_true, prm)
    q0 = _start(m, seed=4)
    if name in ("Ellipsoid", "CantileverFreeBeam"):
        # Translation fits only a direction and (default order) replaces the fitted rotation [quirk].
        R2, _ = m.calc_X_FM(m.q_fit_rotation(q0, R, prm), prm)
        assert_close(R2, R, 1e-12, "rotation fit")
        q_fit = m.q_fit_transform(q0, R, p, prm)
        spin = np.asarray(jb.Rotation(R).to_body_fixed_xyz())[:, 2]  # the rotation fit's spin is kept
        assert_close(m.calc_X_FM(q_fit, prm)[0], _reference_direction_rotation(np.asarray(p), spin), 1e-12, "direction fit")
        return
    if name == "SphericalCoords" and m.translation_axis == 0:
        q_fit = m.q_fit_transform(q0, R, p, prm)
        assert_close(q_fit[:, :2], q_true[:, :2], 1e-12, "angles")
        row = np.asarray(R)[:, 0, :]  # row x of R_FM [quirk]
        assert_close(q_fit[:, 2], -np.sum(np.asarray(p) * row, -1), 1e-12, "q2 = sT p . row_x(R_FM)")
        return
    q_fit = m.q_fit_transform(q0, R, p, prm)
    R2, p2 = m.calc_X_FM(q_fit, prm)
    assert_close(R2, R, 1e-12, "R_FM")
    assert_close(p2, p, 1e-12, "p_FM")
    if m.nu == 6 or name == "FreeLine":  # any transform is representable
        rng = np.random.default_rng(8)
        R_any = jnp.asarray(np.stack([S.random_rotation(rng) for _ in range(K)]))
        p_any = jnp.asarray(rng.normal(size=(K, 3)))
        R3, p3 = m.calc_X_FM(m.q_fit_transform(q0, R_any, p_any, prm), prm)
        assert_close(R3, R_any, 1e-12, "any R")
        assert_close(p3, p_any, 1e-12, "any p")


@pytest.mark.parametrize("m", MOBS, ids=IDS)
def test_u_fit_round_trip(m):
    """u fits reproduce representable V_FM = H_FM(q) u_true, starting from another u."""
    q, u_true, prm = sample(m, seed=5)
    name = m.simbody_name
    if name == "Ellipsoid":
        prm = jnp.broadcast_to(prm[:, :1], prm.shape)  # exact only for a sphere [quirk]
    if name == "SphericalCoords":
        q = q.at[:, 1].set(-prm[:, 1] * (-1 if m.negate_zenith else 1))  # zenith 0: row = column
    V = V_of(m, q, u_true, prm)
    u0 = jnp.asarray(np.random.default_rng(6).normal(size=u_true.shape))
    u_fit = m.u_fit_velocity(q, u0, V[:, :3], V[:, 3:], prm)
    if name == "SphericalCoords" and m.negate_azimuth:
        # No sign factors on u [quirk]: u0 = w_z, u1 = y of R^T (w_x, w_y, 0), u2 = v . row_x(R_FM).
        R, _ = m.calc_X_FM(q, prm)
        w, v = np.asarray(V[:, :3]), np.asarray(V[:, 3:])
        wxy = w.copy()
        wxy[:, 2] = 0
        expected = np.stack([w[:, 2], np.einsum("kji,kj->ki", np.asarray(R), wxy)[:, 1], np.sum(v * np.asarray(R)[:, 0, :], -1)], -1)
        assert_close(u_fit, expected, 1e-12, "quirk formula")
        return
    assert_close(V_of(m, q, u_fit, prm), V, 1e-12, "H u_fit")
    if m.nu:
        assert_close(u_fit, u_true, 1e-11, "u")


@pytest.mark.parametrize("m", MOBS, ids=IDS)
def test_fits_keep_what_they_do_not_set(m):
    """A rotation fit keeps pure translation coordinates and vice versa (Simbody fits write only their slots)."""
    q, u, prm = sample(m, seed=7)
    name = m.simbody_name
    zero3 = jnp.zeros((K, 3))
    eye = jnp.broadcast_to(jnp.eye(3), (K, 3, 3))
    keep_q_on_rotation = {"Slider": slice(0, 1), "Translation": slice(0, 3), "Cylinder": slice(1, 2), "Planar": slice(1, 3),
                          "Bushing": slice(3, 6), "SphericalCoords": slice(2, 3)}
    keep_q_on_translation = {"Pin": slice(0, 1), "Universal": slice(0, 2), "Gimbal": slice(0, 3), "Cylinder": slice(0, 1),
                             "Planar": slice(0, 1), "Bushing": slice(0, 3), "SphericalCoords": slice(0, 2)}
    if name in keep_q_on_rotation:
        sl = keep_q_on_rotation[name]
        assert_close(m.q_fit_rotation(q, eye, prm)[:, sl], q[:, sl], 0.0, "rotation fit keeps translation q")
    if name in keep_q_on_translation:
        sl = keep_q_on_translation[name]
        assert_close(m.q_fit_translation(q, zero3 + 0.3, prm)[:, sl], q[:, sl], 0.0, "translation fit keeps angles")
    if name in ("Free", "FreeLine"):
        assert_close(m.q_fit_rotation(q, eye, prm)[:, 4 if m.uses_quaternion else 3 : 7 if m.uses_quaternion else 6],
              q[:, 4 if m.uses_quaternion else 3 : 7 if m.uses_quaternion else 6], 0.0, "rotation fit keeps p")
    translational_u = {"Slider": [0], "Translation": [0, 1, 2], "Cylinder": [1], "Planar": [1, 2], "Free": [3, 4, 5],
                       "FreeLine": [2, 3, 4], "Bushing": [3, 4, 5], "BendStretch": [1], "SphericalCoords": [2]}
    if name in translational_u:
        i = translational_u[name]
        assert_close(m.u_fit_angular_velocity(q, u, zero3 + 0.2, prm)[:, i], u[:, i], 0.0, "angular fit keeps linear u")
    if name == "CantileverFreeBeam":
        assert_close(m.u_fit_linear_velocity(q, u, zero3 + 0.2, prm)[:, 2], u[:, 2], 0.0, "linear fit keeps u2")


@pytest.mark.parametrize("m", [m for m in MOBS if m.simbody_name not in ("LineOrientation", "FreeLine")],
                         ids=[i for i, m in CASES if m.simbody_name not in ("LineOrientation", "FreeLine")])
def test_generic_fits(m):
    """The generic Gauss-Newton q fit and least-squares u fit (for user types) reproduce representable targets."""
    q_true, u_true, prm = sample(m, seed=9)
    R, p = m.calc_X_FM(q_true, prm)
    q0 = m.normalize_q(q_true + 0.15)
    q_fit = fitting.gauss_newton_q_fit(m, q0, prm, R_target=R, p_target=p)
    R2, p2 = m.calc_X_FM(q_fit, prm)
    assert_close(R2, R, 1e-11, "generic R")
    assert_close(p2, p, 1e-11, "generic p")
    V = V_of(m, q_true, u_true, prm)
    u_fit = mob.Mobilizer.u_fit_linear_velocity(m, q_true, mob.Mobilizer.u_fit_angular_velocity(m, q_true, 0 * u_true, V[:, :3], prm), V[:, 3:], prm)
    assert_close(V_of(m, q_true, u_fit, prm), V, 1e-10, "generic velocity fit")


# ---------------------------------------------------------------------------------------------
# Equivalent systems


C_X = jb.Transform(jb.Rotation.about_y(np.pi / 2))  # takes z to x: a Pin about Fx
C_Y = jb.Transform(jb.Rotation.about_x(-np.pi / 2))  # takes z to y
C_XZ = jb.Transform(jb.Rotation.about_y(-np.pi / 2))  # takes x to z: a Slider along Fz
GRAVITY = [0.4, -9.81, 0.3]
SPH_NX = dict(azimuth_offset=0.3, azimuth_negated=True, zenith_offset=-0.25, zenith_negated=True,
              translation_axis="x", translation_negated=True)


@functools.lru_cache(maxsize=None)
def _compound_and_chains():
    """Two models with the same massive bodies: (Bushing, BendStretch, SphericalCoords x2) and Simbody's
    equivalent chains with massless intermediates. Returns (compound, chains, P, q_offset, massive rows)."""
    rng = np.random.default_rng(11)
    frames = [(S.random_transform(rng), S.random_transform(rng), S.random_mass_properties(rng)) for _ in range(4)]

    def system():
        s = jb.MultibodySystem()
        m = jb.SimbodyMatterSubsystem(s)
        jb.Force.UniformGravity(jb.GeneralForceSubsystem(s), m, GRAVITY)
        return s, m, m.Ground()

    MB = jb.MobilizedBody
    s1, _, g = system()
    MB.Bushing(g, frames[0][0], jb.Body.Rigid(frames[0][2]), frames[0][1])
    MB.BendStretch(g, frames[1][0], jb.Body.Rigid(frames[1][2]), frames[1][1])
    MB.SphericalCoords(g, frames[2][0], jb.Body.Rigid(frames[2][2]), frames[2][1])
    MB.SphericalCoords(g, frames[3][0], jb.Body.Rigid(frames[3][2]), frames[3][1], **SPH_NX)
    compound = s1.realize_topology()

    s2, _, g = system()
    m0 = jb.Body.Massless()
    t = MB.Translation(g, frames[0][0], m0, None)
    x = MB.Pin(t, C_X, m0, C_X)
    y = MB.Pin(x, C_Y, m0, C_Y)
    MB.Pin(y, None, jb.Body.Rigid(frames[0][2]), frames[0][1])  # body 4
    z = MB.Pin(g, frames[1][0], m0, None)
    MB.Slider(z, None, jb.Body.Rigid(frames[1][2]), frames[1][1])  # body 6
    az = MB.Pin(g, frames[2][0], m0, None)
    ze = MB.Pin(az, C_Y, m0, C_Y)
    MB.Slider(ze, C_XZ, jb.Body.Rigid(frames[2][2]), frames[2][1] * C_XZ)  # body 9
    az = MB.Pin(g, frames[3][0], m0, None)
    ze = MB.Pin(az, C_Y, m0, C_Y)
    MB.Slider(ze, None, jb.Body.Rigid(frames[3][2]), frames[3][1])  # body 12
    chains = s2.realize_topology()

    # u_chain = P u_compound; q_chain = P q_compound + offset.
    P = np.zeros((chains.get_num_u(), compound.get_num_u()))
    P[0:3, 3:6] = np.eye(3)  # translation
    P[3:6, 0:3] = np.eye(3)  # x, y', z'' angles
    P[6:8, 6:8] = np.eye(2)  # BendStretch
    P[8:11, 8:11] = np.eye(3)  # SphericalCoords default
    P[11:14, 11:14] = -np.eye(3)  # all negated
    offset = np.zeros(chains.get_num_q())
    offset[11:13] = [SPH_NX["azimuth_offset"], SPH_NX["zenith_offset"]]
    return compound, chains, P, offset, [1, 2, 3, 4], [4, 6, 9, 12]


def test_compound_mobilizers_equal_their_pin_slider_chains():
    """Bushing = Translation + Pins x, y', z''; BendStretch = Pin + Slider; SphericalCoords = Pin, Pin, Slider
    (massless intermediates): same X_GB, V_GB, mass matrix (in mapped coordinates) and udot."""
    compound, chains, P, offset, rows_a, rows_b = _compound_and_chains()
    n = 6
    q, u = S.random_catalogue_qu(compound, 13, (n,))
    f, F = S.random_forces(compound, 14, (n,))
    qc, uc, fc = q @ P.T + offset, u @ P.T, f @ P.T  # P is a signed permutation: P^-T = P
    Fc = np.zeros((n, chains.get_num_bodies(), 2, 3))
    Fc[:, rows_b] = F[:, rows_a]
    a = S.summary_batch(compound, q, u, f, F)
    b = S.summary_batch(chains, qc, uc, fc, Fc)
    assert_close(b["R_GB"][:, rows_b], a["R_GB"][:, rows_a], 1e-12, "R_GB")
    assert_close(b["p_GB"][:, rows_b], a["p_GB"][:, rows_a], 1e-12, "p_GB")
    assert_close(b["V_GB"][:, rows_b], a["V_GB"][:, rows_a], 1e-12, "V_GB")
    assert_close(np.einsum("ji,njk,kl->nil", P, b["M"], P), a["M"], 1e-10, "M")
    assert_close(b["udot"] @ P, a["udot"], 1e-10, "udot")


@functools.lru_cache(maxsize=None)
def _line_and_ball(free: bool):
    """Pin (massive) -> {LineOrientation | FreeLine} and the same with Ball | Free; the child is a rod
    inertialess about Mz (mass center on the Mz axis). No force elements."""
    rng = np.random.default_rng(17)
    X_PF0, X_PF = S.random_transform(rng), S.random_transform(rng)
    X_BM = jb.Transform(jb.Rotation.about_z(0.7), [0.0, 0.0, -0.2])  # Mz along Bz through Bo
    rod = jb.MassProperties.from_central_inertia(1.3, [0.0, 0.0, 0.4], jb.Inertia(0.2, 0.2, 0.0))
    parent_mp = S.random_mass_properties(rng)
    models = []
    for kind in (("FreeLine", "Free") if free else ("LineOrientation", "Ball")):
        s = jb.MultibodySystem()
        m = jb.SimbodyMatterSubsystem(s)
        p = jb.MobilizedBody.Pin(m.Ground(), X_PF0, jb.Body.Rigid(parent_mp), None)
        getattr(jb.MobilizedBody, kind)(p, X_PF, jb.Body.Rigid(rod), X_BM)
        models.append(s.realize_topology())
    return models


@jax.jit
def _realized(model, q, u, f, F):
    return model.realize(model.default_state().set_q(q).set_u(u).set_mobility_forces(f).set_body_forces(F))


@pytest.mark.parametrize("free", [False, True], ids=["LineOrientation-Ball", "FreeLine-Free"])
def test_line_orientation_matches_ball(free):
    """Same q: same X_GB; u_ball = (R_FM (u0, u1, 0), v): same V_GB. Dynamics: the Ball/Free model's inverse
    dynamics at u_ball and udot_ball = (R_FM (udot0, udot1, 0), vdot) (w x w = 0 makes that exact) leaves no
    residual for the rod, inertialess about Mz, when forces have no moment about its axis."""
    line, ball = _line_and_ball(free)
    rng = np.random.default_rng(19)
    q, u = S.random_catalogue_qu(line, rng)
    f = rng.normal(size=line.get_num_u())
    F = np.zeros((3, 2, 3))
    F[2, 1] = rng.normal(size=3)  # a pure force at Bo, on the rod's axis
    s_line = _realized(line, q, u, f, F)
    R_FM = np.asarray(s_line.position.R_FM[2])

    def to_ball(x):
        x = np.asarray(x)
        return np.concatenate([x[:1], R_FM[:, :2] @ x[1:3], x[3:]])

    s_ball = _realized(ball, q, to_ball(u), to_ball(f), F)
    assert_close(s_ball.position.R_GB, s_line.position.R_GB, 1e-13, "R_GB")
    assert_close(s_ball.position.p_GB, s_line.position.p_GB, 1e-13, "p_GB")
    assert_close(s_ball.velocity.V_GB, s_line.velocity.V_GB, 1e-13, "V_GB")
    residual = ball.calc_residual_force_ignoring_constraints(s_ball, to_ball(f), F, to_ball(s_line.get_u_dot()))
    assert_close(residual, np.zeros(ball.get_num_u()), 1e-10, "Ball residual at the LineOrientation motion")
    # Mass matrices: M_line = T^T M_ball T.
    T = np.zeros((ball.get_num_u(), line.get_num_u()))
    T[0, 0] = 1
    T[1:4, 1:3] = R_FM[:, :2]
    T[4:, 3:] = np.eye(line.get_num_u() - 3)
    assert_close(T.T @ np.asarray(ball.calc_m(s_ball)) @ T, line.calc_m(s_line), 1e-12, "M")


# ---------------------------------------------------------------------------------------------
# The 38-body catalogue tree

NB = 4096  # vmap batch; the first rows also serve the mode comparison


@functools.lru_cache(maxsize=None)
def _tree_batch():
    model_q, bodies = S.catalogue_tree(False)
    q, u = S.random_catalogue_qu(model_q, 23, (NB,))
    f, F = S.random_forces(model_q, 24, (NB,))
    return model_q, bodies, q, u, f, F


@jax.jit
def _udot_batch(model, q, u, f, F):
    return jax.vmap(lambda *a: _realized(model, *a).get_u_dot())(q, u, f, F)


def test_catalogue_tree_vmap_4096_matches_single_states():
    model, _, q, u, f, F = _tree_batch()
    assert set(type(m).__name__ for m in model.topology.mobilizers[1:]) == set(mob.BUILTIN)
    udot = np.asarray(_udot_batch(model, q, u, f, F))
    assert udot.shape == (NB, model.get_num_u()) and np.all(np.isfinite(udot))
    ref = S.summary_batch(model, q[:4], u[:4], f[:4], F[:4])["udot"]
    assert_close(udot[:4], ref, 1e-10, "vmap rows vs summary_batch")


def test_jit_equals_eager():
    """jit = eager (jax.disable_jit: every tree scan and operator run op by op) on the compound model."""
    compound = _compound_and_chains()[0]
    q, u = S.random_catalogue_qu(compound, 41)
    f, F = S.random_forces(compound, 42)
    jitted = S.summary(compound, q, u, f, F)
    with jax.disable_jit():
        eager = S._summary(compound, jnp.asarray(q), jnp.asarray(u), jnp.asarray(f), jnp.asarray(F))
    for key in ("R_GB", "p_GB", "V_GB", "M", "udot"):
        assert_close(eager[key], jitted[key], 1e-12, f"eager {key}")


def test_catalogue_tree_modes_agree():
    """Quaternion and Euler modes give the same X_GB, V_GB, M, udot on the catalogue tree."""
    model_q, _, q, u, f, F = _tree_batch()
    n = 4
    a = S.summary_batch(model_q, q[:n], u[:n], f[:n], F[:n])
    model_e, _ = S.catalogue_tree(True)
    assert model_e.get_num_q() == model_q.get_num_q()
    q_e = np.stack([np.asarray(model_q.convert_to_euler_angles(model_q.default_state().set_q(q[i])).q) for i in range(n)])
    b = S.summary_batch(model_e, q_e, u[:n], f[:n], F[:n])
    for key, tol in (("R_GB", 1e-12), ("p_GB", 1e-12), ("V_GB", 1e-11), ("M", 1e-10), ("udot", 1e-9)):
        assert_close(b[key], a[key], tol, f"Euler vs quaternion {key}")
    back = model_e.convert_to_quaternions(model_e.default_state().set_q(q_e[0])).q
    R_back = S.kinematics(model_q, back, u[0])[0]
    assert_close(R_back, a["R_GB"][0], 1e-12, "round trip Euler -> quaternion")


def _energy_like(model, q, u):
    """A scalar of the whole tree: kinetic energy plus a weighted sum of udot (needs every mobilizer's H, HDot, N)."""
    state = _realized(model, q, u, jnp.zeros(model.get_num_u()), jnp.zeros((model.get_num_bodies(), 2, 3)))
    w = jnp.linspace(-1.0, 1.0, model.get_num_u())
    return model.calc_kinetic_energy(state) + jnp.dot(w, state.get_u_dot())


_value_and_grad = jax.jit(jax.value_and_grad(_energy_like, argnums=(1, 2)))


def test_catalogue_tree_grad_matches_central_differences():
    model, _, q, u, _, _ = _tree_batch()
    q0, u0 = jnp.asarray(q[1]), jnp.asarray(u[1])
    _, (gq, gu) = _value_and_grad(model, q0, u0)
    assert np.all(np.isfinite(gq)) and np.all(np.isfinite(gu))
    rng = np.random.default_rng(29)
    h = 1e-6
    for g, which in ((gq, 0), (gu, 1)):
        d = rng.normal(size=g.shape)
        if which == 0:  # stay on the quaternion-normalized manifold's tangent: direction along N(q) u
            d = np.asarray(model.calc_q_dot(model.realize(model.default_state().set_q(q0), jb.Stage.Position), rng.normal(size=u0.shape)))
        value = (lambda x: _value_and_grad(model, x, u0)[0]) if which == 0 else (lambda x: _value_and_grad(model, q0, x)[0])  # noqa: E731
        assert_grad_matches_fd(value, (q0, u0)[which], h, 1e-6, f"directional derivative {'q' if which == 0 else 'u'}",
                               grad=g, direction=d)


# ---------------------------------------------------------------------------------------------
# MobilizedBody fitting API, quaternion bookkeeping, singularities


@jax.jit
def _fit_all(model, targets_R, targets_p, targets_V):
    """Fit every body of the catalogue tree (from a default state) to its target X_FM and V_FM; (q, u)."""
    _, bodies = S.catalogue_tree(False)
    state = model.default_state()
    for b in bodies:  # host loop over handles, building one traced program
        state = b.set_q_to_fit_transform(state, (targets_R[b.index], targets_p[b.index]), model=model)
    for b in bodies:
        state = b.set_u_to_fit_velocity(state, targets_V[b.index], model=model)
    return state.q, state.u


def _mobilizer_kinematics(model, bodies, q, u):
    """Per body (X_FM, V_FM) from the mobilizer methods (eager, one body at a time; Ground row identity)."""
    R, p, V = [np.eye(3)], [np.zeros(3)], [np.zeros((2, 3))]
    for b in bodies:
        m = b.mobilizer_in(None)
        qb = jnp.asarray(q[b.q_start : b.q_start + m.nq_alloc])[None]
        prm = b._mobilizer_params(model)[None]
        Rb, pb = m.calc_X_FM(qb, prm)
        R.append(Rb[0])
        p.append(pb[0])
        V.append(V_of(m, qb, jnp.asarray(u[b.u_start : b.u_start + m.nu])[None], prm)[0].reshape(2, 3))
    return np.stack(R), np.stack(p), np.stack(V)


def test_set_q_and_u_to_fit_on_catalogue_tree():
    """The MobilizedBody setters (jitted, params from the model) reproduce representable X_FM and V_FM."""
    model, bodies, q, u, _, _ = _tree_batch()
    qq = np.array(q[2])
    for b in bodies:  # make every target exactly representable by Simbody's closed forms
        m, s = b.mobilizer_prototype, b.q_start
        if m.simbody_name == "BendStretch":
            qq[s + 1] = abs(qq[s + 1])
        if m.simbody_name == "SphericalCoords":
            qq[s + 1] = -float(b.params[1]) * (-1 if m.negate_zenith else 1)
    uu = np.array(u[2])
    R_FM, p_FM, V_FM = _mobilizer_kinematics(model, bodies, qq, uu)
    q_fit, u_fit = _fit_all(model, R_FM, p_FM, V_FM)
    R2, p2, V2 = _mobilizer_kinematics(model, bodies, np.asarray(q_fit), np.asarray(u_fit))
    kind = ["Ground"] + [b.mobilizer_prototype.simbody_name for b in bodies]
    # Simbody's quirks: Ellipsoid/CFB translation fits (direction only), SphericalCoords along Mx with negated
    # signs (row of R_FM, no sign factors on u) reproduce only their rotation.
    rows = np.array([i for i in range(1, len(kind)) if kind[i] not in ("Ellipsoid", "CantileverFreeBeam")])
    assert_close(R2[rows], R_FM[rows], 1e-11, "R_FM")
    rows = np.array([i for i in rows if not getattr(bodies[i - 1].mobilizer_prototype, "negate_azimuth", False)])
    assert_close(p2[rows], p_FM[rows], 1e-11, "p_FM")
    assert_close(V2[rows], V_FM[rows], 1e-10, "V_FM")
    # Eager single-body use, a rotation-only fit and gradient through a setter.
    b = next(x for x in bodies if x.mobilizer_prototype.simbody_name == "Bushing")
    s0 = model.default_state()
    s1 = b.set_q_to_fit_rotation(s0, jb.Rotation.about_x(0.3), model)
    assert_close(b.get_q_as_vector(s1), [0.3, 0, 0, 0, 0, 0], 1e-15, "Bushing rotation fit")
    s2 = b.set_u_to_fit_angular_velocity(b.set_u_to_fit_linear_velocity(s1, [1.0, 2.0, 3.0], model), [0.5, 0.0, 0.0], model)
    assert_close(b.get_u_as_vector(s2), [0.5, 0, 0, 1, 2, 3], 1e-15, "Bushing u fits")
    g = jax.grad(lambda a: b.set_q_to_fit_translation(s0, jnp.stack([a, 2 * a, 0.0]), model).q[b.q_start + 4])(0.7)
    assert_close(g, 2.0, 1e-15, "grad through set_q_to_fit_translation")


def test_quaternion_bookkeeping():
    model_q, bodies = S.catalogue_tree(False)
    model_e, _ = S.catalogue_tree(True)
    sq, se = model_q.default_state(), model_e.default_state()
    kinds = ("Ball", "Free", "Ellipsoid", "LineOrientation", "FreeLine")
    using = [b for b in bodies if b.mobilizer_prototype.simbody_name in kinds]
    assert model_q.get_num_quaternions_in_use(sq) == len(using) == 10
    assert model_e.get_num_quaternions_in_use(se) == 0
    pool = [model_q.get_quaternion_pool_index(sq, b) for b in using]
    order = sorted(using, key=lambda b: (b.get_level_in_multibody_tree(), b.index))
    assert pool == [order.index(b) for b in using]  # tree level, then index
    assert all(model_q.is_using_quaternion(sq, b) for b in using)
    others = [b for b in bodies if b not in using]
    assert all(model_q.get_quaternion_pool_index(sq, b) == -1 and not model_q.is_using_quaternion(sq, b) for b in others)
    assert all(not model_e.is_using_quaternion(se, b) for b in bodies)
    # qErr order: the position cache's quaternion errors follow the pool.
    q = np.array(sq.q)
    for b in using:
        q[b.q_start : b.q_start + 4] *= 1.0 + 0.01 * (model_q.get_quaternion_pool_index(sq, b) + 1)
    errs = model_q.realize(sq.set_q(q), jb.Stage.Position).position.quaternion_errors
    assert_close(errs, 0.01 * np.arange(1, 11), 1e-14, "quaternion errors in pool order")
    with pytest.raises(jb.InvalidArgument):
        model_q.get_num_quaternions_in_use(se)


def test_check_singularities_report():
    model_e, bodies = S.catalogue_tree(True)
    q = np.array(S.random_catalogue_qu(model_e, 31)[0])
    gimbal = next(b for b in bodies if b.mobilizer_prototype.simbody_name == "Gimbal")
    bend = next(b for b in bodies if b.mobilizer_prototype.simbody_name == "BendStretch")
    ball = next(b for b in bodies if b.mobilizer_prototype.simbody_name == "Ball")
    q[gimbal.q_start + 1] = np.pi / 2 - 1e-5
    q[bend.q_start + 1] = 2e-4
    q[ball.q_start + 1] = -np.pi / 2 + 1e-4  # Euler mode: gimbal lock too
    state = model_e.default_state().set_q(q)
    report = jb.check_singularities(model_e, state)
    near = report.near_bodies()
    assert sorted(r[0] for r in near) == sorted([gimbal.index, bend.index, ball.index])
    d = dict((r[0], r[3]) for r in near)
    assert_close(d[bend.index], 2e-4, 1e-12, "BendStretch distance |q1|")
    assert_close(d[gimbal.index], 1e-5, 1e-9, "Gimbal distance |cos q1|")
    text = report.summary()
    assert gimbal.name in text and "Gimbal" in text and "BendStretch" in text
    assert np.isinf(report.distance[0])
    jitted = jax.jit(jb.check_singularities)(model_e, state)
    np.testing.assert_array_equal(np.asarray(jitted.near), np.asarray(report.near))
    # Simbody's default configuration is singular for BendStretch (q1 = 0) and SphericalCoords (r = 0).
    default = jb.check_singularities(model_e, model_e.default_state()).near_bodies()
    assert {r[2] for r in default} == {"BendStretch", "SphericalCoords"} and len(default) == 6
    assert jb.check_singularities(model_e, model_e.default_state(), tolerance=0.0).summary().startswith("no mobilizer")
    # Quaternion mode: Ball is never singular; SphericalCoords near r = 0.
    model_q, bodies_q = S.catalogue_tree(False)
    sph = next(b for b in bodies_q if b.mobilizer_prototype.simbody_name == "SphericalCoords")
    q = np.array(S.random_catalogue_qu(model_q, 32)[0])
    q[sph.q_start + 2] = 1e-4
    rep = jb.check_singularities(model_q, model_q.default_state().set_q(q))
    assert [r[0] for r in rep.near_bodies()] == [sph.index]


@functools.lru_cache(maxsize=None)
def _near_singular_model():
    """Gimbal, Bushing and BendStretch bodies hanging from Ground (one model: one compilation)."""
    s = jb.MultibodySystem()
    m = jb.SimbodyMatterSubsystem(s)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(s), m, GRAVITY)
    rng = np.random.default_rng(37)
    bodies = [
        getattr(jb.MobilizedBody, kind)(m.Ground(), S.random_transform(rng), jb.Body.Rigid(S.random_mass_properties(rng)), S.random_transform(rng))
        for kind in ("Gimbal", "Bushing", "BendStretch")
    ]
    return s.realize_topology(), bodies


def test_finite_near_singularities():
    """udot, the velocity fits and their gradients stay finite next to (not at) the singular configurations:
    Gimbal and Bushing at q1 = pi/2 - 1e-6, BendStretch at q1 = 1e-8."""
    model, bodies = _near_singular_model()
    q = np.array(model.default_state().q)
    for b, value in zip(bodies, (np.pi / 2 - 1e-6, np.pi / 2 - 1e-6, 1e-8)):
        q[b.q_start + 1] = value
    u = np.linspace(0.3, -0.2, model.get_num_u())
    value_, (gq, gu) = _value_and_grad(model, jnp.asarray(q), jnp.asarray(u))
    assert np.isfinite(value_) and np.all(np.isfinite(gq)) and np.all(np.isfinite(gu))
    report = jb.check_singularities(model, model.default_state().set_q(q))
    assert [r[0] for r in report.near_bodies()] == [1, 2, 3]
    for b in bodies:
        m = b.mobilizer_prototype
        prm = b._mobilizer_params(model)[None]

        def fitted(qq):
            return m.u_fit_velocity(qq[None], jnp.zeros((1, m.nu)), jnp.ones((1, 3)), jnp.ones((1, 3)), prm)[0]

        qb = jnp.asarray(q[b.q_start : b.q_start + m.nq_alloc])
        assert np.all(np.isfinite(fitted(qb))) and np.all(np.isfinite(jax.jacobian(fitted)(qb))), m.simbody_name


# ---------------------------------------------------------------------------------------------
# Construction


def test_factories_synonyms_and_errors():
    s = jb.MultibodySystem()
    m = jb.SimbodyMatterSubsystem(s)
    g = m.Ground()
    b = jb.MobilizedBody.PolarCoords(g, jb.Body.Rigid())
    assert b.mobilizer_cls is mob.BendStretch
    sph = jb.MobilizedBody.SphericalCoords(g, None, jb.Body.Rigid(), None, azimuth_offset=0.1, zenith_negated=True, translation_axis="x", name="sph")
    assert sph.mobilizer_prototype == mob.SphericalCoords(negate_zenith=True, translation_axis=0)
    np.testing.assert_array_equal(sph.params, [0.1, 0.0])
    with pytest.raises(jb.InvalidArgument, match="Mx|'x'"):
        jb.MobilizedBody.SphericalCoords(g, None, jb.Body.Rigid(), None, translation_axis="y")
    with pytest.raises(jb.InvalidArgument):
        mob.SphericalCoords(translation_axis=1)
    for bad in (0.0, -1.0, np.nan):
        with pytest.raises(jb.InvalidArgument, match="length"):
            jb.MobilizedBody.CantileverFreeBeam(g, None, jb.Body.Rigid(), None, length=bad)
    beam = jb.MobilizedBody.CantileverFreeBeam(g, None, jb.Body.Rigid(), None)
    np.testing.assert_array_equal(beam.params, [0.5])
    for name in ("LineOrientation", "FreeLine", "Bushing"):
        x = getattr(jb.MobilizedBody, name)(g, None, jb.Body.Rigid(), None, name=name.lower(), direction=jb.MobilizedBody.Forward)
        assert x.name == name.lower()
    model = s.realize_topology()
    assert model.get_num_q() == 2 + 3 + 3 + 4 + 7 + 6
    assert [b.get_num_q() for b in m._bodies[4:7]] == [4, 7, 6]
    euler = model.with_use_euler_angles(True)
    np.testing.assert_array_equal(euler.default_q, np.zeros(model.get_num_q()))
