"""Millard2012EquilibriumMuscle (jaxbody._dynamics.muscles.millard2012) against OpenSim 4.6: one muscle per
variant (damped and undamped elastic tendon, rigid tendon with and without damping, no activation dynamics) on a
slider, at random lengths, speeds, activations, fiber lengths and excitations; derivatives against central
differences; vmap over 1024 states."""

import json

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close, central_difference
from muscle_golden import GOLDEN

import jaxbody as jb
from jaxbody._api.muscle_parameters import millard2012_parameters
from jaxbody._dynamics.muscles import millard_curves as mc
from jaxbody._dynamics.muscles.millard2012 import Millard2012Parameters, millard2012_info
from jaxbody.errors import InvalidArgument

DATA = json.loads((GOLDEN / "millard_muscles.json").read_text())
FIELDS = ("activation", "fiber_length", "fiber_velocity", "pennation_angle", "tendon_length", "active_fiber_force",
          "passive_fiber_force", "tendon_force", "activation_dot", "fiber_length_dot")


def parameters(variant: str) -> Millard2012Parameters:
    """The variant's parameters as OpenSim uses them (after its finalize-time curve adjustments)."""
    p = DATA["parameters"][variant]
    curves = {cls: {k: jnp.asarray(v) for k, v in props.items()} for cls, props in p["curves"].items()}
    return Millard2012Parameters(
        **{k: jnp.asarray(v) for k, v in p["scalars"].items()},
        active_force_length_curve=mc.ActiveForceLengthCurve(**curves["ActiveForceLengthCurve"]),
        force_velocity_curve=mc.ForceVelocityCurve(**curves["ForceVelocityCurve"]),
        fiber_force_length_curve=mc.FiberForceLengthCurve(**curves["FiberForceLengthCurve"]),
        tendon_force_length_curve=mc.TendonForceLengthCurve(**curves["TendonForceLengthCurve"]))


def rows(variant: str):
    records = [r["muscles"][variant] for r in DATA["states"]]
    return {k: np.asarray([r.get(k, np.nan) for r in records]) for k in records[0] | records[-1]}


def evaluate(variant: str):
    structure = DATA["parameters"][variant]["structure"]
    g = rows(variant)
    f = jax.jit(jax.vmap(lambda *a: millard2012_info(*a, **structure), (None, 0, 0, 0, 0, 0)))
    return f(parameters(variant), g["length"], g["lengthening_speed"], g["activation_state"], g["fiber_length_state"],
             g["excitation"]), g, structure


#: Variants whose fiber velocity is a Newton solve compile for 15-20 s each here: they run with --long.
SLOW = {"damped", "no_activation_dynamics"}


@pytest.mark.parametrize("variant", [pytest.param(v, marks=pytest.mark.long) if v in SLOW else v
                                     for v in DATA["parameters"]])
def test_muscle_matches_opensim(variant):
    """Damped elastic tendons: OpenSim's Newton stops at |force error| < 1e-10 F_iso, so fiber velocities agree
    to about 1e-9 relative; jaxbody iterates to rounding."""
    info, g, structure = evaluate(variant)
    tol = 1e-8 if structure["damped"] and not structure["rigid_tendon"] else 1e-9
    for field in FIELDS:
        if field in g and not np.all(np.isnan(g[field])):
            assert_close(getattr(info, field), g[field], tol, f"{variant}: {field}", per_entry=True)


def _unit(p, field):
    """A tangent of Millard2012Parameters: 1 in the scalar ``field`` or in ``curve.field``, 0 elsewhere."""
    zero = jax.tree_util.tree_map(jnp.zeros_like, p)
    if "." not in field:
        return eqx.tree_at(lambda t: getattr(t, field), zero, jnp.asarray(1.0))
    curve, name = field.split(".")
    return eqx.tree_at(lambda t: getattr(getattr(t, curve), name), zero, jnp.asarray(1.0))


