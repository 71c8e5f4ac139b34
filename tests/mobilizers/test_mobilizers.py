"""Per-mobilizer kinematics (catalogue section 1), checked on batches of k = 5 bodies of each type.

Every check compares a mobilizer method with an independently computed quantity: derivatives of X_FM and
H_FM by forward-mode differentiation and by central finite differences, closed forms from the catalogue,
adjoint identities, and equivalent multibody models (Gimbal = 3 Pins; Euler = quaternion mode).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody import _mobilizers as mob

import systems as S
from helpers import assert_close, central_difference

K = 5  # bodies per batch

# (id, mobilizer instance)
CASES = [
    ("pin", mob.Pin()),
    ("slider", mob.Slider()),
    ("universal", mob.Universal()),
    ("cylinder", mob.Cylinder()),
    ("screw", mob.Screw()),
    ("planar", mob.Planar()),
    ("gimbal", mob.Gimbal()),
    ("ball-quat", mob.Ball(euler=False)),
    ("ball-euler", mob.Ball(euler=True)),
    ("translation", mob.Translation()),
    ("free-quat", mob.Free(euler=False)),
    ("free-euler", mob.Free(euler=True)),
    ("ellipsoid-quat", mob.Ellipsoid(euler=False)),
    ("ellipsoid-euler", mob.Ellipsoid(euler=True)),
    ("weld", mob.Weld()),
]
IDS = [c[0] for c in CASES]
MOBS = [c[1] for c in CASES]
MOVING = [(i, m) for i, m in CASES if m.nu > 0]


def _quat_slots(m):
    """Slice of the quaternion inside the q slots, or None."""
    return slice(0, 4) if m.uses_quaternion else None


def sample(m, seed=0, unnormalized=True):
    """(q (K, nq_alloc), u (K, nu), udot (K, nu), params (K, n_params)) for mobilizer m.

    Quaternions are scaled by a random factor in [0.7, 1.4]: mobilizers must accept unnormalized q.
    """
    rng = np.random.default_rng(seed + 1000 * IDS.index(next(i for i, mm in CASES if mm == m)))
    q = S.random_mobilizer_q(m, rng, (K,))
    if m.uses_quaternion and unnormalized:
        q[:, :4] *= rng.uniform(0.7, 1.4, (K, 1))
    u = rng.normal(size=(K, m.nu))
    udot = rng.normal(size=(K, m.nu))
    if m.simbody_name == "Screw":
        params = rng.uniform(-0.3, 0.3, (K, 1))
    elif m.simbody_name == "Ellipsoid":
        params = rng.uniform(0.2, 0.8, (K, 3))
    else:
        params = np.zeros((K, m.n_params))
    return jnp.asarray(q), jnp.asarray(u), jnp.asarray(udot), jnp.asarray(params)


def vee(W):
    """Vector of a (nearly) skew-symmetric matrix: W = [w]x."""
    return jnp.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], -1)


def hinge_velocity(m, q, u, params):
    H = m.calc_H_FM(q, params)
    assert H.shape == (K, 6, m.nu)
    V = jnp.einsum("kij,kj->ki", H, u)
    return V[:, :3], V[:, 3:]


# ---------------------------------------------------------------------------------------------
# H_FM and N against the derivative of X_FM


@pytest.mark.parametrize("m", MOBS, ids=IDS)
def test_shapes(m):
    q, u, udot, prm = sample(m)
    R, p = m.calc_X_FM(q, prm)
    assert R.shape == (K, 3, 3) and p.shape == (K, 3)
    assert m.calc_H_FM(q, prm).shape == (K, 6, m.nu)
    assert m.calc_HDot_FM(q, u, prm).shape == (K, 6, m.nu)
    assert m.multiply_by_n(q, u).shape == (K, m.nq_alloc)
    assert m.multiply_by_n_inv(q, m.multiply_by_n(q, u)).shape == (K, m.nu)
    assert m.calc_qdotdot(q, u, udot).shape == (K, m.nq_alloc)
    assert_close(R @ jnp.swapaxes(R, -1, -2), np.broadcast_to(np.eye(3), (K, 3, 3)), 1e-13, "R_FM orthonormal")
    assert_close(jnp.linalg.det(R), np.ones(K), 1e-13, "det R_FM")


@pytest.mark.parametrize("m", MOBS, ids=IDS)
def test_H_is_derivative_of_X_FM_along_Nu(m):
    """V_FM = H_FM u equals (vee(Rdot R^T), pdot) with Rdot, pdot the jvp of X_FM(q) along qdot = N(q) u."""
    q, u, _, prm = sample(m)
    qdot = m.multiply_by_n(q, u)
    (R, p), (Rd, pd) = jax.jvp(lambda qq: m.calc_X_FM(qq, prm), (q,), (qdot,))
    W = Rd @ jnp.swapaxes(R, -1, -2)
    assert_close(W + jnp.swapaxes(W, -1, -2), np.zeros((K, 3, 3)), 1e-12, "Rdot R^T skew")
    w, v = hinge_velocity(m, q, u, prm)
    assert_close(vee(W), w, 1e-12, "angular")
    assert_close(pd, v, 1e-12, "linear (velocity of Mo in F)")


@pytest.mark.parametrize("m", MOBS, ids=IDS)
def test_N_matches_finite_difference_of_X_FM(m):
    """Central finite differences of X_FM along qdot = N u reproduce H_FM u (independent check of N)."""
    q, u, _, prm = sample(m, seed=1)
    qdot = m.multiply_by_n(q, u)
    h = 1e-6
    Rd_fd, pd_fd = central_difference(lambda x: m.calc_X_FM(x, prm), q, h, direction=qdot)
    R, _ = m.calc_X_FM(q, prm)
    w_fd = vee(Rd_fd @ jnp.swapaxes(R, -1, -2))
    w, v = hinge_velocity(m, q, u, prm)
    assert_close(w_fd, w, 1e-8, "angular FD")
    assert_close(pd_fd, v, 1e-8, "linear FD")


@pytest.mark.parametrize("m", MOBS, ids=IDS)
def test_N_inverse(m):
    """NInv(N u) == u (quaternion mode: |q|^2 u); N(NInv qdot) == qdot for qdot in the range of N."""
    q, u, udot, prm = sample(m, seed=2)
    qdot = m.multiply_by_n(q, u)
    # Quaternion mode: NInv N = |q|^2 I on the rotational u (and on the quaternion rates); 1 elsewhere.
    u_scale, q_scale = np.ones((K, m.nu)), np.ones((K, m.nq_alloc))
    if m.uses_quaternion:
        norm2 = np.sum(np.asarray(q[:, :4]) ** 2, -1, keepdims=True)
        u_scale[:, :3] = norm2
        q_scale[:, :4] = norm2
    assert_close(m.multiply_by_n_inv(q, qdot), u_scale * u, 1e-12, "NInv N u")
    qdot2 = m.multiply_by_n(q, udot)
    assert_close(m.multiply_by_n(q, m.multiply_by_n_inv(q, qdot2)), q_scale * qdot2, 1e-12, "N NInv qdot")
    if m.has_quaternion_mode and m.euler:
        # Euler mode keeps the quaternion-mode slot count; the unused slot has zero rate.
        unused = 3 if m.simbody_name != "Free" else 6
        assert_close(qdot[:, unused], np.zeros(K), 0.0, "unused Euler slot")
    if m.qdot_is_u:
        assert_close(qdot, u, 0.0, "qdot = u")
    if m.uses_quaternion:
        # qdot = 1/2 [0; w] (x) q keeps |q| constant: q . qdot = 0.
        assert_close(jnp.sum(q[:, :4] * qdot[:, :4], -1), np.zeros(K), 1e-13, "q . qdot")


# ---------------------------------------------------------------------------------------------
# HDot, NDot, qdotdot


@pytest.mark.parametrize("m", MOBS, ids=IDS)
def test_HDot_is_derivative_of_H(m):
    q, u, _, prm = sample(m, seed=3)
    qdot = m.multiply_by_n(q, u)
    _, Hd = jax.jvp(lambda qq: m.calc_H_FM(qq, prm), (q,), (qdot,))
    HDot = m.calc_HDot_FM(q, u, prm)
    assert_close(HDot, Hd, 1e-12, "HDot vs jvp")
    h = 1e-6
    Hd_fd = central_difference(lambda x: m.calc_H_FM(x, prm), q, h, direction=qdot)
    assert_close(HDot, Hd_fd, 1e-8, "HDot vs central FD")


def test_HDot_closed_forms():
    """Catalogue closed forms: Gimbal HDot (1.8), Universal column 1 (1.3), Ellipsoid with ndot = w x n (1.15)."""
    # Gimbal.
    m = mob.Gimbal()
    q, u, _, prm = sample(m, seed=4)
    c0, s0, c1, s1 = jnp.cos(q[:, 0]), jnp.sin(q[:, 0]), jnp.cos(q[:, 1]), jnp.sin(q[:, 1])
    qd0, qd1 = u[:, 0], u[:, 1]
    z = jnp.zeros(K)
    col1 = jnp.stack([z, -s0 * qd0, c0 * qd0], -1)
    col2 = jnp.stack([c1 * qd1, -c0 * qd0 * c1 + s0 * s1 * qd1, -s0 * qd0 * c1 - c0 * s1 * qd1], -1)
    expected = jnp.stack([jnp.zeros((K, 3)), col1, col2], -1)
    HDot = m.calc_HDot_FM(q, u, prm)
    assert_close(HDot[:, :3], expected, 1e-13, "gimbal HDot angular")
    assert_close(HDot[:, 3:], np.zeros((K, 3, 3)), 0.0, "gimbal HDot linear")
    # Gimbal H angular = NInv_P(q) columns.
    H = m.calc_H_FM(q, prm)
    NInvP = jnp.stack(
        [jnp.stack([jnp.ones(K), z, z], -1), jnp.stack([z, c0, s0], -1), jnp.stack([s1, -s0 * c1, c0 * c1], -1)], -1
    )
    assert_close(H[:, :3], NInvP, 1e-14, "gimbal H")

    # Universal: HDot column 1 angular = w_FM x My_F, everything else zero.
    m = mob.Universal()
    q, u, _, prm = sample(m, seed=5)
    H = m.calc_H_FM(q, prm)
    w = jnp.einsum("kij,kj->ki", H[:, :3], u)
    HDot = m.calc_HDot_FM(q, u, prm)
    assert_close(HDot[:, :3, 1], jnp.cross(w, H[:, :3, 1]), 1e-13, "universal HDot col 1")
    assert_close(HDot[:, :, 0], np.zeros((K, 6)), 0.0, "universal HDot col 0")
    assert_close(HDot[:, 3:], np.zeros((K, 3, 2)), 0.0, "universal HDot linear")
    R, _ = m.calc_X_FM(q, prm)
    assert_close(H[:, :3, 1], R[:, :, 1], 1e-14, "universal H col 1 = My in F")

    # Ellipsoid: H column i = [e_i; radii * (e_i x n)], HDot = [0; radii * (e_i x (w x n))].
    for euler in (False, True):
        m = mob.Ellipsoid(euler=euler)
        q, u, _, radii = sample(m, seed=6)
        R, p = m.calc_X_FM(q, radii)
        n = R[:, :, 2]
        assert_close(p, radii * n, 1e-14, "ellipsoid p_FM")
        eye = np.eye(3)
        H_lin = jnp.stack([radii * jnp.cross(eye[i], n) for i in range(3)], -1)
        H = m.calc_H_FM(q, radii)
        assert_close(H[:, :3], np.broadcast_to(eye, (K, 3, 3)), 0.0, "ellipsoid H angular")
        assert_close(H[:, 3:], H_lin, 1e-14, "ellipsoid H linear")
        ndot = jnp.cross(u, n)
        HDot_lin = jnp.stack([radii * jnp.cross(eye[i], ndot) for i in range(3)], -1)
        HDot = m.calc_HDot_FM(q, u, radii)
        assert_close(HDot[:, :3], np.zeros((K, 3, 3)), 1e-14, "ellipsoid HDot angular")
        assert_close(HDot[:, 3:], HDot_lin, 1e-13, "ellipsoid HDot linear")


@pytest.mark.parametrize("m", MOBS, ids=IDS)
def test_qdotdot_and_NDot(m):
    """calc_qdotdot == N udot + d/dt(N(q) u) and multiply_by_n_dot(v) == d/dt(N(q)) v, both by jvp and FD."""
    q, u, udot, prm = sample(m, seed=7)
    qdot = m.multiply_by_n(q, u)
    _, d_Nu = jax.jvp(lambda qq, uu: m.multiply_by_n(qq, uu), (q, u), (qdot, udot))
    assert_close(m.calc_qdotdot(q, u, udot), d_Nu, 1e-12, "qdotdot vs jvp")
    h = 1e-6
    fd = central_difference(lambda qu: m.multiply_by_n(*qu), (q, u), h, direction=(qdot, udot))
    assert_close(m.calc_qdotdot(q, u, udot), fd, 1e-8, "qdotdot vs FD")
    v = udot[::-1]
    _, NDot_v = jax.jvp(lambda qq: m.multiply_by_n(qq, v), (q,), (qdot,))
    assert_close(m.multiply_by_n_dot(q, u, v), NDot_v, 1e-12, "NDot v vs jvp")


def test_qdotdot_closed_forms():
    """Catalogue 0.4 shortcuts: quaternion qdotdot = N wdot - |w|^2 q / 4; Euler qdotdot = N_P wdot + r; NDot_P."""
    for m in (mob.Ball(euler=False), mob.Free(euler=False), mob.Ellipsoid(euler=False)):
        q, u, udot, _ = sample(m, seed=8)
        expected_rot = m.multiply_by_n(q, udot)[:, :4] - 0.25 * jnp.sum(u[:, :3] ** 2, -1, keepdims=True) * q[:, :4]
        qdd = m.calc_qdotdot(q, u, udot)
        assert_close(qdd[:, :4], expected_rot, 1e-13, f"{m.simbody_name} quaternion qdotdot")
        if m.simbody_name == "Free":
            assert_close(qdd[:, 4:], udot[:, 3:], 0.0, "free translation qdotdot")
    for m in (mob.Ball(euler=True), mob.Free(euler=True), mob.Ellipsoid(euler=True)):
        q, u, udot, _ = sample(m, seed=9)
        a = q[:, :3]
        s0, c0, s1, c1 = jnp.sin(a[:, 0]), jnp.cos(a[:, 0]), jnp.sin(a[:, 1]), jnp.cos(a[:, 1])
        # N_P from the catalogue.
        o, z = jnp.ones(K), jnp.zeros(K)
        NP = jnp.stack(
            [jnp.stack([o, s1 * s0 / c1, -s1 * c0 / c1], -1), jnp.stack([z, c0, s0], -1), jnp.stack([z, -s0 / c1, c0 / c1], -1)],
            -2,
        )
        qd = jnp.einsum("kij,kj->ki", NP, u[:, :3])
        assert_close(m.multiply_by_n(q, u)[:, :3], qd, 1e-13, f"{m.simbody_name} N_P")
        r = jnp.stack([(qd[:, 0] * s1 - qd[:, 2]) * qd[:, 1] / c1, qd[:, 0] * qd[:, 2] * c1, (qd[:, 2] * s1 - qd[:, 0]) * qd[:, 1] / c1], -1)
        qdd = m.calc_qdotdot(q, u, udot)
        assert_close(qdd[:, :3], jnp.einsum("kij,kj->ki", NP, udot[:, :3]) + r, 1e-12, f"{m.simbody_name} Euler qdotdot")
        assert_close(qdd[:, 3 if m.simbody_name != "Free" else 6], z, 0.0, "unused slot qdotdot")
        # NDot_P explicit form.
        t = qd[:, 1] * s1 / c1
        aa = t * s0 / c1 + qd[:, 0] * c0 / c1
        bb = t * c0 / c1 - qd[:, 0] * s0 / c1
        NDotP = jnp.stack(
            [
                jnp.stack([z, s1 * aa + qd[:, 1] * s0, -(s1 * bb + qd[:, 1] * c0)], -1),
                jnp.stack([z, -qd[:, 0] * s0, qd[:, 0] * c0], -1),
                jnp.stack([z, -aa, bb], -1),
            ],
            -2,
        )
        v = udot
        assert_close(m.multiply_by_n_dot(q, u, v)[:, :3], jnp.einsum("kij,kj->ki", NDotP, v[:, :3]), 1e-12, f"{m.simbody_name} NDot_P")


# ---------------------------------------------------------------------------------------------
# Transposes are adjoints


@pytest.mark.parametrize("m", MOBS, ids=IDS)
def test_transposes_are_adjoints(m):
    q, u, udot, _ = sample(m, seed=10)
    rng = np.random.default_rng(11)
    a = jnp.asarray(rng.normal(size=(K, m.nu)))
    v = jnp.asarray(rng.normal(size=(K, m.nq_alloc)))

    def dot(x, y):
        return np.asarray(jnp.sum(x * y, -1))

    # <N a, v> == <a, N^T v>
    NT_v = m.multiply_by_n_transpose(q, v)
    assert NT_v.shape == (K, m.nu)
    assert_close(dot(m.multiply_by_n(q, a), v), dot(a, NT_v), 1e-12, "N^T")
    # <NInv v, a> == <v, NInv^T a>
    NInvT_a = m.multiply_by_n_inv_transpose(q, a)
    assert NInvT_a.shape == (K, m.nq_alloc)
    assert_close(dot(m.multiply_by_n_inv(q, v), a), dot(v, NInvT_a), 1e-12, "NInv^T")
    # <NDot a, v> == <a, NDot^T v>
    NDotT_v = m.multiply_by_n_dot_transpose(q, u, v)
    assert NDotT_v.shape == (K, m.nu)
    assert_close(dot(m.multiply_by_n_dot(q, u, a), v), dot(a, NDotT_v), 1e-12, "NDot^T")
    # And the explicit matrices: N^T from columns of N.
    if m.nu:
        N = jax.vmap(lambda e: m.multiply_by_n(q, jnp.broadcast_to(e, (K, m.nu))), out_axes=-1)(jnp.eye(m.nu))
        assert_close(NT_v, jnp.einsum("kji,kj->ki", N, v), 1e-13, "N^T explicit")


# ---------------------------------------------------------------------------------------------
# Defaults and aliases


@pytest.mark.parametrize("m", MOBS, ids=IDS)
def test_default_q_gives_identity(m):
    q0 = jnp.asarray(np.broadcast_to(m.default_q(), (K, m.nq_alloc)))
    _, _, _, prm = sample(m)
    R, p = m.calc_X_FM(q0, prm)
    assert_close(R, np.broadcast_to(np.eye(3), (K, 3, 3)), 1e-15, "R_FM(default q)")
    if m.simbody_name == "Ellipsoid":
        expected = np.zeros((K, 3))
        expected[:, 2] = prm[:, 2]
        assert_close(p, expected, 1e-15, "ellipsoid p_FM(default q) = (0, 0, c)")
    else:
        assert_close(p, np.zeros((K, 3)), 0.0, "p_FM(default q)")
    if m.uses_quaternion:
        assert np.array_equal(m.default_q()[:4], [1.0, 0, 0, 0])
    else:
        assert not np.any(m.default_q())


def test_default_ellipsoid_radii():
    """Ellipsoid built without radii gets Simbody's default (0.5, 1/3, 0.25); default q puts Mo at (0, 0, c)."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.MobilizedBody.Ellipsoid(matter.Ground(), jb.Transform(), jb.Body.Rigid(), jb.Transform())
    model = system.realize_topology()
    radii = model.parameters.mobilizer_params[0]
    np.testing.assert_allclose(radii, [[0.5, 1 / 3, 0.25]], rtol=1e-15)
    m = model.topology.mobilizers[1]
    R, p = m.calc_X_FM(model.default_q[None], radii)
    np.testing.assert_allclose(p[0], [0, 0, 0.25], atol=1e-15)
    np.testing.assert_allclose(R[0], np.eye(3), atol=1e-15)


