"""Reversed mobilizers (catalogue 1.0.2), MobilizedBody.Custom (1.19) and MobilizedBody.FunctionBased (1.20).

* Mobilizer level: reversed H_FM / HDot_FM are the exact derivatives of the reversed X_FM and H_FM (every
  reversible built-in, both orientation modes); FunctionBased H equals Simbody's closed form and its HDot the
  derivative of H under nonlinear coupling.
* Meaning (Simbody's TestReverseMobilizers): a tree built A->B and the same physical system built B->A with
  the *reversed* mobilizer and the same q, u, mobility force give the same X_GB, V_GB, A_GB and udot; a
  *forward* Pin in the B->A tree needs q = -theta, u = -thetadot, force -f.
* Rebuilds: Custom versions of every built-in and FunctionBased versions of the common joints reproduce the
  built-in models (X_GB, V_GB, M, udot) in both orientation modes.
* A mixed tree of built-in, reversed, Custom and FunctionBased bodies under jit, vmap (4096 states) and grad.
* Build-time errors.

Each model is compiled once (module-level jitted functions taking the model as an argument).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody import _mobilizers as mob
from jaxbody._math import spatial

import systems as S
from helpers import assert_close, central_difference

MB = jb.MobilizedBody
REVERSIBLE = tuple(k for k in S.MOBILIZER_TYPES if k != "weld")
BUILTIN_OF = {name.lower(): cls for name, cls in mob.BUILTIN.items()}  # "pin" -> mob.Pin
K = 5


def vee(W):
    return jnp.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], -1)


def _params(kind, rng):
    if kind == "screw":
        return [rng.uniform(-0.3, 0.3)]
    if kind == "ellipsoid":
        return rng.uniform(0.2, 0.8, 3)
    return None


def _add(kind, parent, X_PF, body, X_BM, params=None, direction=None, name=None):
    """A built-in body of type ``kind`` with an explicit direction."""
    if kind == "screw":
        return MB.Screw(parent, X_PF, body, X_BM, pitch=params[0], name=name, direction=direction)
    if kind == "ellipsoid":
        return MB.Ellipsoid(parent, X_PF, body, X_BM, radii=params, name=name, direction=direction)
    factory = getattr(MB, BUILTIN_OF[kind].simbody_name)
    return factory(parent, X_PF, body, X_BM, name=name, direction=direction)


@jax.jit
def dynamics(model, q, u, f):
    """R_GB, p_GB, V_GB, A_GB, M, udot, qdot and qdotdot with the model's gravity plus mobility forces f."""
    state = model.default_state().set_q(q).set_u(u).set_mobility_forces(f)
    state = model.realize(state, jb.Stage.Acceleration)
    return {
        "R_GB": state.position.R_GB, "p_GB": state.position.p_GB, "V_GB": state.velocity.V_GB,
        "A_GB": state.acceleration.A_GB, "M": model.calc_m(state), "udot": state.get_u_dot(),
        "qdot": state.get_q_dot(), "qdotdot": state.get_q_dot_dot(),
    }


