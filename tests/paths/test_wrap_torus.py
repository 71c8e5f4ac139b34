"""WrapTorus (jaxbody._dynamics.paths.wrap_torus, lmdif_1d) against OpenSim 4.6 (tests/paths/generate_torus_golden.py):
MoBL_ARMS's torus paths at 20 random states; the closest-point search against its own stopping condition; the
length's derivatives (in the segment's end points, in the radii, in q) against central differences; bad input."""

from __future__ import annotations

import functools
import json
import pathlib
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody._api.path_moment_arms import calc_coupling_vector
from jaxbody._dynamics import jacobians
from jaxbody._dynamics.paths import lmdif_1d
from jaxbody._dynamics.paths import wrap_math as wm
from jaxbody._dynamics.paths.wrap_torus import WrapTorus, circle_parameter, circle_residual, closest_circle_point
from jaxbody.errors import InvalidArgument

HERE = pathlib.Path(__file__).parent
MOBL = HERE.parent / "models" / "osim" / "MoBL_ARMS.osim"
GOLDEN = json.loads((HERE / "golden" / "osim_torus_paths.json").read_text())["MoBL_ARMS"]
#: OpenSim's lmdif is replayed step by step, so what is left is round-off (measured 8e-16 m on ECRB, ECU).
TOL = 1e-9
#: OpenSim's moment arms (the issue's tolerance where OpenSim's wrap solver iterates).
ARM_TOL = 1e-6


def _torus(inner=0.01, outer=0.03, quadrant=(0, 0)):
    return WrapTorus(body=1, R_BW=jnp.eye(3), p_BW=jnp.zeros(3), quadrant=quadrant, active=True, name="t",
                     inner_radius=jnp.asarray(inner), outer_radius=jnp.asarray(outer))


def _segments(n=64, seed=0):
    """n segments from above the torus (z in 0.05..0.1) to below it, ends within 4 cm of its axis."""
    rng = np.random.default_rng(seed)
    p1 = np.c_[rng.uniform(-0.04, 0.04, (n, 2)), rng.uniform(0.05, 0.1, n)]
    p2 = np.c_[rng.uniform(-0.04, 0.04, (n, 2)), rng.uniform(-0.1, -0.05, n)]
    return jnp.asarray(p1), jnp.asarray(p2)


@functools.lru_cache(maxsize=None)
def _wraps(quadrant=(0, 0), grads=True):
    """(code, r1, r2, length) of the 64 segments and (when ``grads``) d(length)/d(p1, p2, inner, outer), one jit."""
    p1, p2 = _segments()

    def one(a, b, radii):
        return _torus(radii[0], radii[1], quadrant).wrap_line(a, b, True)

    def numbers(a, b):
        line = one(a, b, jnp.asarray([0.01, 0.03]))
        if not grads:
            return line, ()
        return line, jax.grad(lambda a, b, r: one(a, b, r).length, argnums=(0, 1, 2))(a, b, jnp.asarray([0.01, 0.03]))

    return jax.jit(jax.vmap(numbers))(p1, p2)


def test_closest_point_search_stops_where_lmdif_does():
    """lmdif_1d.solve finishes within its STEPS on every segment, at a stationary point of the squared residual
    (a root, or for lines near the torus axis close to the minimum of |residual|), and at the roots the implicit
    derivative of the line parameter equals central differences of the search."""
    p1, p2 = _segments()
    x = jnp.concatenate([p1, p2, jnp.full((p1.shape[0], 1), 0.03)], axis=1)

    def search(x):
        return lmdif_1d.solve(lambda u: circle_residual(u, x), jnp.zeros((), x.dtype), 1e-4, 1e-4, 0.2, 500)

    h = 1e-6
    steps = jnp.concatenate([h * jnp.eye(7), -h * jnp.eye(7)])

    def numbers(x):
        u, done = search(x)
        slope = jax.grad(circle_residual)(u, x)
        shifted = jax.vmap(lambda d: search(x + d)[0])(steps)
        fd = (shifted[:7] - shifted[7:]) / (2 * h)
        return u, done, circle_residual(u, x), slope, jax.jacfwd(circle_parameter)(x), fd

    u, done, res, slope, J, fd = jax.jit(jax.vmap(numbers))(x)
    assert bool(jnp.all(done))
    roots = np.abs(np.asarray(res)) < 1e-9
    # off the roots lmdif stops near the minimum of |residual| (slope ~0 against its usual ~2; linear convergence)
    assert roots.sum() >= 55 and np.all(np.abs(np.asarray(slope))[~roots] < 2e-3)
    np.testing.assert_allclose(J[roots], fd[roots], rtol=0, atol=1e-6)


