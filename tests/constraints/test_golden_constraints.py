"""Constrained dynamics against Simbody's own numbers (tests/golden/simbody; FORMAT.md in its README).

Each constrained oracle case (and jaxbody's own generated cases, whose constraints have a moving
Ancestor body; tests/golden/generate_constraint_cases.py) is rebuilt with its constraints (Ball, Rod, Weld,
PointOnLine, CoordinateCoupler; Euler mode, as OpenSim runs Simbody) and every
constraint quantity Simbody reported is compared to 1e-10 relative: position
and velocity errors, G, the acceleration bias, P, Pq, G M^-1 G^T, calc_acceleration,
and the fully realized dynamics (udot, qdotdot, A_GB, acceleration errors,
multipliers, constraint forces, constraint power, mobilizer reactions,
residual with multipliers).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from golden_cases import CONSTRAINED_CASES, GENERATED_CONSTRAINED_CASES, RTOL, build_case, load_case
from helpers import assert_close


def evaluate(model, q, u, tau, F_applied):
    state = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Velocity)
    F = model.get_gravity_body_forces(state) + F_applied
    udot, A_GB = model.calc_acceleration(state, tau, F)
    realized = model.realize(state.set_mobility_forces(tau).set_body_forces(F_applied), jb.Stage.Acceleration)
    lam = model.get_constraint_multipliers(realized)
    F_c, f_c = model.find_constraint_forces(realized)
    return {
        "position_errors": state.position.position_errors,
        "velocity_errors": model.get_u_err(state),
        "G": model.calc_g(state),
        "accel_bias": model.calc_bias_for_acceleration_constraints(state),
        "P": model.calc_p(state),
        "Pq": model.calc_pq(state),
        "G_Minv_GT": model.calc_projected_m_inv(state),
        "udot": udot,
        "A_GB": A_GB.reshape(-1, 6),
        "realized.udot": realized.acceleration.udot,
        "realized.qdotdot": realized.acceleration.qdotdot,
        "realized.A_GB": realized.acceleration.A_GB.reshape(-1, 6),
        "realized.udot_err": model.get_udot_err(realized),
        "realized.multipliers": lam,
        "realized.constraint_body_forces": F_c.reshape(-1, 6),
        "realized.constraint_mobility_forces": f_c,
        "realized.constraint_power": model.calc_constraint_power(realized),
        "realized.mobilizer_reaction_forces": model.calc_mobilizer_reaction_forces(realized).reshape(-1, 6),
        "realized.residual_with_multipliers": model.calc_residual_force(realized, tau, F, realized.acceleration.udot, lam),
        "realized.mass_center_acceleration": model.calc_system_mass_center_acceleration_in_ground(realized),
    }


@functools.lru_cache(maxsize=None)
def constrained_case(name):
    case, results = load_case(name)
    model, handles = build_case(case, use_euler_angles=True, with_constraints=True)
    return case, results, model, handles


_run = jax.jit(evaluate)


def _expected(result, key):
    if key.startswith("realized."):
        return result["realized"][key.split(".", 1)[1]]
    return result[key]


# udot_err and the residual are ~0 in both codes: compare with an absolute floor.
NEAR_ZERO = {"realized.udot_err", "realized.residual_with_multipliers"}


@pytest.mark.parametrize("name", CONSTRAINED_CASES + GENERATED_CONSTRAINED_CASES)
def test_constrained_case_matches_simbody(name):
    case, results, model, _ = constrained_case(name)
    assert model.get_num_constraints() == len(case["constraints"])
    assert model.constraints.m == results["n_constraint_equations"] and model.constraints.mp == results["n_holonomic"]
    for k, (sample, result) in enumerate(zip(case["samples"], results["samples"])):
        got = _run(model, jnp.asarray(sample["q"]), jnp.asarray(sample["u"]), jnp.asarray(sample["tau"]),
                   jnp.asarray(sample["body_forces"]).reshape(-1, 2, 3))
        for key, value in got.items():
            expected = _expected(result, key)
            if key in NEAR_ZERO:
                assert float(np.max(np.abs(np.asarray(value)))) < 1e-9, f"{name} {key}"
                continue
            if key == "realized.mass_center_acceleration" and key.split(".", 1)[1] not in result["realized"]:
                continue
            assert_close(value, expected, RTOL, f"{name} sample {k} {key}")
