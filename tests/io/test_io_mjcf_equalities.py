"""MJCF equalities by site and by fixed tendon, imported as exact constraints, against MuJoCo 4.0.

Model: tests/models/site_tendon_equalities.xml (site connect closing a loop, site weld with torquescale 2
holding a free body, a fixed-tendon polynomial coupling ``L1 - L1_0 - poly(L2 - L2_0)`` and a single-tendon
equality). Reference: tests/io/golden/mujoco_site_tendon_equalities.npz from
tests/io/generate_mjcf_equality_golden.py (no MuJoCo call here; MuJoCo is needed only because load_mjcf
compiles the file with it). Coordinates map as in jaxbody.io.mjcf: qvel = T u, qacc = T udot.

At MuJoCo-assembled states (MuJoCo's own equality rows driven to 1e-14, velocities in their null space):
jaxbody's residuals vanish, the row space of each constraint's P equals that of MuJoCo's efc_J rows
(projectors compared), and jaxbody's constrained udot equals the exact-constraint solve of
``M qacc + qfrc_bias = tau + J^T lambda``, ``J qacc + Jdot qvel = 0`` built from MuJoCo's mj_fullM,
qfrc_bias, efc_J and its drift. At random (inconsistent) states the residuals that both define alike agree.
"""

import functools
import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close

import jaxbody as jb

pytest.importorskip("mujoco", reason="load_mjcf parses with MuJoCo's compiler (extra jaxbody[io])")
from test_io_mjcf import coordinate_map  # noqa: E402  (same directory; the documented coordinate map)

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "models", "site_tendon_equalities.xml")


def projector(A):
    """Orthogonal projector onto the row space of A (rows, n)."""
    return np.linalg.pinv(A) @ A


@functools.cache
def build():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torquescale 2 is ignored (test below)
        # contact-free by design: the golden numbers are MuJoCo's with contact disabled
        imported = jb.io.load_mjcf(MODEL, contact=False)
    model = imported.system.realize_topology()
    g = dict(np.load(os.path.join(HERE, "golden", "mujoco_site_tendon_equalities.npz")))
    constraints = imported.constraints

    @jax.jit
    @jax.vmap
    def evaluate(q, u, tau):
        """Residuals, G (all rows are holonomic: P, in constraint order) and udot from one realization."""
        s = model.realize(model.default_state().set_q(q).set_u(u).set_mobility_forces(tau), jb.Stage.Acceleration)
        return {n: c.get_position_errors_as_vector(s) for n, c in constraints.items()}, model.calc_g(s), s.acceleration.udot

    q, u, T = coordinate_map(imported, model, g["qpos"], g["qvel"])
    tau = np.einsum("kij,ki->kj", T, g["tau"])
    q_random = coordinate_map(imported, model, g["qpos_random"], 0 * g["qvel"][:len(g["qpos_random"])])[0]
    k = len(q)
    perr, G, udot = evaluate(np.concatenate([q, q_random]), np.concatenate([u, 0 * u]), np.concatenate([tau, 0 * tau]))
    rows = {str(n): g["efc_id"] == e for e, n in enumerate(g["eq_names"])}
    sizes = [constraints[n].get_num_constraint_equations()[0] for n in rows]   # rows of G in constraint order
    starts = np.cumsum([0] + sizes)
    return {"g": g, "T": T, "perr": {n: np.asarray(p[:k]) for n, p in perr.items()},
            "perr_random": {n: np.asarray(p[k:]) for n, p in perr.items()}, "G": np.asarray(G[:k]),
            "P": {n: np.asarray(G[:k, a:b]) for n, a, b in zip(rows, starts, starts[1:])}, "udot": np.asarray(udot[:k]),
            "rows": rows, "imported": imported}


def test_residuals_vanish_where_mujoco_rows_vanish():
    case = build()
    assert np.max(np.abs(case["g"]["efc_pos"])) < 1e-13          # MuJoCo assembled them
    assert set(case["perr"]) == {"site_loop", "site_glue", "couple", "hold"}
    for name, perr in case["perr"].items():
        assert np.max(np.abs(perr)) < 1e-10, f"{name}: {np.max(np.abs(perr)):.2e}"


