"""WrapEllipsoid (jaxbody._dynamics.paths.wrap_ellipsoid) against OpenSim 4.6
(tests/paths/generate_ellipsoid_golden.py): arm26's TRIlong and BIClong, copies of them over every quadrant and with
the midpoint and axial methods, and MoBL_ARMS's ellipsoid paths, at 20 random states; the length's derivatives
against central differences; bad input."""

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
from jaxbody.errors import InvalidArgument

HERE = pathlib.Path(__file__).parent
MODELS = HERE.parent / "models" / "osim"
FILES = {"arm26": MODELS / "arm26.osim", "MoBL_ARMS": MODELS / "MoBL_ARMS.osim",
         "arm26_ellipsoid_variants": HERE / "golden" / "arm26_ellipsoid_variants.osim"}
GOLDEN = json.loads((HERE / "golden" / "osim_ellipsoid_paths.json").read_text())
#: OpenSim's numbers are reproduced operation by operation (its iterations replayed); what is left is round-off
#: (measured: 1e-15 m on BIClong).
TOL = 1e-9
#: OpenSim's moment arms on MoBL_ARMS (the issue's tolerance where OpenSim's wrap solver iterates).
ARM_TOL = 1e-6
@functools.lru_cache(maxsize=None)
def imported(name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        imp = jb.io.load_osim(FILES[name])
    return imp, imp.system.realize_topology(), [str(w.message) for w in caught]


def states(name):
    imp, model, _ = imported(name)
    g = GOLDEN[name]
    qi = np.array([imp.q_index(c) for c in g["coordinates"]])
    ui = np.array([imp.u_index(c) for c in g["coordinates"]])
    s0 = imp.default_state(model)
    q = jnp.stack([s0.q.at[qi].set(jnp.asarray(r)) for r in g["q"]])
    u = jnp.stack([s0.u.at[ui].set(jnp.asarray(r)) for r in g["u"]])
    return q, u, ui


@functools.lru_cache(maxsize=None)
def path_numbers(name, path_names, arms=True):
    """(L (k, m), speed (k, m)[, OpenSim's moment arms (k, m, n_coordinates)]) at the golden states, one jit,
    vmapped. Moment arms as OpenSim's MomentArmSolver (compute_moment_arm): the coupling vector of each golden
    coordinate (a u projection through MoBL_ARMS's CoordinateCouplerConstraints; e_j on arm26) against the
    generalized forces of a unit tension."""
    imp, model, _ = imported(name)
    q, u, ui = states(name)
    paths = [imp.paths[n] for n in path_names]

    def numbers(p, s, C):
        if not arms:
            return p.calc_length(model, s), p.calc_lengthening_speed(model, s)
        # length, speed and the unit tension's forces on one current path (Path.calc_forces_of_tension)
        F, f, (length, speed) = p.calc_forces_of_tension(model, s, lambda L, V: (1.0, (L, V)))
        return length, speed, C @ (jacobians.multiply_by_system_jacobian_transpose(model, s.position, F) + f)

    def one(q, u):
        s = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Velocity)
        C = jax.vmap(lambda j: calc_coupling_vector(model, s, j))(jnp.asarray(ui)) if arms else None
        return [jnp.stack(x) for x in zip(*[numbers(p, s, C) for p in paths])]

    return [np.asarray(x) for x in jax.jit(jax.vmap(one))(q, u)]


def errors(name, path_names, arms=True):
    """Max |jaxbody - OpenSim| over states and paths of (length, speed[, OpenSim's moment arms])."""
    g = GOLDEN[name]
    out = path_numbers(name, tuple(path_names), arms)
    err = np.zeros(len(out))
    for i, n in enumerate(path_names):
        want = g["paths"][n]
        err[0] = max(err[0], np.max(np.abs(out[0][:, i] - want["length"])))
        err[1] = max(err[1], np.max(np.abs(out[1][:, i] - want["speed"])))
        if arms:
            expected = np.zeros((len(want["length"]), len(g["coordinates"])))
            for c, values in want["moment_arms"].items():
                expected[:, g["coordinates"].index(c)] = values
            err[2] = max(err[2], np.max(np.abs(out[2][:, i] - expected)))
    return err


def test_arm26_biclong_matches_opensim():
    """BIClong: ellipsoid BIClonghh (quadrant -y, range 2 3, hybrid method) alone."""
    assert sorted(imported("arm26")[0].paths) == ["BIClong", "BICshort", "BRA", "TRIlat", "TRIlong", "TRImed"]
    assert not [w for w in imported("arm26")[2] if "not built" in w]
    err = errors("arm26", ["BIClong"])
    assert np.all(err < TOL), err


def test_arm26_trilong_matches_opensim():
    """TRIlong: cylinder TRI, ellipsoid TRIlonghh (quadrant z), cylinder TRIlongglen (quadrant x): OpenSim's
    multi-pass wrapping, with its cached Ground locations of tangent points moved by later passes (wrapping.py;
    without them 2.2-4.6 mm off at half the states), and its passes skipped once every lane has converged
    (fails when only the first pass runs)."""
    err = errors("arm26", ["TRIlong"])
    assert np.all(err < TOL), err


@pytest.mark.parametrize("names", [
    ["BIClong_midpoint", "BIClong_axial"],
    pytest.param(["BIClong_plus_x", "BIClong_minus_x", "BIClong_plus_y"], marks=pytest.mark.long),
    pytest.param(["TRIlong_midpoint", "TRIlong_axial", "TRIlong_all", "TRIlong_minus_z"], marks=pytest.mark.long)])
def test_ellipsoid_methods_and_quadrants_match_opensim(names):
    """Copies of BIClong and TRIlong with the midpoint and axial methods and over all, x, -x, y, -z."""
    err = errors("arm26_ellipsoid_variants", names, arms=False)
    assert np.all(err < TOL), err