def test_torus_wrap_geometry():
    """Segments through the hole wrap (WRAPPED, never MANDATORY: OpenSim's torus lets every segment compete):
    the tangent points lie at the inner radius from the tube's local axis (the circle's tangent at the closest
    circle point c), on the hole's side of it, and the path over them is longer than the straight segment."""
    (code, r1, r2, length), _ = _wraps()
    p1, p2 = _segments()
    _, c = jax.jit(jax.vmap(lambda a, b: closest_circle_point(a, b, jnp.asarray(0.03), (0, 0))))(p1, p2)
    code, c = np.asarray(code), np.asarray(c)
    assert set(code.tolist()) == {wm.NO_WRAP, wm.WRAPPED} and (code == wm.WRAPPED).sum() >= 30
    w = code == wm.WRAPPED
    outward = c / np.linalg.norm(c, axis=1, keepdims=True)
    tangent = np.cross(outward, [0.0, 0.0, 1.0])
    for r in (np.asarray(r1), np.asarray(r2)):
        d = r - c
        radial = d - np.sum(d * tangent, axis=1, keepdims=True) * tangent
        np.testing.assert_allclose(np.linalg.norm(radial, axis=1)[w], 0.01, rtol=0, atol=1e-12)
        assert np.all(np.sum(radial * outward, axis=1)[w] < 0)
    wrapped = np.linalg.norm(p1 - r1, axis=1) + length + np.linalg.norm(p2 - r2, axis=1)
    assert np.all(wrapped[w] > np.linalg.norm(p1 - p2, axis=1)[w]) and np.all(np.asarray(length)[~w] == 0)


def test_torus_length_gradients_match_central_differences():
    """d(length)/d(p1, p2) and d/d(inner_radius, outer_radius) (Model leaves) by reverse mode equal central
    differences, on the wrapped segments."""
    (code, _, _, _), (g1, g2, gr) = _wraps()
    p1, p2 = _segments()
    h = 1e-7
    w = np.nonzero(np.asarray(code) == wm.WRAPPED)[0][:12]
    eye7 = jnp.eye(8)

    def length(v):
        return _torus(v[6], v[7]).wrap_line(v[:3], v[3:6], True).length

    v = jnp.concatenate([p1[w], p2[w], jnp.tile(jnp.asarray([0.01, 0.03]), (len(w), 1))], axis=1)
    shifted = jax.jit(jax.vmap(lambda v: jax.vmap(length)(jnp.concatenate([v + h * eye7, v - h * eye7]))))(v)
    fd = (shifted[:, :8] - shifted[:, 8:]) / (2 * h)
    ad = np.concatenate([np.asarray(g1)[w], np.asarray(g2)[w], np.asarray(gr)[w]], axis=1)
    assert np.all(np.isfinite(ad)) and np.any(ad[:, 6:] != 0)
    np.testing.assert_allclose(ad, fd, rtol=0, atol=1e-6)


