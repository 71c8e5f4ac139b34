"""Every tree-dynamics quantity against Simbody 3.9's own numbers (tests/golden/simbody, see its README).

Euler mode is compared directly (OpenSim runs Simbody in Euler-angle mode, so
jaxbody's q layout equals Simbody's getTotalQAlloc layout, unused slot 0).
Quaternion mode is checked by converting each Euler q to the quaternion of
the same R_FM: everything expressed in u must then be identical.
Constraints of the constrained cases are ignored here: their trees are still
compared for every constraint-free quantity.
"""

import functools

import jax
import jax.numpy as jnp
import pytest

import jaxbody as jb
from golden_cases import ALL_CASES, RTOL, build_case, load_case
from helpers import assert_close


def _elements(I):
    return jnp.stack([I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])


def evaluate(model, q, u, tau, F_applied, udot_known, udot_simbody, *, tasks):
    """All tree quantities Simbody reported, for one sample. tasks: ((station body, station), (frame body, origin))."""
    (sb, station), (fb, origin) = tasks
    state = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Velocity)
    gravity = model.get_gravity_body_forces(state)
    F = gravity + F_applied
    udot, A_GB = model.calc_acceleration_ignoring_constraints(state, tau, F)
    realized = model.realize(state.set_mobility_forces(tau).set_body_forces(F_applied), jb.Stage.Acceleration)
    return {
        "X_GB.p": state.position.p_GB,
        "X_GB.R": state.position.R_GB.reshape(-1, 9),
        "V_GB": state.velocity.V_GB.reshape(-1, 6),
        "M": model.calc_m(state),
        "Minv": model.calc_m_inv(state),
        "qdot": model.calc_q_dot(state, u),
        "gravity_body_forces": gravity.reshape(-1, 6),
        "udot_ignoring_constraints": udot,
        "A_GB_ignoring_constraints": A_GB.reshape(-1, 6),
        "realized_udot": realized.acceleration.udot,
        "residual_ignoring_constraints": model.calc_residual_force_ignoring_constraints(state, tau, F, udot_known),
        "tree_equivalent_mobility_forces": model.calc_tree_equivalent_mobility_forces(state, F),
        "qdotdot": model.calc_q_dot_dot(state, udot_simbody),
        "kinetic_energy": model.calc_kinetic_energy(state),
        "system_mass": model.calc_system_mass(state),
        "mass_center_location": model.calc_system_mass_center_location_in_ground(state),
        "mass_center_velocity": model.calc_system_mass_center_velocity_in_ground(state),
        "momentum_about_ground_origin": model.calc_system_momentum_about_ground_origin(state).reshape(6),
        "central_momentum": model.calc_system_central_momentum(state).reshape(6),
        "central_inertia": _elements(model.calc_system_central_inertia_in_ground(state)),
        "N": jax.vmap(lambda e: model.calc_q_dot(state, e), out_axes=1)(jnp.eye(model.get_num_u())),
        "J": model.calc_system_jacobian_matrix(state),
        "J_bias": model.calc_bias_for_system_jacobian(state).reshape(-1, 6),
        "station_J": model.calc_station_jacobian(state, [sb], station[None]),
        "station_J_bias": model.calc_bias_for_station_jacobian(state, sb, station),
        "frame_J": model.calc_frame_jacobian(state, [fb], origin[None]),
        "frame_J_bias": model.calc_bias_for_frame_jacobian(state, fb, origin).reshape(6),
        "mobilizer_reaction_forces": model.calc_mobilizer_reaction_forces(realized).reshape(-1, 6),
        "mobilizer_reaction_forces_free_body": model.calc_mobilizer_reaction_forces_using_free_body_method(realized).reshape(-1, 6),
        "mass_center_acceleration": model.calc_system_mass_center_acceleration_in_ground(realized),
    }


def _task_spec(case, handles):
    st, ft = case["station_task"], case["frame_task"]
    return (
        (handles[st["body"]].index, jnp.asarray(st["station"])),
        (handles[ft["body"]].index, jnp.asarray(ft["origin"])),
    )


@functools.lru_cache(maxsize=None)
def case_model(name):
    case, results = load_case(name)
    model, handles = build_case(case, use_euler_angles=True)
    tasks = _task_spec(case, handles)
    return case, results, model, jax.jit(functools.partial(evaluate, tasks=tasks)), tasks


def _inputs(model, sample, result):
    return (
        jnp.asarray(sample["q"]),
        jnp.asarray(sample["u"]),
        jnp.asarray(sample["tau"]),
        jnp.asarray(sample["body_forces"]).reshape(-1, 2, 3),
        jnp.asarray(sample["udot_known"]),
        jnp.asarray(result["udot_ignoring_constraints"]),
    )