@pytest.mark.parametrize("variant", ["undamped", pytest.param("damped", marks=pytest.mark.long)])
def test_derivatives_match_central_differences(variant):
    """d(tendon force, fiber velocity, active force)/d(length, speed, activation, fiber length) (for the damped
    muscle through its Newton solve's implicit step) and d(fiber velocity)/d(fiber_damping, isometric_slope,
    tendon strain_at_one_norm_force)."""
    p = parameters(variant)
    damped = DATA["parameters"][variant]["structure"]["damped"]
    x = jnp.asarray([0.31, 0.1, 0.6, 0.1])

    @jax.jit
    def outputs(x, p):
        info = millard2012_info(p, x[0], x[1], x[2], x[3], 0.5, rigid_tendon=False, damped=damped)
        return jnp.stack([info.tendon_force, info.fiber_velocity, info.active_fiber_force])

    assert_close(jax.jacfwd(outputs)(x, p), central_difference(lambda x: outputs(x, p), x, 1e-7), 1e-6,
                 "d info / d inputs")
    grad = jax.jit(jax.grad(lambda p: outputs(x, p)[1]))(p)
    for field, ad in (("fiber_damping", grad.fiber_damping),
                      ("force_velocity_curve.isometric_slope", grad.force_velocity_curve.isometric_slope),
                      ("tendon_force_length_curve.strain_at_one_norm_force",
                       grad.tendon_force_length_curve.strain_at_one_norm_force)):
        if field == "fiber_damping" and not damped:
            continue
        fd = central_difference(lambda p: outputs(x, p)[1], p, 1e-7, _unit(p, field))
        assert_close(ad, fd, 1e-6, f"d fiber velocity / d {field}")


@pytest.mark.long
def test_vmap_1024_states_shared_parameters():
    """(--long: vmap over 1024 states runs in CI in test_thelen2003, test_millard_curves and test_muscle_system.)"""
    p = parameters("undamped")
    lengths = jnp.linspace(0.25, 0.33, 1024)
    f = jax.jit(jax.vmap(lambda l: millard2012_info(p, l, 0.05, 0.5, 0.1, 0.5, rigid_tendon=False,
                                                    damped=False).tendon_force))
    many = np.asarray(f(lengths))
    one = millard2012_info(p, lengths[700], 0.05, 0.5, 0.1, 0.5, rigid_tendon=False, damped=False).tendon_force
    assert_close(many[700], one, 1e-12, "tendon force")


@pytest.mark.parametrize("variant", list(DATA["parameters"]))
def test_builder_applies_opensims_finalize_adjustments(variant):
    """jb.Force.Millard2012EquilibriumMuscle's parameters (OpenSim's defaults and finalize-time curve adjustments)
    equal the ones OpenSim 4.6 reports after finalizing the same muscle."""
    expected = DATA["parameters"][variant]
    scalars = expected["scalars"]
    p, damped = millard2012_parameters(
        variant, {}, expected["structure"]["rigid_tendon"], **{k: scalars[k] for k in (
            "max_isometric_force", "optimal_fiber_length", "tendon_slack_length", "pennation_angle_at_optimal",
            "fiber_damping")})
    assert damped == expected["structure"]["damped"]
    assert_close(jax.tree_util.tree_leaves(p), jax.tree_util.tree_leaves(parameters(variant)), 1e-15, "parameters")


def test_builder_rejects_bad_curves():
    with pytest.raises(InvalidArgument, match="muscle 'vastus'.*force_velocity_curve.concentric_slope_near_vmax"):
        millard2012_parameters("vastus", {"force_velocity_curve": {"concentric_slope_near_vmax": 0.0}}, False,
                               max_isometric_force=1.0, optimal_fiber_length=0.1, tendon_slack_length=0.2,
                               pennation_angle_at_optimal=0.0)
    with pytest.raises(InvalidArgument, match="muscle 'vastus': unknown curve"):
        millard2012_parameters("vastus", {"fv": {}}, False, max_isometric_force=1.0, optimal_fiber_length=0.1,
                               tendon_slack_length=0.2, pennation_angle_at_optimal=0.0)


def test_load_osim_builds_the_millard_muscles():
    """load_osim on the sliders model OpenSim wrote (golden/millard_sliders.osim): every variant is built with the
    parameters OpenSim reports, and its muscle mechanics at the first golden state match OpenSim's."""
    imported = jb.io.load_osim(str(GOLDEN / "millard_sliders.osim"))
    assert sorted(imported.forces_by_name) == sorted(DATA["parameters"])
    model = imported.system.realize_topology()
    for variant, handle in imported.forces_by_name.items():
        element = model.forces[handle.index]
        assert_close(jax.tree_util.tree_leaves(element.parameters), jax.tree_util.tree_leaves(parameters(variant)),
                     1e-15, f"{variant} parameters")
        structure = DATA["parameters"][variant]["structure"]
        assert (element.rigid_tendon, element.damped, element.ignore_activation_dynamics) == (
            structure["rigid_tendon"], structure["damped"], structure["ignore_activation_dynamics"])