ALIASES = [
    ("Revolute", mob.Pin), ("Torsion", mob.Pin), ("Prismatic", mob.Slider), ("Cartesian", mob.Translation),
    ("CartesianCoords", mob.Translation), ("Spherical", mob.Ball), ("Orientation", mob.Ball), ("UJoint", mob.Universal),
]


@pytest.mark.parametrize("alias,cls", ALIASES, ids=[a for a, _ in ALIASES])
def test_aliases(alias, cls):
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    body = getattr(jb.MobilizedBody, alias)(matter.Ground(), jb.Transform(), jb.Body.Rigid(), jb.Transform())
    assert body.mobilizer_cls is cls
    model = system.realize_topology()
    assert type(model.topology.mobilizers[1]) is cls
    assert model.get_num_u() == cls.nu


# ---------------------------------------------------------------------------------------------
# Simbody equivalences on whole models


def _gimbal_and_pins(seed=0):
    rng = np.random.default_rng(seed)
    X_PF, X_BM = S.random_transform(rng), S.random_transform(rng)
    mp = S.random_mass_properties(rng)
    gravity = [0.3, -9.81, 0.5]

    sys_g = jb.MultibodySystem()
    mat_g = jb.SimbodyMatterSubsystem(sys_g)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(sys_g), mat_g, gravity)
    jb.MobilizedBody.Gimbal(mat_g.Ground(), X_PF, jb.Body.Rigid(mp), X_BM)
    gimbal = sys_g.realize_topology()

    # Rx(q0) Ry(q1) Rz(q2) as three Pins: a Pin about axis a is C Rz(q) C^T with C taking z to a.
    C_x = jb.Transform(jb.Rotation.about_y(np.pi / 2))  # z -> x
    C_y = jb.Transform(jb.Rotation.about_x(-np.pi / 2))  # z -> y
    sys_p = jb.MultibodySystem()
    mat_p = jb.SimbodyMatterSubsystem(sys_p)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(sys_p), mat_p, gravity)
    b1 = jb.MobilizedBody.Pin(mat_p.Ground(), X_PF * C_x, jb.Body.Massless(), C_x)
    b2 = jb.MobilizedBody.Pin(b1, C_y, jb.Body.Massless(), C_y)
    jb.MobilizedBody.Pin(b2, jb.Transform(), jb.Body.Rigid(mp), X_BM)
    pins = sys_p.realize_topology()
    return gimbal, pins


