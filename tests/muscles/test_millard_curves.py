"""Millard 2012's quintic Bézier curves (jaxbody._dynamics.muscles.millard_curves, .bezier) against OpenSim 4.6's
curve objects (values and first derivatives at 97 points in and beyond each domain, default and custom
properties), and their derivatives in x and in the curve parameters against central differences."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close, central_difference
from muscle_golden import GOLDEN

from jaxbody._dynamics.muscles import millard_curves as mc

DEFAULTS = {
    "ActiveForceLengthCurve": dict(min_norm_active_fiber_length=0.47 - 0.0259, transition_norm_fiber_length=0.73,
                                   max_norm_active_fiber_length=1.8123, shallow_ascending_slope=0.8616,
                                   minimum_value=0.1),
    "ForceVelocityCurve": dict(concentric_slope_at_vmax=0.0, concentric_slope_near_vmax=0.25, isometric_slope=5.0,
                               eccentric_slope_at_vmax=0.0, eccentric_slope_near_vmax=0.15,
                               max_eccentric_velocity_force_multiplier=1.4, concentric_curviness=0.6,
                               eccentric_curviness=0.9),
    "ForceVelocityInverseCurve": dict(concentric_slope_at_vmax=0.1, concentric_slope_near_vmax=0.25,
                                      isometric_slope=5.0, eccentric_slope_at_vmax=0.1,
                                      eccentric_slope_near_vmax=0.15, max_eccentric_velocity_force_multiplier=1.4,
                                      concentric_curviness=0.6, eccentric_curviness=0.9),
    "FiberForceLengthCurve": dict(strain_at_zero_force=0.0, strain_at_one_norm_force=0.7),
    "TendonForceLengthCurve": dict(strain_at_one_norm_force=0.049),
}


def build(cls: str, properties: dict):
    kw = {**DEFAULTS[cls], **properties}
    if cls == "FiberForceLengthCurve" and "curviness" not in kw:
        kw.update(mc.fiber_force_length_defaults(kw["strain_at_zero_force"], kw["strain_at_one_norm_force"]))
    if cls == "TendonForceLengthCurve" and "curviness" not in kw:
        kw.update(mc.tendon_force_length_defaults(kw["strain_at_one_norm_force"]))
    kw = {k: jnp.asarray(float(v)) for k, v in kw.items()}
    if cls.startswith("ForceVelocity"):
        return mc.ForceVelocityCurve(**kw, inverse=cls == "ForceVelocityInverseCurve")
    return getattr(mc, cls)(**kw)


CASES = [(cls, k, v) for cls, variants in json.loads((GOLDEN / "millard_curves.json").read_text()).items()
         for k, v in enumerate(variants)]


@jax.jit
def _values_and_slopes(curve, x):
    return jax.vmap(curve.value)(x), jax.vmap(jax.grad(curve.value))(x)


@pytest.mark.parametrize("cls,k,golden", CASES, ids=[f"{c}-{k}" for c, k, _ in CASES])
def test_curve_matches_opensim(cls, k, golden):
    value, slope = _values_and_slopes(build(cls, golden["properties"]), jnp.asarray(golden["x"]))
    assert_close(value, golden["value"], 1e-12, f"{cls} value")
    assert_close(slope, golden["derivative"], 1e-12, f"{cls} derivative")


def test_curve_parameter_derivatives_match_central_differences():
    """d fal / d(every ActiveForceLengthCurve property) and d fse / d(strain_at_one_norm_force) by reverse mode
    through the factory's construction and the Bézier solve, at points inside sections."""
    fal = build("ActiveForceLengthCurve", {})
    x = jnp.asarray([0.55, 0.8, 0.97, 1.3])
    f = jax.jit(lambda c: jnp.sum(jax.vmap(c.value)(x) * jnp.arange(1.0, 5.0)))
    g = jax.grad(f)(fal)
    for name in DEFAULTS["ActiveForceLengthCurve"]:
        d = type(fal)(**{n: jnp.asarray(float(n == name)) for n in DEFAULTS["ActiveForceLengthCurve"]})
        assert_close(getattr(g, name), central_difference(f, fal, 1e-7, d), 1e-6, f"d fal / d {name}")
    ad = jax.grad(lambda e: build_tendon(e).value(1.02))(0.049)
    fd = (build_tendon(0.049 + 1e-7).value(1.02) - build_tendon(0.049 - 1e-7).value(1.02)) / 2e-7
    assert_close(ad, fd, 1e-6, "d fse / d strain_at_one_norm_force")


def build_tendon(e0):
    """A TendonForceLengthCurve with OpenSim's fitted optional properties, as a function of its strain e0."""
    return mc.TendonForceLengthCurve(jnp.asarray(e0), 1.375 / jnp.asarray(e0), jnp.asarray(2.0 / 3.0),
                                     jnp.asarray(0.5))


def test_vmap_1024_points():
    fv = build("ForceVelocityCurve", {})
    x = jnp.linspace(-1.1, 1.1, 1024)
    many = np.asarray(jax.jit(jax.vmap(fv.value))(x))
    assert_close(many[[0, 300, 1023]], np.array([fv.value(x[0]), fv.value(x[300]), fv.value(x[1023])]), 1e-13, "fv")
    inside = (x[1:] > -1.0) & (x[:-1] < 1.0)
    assert np.all(np.diff(many)[inside] > 0), "fv increases with velocity within [-1, 1]"