def twin_system(build, gravity=(0.0, -9.81, 0.3)):
    """One model holding two independent subtrees of Ground: ``build(matter, variant, rng)`` for variant 0
    and 1 with equal random streams (so equal frames, bodies and parameters). One compilation serves both."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, list(gravity))
    halves = [build(matter, variant, np.random.default_rng(8)) for variant in (0, 1)]
    return system.realize_topology(), halves


def compare_twins(model, out, keys=("R_GB", "p_GB", "V_GB", "M", "udot", "qdot", "qdotdot")):
    """The second subtree's results equal the first's (bodies, q and u in the same order within each half)."""
    n, nq, nu = (model.get_num_bodies() - 1) // 2, model.get_num_q() // 2, model.get_num_u() // 2
    tol = {"R_GB": 1e-13, "p_GB": 1e-13, "V_GB": 1e-12, "M": 1e-12, "udot": 1e-10, "qdot": 1e-13, "qdotdot": 1e-11}
    for key in keys:
        x = out[key]
        if key == "M":
            assert_close(x[nu:, nu:], x[:nu, :nu], tol[key], key)
            assert_close(x[:nu, nu:], np.zeros((nu, nu)), 0.0, "M coupling between independent subtrees")
        elif key in ("udot", "qdot", "qdotdot"):
            m = nq if key != "udot" else nu
            assert_close(x[m:], x[:m], tol[key], key)
        else:
            assert_close(x[n + 1 :], x[1 : n + 1], tol[key], key)


def _random_like(like, rng):
    """Random q slots for a body sampled like ``like``: a built-in mobilizer, or an int n (n angles)."""
    if isinstance(like, int):
        return rng.uniform(-1.0, 1.0, like)
    return S.random_mobilizer_q(like, rng)


def random_q_like(model, likes, rng):
    """q (nq,) for ``model`` whose body b is sampled like ``likes[b - 1]``."""
    q = np.zeros(model.get_num_q())
    for b, like in enumerate(likes, start=1):
        s = model.topology.q_start[b]
        x = _random_like(like, rng)
        q[s : s + x.size] = x
    return q


# =============================================================================================
# Reversed mobilizers: exact derivatives


REVERSED_CASES = [
    (f"{k}-{'euler' if e else 'quat'}" if BUILTIN_OF[k].has_quaternion_mode else k, BUILTIN_OF[k]().with_euler(e))
    for k in REVERSIBLE
    for e in ((False, True) if BUILTIN_OF[k].has_quaternion_mode else (False,))
]


def _sample(inner, seed):
    rng = np.random.default_rng(seed)
    q = S.random_mobilizer_q(inner, rng, (K,))
    if inner.uses_quaternion:
        q[:, :4] *= rng.uniform(0.7, 1.4, (K, 1))  # unnormalized quaternions are legal
    u = rng.normal(size=(K, inner.nu))
    prm = rng.uniform(0.2, 0.8, (K, inner.n_params))
    return jnp.asarray(q), jnp.asarray(u), jnp.asarray(prm)


@functools.partial(jax.jit, static_argnums=0)
def derivative_pairs(m, q, u, prm):
    """{name: (value, reference)}: H_FM u against (vee(Rdot R^T), pdot) along qdot = N u, and HDot_FM against
    d/dt H_FM along the same qdot (forward-mode derivatives of the mobilizer's X_FM and H_FM)."""
    qdot = m.multiply_by_n(q, u)
    (R, _), (Rd, pd) = jax.jvp(lambda qq: m.calc_X_FM(qq, prm), (q,), (qdot,))
    V = jnp.einsum("kij,kj->ki", m.calc_H_FM(q, prm), u)
    HDot = jax.jvp(lambda qq: m.calc_H_FM(qq, prm), (q,), (qdot,))[1]
    return {
        "angular H_FM u": (V[:, :3], vee(Rd @ jnp.swapaxes(R, -1, -2))),
        "linear H_FM u": (V[:, 3:], pd),
        "HDot_FM": (m.calc_HDot_FM(q, u, prm), HDot),
    }


def _check_derivatives(m, q, u, prm, tol=1e-12):
    for what, (value, reference) in derivative_pairs(m, q, u, prm).items():
        assert_close(value, reference, tol, what)


@pytest.mark.parametrize("inner", [c[1] for c in REVERSED_CASES], ids=[c[0] for c in REVERSED_CASES])
def test_reversed_H_and_HDot_are_derivatives(inner):
    m = mob.reversed_mobilizer(inner, "x")
    q, u, prm = _sample(inner, 3)
    R0, p0 = inner.calc_X_FM(q, prm)
    R, p = m.calc_X_FM(q, prm)
    assert_close(R, jnp.swapaxes(R0, -1, -2), 1e-15, "R_FM = R_F0M0^T")
    assert_close(p, -jnp.einsum("kji,kj->ki", R0, p0), 1e-15, "p_FM = -R_F0M0^T p_F0M0")
    _check_derivatives(m, q, u, prm)
    # N, NInv and the sizes are the as-defined mobilizer's.
    assert_close(m.multiply_by_n(q, u), inner.multiply_by_n(q, u), 0.0, "N")
    assert (m.nq_alloc, m.nu, m.n_params, m.uses_quaternion, m.nq_in_use) == (
        inner.nq_alloc, inner.nu, inner.n_params, inner.uses_quaternion, inner.nq_in_use)
    if type(inner) in mob.reversed.NEGATED_H_TYPES:  # Simbody's shortcut: H_FM = -H_F0M0
        assert_close(m.calc_H_FM(q, prm), -inner.calc_H_FM(q, prm), 0.0, "H_FM = -H_F0M0")


def test_reversed_mobilizers_group_and_switch_modes():
    """Equal reversed mobilizers are equal (one group); Euler mode passes through; Weld cannot be reversed."""
    assert mob.Reversed(mob.Ball()) == mob.Reversed(mob.Ball()) != mob.Ball()
    assert mob.Reversed(mob.Ball()).with_euler(True) == mob.Reversed(mob.Ball(euler=True))
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    a = MB.Ball(matter.Ground(), jb.Transform(), jb.Body.Rigid(), jb.Transform(), direction=MB.Reverse)
    b = MB.Ball(a, jb.Transform(), jb.Body.Rigid(), jb.Transform(), direction=MB.Reverse)
    MB.Ball(b, jb.Transform(), jb.Body.Rigid(), jb.Transform())
    with pytest.raises(jb.InvalidArgument, match="w: a Weld .* cannot be reversed"):
        MB.Weld(b, jb.Transform(), jb.Body.Rigid(), jb.Transform(), name="w", direction=MB.Reverse)
    model = system.realize_topology()
    assert [len(g.bodies) for g in model.topology.groups] == [2, 1]
    assert "reversed" in repr(a) and model.get_num_quaternions_in_use() == 3
    euler = model.with_use_euler_angles(True)
    assert euler.get_num_quaternions_in_use() == 0
    assert euler.topology.mobilizers[1] == mob.Reversed(mob.Ball(euler=True))


# =============================================================================================
# Reversed mobilizers: meaning (TestReverseMobilizers)


REVERSE_KINDS = REVERSIBLE + ("pin",)  # the last pair: a *forward* Pin in the B->A tree


def _reverse_pairs(matter, variant, rng):
    """Pair i: forward (variant 0) Ground -Free-> A -kind-> B; reverse (variant 1) Ground -Free-> B
    -kind (reversed)-> A, with the same frames on A (X_AM) and B (X_BM) and the same bodies."""
    for i, kind in enumerate(REVERSE_KINDS):
        X_AM, X_BM = S.random_transform(rng), S.random_transform(rng)
        body_A = jb.Body.Rigid(S.random_mass_properties(rng))
        body_B = jb.Body.Rigid(S.random_mass_properties(rng))
        prm = _params(kind, rng)
        if variant == 0:
            A = MB.Free(matter.Ground(), jb.Transform(), body_A, X_AM)
            _add(kind, A, X_AM, body_B, X_BM, prm)
        else:
            B = MB.Free(matter.Ground(), jb.Transform(), body_B, X_BM)
            direction = MB.Forward if i == len(REVERSE_KINDS) - 1 else MB.Reverse
            _add(kind, B, X_BM, body_A, X_AM, prm, direction=direction)


@functools.lru_cache(maxsize=None)
def reverse_results():
    """(model, results) with the reverse half's q, u, f set to reproduce the forward half's motion.

    Bodies: forward pair i = (A, B) at (2i+1, 2i+2); reverse pair i = (B, A) at offset + (2i+1, 2i+2).
    The pair joint has the same q, u and mobility force in both halves (the forward Pin pair: negated);
    the Free joints are unforced; the reverse Free is set from the forward X_GB and V_GB of B.
    """
    model, _ = twin_system(_reverse_pairs)
    topo = model.topology
    rng = np.random.default_rng(4)
    n = (topo.nbodies - 1) // 2
    q, u, f = np.zeros(topo.nq), rng.normal(size=topo.nu), np.zeros(topo.nu)
    for b in range(1, n + 1):
        m, s, us = topo.mobilizers[b], topo.q_start[b], topo.u_start[b]
        q[s : s + m.nq_alloc] = S.random_mobilizer_q(m, rng)
        if b % 2 == 0:
            f[us : us + m.nu] = rng.normal(size=m.nu)
    out = dynamics(model, q, u, f)  # forward half realized (reverse half arbitrary)
    for i, kind in enumerate(REVERSE_KINDS):
        a, b = 2 * i + 1, 2 * i + 2  # forward A, B; reverse B, A at n + a, n + b
        R_GB, p_GB = np.asarray(out["R_GB"][b]), np.asarray(out["p_GB"][b])
        R_BM, p_BM = np.asarray(model.parameters.R_BM[b]), np.asarray(model.parameters.p_BM[b])
        w, v = np.asarray(out["V_GB"][b])
        s, us = topo.q_start[n + a], topo.u_start[n + a]
        q[s : s + 4] = np.asarray(spatial.quaternion_from_rotation(jnp.asarray(R_GB @ R_BM)))
        q[s + 4 : s + 7] = p_GB + R_GB @ p_BM
        u[us : us + 3], u[us + 3 : us + 6] = w, v + np.cross(w, R_GB @ p_BM)
        sign = -1.0 if i == len(REVERSE_KINDS) - 1 else 1.0
        nq, nu = topo.mobilizers[b].nq_alloc, topo.mobilizers[b].nu
        fs, fus, rs, rus = topo.q_start[b], topo.u_start[b], topo.q_start[n + b], topo.u_start[n + b]
        q[rs : rs + nq] = sign * q[fs : fs + nq]
        u[rus : rus + nu] = sign * u[fus : fus + nu]
        f[rus : rus + nu] = sign * f[fus : fus + nu]
    return model, dynamics(model, q, u, f)


def test_reversed_tree_reproduces_forward_tree():
    """Same X_GB, V_GB, A_GB of every physical body and same pair-joint udot (forward Pin pair: -udot)."""
    model, out = reverse_results()
    topo = model.topology
    n = (topo.nbodies - 1) // 2
    fwd = np.arange(1, n + 1)
    rev = n + fwd + np.where(fwd % 2 == 1, 1, -1)  # A <-> B within each pair
    for key, tol in (("R_GB", 1e-12), ("p_GB", 1e-12), ("V_GB", 1e-11), ("A_GB", 1e-10)):
        assert_close(out[key][rev], out[key][fwd], tol, key)
    for i, kind in enumerate(REVERSE_KINDS):
        sign = -1.0 if i == len(REVERSE_KINDS) - 1 else 1.0
        b = 2 * i + 2
        fu, ru, nu = topo.u_start[b], topo.u_start[n + b], topo.mobilizers[b].nu
        assert_close(sign * out["udot"][ru : ru + nu], out["udot"][fu : fu + nu], 1e-10, f"{kind} pair udot")
    assert float(jnp.max(jnp.abs(out["A_GB"]))) > 1e-2  # the comparison is not vacuous


def test_reverse_tree_uses_reversed_mobilizers():
    model, _ = reverse_results()
    mobs = model.topology.mobilizers
    n = (len(mobs) - 1) // 2
    for i in range(len(REVERSE_KINDS)):
        b = 2 * i + 2
        expected = mobs[b] if i == len(REVERSE_KINDS) - 1 else mob.Reversed(mobs[b])
        assert mobs[n + b] == expected and type(mobs[b]) is not mob.Reversed


# =============================================================================================
# Custom rebuilds of the built-ins


def _unbatched(batched):
    """One-body version of a batched mobilizer method f(q (k, ..), x (k, ..)) -> (k, ..) outputs."""
    return lambda q, x: jax.tree_util.tree_map(lambda y: y[0], batched(q[None], x[None]))


@functools.lru_cache(maxsize=None)
def custom_functions(kind):
    """Keyword arguments of MobilizedBody.Custom rebuilding built-in ``kind`` (H by autodiff)."""
    m = BUILTIN_OF[kind]()
    kw = dict(calc_x_fm=_unbatched(m.calc_X_FM), nq=m.nq_alloc, nu=m.nu, n_angles=4 if m.has_quaternion_mode else 0)
    if m.nq_alloc != m.nu:
        kw.update(multiply_by_n=_unbatched(m.multiply_by_n), multiply_by_n_inv=_unbatched(m.multiply_by_n_inv))
    return kw


TREE_PARENTS = (0, 1, 2, 1, 4, 0, 6, 7, 3, 5, 9)
QUATERNION_KINDS = ("ball", "free", "ellipsoid")  # the types whose Euler mode differs


def _rebuild_tree(kinds):
    def build(matter, custom, rng):
        """Each of ``kinds`` once (variant 0) or its Custom rebuild (variant 1), in a branched tree."""
        handles = [matter.Ground()]
        for kind, parent in zip(kinds, TREE_PARENTS):
            X_PF, X_BM = S.random_transform(rng), S.random_transform(rng)
            body = jb.Body.Rigid(S.random_mass_properties(rng))
            prm = _params(kind, rng)
            if custom:
                handles.append(MB.Custom(handles[parent], X_PF, body, X_BM, params=prm, **custom_functions(kind)))
            else:
                handles.append(_add(kind, handles[parent], X_PF, body, X_BM, prm))

    return build


@functools.lru_cache(maxsize=None)
def rebuild_model(euler):
    """Every reversible type (quaternion mode), or only the quaternion-capable ones (Euler mode)."""
    if euler:
        model, _ = twin_system(_rebuild_tree(QUATERNION_KINDS))
        return model.with_use_euler_angles(True)
    return twin_system(_rebuild_tree(REVERSIBLE))[0]


@pytest.mark.parametrize("euler", [False, pytest.param(True, marks=pytest.mark.long)], ids=["quaternion", "euler"])  # euler: --long (CI budget)
def test_custom_rebuilds_match_builtins(euler):
    """X_GB, V_GB, M, udot, qdot and qdotdot of the Custom subtree equal the built-in subtree's."""
    model = rebuild_model(euler)
    n = (model.get_num_bodies() - 1) // 2
    assert [type(m) for m in model.topology.mobilizers[n + 1 :]] == [mob.Custom] * n
    assert model.get_num_quaternions_in_use() == (0 if euler else 6)
    rng = np.random.default_rng(30 + euler)
    q = np.concatenate([S.random_mobilizer_q(m, rng) for m in model.topology.mobilizers[1 : n + 1]])
    u, f = rng.normal(size=(2, model.get_num_u() // 2))
    q, u, f = np.tile(q, 2), np.tile(u, 2), np.tile(f, 2)  # the same state in both halves
    compare_twins(model, dynamics(model, q, u, f))


def test_custom_mobilizers_group_and_convert():
    """Custom bodies with the same functions form one group; n_angles = 4 converts between modes like Ball."""
    model = rebuild_model(False)
    n = len(REVERSIBLE)
    assert len(model.topology.groups) == 2 * n
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    a = MB.Custom(matter.Ground(), jb.Transform(), jb.Body.Rigid(), jb.Transform(), **custom_functions("free"))
    MB.Custom(a, jb.Transform(), jb.Body.Rigid(), jb.Transform(), **custom_functions("free"))
    assert len(system.realize_topology().topology.groups) == 1
    q = np.concatenate([S.random_mobilizer_q(m, np.random.default_rng(2)) for m in model.topology.mobilizers[1 : n + 1]])
    q = np.tile(q, 2)
    qe = np.asarray(model.convert_to_euler_angles(model.default_state().set_q(q)).q)
    assert_close(qe[len(q) // 2 :], qe[: len(q) // 2], 0.0, "Euler q")
    assert not np.allclose(qe, q)
    euler = model.with_use_euler_angles(True)
    qq = np.asarray(euler.convert_to_quaternions(euler.default_state().set_q(qe)).q)
    assert_close(qq[len(q) // 2 :], qq[: len(q) // 2], 0.0, "quaternion q")


# =============================================================================================
# FunctionBased


def _zero(x):
    return 0.0


def _first(x):
    return x[0]


#: kind -> (n, which of (theta1, theta2, theta3, x1, x2, x3) is q[i], i = 0..n-1)
FB_JOINTS = {
    "pin": (1, (2,)), "slider": (1, (3,)), "universal": (2, (0, 1)), "cylinder": (2, (2, 5)),
    "planar": (3, (2, 3, 4)), "gimbal": (3, (0, 1, 2)), "translation": (3, (3, 4, 5)), "bushing": (6, tuple(range(6))),
}


def fb_args(kind):
    """(n_mobilities, functions, coordinate_indices) of the FunctionBased rebuild of ``kind``."""
    n, slots = FB_JOINTS[kind]
    functions, indices = [_zero] * 6, [()] * 6
    for i, s in enumerate(slots):
        functions[s], indices[s] = _first, (i,)
    return n, functions, indices


def _bushing_x(q, prm):
    return spatial.rotation_from_body_fixed_xyz(q[:3]), q[3:]


def _bushing_h(q, prm):
    """Closed form: angular columns NInv_P (Gimbal), linear = identity on the translation rates."""
    w = mob.orientation.euler_xyz_w_columns(q[None, :3])[0]
    return jnp.block([[w, jnp.zeros((3, 3))], [jnp.zeros((3, 3)), jnp.eye(3)]])


FB_PARENTS = (0, 1, 2, 0, 4, 5, 3, 7)


def _function_based_tree(matter, function_based, rng):
    """Each FB_JOINTS kind once: the reference (built-in; bushing: Custom with closed-form H) or FunctionBased."""
    handles = [matter.Ground()]
    for kind, parent in zip(FB_JOINTS, FB_PARENTS):
        X_PF, X_BM = S.random_transform(rng), S.random_transform(rng)
        body = jb.Body.Rigid(S.random_mass_properties(rng))
        P = handles[parent]
        if function_based:
            handles.append(MB.FunctionBased(P, X_PF, body, X_BM, *fb_args(kind)))
        elif kind == "bushing":
            handles.append(MB.Custom(P, X_PF, body, X_BM, calc_x_fm=_bushing_x, calc_h_fm=_bushing_h, nq=6, nu=6))
        else:
            handles.append(_add(kind, P, X_PF, body, X_BM))


def test_function_based_rebuilds_match():
    model, _ = twin_system(_function_based_tree)
    n = len(FB_JOINTS)
    assert [type(m) for m in model.topology.mobilizers[n + 1 :]] == [mob.FunctionBased] * n
    rng = np.random.default_rng(40)
    likes = [6 if k == "bushing" else BUILTIN_OF[k]() for k in FB_JOINTS]
    q = np.concatenate([_random_like(like, rng) for like in likes])
    u, f = rng.normal(size=(2, model.get_num_u() // 2))
    compare_twins(model, dynamics(model, np.tile(q, 2), np.tile(u, 2), np.tile(f, 2)))


def _coupled_function_based(rotation_axes=None, translation_axes=None):
    """n = 2 with nonlinear coupling: theta1 = q0, theta3 = q0 q1, x1 = sin q0, x3 = q1^2 + q0."""
    functions = (_first, _zero, lambda x: x[0] * x[1], lambda x: jnp.sin(x[0]), _zero, lambda x: x[1] ** 2 + x[0])
    indices = ((0,), (), (0, 1), (0,), (), (0, 1))
    return mob.function_based(2, functions, indices, rotation_axes, translation_axes, "coupled")


def test_function_based_coupled_derivatives():
    """Closed-form H and HDot: the derivatives of X_FM and H_FM, and equal to a Custom's autodiff H and HDot."""
    a = np.array([[1.0, 0.2, 0.0], [0.3, 1.0, 0.5], [0.0, -0.4, 2.0]])
    b = np.array([[2.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.3, 1.0]])
    m = _coupled_function_based(a, b)
    assert_close(np.asarray(m.x_fm_fn.rotation_axes), a / np.linalg.norm(a, axis=1, keepdims=True), 1e-15, "unit axes")
    rng = np.random.default_rng(2)
    q, u, prm = jnp.asarray(rng.uniform(-1, 1, (K, 2))), jnp.asarray(rng.normal(size=(K, 2))), jnp.zeros((K, 0))
    _check_derivatives(m, q, u, prm)
    autodiff = mob.Custom(x_fm_fn=m.x_fm_fn, nq_alloc=2, nu=2)
    pairs, ref = derivative_pairs(m, q, u, prm), derivative_pairs(autodiff, q, u, prm)
    assert_close(pairs["angular H_FM u"][0], ref["angular H_FM u"][0], 1e-13, "H = autodiff H")
    assert_close(pairs["HDot_FM"][0], ref["HDot_FM"][0], 1e-12, "HDot = autodiff HDot")
    assert float(jnp.max(jnp.abs(pairs["HDot_FM"][0]))) > 0.1


def test_reversed_custom_and_function_based_derivatives():
    m = mob.reversed_mobilizer(_coupled_function_based(), "x")
    rng = np.random.default_rng(6)
    _check_derivatives(m, jnp.asarray(rng.uniform(-1, 1, (K, 2))), jnp.asarray(rng.normal(size=(K, 2))), jnp.zeros((K, 0)))
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    body = MB.Custom(matter.Ground(), jb.Transform(), jb.Body.Rigid(), jb.Transform(), direction=MB.Reverse,
                     **custom_functions("free"))
    c = body.mobilizer_prototype.with_euler(True)
    q, u, _ = _sample(mob.Free(euler=True), 7)
    _check_derivatives(c, q, u, jnp.zeros((K, 0)))


# =============================================================================================
# Mixed tree under jit / vmap / grad


def _ellipsoid_like_x(q, radii):
    """Custom Ellipsoid with its radii as Custom parameters."""
    R = spatial.rotation_from_quaternion(q[:4])
    return R, radii * R[:, 2]


def _quat_n(q, u):
    return mob.orientation.quaternion_qdot(q, u)


def _quat_n_inv(q, qdot):
    return mob.orientation.quaternion_w(q, qdot)


_COUPLED = (2, (_first, _zero, lambda x: x[0] * x[1], lambda x: jnp.sin(x[0]), _zero, lambda x: x[1] ** 2 + x[0]),
            ((0,), (), (0, 1), (0,), (), (0, 1)))

# (label, q sampled like, builder(parent, X_PF, body, X_BM, rng)); the tree holds every entry twice.
MIXED = [
    ("pin", mob.Pin(), lambda P, a, b, c, r: MB.Pin(P, a, b, c)),
    ("rev-ball", mob.Ball(), lambda P, a, b, c, r: MB.Ball(P, a, b, c, direction=MB.Reverse)),
    ("custom-ellipsoid", mob.Ball(), lambda P, a, b, c, r: MB.Custom(
        P, a, b, c, calc_x_fm=_ellipsoid_like_x, nq=4, nu=3, n_angles=4, multiply_by_n=_quat_n,
        multiply_by_n_inv=_quat_n_inv, params=r.uniform(0.2, 0.8, 3))),
    ("fb-coupled", 2, lambda P, a, b, c, r: MB.FunctionBased(P, a, b, c, *_COUPLED)),
    ("rev-planar", mob.Planar(), lambda P, a, b, c, r: MB.Planar(P, a, b, c, direction=MB.Reverse)),
]
MIXED_ORDER = [i % len(MIXED) for i in range(2 * len(MIXED))]
MIXED_PARENTS = (0, 1, 2, 3, 1, 0, 6, 4, 8, 5)


@functools.lru_cache(maxsize=None)
def mixed_model():
    rng = np.random.default_rng(13)
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, [0.0, -9.81, 0.0])
    handles = [matter.Ground()]
    for i, parent in zip(MIXED_ORDER, MIXED_PARENTS):
        X_PF, X_BM = S.random_transform(rng), S.random_transform(rng)
        body = jb.Body.Rigid(S.random_mass_properties(rng))
        handles.append(MIXED[i][2](handles[parent], X_PF, body, X_BM, rng))
    return system.realize_topology()


def mixed_qu(seed, shape=()):
    model = mixed_model()
    rng = np.random.default_rng(seed)
    likes = [MIXED[i][1] for i in MIXED_ORDER]
    q = np.stack([random_q_like(model, likes, rng) for _ in range(int(np.prod(shape)))]).reshape(shape + (-1,))
    return q, rng.normal(size=shape + (model.get_num_u(),))


def _mixed_udot(model, q, u):
    state = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Acceleration)
    return state.get_u_dot()


mixed_udot_jit = jax.jit(_mixed_udot)
mixed_udot_batch = jax.jit(jax.vmap(_mixed_udot, in_axes=(None, 0, 0)))


def test_mixed_tree_groups_and_jit_equals_eager():
    model = mixed_model()
    kinds = {type(m).__name__ for m in model.topology.mobilizers}
    assert {"Reversed", "Custom", "FunctionBased", "Pin"} <= kinds
    # Every kind twice and equal mobilizers batched: one group per MIXED entry.
    assert sorted(len(g.bodies) for g in model.topology.groups) == [2] * len(MIXED)
    q, u = mixed_qu(1)
    eager = _mixed_udot(model, jnp.asarray(q), jnp.asarray(u))
    assert_close(mixed_udot_jit(model, q, u), eager, 1e-12, "jit vs eager udot")
    assert np.all(np.isfinite(np.asarray(eager)))


def test_mixed_tree_vmap_4096_states():
    model = mixed_model()
    q, u = mixed_qu(2, (4096,))
    batch = mixed_udot_batch(model, q, u)
    assert batch.shape == (4096, model.get_num_u()) and np.all(np.isfinite(np.asarray(batch)))
    for i in (0, 1234, 4095):
        assert_close(batch[i], mixed_udot_jit(model, q[i], u[i]), 1e-11, f"lane {i}")


def _custom_param_group(model):
    return next(i for i, g in enumerate(model.topology.groups) if type(g.mobilizer) is mob.Custom and g.mobilizer.n_params == 3)


def _scalar(model, q, u, radii, weights):
    params = list(model.parameters.mobilizer_params)
    params[_custom_param_group(model)] = radii
    model = jb.replace_parameters(model, mobilizer_params=tuple(params))
    return jnp.dot(weights, _mixed_udot(model, q, u))


scalar_and_grad = jax.jit(jax.value_and_grad(_scalar, argnums=(1, 2, 3)))


@pytest.mark.long  # CI budget (2026-11-29 profile): ~16 s; the reversed/custom derivative tests below stay in CI
def test_mixed_tree_grad_matches_finite_differences():
    model = mixed_model()
    q, u = mixed_qu(3)
    radii = np.asarray(model.parameters.mobilizer_params[_custom_param_group(model)])
    weights = np.random.default_rng(4).normal(size=model.get_num_u())
    _, grads = scalar_and_grad(model, q, u, radii, weights)
    rng = np.random.default_rng(5)
    h = 1e-6
    for name, x, g in (("q", q, grads[0]), ("u", u, grads[1]), ("radii", radii, grads[2])):
        direction = rng.normal(size=x.shape)
        args = [q, u, radii]
        i = ["q", "u", "radii"].index(name)
        along = lambda x, i=i: scalar_and_grad(model, *args[:i], x, *args[i + 1:], weights)[0]  # noqa: E731
        fd = central_difference(along, x, h, direction=direction)
        ad = float(jnp.sum(g * direction))
        assert_close(fd, ad, 1e-6, f"d/d{name}: ad {ad} vs fd {float(fd)}")  # |ad - fd| <= 1e-6 * max(1, |ad|)
        assert abs(ad) > 1e-3


# =============================================================================================
# Build-time errors


def _matter():
    system = jb.MultibodySystem()
    return jb.SimbodyMatterSubsystem(system).Ground()


def _pin_x(q, prm):
    return spatial.rot_z(q[0]), jnp.zeros(3)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(calc_x_fm=_pin_x, nq=1, nu=0), "nu must be in 1..6"),
        (dict(calc_x_fm=_pin_x, nq=8, nu=2), "nq must be in"),
        (dict(calc_x_fm=_pin_x, nq=1, nu=2), "nq must be in"),
        (dict(calc_x_fm=_pin_x, nq=1.0, nu=1), "nq must be an integer"),
        (dict(calc_x_fm=_pin_x, nq=1, nu=True), "nu must be an integer, got True"),
        (dict(calc_x_fm=_pin_x, nq=2, nu=2, n_angles=5), "n_angles must be in"),
        (dict(calc_x_fm=_pin_x, nq=4, nu=3, n_angles=4), "qdot = u .* needs nq == nu and no quaternion"),
        (dict(calc_x_fm=_pin_x, nq=2, nu=1), "qdot = u .* needs nq == nu"),
        (dict(calc_x_fm=_pin_x, nq=1, nu=1, multiply_by_n=_quat_n), "together"),
        (dict(calc_x_fm=None, nq=1, nu=1), "calc_x_fm must be a function"),
        (dict(calc_x_fm=lambda q, p: spatial.rot_z(q[0]), nq=1, nu=1), r"must return \(R_FM"),
        (dict(calc_x_fm=lambda q, p: (jnp.eye(2), jnp.zeros(3)), nq=1, nu=1), r"R_FM must return .* shape \(3, 3\)"),
        (dict(calc_x_fm=lambda q, p: (jnp.eye(3), jnp.zeros(2)), nq=1, nu=1), r"p_FM must return .* shape \(3,\)"),
        (dict(calc_x_fm=lambda q, p: (2 * jnp.eye(3), jnp.zeros(3)), nq=1, nu=1), "not a rotation"),
        (dict(calc_x_fm=lambda q, p: (jnp.eye(3), q @ jnp.ones(5)), nq=1, nu=1), "calc_x_fm failed on the default q"),
        (dict(calc_x_fm=_pin_x, nq=1, nu=1, calc_h_fm=lambda q, p: jnp.zeros((6, 2))), r"calc_h_fm must return .* \(6, 1\)"),
        (dict(calc_x_fm=_pin_x, nq=2, nu=1, multiply_by_n=lambda q, u: u, multiply_by_n_inv=lambda q, qd: qd[:1]),
         r"multiply_by_n must return .* \(2,\)"),
        (dict(calc_x_fm=_pin_x, nq=2, nu=1, multiply_by_n=lambda q, u: jnp.concatenate([u, u]),
              multiply_by_n_inv=lambda q, qd: 2 * qd[:1]), "multiply_by_n_inv.* != u"),
    ],
)
def test_custom_build_errors(kwargs, match):
    with pytest.raises(jb.InvalidArgument, match=match):
        MB.Custom(_matter(), jb.Transform(), jb.Body.Rigid(), jb.Transform(), **kwargs)


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        ((0, [_zero] * 6, [()] * 6), {}, "n_mobilities must be an integer in 1..6"),
        ((1, [_zero] * 5, [()] * 6), {}, "functions must be 6 callables"),
        ((1, [_zero] * 6, [()] * 5), {}, "coordinate_indices must have 6 entries"),
        ((1, [_first] + [_zero] * 5, [(1,)] + [()] * 5), {}, r"coordinate_indices\[0\] = \[1\]"),
        ((1, [lambda x: x] + [_zero] * 5, [(0,)] + [()] * 5), {}, r"functions\[0\] must return a scalar"),
        ((1, [_first] + [_zero] * 5, [(0,)] + [()] * 5), dict(rotation_axes=[[1, 0, 0], [2, 0, 0], [0, 0, 1]]),
         "rotation_axes 0 and 1 are parallel"),
        ((1, [_first] + [_zero] * 5, [(0,)] + [()] * 5), dict(translation_axes=[[1, 0, 0], [0, 1, 0], [0, -3, 0]]),
         "translation_axes 1 and 2 are parallel"),
        ((1, [_first] + [_zero] * 5, [(0,)] + [()] * 5), dict(translation_axes=[[1, 0, 0], [0, 1, 0], [0, 0, 0]]),
         "nonzero"),
    ],
)
def test_function_based_build_errors(args, kwargs, match):
    with pytest.raises(jb.InvalidArgument, match=match):
        MB.FunctionBased(_matter(), jb.Transform(), jb.Body.Rigid(), jb.Transform(), *args, name="fb", **kwargs)


@pytest.mark.parametrize("inner", [mob.Free(), mob.Free(euler=True), mob.Bushing(), mob.Pin(), mob.Gimbal()],
                         ids=["free", "free-euler", "bushing", "pin", "gimbal"])
def test_reversed_fits_reproduce_representable_targets(inner):
    """Reversed q/u fits (catalogue 1.0.2: the as-defined fits on reversed targets) round-trip X_FM and V_FM."""
    m = mob.Reversed(inner)
    rng = np.random.default_rng(3)
    k = 4
    q_true = jnp.asarray(np.stack([np.asarray(inner.default_q()) for _ in range(k)]))
    q_true = q_true + jnp.asarray(rng.uniform(-0.6, 0.6, q_true.shape))
    if inner.uses_quaternion:
        q_true = q_true.at[:, :4].set(q_true[:, :4] / jnp.linalg.norm(q_true[:, :4], axis=-1, keepdims=True))
    if getattr(inner, "euler", False):
        q_true = q_true.at[:, -1].set(0.0)
    params = jnp.zeros((k, m.n_params))
    R, p = m.calc_X_FM(q_true, params)
    q_start = jnp.asarray(np.stack([np.asarray(inner.default_q()) for _ in range(k)]))
    q_fit = m.q_fit_transform(q_start, R, p, params)
    R2, p2 = m.calc_X_FM(q_fit, params)
    np.testing.assert_allclose(np.asarray(R2), np.asarray(R), atol=1e-10)
    np.testing.assert_allclose(np.asarray(p2), np.asarray(p), atol=1e-10)
    u_true = jnp.asarray(rng.normal(size=(k, m.nu)))
    V = jnp.einsum("kij,kj->ki", m.calc_H_FM(q_true, params), u_true)
    u_fit = m.u_fit_velocity(q_true, jnp.zeros_like(u_true), V[:, :3], V[:, 3:], params)
    np.testing.assert_allclose(np.asarray(u_fit), np.asarray(u_true), atol=1e-9)
