"""Every force path of the OpenSim test models against OpenSim 4.6 (tests/paths/generate_path_golden.py): length
(``getLength``), lengthening speed (``getLengtheningSpeed``) and moment arms (``computeMomentArm``) about every
coordinate, at random states within the coordinate ranges."""

from __future__ import annotations

import functools
import json
import pathlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody._api.path_moment_arms import compute_moment_arm
from jaxbody._dynamics import jacobians
from jaxbody._dynamics.paths.wrap_ellipsoid import WrapEllipsoid

HERE = pathlib.Path(__file__).parent
MODELS = HERE.parent / "models" / "osim"
GOLDEN = json.loads((HERE / "golden" / "osim_paths.json").read_text())


@functools.lru_cache(maxsize=None)
def imported(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imp = jb.io.load_osim(MODELS / f"{name}.osim")
    return imp, imp.system.realize_topology()


def golden_states(name):
    """(q (k, nq), u (k, nu), golden record) of the model's golden states, coordinates placed in jaxbody's State."""
    imp, model = imported(name)
    g = GOLDEN[name]
    qi = np.array([imp.q_index(c) for c in g["coordinates"]])
    ui = np.array([imp.u_index(c) for c in g["coordinates"]])
    s0 = imp.default_state(model)
    q = jnp.stack([s0.q.at[qi].set(jnp.asarray(r["q"])) for r in g["states"]])
    u = jnp.stack([s0.u.at[ui].set(jnp.asarray(r["u"])) for r in g["states"]])
    return q, u, ui, g


def path_numbers(name, path_names, exact=True):
    """(L (k, m), speed (k, m), OpenSim's moment arms (k, m, nu) (generalized forces of a unit tension), and
    -dL/du (k, m, nu) when ``exact``) of the named paths at the golden states, one jit, vmapped."""
    imp, model = imported(name)
    q, u, _, _ = golden_states(name)
    paths = [imp.paths[n] for n in path_names]

    def numbers(p, s):  # length, speed and forces on one current path (Path.calc_forces_of_tension)
        F, f, (length, speed) = p.calc_forces_of_tension(model, s, lambda L, V: (1.0, (L, V)))
        opensim = jacobians.multiply_by_system_jacobian_transpose(model, s.position, F) + f
        return (length, speed, opensim) + ((p.calc_moment_arms(model, s),) if exact else ())

    def one(q, u):
        s = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Velocity)
        return [jnp.stack(x) for x in zip(*[numbers(p, s) for p in paths])]

    return jax.jit(jax.vmap(one))(q, u)


def _check(name, path_names, tol, exact_tol=None):
    """Length, speed and OpenSim's moment arms to ``tol``; -dL/du to ``exact_tol`` (default ``tol``)."""
    _, _, ui, g = golden_states(name)
    L, V, R, X = path_numbers(name, path_names)
    for k, record in enumerate(g["states"]):
        for i, n in enumerate(path_names):
            want = record["paths"][n]
            assert abs(L[k, i] - want["length"]) < tol, (n, k, float(L[k, i]), want["length"])
            assert abs(V[k, i] - want["speed"]) < tol, (n, k, float(V[k, i]), want["speed"])
            np.testing.assert_allclose(R[k, i][ui], want["moment_arms"], rtol=0, atol=tol, err_msg=f"{n} state {k}")
            np.testing.assert_allclose(X[k, i][ui], want["moment_arms"], rtol=0, atol=exact_tol or tol,
                                       err_msg=f"-dL/du of {n} state {k}")


def unwrapped(name):
    return [n for n, w in GOLDEN[name]["wrapped"].items() if not w]


def test_gait9dof18musc_conditional_and_moving_paths_match_opensim():
    """The right leg's muscles with ConditionalPathPoints or MovingPathPoints (SimmSpline locations)."""
    imp, _ = imported("gait9dof18musc")
    names = [n for n in unwrapped("gait9dof18musc") if n.endswith("_r") and
             (any(imp.paths[n].points.moving) or max(imp.paths[n].points.condition_q) >= 0)]
    assert len(names) >= 3
    _check("gait9dof18musc", names, 1e-12)


@pytest.mark.long
def test_gait9dof18musc_paths_match_opensim():
    """All 18 muscles."""
    _check("gait9dof18musc", unwrapped("gait9dof18musc"), 1e-12)


