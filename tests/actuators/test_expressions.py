"""OpenSim's expression grammar (jaxbody._math.lepton): precedence and associativity as Lepton parses them,
every function, errors naming the force and the position (also through load_osim, with the file line), and
derivatives against central differences."""

from __future__ import annotations

import math
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_grad_matches_fd

import jaxbody as jb
from jaxbody._math import lepton
from jaxbody.io import load_osim

Q, QDOT = 0.7, -1.3
CASES = [  # (expression, value at q = 0.7, qdot = -1.3): Lepton's precedence, as OpenSim evaluates it
    ("-q^2", -(Q ** 2)), ("-2*q", -2 * Q), ("2^3^2", 2.0 ** 9), ("1-2-3", -4.0), ("8/4/2", 1.0),
    ("-q*qdot", (-Q) * QDOT), ("q+qdot*2", Q + 2 * QDOT), ("(q+qdot)*2", (Q + QDOT) * 2), ("2*-q", -2 * Q),
    ("1.5e-1*sin(q)/cube(2)", 0.15 * math.sin(Q) / 8), (".5*square(qdot)", 0.5 * QDOT ** 2),
    ("min(q,qdot)+max(q,qdot)", Q + QDOT), ("step(q)+step(qdot)+delta(0)", 2.0), ("abs(qdot)", 1.3),
    ("sqrt(q)+exp(q)+log(q)", math.sqrt(Q) + math.exp(Q) + math.log(Q)),
    ("cos(q)+tan(q)+sec(q)+csc(q)+cot(q)", math.cos(Q) + math.tan(Q) + 1 / math.cos(Q) + 1 / math.sin(Q) + 1 / math.tan(Q)),
    ("asin(q)+acos(q)+atan(qdot)", math.asin(Q) + math.acos(Q) + math.atan(QDOT)),
    ("sinh(q)*cosh(q)-tanh(qdot)+recip(q)", math.sinh(Q) * math.cosh(Q) - math.tanh(QDOT) + 1 / Q),
    ("erf(q)+erfc(q)", 1.0), ("-(-(q))", Q),
]


@pytest.mark.parametrize("text, expected", CASES)
def test_values_follow_leptons_grammar(text, expected):
    tree = lepton.parse(text, ("q", "qdot"), "F")
    value = lepton.evaluate(tree, {"q": jnp.asarray(Q), "qdot": jnp.asarray(QDOT)})
    assert abs(float(value) - expected) <= 1e-13 * max(1.0, abs(expected)), (text, float(value), expected)


@pytest.mark.parametrize("text, message", [
    ("q+", "position 2: unexpected end of expression"), ("foo(q)", "position 0: unknown function 'foo'"),
    ("min(q)", "position 0: min takes 2 argument"), ("(q", "position 2: unbalanced parentheses"),
    ("q)", "position 1: unexpected text at end of expression"), ("x*2", "position 0: unknown variable 'x'"),
    ("2*", "position 2: unexpected end"), ("*q", "position 0: unexpected '\\*'"), ("sin(q,q)", "position 0: sin takes 1 argument"),
])
def test_unparsable_expressions_raise_naming_the_force_and_position(text, message):
    with pytest.raises(jb.InvalidArgument, match=f"my_force: cannot parse expression .* at {message}"):
        lepton.parse(text, ("q", "qdot"), "my_force")


def test_load_osim_names_file_line_force_and_position():
    path = pathlib.Path(__file__).parent.parent / "models" / "osim" / "actuators.osim"
    text = path.read_text().replace("<expression>", "<expression>2*q+sin(", 1)
    with pytest.raises(jb.InvalidArgument, match=r"line \d+: <ExpressionBasedCoordinateForce> of "
                                                  r"ExpressionBasedCoordinateForce 'ebcf'.*at position \d+: unbalanced parentheses"):
        load_osim(text)


def test_derivatives_match_central_differences():
    tree = lepton.parse("-10*q^3+2*sin(qdot)-max(q,0.1)*step(q)+abs(qdot)/3+sqrt(1+q^2)*exp(-qdot)",
                        ("q", "qdot"), "F")

    def f(x):
        return lepton.evaluate(tree, {"q": x[0], "qdot": x[1]})

    assert_grad_matches_fd(jax.jit(f), jnp.array([Q, QDOT]), 1e-6, 1e-8, "d expression / d (q, qdot)")
    batch = jax.vmap(f)(jnp.asarray(np.random.default_rng(1).normal(size=(64, 2))))
    assert batch.shape == (64,) and bool(jnp.all(jnp.isfinite(batch)))