def _mobl(at_most, more_than=0):
    imp, _, _ = imported("MoBL_ARMS")
    return [n for n in GOLDEN["MoBL_ARMS"]["paths"] if more_than < len(imp.paths[n].wraps) <= at_most]


def test_mobl_arms_imports_ellipsoid_paths():
    """Every MoBL_ARMS path is built, the ellipsoid ones and (since WrapTorus) all others."""
    imp, _, caught = imported("MoBL_ARMS")
    assert all(n in imp.paths for n in GOLDEN["MoBL_ARMS"]["paths"])
    assert not [w for w in caught if "not built" in w]


@pytest.mark.long
def test_mobl_arms_single_ellipsoid_paths_match_opensim():
    """MoBL_ARMS's paths over one ellipsoid alone (SUPSP, SUBSC, BICshort, ANC, BRD, PT): length and speed, and
    OpenSim's moment arms about every coordinate (coupled ones through MomentArmSolver's projection)."""
    names = _mobl(1)
    assert len(names) == 6
    err = errors("MoBL_ARMS", names)
    assert np.all(err[:2] < TOL) and err[2] < ARM_TOL, err


@pytest.mark.long
@pytest.mark.parametrize("group", [slice(0, 7), slice(7, 14), slice(14, None)])
def test_mobl_arms_multi_wrap_ellipsoid_paths_match_opensim(group):
    """The other 20 MoBL_ARMS ellipsoid paths (ellipsoids with cylinders and spheres, OpenSim's multi-pass
    wrapping and its 0.5 mm convergence rule), in three compiles: length and speed, and OpenSim's moment arms
    about every coordinate (the coupled ones through the CoordinateCouplerConstraints, MomentArmSolver's
    projection; 1e-6, OpenSim's ellipsoid solver being iterative)."""
    names = sorted(_mobl(4, more_than=1))
    assert len(names) == 20
    err = errors("MoBL_ARMS", names[group])
    assert np.all(err[:2] < TOL) and err[2] < ARM_TOL, err


@pytest.mark.long  # ~26 s of compile on 2 cores; test_ellipsoid_dimensions_are_differentiable_leaves keeps a gradient check in CI
def test_ellipsoid_length_gradient_matches_central_differences():
    """-dL/dq of BIClong by autodiff (reverse mode, and forward mode along one coordinate) through the ellipsoid
    wrap equals central differences, at three golden states, one jit. (It is not OpenSim's moment arm, computed from
    the tangent points' motion: OpenSim's wrapping plane and polyline are not the shortest path; measured up to
    5.6e-2 m apart at golden state 6, 1e-5..4e-4 m at the others.)"""
    imp, model, _ = imported("arm26")
    q, _, ui = states("arm26")
    h = 1e-7
    steps = jnp.concatenate([jnp.zeros((1, q.shape[1])), h * jnp.eye(q.shape[1])[ui], -h * jnp.eye(q.shape[1])[ui]])

    def length(q):
        s = model.realize(model.default_state().set_q(q), jb.Stage.Position)
        return imp.paths["BIClong"].calc_length(model, s)

    def numbers(q):
        L, g = jax.vmap(jax.value_and_grad(length))(q + steps)
        _, t = jax.jvp(length, (q,), (jnp.zeros_like(q).at[ui[1]].set(1.0),))
        return L, g[0], t

    L, g, t = jax.jit(jax.vmap(numbers))(q[:3])
    n = len(ui)
    fd = (L[:, 1:n + 1] - L[:, n + 1:]) / (2 * h)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g[:, ui], fd, rtol=0, atol=1e-6)
    np.testing.assert_allclose(t, g[:, ui[1]], rtol=0, atol=1e-10)


def test_ellipsoid_dimensions_are_differentiable_leaves():
    """d(length)/d(ellipsoid dimensions) by autodiff equals central differences, one jit vmapped over dimensions."""
    imp, model, _ = imported("arm26")
    q, _, _ = states("arm26")
    s = model.realize(model.default_state().set_q(q[0]), jb.Stage.Position)
    path = imp.paths["BIClong"]
    where = lambda p: p.wraps[0].wrap.dimensions  # noqa: E731
    dims = where(path)
    h = 1e-7
    batch = jnp.concatenate([dims[None], dims + h * jnp.eye(3), dims - h * jnp.eye(3),
                             dims[None] * jnp.linspace(0.9, 1.1, 5)[:, None]])
    L, g = jax.jit(jax.vmap(jax.value_and_grad(lambda d: eqx.tree_at(where, path, d).calc_length(model, s))))(batch)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(L)) and np.any(g[0] != 0)
    np.testing.assert_allclose(g[0], (L[1:4] - L[4:7]) / (2 * h), rtol=0, atol=1e-5)
    assert abs(L[9] - L[0]) < 1e-12 and len(set(np.asarray(L[7:]).tolist())) == 5


@pytest.mark.parametrize("edit, message", [
    (("<dimensions>0.025000000000000001 0.02 0.02</dimensions>", "<dimensions>0.025 -0.02 0.02</dimensions>"),
     "WrapEllipsoid 'BIClonghh'.*dimensions must be positive"),
    (("<method>hybrid</method>", "<method>spline</method>"), "unknown wrap method 'spline'"),
])
def test_bad_ellipsoid_input_raises(tmp_path, edit, message):
    text = (MODELS / "arm26.osim").read_text()
    assert edit[0] in text
    bad = tmp_path / "bad.osim"
    bad.write_text(text.replace(edit[0], edit[1], 1))
    with pytest.raises(InvalidArgument, match=message):
        jb.io.load_osim(bad)
