"""OpenSim's functions in JAX (jaxbody.io.opensim_functions) against OpenSim 4.6's calcValue and calcDerivative.

Data: tests/io/golden/osim_functions.xml (each function as OpenSim writes it) and osim_functions.npz (values,
first and second derivatives at knots, mid-knots, random points and outside the knots), written by
tests/io/generate_osim_golden.py. Derivatives here are JAX's (grad of the JAX function), under jit and vmap.
"""

import pathlib
import xml.etree.ElementTree as ET

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from helpers import assert_close, assert_grad_matches_fd
from jaxbody.io.opensim_functions import parse_function, simm_spline_coefficients
from jaxbody.io.osim_xml import OsimDocument

GOLDEN = pathlib.Path(__file__).parent / "golden"
ROOT = ET.parse(GOLDEN / "osim_functions.xml").getroot()
DOC = OsimDocument(ROOT, "osim_functions.xml", {})
DATA = dict(np.load(GOLDEN / "osim_functions.npz"))
NAMES = [e.get("name") for e in ROOT]


def function(name):
    return parse_function(DOC, ROOT.find(f"*[@name='{name}']"), name)


@pytest.mark.parametrize("name", NAMES)
def test_function_matches_opensim(name):
    f = function(name)
    x = jnp.asarray(DATA[f"{name}_x"])
    value = jax.jit(jax.vmap(f))(x)
    assert_close(value, DATA[f"{name}_value"], 1e-13, f"{name} value")
    if f"{name}_d1" in DATA:  # d/dx0 and d2/dx0^2, as OpenSim's calcDerivative({0}) and ({0, 0})
        d1 = jax.jit(jax.vmap(lambda v: jax.grad(f)(v)[0]))(x)
        d2 = jax.jit(jax.vmap(lambda v: jax.grad(lambda w: jax.grad(f)(w)[0])(v)[0]))(x)
        assert_close(d1, DATA[f"{name}_d1"], 1e-12, f"{name} first derivative")
        assert_close(d2, DATA[f"{name}_d2"], 1e-11, f"{name} second derivative")


def test_natural_cubic_spline_is_opensims_simm_spline():
    """OpenSim 4 reads <NaturalCubicSpline> as a SimmSpline (not a natural spline): same values."""
    assert function("natural_cubic_spline").kind == "SimmSpline"
    second = jax.grad(lambda v: jax.grad(function("natural_cubic_spline"))(v)[0])(jnp.asarray([-1.18941]))[0]
    assert abs(float(second)) > 1e-3, "a natural spline would have zero curvature at its first knot"


def test_simm_spline_interpolates_and_gradient_matches_fd():
    """An independent check of the coefficients: the spline passes through its knots with C2 joins."""
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(-2, 2, 7))
    y = rng.normal(size=7)
    b, c, d = simm_spline_coefficients(x, y)
    h = np.diff(x)
    assert_close(y[:-1] + h * (b[:-1] + h * (c[:-1] + h * d[:-1])), y[1:], 1e-12, "knots")
    assert_close(b[:-1] + h * (2 * c[:-1] + 3 * h * d[:-1]), b[1:], 1e-12, "C1")
    assert_close(2 * c[:-1] + 6 * h * d[:-1], 2 * c[1:], 1e-11, "C2")
    f = function("spline9")
    for t in (-0.9, 0.5, 1.8, 2.5):
        assert_grad_matches_fd(lambda v: f(jnp.asarray([v])), jnp.asarray(t), 1e-6, 1e-8, f"spline9 at {t}")