def test_arm26_cylinder_wrapped_paths_match_opensim():
    """TRIlat, TRImed (cylinder TRI, quadrant all) and BRA; OpenSim's cylinder tangent points are its own
    approximation of the shortest path, so -dL/du differs from its moment arms by up to ~1e-4 m."""
    assert sorted(imported("arm26")[0].paths) == ["BIClong", "BICshort", "BRA", "TRIlat", "TRIlong", "TRImed"]
    _check("arm26", ["TRIlat", "BRA", "BICshort"], 1e-12, exact_tol=2e-4)


@pytest.mark.long
def test_gait14dof22musc_paths_match_opensim():
    _check("gait14dof22musc", unwrapped("gait14dof22musc"), 1e-12)


def test_compute_moment_arm_as_opensim():
    """OpenSim's MomentArmSolver route (u projected onto the constraints; a locked coordinate unlocked first)."""
    name = "gait9dof18musc"
    imp, model = imported(name)
    q, _, ui, g = golden_states(name)
    path = imp.paths["rect_fem_r"]
    state = imp.default_state(model).set_q(q[0])
    for c in ("knee_angle_r", "hip_flexion_r", "lumbar_extension"):
        j = g["coordinates"].index(c)
        unlocked = [list(imp.constraints).index(f"{c}/locked")] if f"{c}/locked" in imp.constraints else []
        arm = compute_moment_arm(model, state, path, int(ui[j]), unlocked)
        assert abs(arm - g["states"][0]["paths"]["rect_fem_r"]["moment_arms"][j]) < 1e-12, c


def test_wrapped_length_gradient_matches_central_differences():
    """-dL/du by autodiff through the cylinder wrap (TRIlat) equals central differences of the length."""
    imp, model = imported("arm26")
    q, _, ui, g = golden_states("arm26")
    path = imp.paths["TRIlat"]

    @jax.jit
    def length_and_arms(q):
        s = model.realize(model.default_state().set_q(q), jb.Stage.Position)
        return path.calc_length(model, s), path.calc_moment_arms(model, s)

    h = 1e-7
    for k in range(q.shape[0]):
        _, arms = length_and_arms(q[k])
        for j in ui:
            e = jnp.zeros_like(q[k]).at[j].set(h)
            fd = (length_and_arms(q[k] + e)[0] - length_and_arms(q[k] - e)[0]) / (2 * h)
            assert abs(arms[j] + fd) < 1e-7, (k, j, float(arms[j]), float(-fd))


def _mobl_wrapped(at_most, more_than=0):
    """MoBL_ARMS's paths over spheres and cylinders only (ellipsoid paths: tests/paths/test_wrap_ellipsoid.py)."""
    imp, _ = imported("MoBL_ARMS")
    return [n for n, w in GOLDEN["MoBL_ARMS"]["wrapped"].items()
            if w and n in imp.paths and more_than < len(imp.paths[n].wraps) <= at_most
            and not any(isinstance(pw.wrap, WrapEllipsoid) for pw in imp.paths[n].wraps)]


def _check_lengths_and_speeds(name, names):
    L, V, _ = path_numbers(name, names, exact=False)
    for k, record in enumerate(GOLDEN[name]["states"]):
        for i, n in enumerate(names):
            assert abs(L[k, i] - record["paths"][n]["length"]) < 1e-12, (n, k, float(L[k, i]), record["paths"][n]["length"])
            assert abs(V[k, i] - record["paths"][n]["speed"]) < 1e-12, (n, k)


@pytest.mark.long
def test_mobl_arms_sphere_and_cylinder_paths_match_opensim():
    """MoBL_ARMS's paths over at most two spheres or cylinders (OpenSim's multi-pass wrapping): length and
    lengthening speed (their moment arms about every coordinate: tests/paths/test_mobl_moment_arms.py)."""
    _check_lengths_and_speeds("MoBL_ARMS", _mobl_wrapped(2))


@pytest.mark.long
def test_mobl_arms_three_wrap_paths_match_opensim():
    """TMAJ, LAT1, LAT2, LAT3 (cylinder, cylinder, sphere): length and speed to 1e-12. (LAT1 at golden state 0 was
    3.4e-4 m off before OpenSim's cached Ground locations of tangent points were reproduced, wrapping.WrapCache.)"""
    _check_lengths_and_speeds("MoBL_ARMS", _mobl_wrapped(4, more_than=2))
