"""DeGrooteFregly2016Muscle (jaxbody._dynamics.muscles.degroote2016) against OpenSim 4.6 on arm26 with its muscles
replaced by OpenSim's ``replaceMuscles`` (elastic and rigid tendons, fiber damping, with and without activation
dynamics), its curves' inverses, and its derivatives against central differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close, central_difference
from muscle_golden import load, one_muscle, stacked_parameters, unit_direction

from jaxbody._dynamics.muscles import degroote_curves as curves
from jaxbody._dynamics.muscles.degroote2016 import DeGrooteFregly2016Parameters, degroote2016_info

FIELDS = ("activation", "fiber_length", "fiber_velocity", "pennation_angle", "tendon_length", "active_fiber_force",
          "passive_fiber_force", "tendon_force")


@pytest.fixture(scope="module")
def golden():
    data, rows, names = load("arm26_degroote_muscles")
    return stacked_parameters(DeGrooteFregly2016Parameters, data, names), rows


def _info(p, g, rigid: bool):
    rows = np.flatnonzero(g["ignore_tendon_compliance"] == rigid)
    pick = lambda x: x[rows]  # noqa: E731
    a = np.where(g["ignore_activation_dynamics"], g["excitation"], g["activation_state"])
    fn = jax.jit(jax.vmap(lambda *args: degroote2016_info(*args, ignore_tendon_compliance=rigid)))
    info = fn(jax.tree_util.tree_map(pick, p), pick(g["length"]), pick(g["lengthening_speed"]), pick(a),
              pick(g["normalized_tendon_force"]), pick(g["excitation"]))
    return info, rows


@pytest.mark.parametrize("rigid", [False, True])
def test_muscle_matches_opensim(golden, rigid):
    p, g = golden
    info, rows = _info(p, g, rigid)
    for field in FIELDS:
        assert_close(getattr(info, field), g[field][rows], 1e-9, field, per_entry=True)
    with_dynamics = ~g["ignore_activation_dynamics"][rows]
    assert_close(info.activation_dot[with_dynamics], g["activation_dot"][rows][with_dynamics], 1e-9,
                 "activation_dot", per_entry=True)
    if not rigid:
        assert_close(info.fiber_length_dot, g["normalized_tendon_force_dot"][rows], 1e-9,
                     "normalized_tendon_force_dot", per_entry=True)


def test_curve_inverses_and_values():
    """fv and fse and their inverses round-trip; fal(1) = 1, fv(0) = 1, fv(-1) = 0, fse(1) = 0, fpe(1 + e0) = 1."""
    v = jnp.linspace(-1.0, 1.0, 11)
    assert_close(curves.force_velocity_inverse(curves.force_velocity(v)), v, 1e-12, "fv^-1(fv(v))")
    f = jnp.linspace(0.0, 3.0, 7)
    assert_close(curves.tendon_force_length(curves.tendon_force_length_inverse(f, 0.049), 0.049), f, 1e-12, "fse")
    fixed = [curves.active_force_length(1.0, 1.0), curves.force_velocity(0.0), curves.force_velocity(-1.0),
             curves.tendon_force_length(1.0, 0.049), curves.passive_force_length(1.6, 0.6)]
    assert_close(jnp.stack(fixed), np.array([1.0, 1.0, 0.0, 0.0, 1.0]), 1e-12, "curve anchor points")


def test_muscle_derivatives_match_central_differences(golden):
    """At a moderate state: d(tendon force, fiber velocity, active force, d ntf/dt) by forward mode against
    central differences, in the inputs and in two parameters; explicit elastic tendon."""
    p, _ = golden
    pi = one_muscle(p, 0)
    x = jnp.asarray([0.33, 0.2, 0.5, 0.4])  # path length, speed, activation, normalized tendon force

    @jax.jit
    def outputs(x, p):
        info = degroote2016_info(p, x[0], x[1], x[2], x[3], 0.6)
        return jnp.stack([info.tendon_force, info.fiber_velocity, info.active_fiber_force, info.fiber_length_dot])

    assert_close(jax.jacfwd(outputs)(x, pi), central_difference(lambda x: outputs(x, pi), x, 1e-7), 1e-6,
                 "d info / d inputs")
    for field in ("optimal_fiber_length", "tendon_strain_at_one_norm_force"):
        d = unit_direction(pi, field)
        ad = jax.jvp(lambda p: outputs(x, p), (pi,), (d,))[1]
        assert_close(ad, central_difference(lambda p: outputs(x, p), pi, 1e-8, d), 1e-5, f"d info / d {field}")