def test_quadrant_keeps_the_closest_point_on_its_side():
    """With quadrant -y the circle point comes from a pass whose line point has y < 0, the nearer of two such;
    with neither, no wrap. Without a quadrant it is the nearer pass's."""
    p1, p2 = _segments()
    r = jnp.asarray(0.03)
    found, c = jax.jit(jax.vmap(lambda a, b: closest_circle_point(a, b, r, (1, -1))))(p1, p2)
    _, c_all = jax.jit(jax.vmap(lambda a, b: closest_circle_point(a, b, r, (0, 0))))(p1, p2)
    found, c, c_all = np.asarray(found), np.asarray(c), np.asarray(c_all)
    assert 0 < found.sum() < len(found) and np.allclose(np.hypot(c[:, 0], c[:, 1])[found], 0.03, rtol=0, atol=1e-15)
    assert np.all(c[found, 1] < 0) and np.all(c[found, 2] == 0)
    same = c_all[:, 1] < 0
    np.testing.assert_allclose(c[found & same], c_all[found & same], rtol=0, atol=1e-15)
    (code, *_), _ = _wraps((1, -1), grads=False)
    assert np.all(np.asarray(code)[~found] == wm.NO_WRAP)


@functools.lru_cache(maxsize=None)
def _mobl():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        imp = jb.io.load_osim(MOBL)
    return imp, imp.system.realize_topology(), [str(w.message) for w in caught]


def _states():
    imp, model, _ = _mobl()
    qi = np.array([imp.q_index(c) for c in GOLDEN["coordinates"]])
    ui = np.array([imp.u_index(c) for c in GOLDEN["coordinates"]])
    s0 = imp.default_state(model)
    q = jnp.stack([s0.q.at[qi].set(jnp.asarray(r)) for r in GOLDEN["q"]])
    u = jnp.stack([s0.u.at[ui].set(jnp.asarray(r)) for r in GOLDEN["u"]])
    return q, u


def _errors(names):
    """Max |jaxbody - OpenSim| of (length, speed, moment arms about every coordinate) over the golden states and
    ``names``, one jit, vmapped. Moment arms as OpenSim's MomentArmSolver: each coordinate's coupling vector (a
    u projection through MoBL_ARMS's CoordinateCouplerConstraints) against the unit-tension generalized forces."""
    imp, model, _ = _mobl()
    q, u = _states()
    ui = jnp.asarray([imp.u_index(c) for c in GOLDEN["coordinates"]])

    def numbers(p, s, C):  # length, speed and the unit tension's forces on one current path
        F, f, (length, speed) = p.calc_forces_of_tension(model, s, lambda L, V: (1.0, (L, V)))
        return length, speed, C @ (jacobians.multiply_by_system_jacobian_transpose(model, s.position, F) + f)

    def one(q, u):
        s = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Velocity)
        C = jax.vmap(lambda j: calc_coupling_vector(model, s, j))(ui)
        return [jnp.stack(x) for x in zip(*[numbers(imp.paths[n], s, C) for n in names])]

    L, V, A = jax.jit(jax.vmap(one))(q, u)
    want = lambda key: np.array([GOLDEN["paths"][n][key] for n in names]).T  # noqa: E731
    arms = np.zeros(A.shape)
    for i, n in enumerate(names):
        for c, values in GOLDEN["paths"][n]["moment_arms"].items():  # the others are 0 to the last bit
            arms[:, i, GOLDEN["coordinates"].index(c)] = values
    return (np.max(np.abs(np.asarray(L) - want("length"))), np.max(np.abs(np.asarray(V) - want("speed"))),
            np.max(np.abs(np.asarray(A) - arms)))


def test_mobl_arms_imports_every_path():
    """All 50 MoBL_ARMS paths are built (11 wrap a WrapTorus); no path is left out."""
    imp, _, caught = _mobl()
    assert len(imp.paths) == 50 and all(n in imp.paths for n in GOLDEN["paths"])
    assert not [w for w in caught if "not built" in w]
    assert sum(isinstance(pw.wrap, WrapTorus) for n in GOLDEN["paths"] for pw in imp.paths[n].wraps) == 11