def test_gimbal_equals_three_pins():
    gimbal, pins = _gimbal_and_pins()
    assert pins.get_num_u() == gimbal.get_num_u() == 3
    rng = np.random.default_rng(3)
    n = 8
    q = S.random_q(gimbal, rng, (n,))
    u = rng.normal(size=(n, 3))
    f = rng.normal(size=(n, 3))
    F_body = rng.normal(size=(n, 2, 3))  # applied to the massive body
    F_g = np.zeros((n, 2, 2, 3))
    F_g[:, 1] = F_body
    F_p = np.zeros((n, 4, 2, 3))
    F_p[:, 3] = F_body
    a = S.summary_batch(gimbal, q, u, f, F_g)
    b = S.summary_batch(pins, q, u, f, F_p)
    assert_close(b["R_GB"][:, 3], a["R_GB"][:, 1], 1e-13, "R_GB")
    assert_close(b["p_GB"][:, 3], a["p_GB"][:, 1], 1e-13, "p_GB")
    assert_close(b["V_GB"][:, 3], a["V_GB"][:, 1], 1e-12, "V_GB")
    assert_close(b["M"], a["M"], 1e-12, "M")
    assert_close(b["udot"], a["udot"], 1e-10, "udot")
    assert np.all(np.isfinite(np.asarray(a["udot"])))