def test_residuals_at_random_states():
    """Connect and the weld's position rows: |offset of the two site origins| alike; tendon equalities: the
    same signed residual. (The weld's orientation rows differ by definition: MuJoCo's quaternion form
    scaled by torquescale vs Simbody's perpendicular axes; their zero sets and row spaces agree, tests above.)"""
    case = build()
    mj = {n: case["g"]["efc_pos_random"][:, r] for n, r in case["rows"].items()}
    jbr = case["perr_random"]
    assert_close(np.linalg.norm(jbr["site_loop"], axis=-1), np.linalg.norm(mj["site_loop"], axis=-1), 1e-10, "connect")
    assert_close(np.linalg.norm(jbr["site_glue"][:, 3:], axis=-1), np.linalg.norm(mj["site_glue"][:, :3], axis=-1),
                 1e-10, "weld position rows")
    assert_close(jbr["couple"][:, 0], mj["couple"][:, 0], 1e-10, "tendon polynomial")
    assert_close(jbr["hold"][:, 0], mj["hold"][:, 0], 1e-10, "single tendon")
    for name, r in mj.items():
        assert np.min(np.max(np.abs(r), axis=-1)) > 1e-2, f"{name}: random states are not trivially consistent"


def test_row_spaces_match_mujoco_jacobian():
    """Each constraint's P (rows in u) and MuJoCo's efc_J rows of that equality mapped to u (J T) span the same
    space: their row-space projectors agree; so do all rows together."""
    case = build()
    g, T = case["g"], case["T"]
    J_u = np.einsum("kri,kij->krj", g["efc_J"], T)
    for name, r in case["rows"].items():
        P = np.asarray(case["P"][name])
        assert P.shape == J_u[:, r].shape
        for k in range(len(P)):
            assert_close(projector(P[k]), projector(J_u[k][r]), 1e-10, f"{name} state {k}")
    G = case["G"]
    for k in range(len(G)):
        assert np.linalg.matrix_rank(G[k]) == G.shape[1] == 11
        assert_close(projector(G[k]), projector(J_u[k]), 1e-10, f"all rows, state {k}")


def test_constrained_accelerations_match_exact_solve_from_mujoco():
    """T udot = qacc of [[M, J^T], [J, 0]] [qacc; -lambda] = [tau - qfrc_bias; -Jdot qvel] (MuJoCo's numbers)."""
    case = build()
    g = case["g"]
    nv, ne = g["M"].shape[-1], g["efc_J"].shape[1]
    for k in range(len(g["M"])):
        K = np.block([[g["M"][k], g["efc_J"][k].T], [g["efc_J"][k], np.zeros((ne, ne))]])
        qacc = np.linalg.solve(K, np.concatenate([g["tau"][k] - g["bias"][k], -g["jdotv"][k]]))[:nv]
        assert_close(case["T"][k] @ np.asarray(case["udot"][k]), qacc, 1e-9, f"state {k}")


def test_torquescale():
    """torquescale != 1 warns that it is ignored; torquescale 0 (MuJoCo: no rotational rows) imports as a Ball.
    (Spatial-tendon equalities are refused: tests/io/test_io_errors.py.)"""
    body = ('<mujoco><worldbody><body name="a"><joint type="ball"/><geom size="0.1"/><site name="sa" pos="0.1 0 0"/>'
            '</body><site name="w" pos="0.1 0 0"/></worldbody><equality>{}</equality></mujoco>')
    with pytest.warns(UserWarning, match="torquescale.*'glue': 0.5"):
        weld = jb.io.load_mjcf(body.format('<weld name="glue" site1="sa" site2="w" torquescale="0.5"/>'))
    assert weld.constraints["glue"].get_num_constraint_equations() == (6, 0, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ball = jb.io.load_mjcf(body.format('<weld name="glue" site1="sa" site2="w" torquescale="0"/>'))
    assert ball.constraints["glue"].get_num_constraint_equations() == (3, 0, 0)
