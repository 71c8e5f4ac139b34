"""Moco's squat-to-stand model (tests/models/osim/squatToStand_3dof9musc.osim, from opensim-core) against OpenSim 4.6
(tests/io/generate_squat_to_stand_golden.py): it imports without a warning, and its mass matrix, muscle path
lengths, lengthening speeds and moment arms (OpenSim's computeMomentArm: the patella's knee_angle_r_beta follows
the knee through the linear coupler beta = -knee, so the knee's moment arm is -dL/du_knee + dL/du_beta) match at
random states (the wrapped paths under ``--long``: they take minutes to compile); the DeGroote-prepared file
without its wraps (examples/moco_style_squat_to_stand.py's default) gives OpenSim's state derivatives
(constrained udot, activation rates) and tendon forces."""

from __future__ import annotations

import functools
import json
import pathlib
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from script_runner import load_example  # noqa: E402

HERE = pathlib.Path(__file__).parent
MODELS = HERE.parent / "models" / "osim"
GOLDEN = json.loads((HERE / "golden" / "squat_to_stand.json").read_text())
MUSCLES = ("bifemsh_r", "med_gas_r", "glut_max2_r", "psoas_r", "rect_fem_r", "semimem_r", "soleus_r", "tib_ant_r",
           "vas_int_r")
INDEPENDENT = ("hip_flexion_r", "knee_angle_r", "ankle_angle_r")


@functools.lru_cache(maxsize=None)
def imported(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        imp = jb.io.load_osim(MODELS / name)
    return imp, imp.system.realize_topology()


def states(imp, model, records, with_z=False):
    """The golden records as one batched State (q, u by coordinate name; activations and excitations by muscle)."""
    base = imp.default_state(model)
    names = list(records[0]["q"])
    qi = np.array([imp.q_index(n) for n in names])
    ui = np.array([imp.u_index(n) for n in names])
    q = jnp.stack([base.q.at[qi].set(jnp.asarray([r["q"][n] for n in names])) for r in records])
    u = jnp.stack([base.u.at[ui].set(jnp.asarray([r["u"][n] for n in names])) for r in records])
    batch = jax.vmap(lambda q_, u_: base.set_q(q_).set_u(u_))(q, u)
    if with_z:
        order = list(imp.forces_by_name)
        z = jnp.asarray([[r["activations"][n] for n in order] for r in records])
        e = jnp.asarray([[r["excitations"][n] for n in order] for r in records])
        batch = jax.vmap(lambda s, z_, e_: s.set_z(z_).set_controls(e_))(batch, z, e)
    return batch


def test_imports_without_warnings_with_its_nine_muscles_and_coupler():
    imp, model = imported("squatToStand_3dof9musc.osim")
    assert tuple(imp.forces_by_name) == MUSCLES
    assert model.get_num_q() == 4 and model.num_controls == 9 and not imp.skipped


def test_mass_matrix_matches_opensim():
    imp, model = imported("squatToStand_3dof9musc.osim")
    records = GOLDEN["original"]["states"]
    batch = states(imp, model, records)
    M = jax.jit(jax.vmap(lambda s: model.calc_m(model.realize(s, jb.Stage.Position))))(batch)
    for k, r in enumerate(records):
        order = [imp.u_index(n) for n in r["mobility_coordinates"]]
        np.testing.assert_allclose(np.asarray(M[k])[np.ix_(order, order)], r["M"], rtol=0, atol=1e-12)


def check_paths(names):
    """Lengths and speeds to 1e-12; moment arms to 2e-4 where a path wraps a cylinder (OpenSim's tangent points
    are its own approximation of the shortest path: tests/paths/test_osim_paths.py), 1e-12 where it does not."""
    imp, model = imported("squatToStand_3dof9musc.osim")
    records = GOLDEN["original"]["states"]
    batch = states(imp, model, records)
    paths = [imp.paths[n] for n in names]
    coupling = {c: jnp.zeros(model.get_num_u()).at[imp.u_index(c)].set(1.0) for c in INDEPENDENT}
    coupling["knee_angle_r"] = coupling["knee_angle_r"].at[imp.u_index("knee_angle_r_beta")].set(-1.0)

    @jax.jit
    @jax.vmap
    def numbers(s):
        s = model.realize(s, jb.Stage.Velocity)
        arms = [p.calc_moment_arms(model, s) for p in paths]
        return (jnp.stack([p.calc_length(model, s) for p in paths]),
                jnp.stack([p.calc_lengthening_speed(model, s) for p in paths]),
                jnp.stack([jnp.stack([a @ coupling[c] for c in INDEPENDENT]) for a in arms]))

    L, V, R = numbers(batch)
    for k, r in enumerate(records):
        for i, n in enumerate(names):
            want = r["paths"][n]
            assert abs(L[k, i] - want["length"]) < 1e-12, (n, k)
            assert abs(V[k, i] - want["speed"]) < 1e-12, (n, k)
            tol = 2e-4 if GOLDEN["original"]["wrapped"][n] else 1e-12
            np.testing.assert_allclose(R[k, i], [want["moment_arms"][c] for c in INDEPENDENT], rtol=0, atol=tol,
                                       err_msg=f"{n} state {k}")


def test_unwrapped_muscle_paths_match_opensim():
    check_paths([n for n in MUSCLES if not GOLDEN["original"]["wrapped"][n]])


@pytest.mark.long
@pytest.mark.parametrize("name", ["rect_fem_r", "bifemsh_r"])
def test_cylinder_wrapped_muscle_paths_match_opensim(name):
    """One jit per muscle: wrapped paths compile slowly (minutes; the path code's known compile cost)."""
    check_paths([name])


def test_prepared_model_state_derivatives_match_opensim():
    """The DeGroote-prepared file with its wrap sets emptied (the example's default; OpenSim read the same text):
    udot with the coupler enforced, activation rates and tendon forces at random states, activations, excitations."""
    example = load_example("moco_style_squat_to_stand")
    imp = example.load(wraps=False)
    model = imp.system.realize_topology()
    records = GOLDEN["prepared_unwrapped"]["states"]
    assert list(imp.forces_by_name) == GOLDEN["prepared"]["control_order"]
    batch = states(imp, model, records, with_z=True)

    @jax.jit
    @jax.vmap
    def derivatives(s):
        s = model.realize(s, jb.Stage.Acceleration)
        return s.acceleration.udot, s.dynamics.zdot, jnp.stack(
            [imp.forces_by_name[n].get_tendon_force(s, model) for n in MUSCLES])

    udot, zdot, tendon = derivatives(batch)
    for k, r in enumerate(records):
        for key, value in r["derivatives"].items():
            name = key.split("/")[-2]
            if key.endswith("/speed"):
                assert abs(udot[k, imp.u_index(name)] - value) < 1e-9 * (1 + abs(value)), (key, k)
            elif key.endswith("/activation"):
                assert abs(zdot[k, MUSCLES.index(name)] - value) < 1e-10 * (1 + abs(value)), (key, k)
        np.testing.assert_allclose(tendon[k], [r["tendon_force"][n] for n in MUSCLES], rtol=1e-10, atol=1e-8)