@pytest.mark.long
def test_mobl_single_torus_paths_match_opensim():
    """ECRB and ECU (one WrapTorus each): length, lengthening speed and OpenSim's moment arms about every
    coordinate (the coupled wrist rows through MomentArmSolver's projection) at 20 states."""
    err = _errors(["ECRB", "ECU"])
    assert err[0] < TOL and err[1] < TOL and err[2] < ARM_TOL, err


@pytest.mark.parametrize("inner, message", [
    ("0.02", r"WrapTorus 'ECU'.*needs 0 < inner_radius < outer_radius, got inner 0.02"),
    ("-0.01", r"WrapTorus 'ECU'.*got inner -0.01"),
])
def test_bad_torus_input_raises(tmp_path, inner, message):
    """OpenSim's checks (WrapTorus::extendFinalizeFromProperties): radii positive, outer larger than inner."""
    text = MOBL.read_text()
    original = "<inner_radius>0.0060000000000000001</inner_radius>"  # ECU's
    assert text.count(original) == 1
    bad = tmp_path / "bad.osim"
    bad.write_text(text.replace(original, f"<inner_radius>{inner}</inner_radius>"))
    with pytest.raises(InvalidArgument, match=message):
        jb.io.load_osim(bad)


def test_radii_are_model_leaves():
    """inner_radius and outer_radius are array leaves (sweepable under vmap, differentiable)."""
    t = _torus()
    leaves = jax.tree_util.tree_leaves(t)
    assert any(leaf is t.inner_radius for leaf in leaves) and any(leaf is t.outer_radius for leaf in leaves)
    moved = eqx.tree_at(lambda w: w.outer_radius, t, jnp.asarray(0.04))
    assert float(moved.outer_radius) == 0.04


@pytest.mark.long
def test_mobl_torus_length_gradient_matches_central_differences():
    """-dL/dq of ECU (one WrapTorus) by reverse mode equals central differences of the length at three golden
    states (the coordinates ECU crosses), one jit."""
    imp, model, _ = _mobl()
    q, _ = _states()
    qi = jnp.asarray([imp.q_index(c) for c in ("elbow_flexion", "pro_sup", "deviation", "flexion")])
    h = 1e-7
    steps = jnp.concatenate([jnp.zeros((1, q.shape[1])), h * jnp.eye(q.shape[1])[qi], -h * jnp.eye(q.shape[1])[qi]])

    def length(q):
        s = model.realize(model.default_state().set_q(q), jb.Stage.Position)
        return imp.paths["ECU"].calc_length(model, s)

    L, g = jax.jit(jax.vmap(jax.vmap(jax.value_and_grad(length))))(q[:3, None, :] + steps[None])
    n = len(qi)
    fd = (L[:, 1:n + 1] - L[:, n + 1:]) / (2 * h)
    assert np.all(np.isfinite(g)) and np.any(np.asarray(g[:, 0][:, qi]) != 0)
    np.testing.assert_allclose(g[:, 0][:, qi], fd, rtol=0, atol=1e-6)


@pytest.mark.long
@pytest.mark.parametrize("names", [["EDCL", "EDCI"], ["INFSP", "FCU"], ["DELT3", "ECRL", "FCR"], ["EDCR", "EDCM"]])
def test_mobl_multi_wrap_torus_paths_match_opensim(names):
    """Torus paths with cylinders (EDCL, EDCI, EDCR, EDCM: the torus then three -y cylinders on the fingers), with
    an ellipsoid (INFSP, FCU, ECRL, FCR) and with an ellipsoid and a sphere (DELT3): OpenSim's multi-pass
    wrapping. Length, speed and moment arms about every coordinate at 20 states."""
    err = _errors(names)
    assert err[0] < TOL and err[1] < TOL and err[2] < ARM_TOL, err