# Keys compared directly; "realized_udot" equals udot_ignoring_constraints only without constraints.
EULER_KEYS = {
    "X_GB.p": lambda r: r["X_GB"]["p"],
    "X_GB.R": lambda r: r["X_GB"]["R"],
    "V_GB": lambda r: r["V_GB"],
    "M": lambda r: r["M"],
    "Minv": lambda r: r["Minv"],
    "qdot": lambda r: r["qdot"],
    "gravity_body_forces": lambda r: r["gravity_body_forces"],
    "udot_ignoring_constraints": lambda r: r["udot_ignoring_constraints"],
    "A_GB_ignoring_constraints": lambda r: r["A_GB_ignoring_constraints"],
    "residual_ignoring_constraints": lambda r: r["residual_ignoring_constraints"],
    "tree_equivalent_mobility_forces": lambda r: r["tree_equivalent_mobility_forces"],
    "kinetic_energy": lambda r: r["kinetic_energy"],
    "system_mass": lambda r: r["system_mass"],
    "mass_center_location": lambda r: r["mass_center_location"],
    "mass_center_velocity": lambda r: r["mass_center_velocity"],
    "momentum_about_ground_origin": lambda r: r["momentum_about_ground_origin"],
    "central_momentum": lambda r: r["central_momentum"],
    "central_inertia": lambda r: r["central_inertia"],
    "J": lambda r: r["J"],
    "J_bias": lambda r: r["J_bias"],
    "station_J": lambda r: r["station_J"],
    "station_J_bias": lambda r: r["station_J_bias"],
    "frame_J": lambda r: r["frame_J"],
    "frame_J_bias": lambda r: r["frame_J_bias"],
}

# Quantities that depend on the realized accelerations: comparable only for trees.
TREE_ONLY_KEYS = {
    "mobilizer_reaction_forces": lambda r: r["realized"]["mobilizer_reaction_forces"],
    "mobilizer_reaction_forces_free_body": lambda r: r["realized"]["mobilizer_reaction_forces"],
    "mass_center_acceleration": lambda r: r["realized"]["mass_center_acceleration"],
    "realized_udot": lambda r: r["realized"]["udot"],
    "qdotdot": lambda r: r["qdotdot"],
}


@pytest.mark.parametrize("name", ALL_CASES)
def test_euler_mode_matches_simbody(name):
    case, results, model, run, _ = case_model(name)
    assert model.get_num_q() == case["nq"] and model.get_num_u() == case["nu"]
    for k, (sample, result) in enumerate(zip(case["samples"], results["samples"])):
        got = run(model, *_inputs(model, sample, result))
        for key, expected in EULER_KEYS.items():
            assert_close(got[key], expected(result), RTOL, f"{name} sample {k} {key}")
        if "N" in result:
            assert_close(got["N"], result["N"], RTOL, f"{name} sample {k} N")
        if not case["constraints"]:
            for key, expected in TREE_ONLY_KEYS.items():
                assert_close(got[key], expected(result), RTOL, f"{name} sample {k} {key}")


QUATERNION_KEYS = [
    "X_GB.p", "X_GB.R", "V_GB", "M", "Minv", "udot_ignoring_constraints", "A_GB_ignoring_constraints",
    "residual_ignoring_constraints", "tree_equivalent_mobility_forces", "kinetic_energy", "central_inertia",
    "momentum_about_ground_origin", "gravity_body_forces", "J", "J_bias", "station_J", "frame_J_bias",
]


@pytest.mark.parametrize("name", ["chain3d_mixed", "chain3d_more", "floating_tree", "rod_chain", "weld_constraint"])
def test_quaternion_mode_matches_simbody(name):
    """Convert Euler q to quaternions: every u-space quantity must be unchanged."""
    case, results, euler_model, _, tasks = case_model(name)
    model = euler_model.with_use_euler_angles(False)
    assert model.get_num_quaternions_in_use() > 0
    run = jax.jit(functools.partial(evaluate, tasks=tasks))
    for k, (sample, result) in enumerate(zip(case["samples"], results["samples"])):
        inputs = _inputs(model, sample, result)
        q_quat = euler_model.convert_to_quaternions(euler_model.default_state().set_q(inputs[0])).q
        back = model.convert_to_euler_angles(model.default_state().set_q(q_quat)).q
        assert_close(back, sample["q"], RTOL, f"{name} sample {k} q round trip")
        got = run(model, q_quat, *inputs[1:])
        for key in QUATERNION_KEYS:
            assert_close(got[key], EULER_KEYS[key](result), RTOL, f"{name} sample {k} {key} (quaternion mode)")


# Under vmap the whole evaluation is one batched program; CI runs one tree and one constrained case, --long all.
_VMAP_CI_CASES = {"floating_tree", "fourbar"}


@pytest.mark.parametrize(
    "name", [n if n in _VMAP_CI_CASES else pytest.param(n, marks=pytest.mark.long) for n in ALL_CASES]
)
def test_batched_samples_match_simbody_lane_by_lane(name):
    """All of a case's samples as one ``jit(vmap(...))`` batch (the batch is the leading axis, as users run
    sweeps): every lane equals Simbody's numbers for that sample to RTOL, and the unbatched jitted
    evaluation of the same sample to 1e-12 relative."""
    case, results, model, run, tasks = case_model(name)
    per_sample = [_inputs(model, s, r) for s, r in zip(case["samples"], results["samples"])]
    batch = [jnp.stack(column) for column in zip(*per_sample)]
    batched = jax.jit(jax.vmap(functools.partial(evaluate, model, tasks=tasks)))(*batch)
    keys = dict(EULER_KEYS) if case["constraints"] else {**EULER_KEYS, **TREE_ONLY_KEYS}
    for k, (inputs, result) in enumerate(zip(per_sample, results["samples"])):
        lane = jax.tree_util.tree_map(lambda x, k=k: x[k], batched)
        single = run(model, *inputs)
        for key, expected in keys.items():
            assert_close(lane[key], expected(result), RTOL, f"{name} lane {k} {key} vs Simbody")
            assert_close(lane[key], single[key], 1e-12, f"{name} lane {k} {key} vs unbatched")
        assert_close(lane["N"], single["N"], 1e-12, f"{name} lane {k} N vs unbatched")
