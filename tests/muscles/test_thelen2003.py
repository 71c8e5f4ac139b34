"""Thelen2003Muscle (jaxbody._dynamics.muscles.thelen2003) against OpenSim 4.6 on arm26 and gait9dof18musc
(random states in the coordinate ranges, random activations, fiber lengths and excitations; the path's length
and speed are OpenSim's), its equilibrium against ``Model::equilibrateMuscles``, and its derivatives against
central differences; all batched by one vmap and jitted."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close, central_difference
from muscle_golden import load, one_muscle, stacked_parameters, unit_direction

from jaxbody._dynamics.muscles import thelen_curves
from jaxbody._dynamics.muscles.thelen2003 import Thelen2003Parameters, thelen2003_info
from jaxbody._dynamics.muscles.thelen2003_equilibrium import thelen2003_equilibrium_fiber_length

FIELDS = ("fiber_length", "fiber_velocity", "pennation_angle", "tendon_length", "active_fiber_force",
          "passive_fiber_force", "tendon_force", "activation_dot", "fiber_length_dot")

info_batch = jax.jit(jax.vmap(thelen2003_info))
equilibrium_batch = jax.jit(jax.vmap(thelen2003_equilibrium_fiber_length))


@pytest.fixture(scope="module", params=["arm26_muscles", "gait9dof18musc_muscles"])
def golden(request):
    data, rows, names = load(request.param)
    return stacked_parameters(Thelen2003Parameters, data, names), rows, names


def test_muscle_matches_opensim(golden):
    p, g, _ = golden
    info = info_batch(p, g["length"], g["lengthening_speed"], g["activation"], g["fiber_length_state"],
                      g["excitation"])
    for field in FIELDS:
        assert_close(getattr(info, field), g[field], 1e-9, field, per_entry=True)


def test_equilibrium_matches_opensim(golden):
    """OpenSim stops at |force error| < 1e-8 F_iso; the fiber lengths agree to 1e-8 m (arm26: 4e-12)."""
    p, g, _ = golden
    lce = equilibrium_batch(p, g["length"], g["lengthening_speed"], g["activation"])
    assert_close(lce, g["equilibrium_fiber_length"], 1e-8, "equilibrium fiber length")
    info = info_batch(p, g["length"], g["lengthening_speed"], g["activation"], lce, g["excitation"])
    assert_close(info.tendon_force, g["equilibrium_tendon_force"], 1e-6, "tendon force at equilibrium",
                 per_entry=True)


def test_muscle_derivatives_match_central_differences(golden):
    """d(tendon force, fiber velocity, activation dot)/d(length, speed, activation, fiber length, parameters)."""
    p, g, _ = golden
    i = 3
    pi = one_muscle(p, i)
    x = jnp.asarray([g["length"][i], g["lengthening_speed"][i], g["activation"][i], g["fiber_length_state"][i]])

    @jax.jit
    def outputs(x, p):
        info = thelen2003_info(p, x[0], x[1], x[2], x[3], g["excitation"][i])
        return jnp.stack([info.tendon_force, info.fiber_velocity, info.active_fiber_force, info.activation_dot])

    jac = jax.jacfwd(outputs)(x, pi)
    assert_close(jac, central_difference(lambda x: outputs(x, pi), x, 1e-7), 1e-6, "d info / d inputs")
    jac_p = jax.jit(jax.jacfwd(outputs, argnums=1))(x, pi)  # every parameter at once: one compile
    for field in ("optimal_fiber_length", "tendon_slack_length", "pennation_angle_at_optimal", "fmax_tendon_strain"):
        fd = central_difference(lambda p: outputs(x, p), pi, 1e-8, unit_direction(pi, field))
        assert_close(getattr(jac_p, field), fd, 1e-5, f"d info / d {field}")


def test_equilibrium_derivatives_match_central_differences():
    data, g, names = load("gait9dof18musc_muscles")
    i = 1
    pi = one_muscle(stacked_parameters(Thelen2003Parameters, data, names), i)
    x = jnp.asarray([g["length"][i], g["lengthening_speed"][i], g["activation"][i]])

    @jax.jit
    def lce(x, p):
        return thelen2003_equilibrium_fiber_length(p, x[0], x[1], x[2])

    ad = jax.jit(jax.grad(lce))(x, pi)
    assert_close(ad, central_difference(lambda x: lce(x, pi), x, 1e-6), 1e-6, "d lce / d (l, v, a)")
    ad_p = jax.grad(lce, argnums=1)(x, pi).optimal_fiber_length
    d = unit_direction(pi, "optimal_fiber_length")
    assert_close(ad_p, central_difference(lambda p: lce(x, p), pi, 1e-7, d), 1e-5, "d lce / d l_opt")


def test_curves_derivatives_and_branches():
    """Each Thelen curve's derivative vs central differences on both sides of its breakpoints; fvInv inverts
    the velocity relation on all four of its pieces."""
    x = jnp.linspace(0.3, 1.9, 17) + 1e-3
    for f, args in ((thelen_curves.active_force_length, (0.45,)), (thelen_curves.passive_force_length, (0.6, 5.0)),
                    (thelen_curves.tendon_force_length, (0.04,))):
        xs = x if f is not thelen_curves.tendon_force_length else 0.99 + x * 0.04
        ad = jax.vmap(jax.grad(f), (0,) + (None,) * len(args))(xs, *args)
        fd = central_difference(lambda y: f(y, *args), xs, 1e-7, jnp.ones_like(xs))
        assert_close(ad, fd, 1e-6, f.__name__)
    a, fal = 0.4, 0.8
    fv = jnp.asarray([-0.5, 0.3, 0.9, 1.2, 1.4, 2.0])  # below 0, concentric, eccentric, beyond the threshold
    v = jax.vmap(thelen_curves.normalized_fiber_velocity, (None, None, 0, None, None, None))(a, fal, a * fal * fv,
                                                                                              0.25, 1.4, 0.95)
    back = jax.vmap(thelen_curves.force_velocity_inverse, (None, None, 0, None, None, None))(a, fal, v, 0.25, 1.4, 0.95)
    assert_close(back, np.maximum(fv, 0.0), 1e-12, "fvInv(dlce_n(fv))")


def test_vmap_1024_states_shared_model():
    """1024 states of one muscle under one vmap (shared parameters, in_axes None) equal the per-state results."""
    data, g, names = load("arm26_muscles")
    p = one_muscle(stacked_parameters(Thelen2003Parameters, data, names), 0)
    key = jax.random.PRNGKey(0)
    l = 0.3 + 0.05 * jax.random.uniform(key, (1024,))
    lce = 0.08 + 0.1 * jax.random.uniform(jax.random.fold_in(key, 1), (1024,))
    many = jax.jit(jax.vmap(thelen2003_info, (None, 0, None, None, 0, None)))(p, l, 0.1, 0.5, lce, 0.7)
    for k in (0, 511, 1023):
        one = thelen2003_info(p, l[k], 0.1, 0.5, lce[k], 0.7)
        assert_close(many.tendon_force[k], one.tendon_force, 1e-12, "tendon force")
        assert_close(many.fiber_velocity[k], one.fiber_velocity, 1e-12, "fiber velocity")