def _euler_quaternion_pair():
    model_e, _ = S.mixed_tree_30(use_euler_angles=True)
    model_q = model_e.with_use_euler_angles(False)
    return model_e, model_q


def test_with_use_euler_angles_matches_builder():
    model_e, model_q = _euler_quaternion_pair()
    built_q, _ = S.mixed_tree_30(use_euler_angles=False)
    assert model_q.topology == built_q.topology
    np.testing.assert_array_equal(model_q.default_q, built_q.default_q)
    assert model_e.get_num_quaternions_in_use() == 0
    n_quat = sum(k in ("ball", "free", "ellipsoid") for k in S.MIXED_TREE_KINDS)
    assert model_q.get_num_quaternions_in_use() == n_quat
    assert model_q.get_num_q() == model_e.get_num_q()


@pytest.mark.parametrize("direction", ["euler_to_quaternion", "quaternion_to_euler"])
def test_euler_and_quaternion_modes_agree(direction):
    """Same X_GB, V_GB, M and udot on the mixed tree after converting q between modes (u unchanged)."""
    model_e, model_q = _euler_quaternion_pair()
    n = 4
    rng = np.random.default_rng(21)
    src, dst = (model_e, model_q) if direction == "euler_to_quaternion" else (model_q, model_e)
    q_src, u = S.random_qu(src, rng, (n,))
    f, F = S.random_forces(src, rng, (n,))
    convert = src.convert_to_quaternions if dst is model_q else src.convert_to_euler_angles
    q_dst = np.stack([np.asarray(convert(src.default_state().set_q(q_src[i])).q) for i in range(n)])
    # The conversion itself: same rotations, unused Euler slot 0 / unit quaternions.
    a = S.summary_batch(src, q_src, u, f, F)
    b = S.summary_batch(dst, q_dst, u, f, F)
    assert_close(b["R_GB"], a["R_GB"], 1e-12, "R_GB")
    assert_close(b["p_GB"], a["p_GB"], 1e-12, "p_GB")
    assert_close(b["V_GB"], a["V_GB"], 1e-11, "V_GB")
    assert_close(b["M"], a["M"], 1e-11, "M")
    assert_close(b["udot"], a["udot"], 1e-8, "udot")
    assert np.all(np.isfinite(np.asarray(a["udot"])))
    if dst is model_q:
        for qi in model_q.topology.quaternion_q_index:
            np.testing.assert_allclose(np.linalg.norm(q_dst[:, qi], axis=-1), 1.0, rtol=1e-14)
            assert np.all(q_dst[:, qi[0]] >= 0)
