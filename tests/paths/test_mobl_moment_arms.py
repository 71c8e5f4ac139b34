"""OpenSim's computeMomentArm on MoBL_ARMS about every coordinate, the coupled ones too: 13
CoordinateCouplerConstraints make the shoulder girdle's 10 coordinates follow shoulder_elv, shoulder1_r2 follow
elv_angle and the wrist rows follow deviation and flexion, and OpenSim's MomentArmSolver projects a unit speed
of the coordinate through them (jaxbody._api.path_moment_arms). Against OpenSim 4.6 (tests/paths/
generate_path_golden.py, every path at 3 states) to 1e-9: the coupling vectors, and the paths over path points,
spheres and cylinders. The ellipsoid and torus paths' moment arms (1e-6) are checked beside their lengths in
tests/paths/test_wrap_ellipsoid.py and test_wrap_torus.py."""

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
from jaxbody._api.path_moment_arms import calc_coupling_vector, calc_unit_tension_generalized_forces
from jaxbody._dynamics.paths.wrap_ellipsoid import WrapEllipsoid
from jaxbody._dynamics.paths.wrap_torus import WrapTorus

HERE = pathlib.Path(__file__).parent
MOBL = HERE.parent / "models" / "osim" / "MoBL_ARMS.osim"
EXACT_TOL = 1e-9


@functools.lru_cache(maxsize=None)
def imported():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imp = jb.io.load_osim(MOBL)
    return imp, imp.system.realize_topology()


@functools.lru_cache(maxsize=None)
def golden():
    """(coordinate names, q (k, nq) in jaxbody's State, {path: OpenSim's moment arms (k, n_coordinates)})."""
    g = json.loads((HERE / "golden" / "osim_paths.json").read_text())["MoBL_ARMS"]
    coords = g["coordinates"]
    arms = {n: np.array([r["paths"][n]["moment_arms"] for r in g["states"]]) for n in g["wrapped"]}
    imp, model = imported()
    qi = np.array([imp.q_index(c) for c in coords])
    s0 = imp.default_state(model)
    return coords, jnp.stack([s0.q.at[qi].set(jnp.asarray(r["q"])) for r in g["states"]]), arms


def u_indices(coords):
    imp, _ = imported()
    return jnp.asarray([imp.u_index(c) for c in coords])


def max_error(names):
    """Max |jaxbody - OpenSim| of the moment arms of ``names`` about every coordinate at the golden states, one jit
    vmapped over them: the coupling vectors (vmapped over coordinates) against each path's unit-tension forces."""
    imp, model = imported()
    coords, q, want = golden()
    ui = u_indices(coords)

    def one(q):
        s = model.realize(model.default_state().set_q(q), jb.Stage.Position)
        C = jax.vmap(lambda j: calc_coupling_vector(model, s, j))(ui)
        return jnp.stack([C @ calc_unit_tension_generalized_forces(model, s, imp.paths[n]) for n in names])

    got = np.asarray(jax.jit(jax.vmap(one))(q))
    return max(np.max(np.abs(got[:, i] - want[n])) for i, n in enumerate(names))


def _wrap_kinds(name):
    return {type(pw.wrap) for pw in imported()[0].paths[name].wraps}


def test_coupled_and_unwrapped_moment_arms_match_opensim():
    """At 3 golden states, one jit:

    * the coupling vector of each coordinate satisfies the velocity constraints (an independent check of the
      projection: zero velocity errors at u = c), is 1 at the coordinate, and lights up exactly what its coupler
      ties to it: shoulder_elv's 10 girdle coordinates, elv_angle's shoulder1_r2, deviation's wrist_hand_r1,
      flexion's wrist_hand_r3 (and a dependent coordinate pulls its independent one along);
    * BRA's and APL's (path points only) moment arms about all 20 coordinates, through compute_moment_arm itself
      (vmapped over coordinates), equal OpenSim's; for BRA also the route through the exact moment arms
      (calc_moment_arms, -dL/du). Not for APL: its MovingPathPoint on the hand (a function of flexion) is
      followed by a point on the same body, a segment OpenSim's forces leave out (measured 1e-2 m off about
      flexion and wrist_hand_r3)."""
    imp, model = imported()
    coords, q, want = golden()
    ui = u_indices(coords)
    names = ("BRA", "APL")

    def one(q):
        s = model.realize(model.default_state().set_q(q), jb.Stage.Position)
        C = jax.vmap(lambda j: calc_coupling_vector(model, s, j))(ui)
        errors = jax.vmap(lambda c: model.get_u_err(model.realize(s.set_u(c), jb.Stage.Velocity)))(C)
        arms = jnp.stack([jax.vmap(lambda j: jb.compute_moment_arm(model, s, imp.paths[n], j))(ui) for n in names])
        return C[:, ui], errors, arms, C @ imp.paths["BRA"].calc_moment_arms(model, s)

    C, errors, arms, exact = [np.asarray(x) for x in jax.jit(jax.vmap(one))(q)]
    assert np.max(np.abs(errors)) < 1e-12
    np.testing.assert_allclose(np.diagonal(C, axis1=1, axis2=2), 1.0, rtol=0, atol=1e-15)
    lit = {coords[j]: {coords[i] for i in np.nonzero(np.max(np.abs(C[:, j]), 0) > 1e-12)[0]} - {coords[j]}
           for j in range(len(coords))}
    assert lit["shoulder_elv"] == set(coords[:10])
    assert lit["elv_angle"] == {"shoulder1_r2"} and lit["deviation"] == {"wrist_hand_r1"}
    assert lit["flexion"] == {"wrist_hand_r3"}
    assert all(lit[c] == set() for c in ("shoulder_rot", "elbow_flexion", "pro_sup"))
    assert "shoulder_elv" in lit["sternoclavicular_r2"] and "flexion" in lit["wrist_hand_r3"]
    for i, n in enumerate(names):
        assert np.all(np.any(want[n][:, :10] != 0, axis=0))  # the coupled girdle coordinates carry arms
        np.testing.assert_allclose(arms[:, i], want[n], rtol=0, atol=EXACT_TOL, err_msg=n)
    np.testing.assert_allclose(exact, want["BRA"], rtol=0, atol=EXACT_TOL, err_msg="-dL/du route, BRA")


@pytest.mark.long
def test_sphere_and_cylinder_moment_arms_match_opensim():
    """Every path over spheres and cylinders only (11; OpenSim's multi-pass wrapping for up to three objects)."""
    names = [n for n, p in imported()[0].paths.items() if p.wraps and not _wrap_kinds(n) & {WrapEllipsoid, WrapTorus}]
    assert len(names) == 11
    assert max_error(names) < EXACT_TOL
