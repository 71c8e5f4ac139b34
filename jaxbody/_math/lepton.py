"""OpenSim's expression grammar (the Lepton library's), parsed on the host into a static tree and evaluated in JAX.

Grammar (Lepton's Parser): numbers (``1``, ``.5``, ``2.5e-3``), variables, ``+ - * / ^`` with ``+ -`` below
``* /`` below ``^`` (``^`` is right-associative, the others left), unary minus binding tighter than ``* /`` but
looser than ``^`` (``-x^2 = -(x^2)``, ``-a*b = (-a)*b``), parentheses, and the functions sqrt exp log sin cos sec
csc tan cot asin acos atan sinh cosh tanh erf erfc step delta square cube recip abs (one argument) and min max
(two). ``step(x)`` is 1 for x >= 0 else 0, ``delta(x)`` is 1 for x == 0 else 0 (both with zero derivative).
Lepton's ``;``-separated subexpressions are not supported (OpenSim's forces do not use them).

``parse(text, variables, owner)`` returns a hashable tree of tuples (a static field of a force element, so equal
expressions share compiled code); anything Lepton would reject -- an unknown function or variable, a wrong
number of arguments, unbalanced parentheses, a dangling operator -- raises InvalidArgument naming ``owner``, the
expression and the character position. ``evaluate(tree, values)`` computes it with jax.numpy (traceable,
differentiable, vmappable). Cost: one jnp operation per node.
"""

from __future__ import annotations

import re

import jax.numpy as jnp
import jax.scipy.special as jsp

from jaxbody.errors import InvalidArgument

_UNARY = {
    "sqrt": jnp.sqrt, "exp": jnp.exp, "log": jnp.log, "sin": jnp.sin, "cos": jnp.cos,
    "sec": lambda x: 1.0 / jnp.cos(x), "csc": lambda x: 1.0 / jnp.sin(x), "tan": jnp.tan,
    "cot": lambda x: 1.0 / jnp.tan(x), "asin": jnp.arcsin, "acos": jnp.arccos, "atan": jnp.arctan,
    "sinh": jnp.sinh, "cosh": jnp.cosh, "tanh": jnp.tanh, "erf": jsp.erf, "erfc": jsp.erfc,
    "step": lambda x: jnp.where(x >= 0, 1.0, 0.0).astype(x.dtype),
    "delta": lambda x: jnp.where(x == 0, 1.0, 0.0).astype(x.dtype),
    "square": lambda x: x * x, "cube": lambda x: x * x * x, "recip": lambda x: 1.0 / x, "abs": jnp.abs,
}
_BINARY_FUNCTIONS = {"min": jnp.minimum, "max": jnp.maximum}
_OPERATORS = {"+": (0, True), "-": (0, True), "*": (1, True), "/": (1, True), "^": (3, False)}
_BINARY = {"+": jnp.add, "-": jnp.subtract, "*": jnp.multiply, "/": jnp.divide, "^": jnp.power,
           **_BINARY_FUNCTIONS}
_NEGATE_PRECEDENCE = 2
_NUMBER = re.compile(r"(\d+\.?\d*|\.\d*)([eE][+-]?\d*)?")
_NAME = re.compile(r"[^\s()+\-*/^,]+")


def _tokenize(text: str):
    """(kind, text, position) tokens; kinds: number, name, function (name followed by '('), op, (, ), ','."""
    tokens, pos = [], 0
    while pos < len(text):
        c = text[pos]
        if c.isspace():
            pos += 1
        elif c in "(),":
            tokens.append((c, c, pos))
            pos += 1
        elif c in _OPERATORS:
            tokens.append(("op", c, pos))
            pos += 1
        elif c.isdigit() or c == ".":
            m = _NUMBER.match(text, pos)
            tokens.append(("number", m.group(0), pos))
            pos = m.end()
        else:
            m = _NAME.match(text, pos)
            end = m.end()
            if end < len(text) and text[end] == "(":
                tokens.append(("function", m.group(0), pos))
                end += 1
            else:
                tokens.append(("name", m.group(0), pos))
            pos = end
    return tokens


def parse(text: str, variables, owner: str):
    """The expression ``text`` as a static tree over ``variables`` (names); InvalidArgument naming ``owner``."""
    variables = tuple(variables)

    def fail(message, position):
        raise InvalidArgument(f"{owner}: cannot parse expression {text!r} at position {position}: {message}")

    tokens = _tokenize(text)

    def at_end(i):
        return i >= len(tokens)

    def position(i):
        return tokens[i][2] if i < len(tokens) else len(text)

    def value(i):
        if at_end(i):
            fail("unexpected end of expression", len(text))
        kind, word, where = tokens[i]
        if kind == "number":
            try:
                return ("const", float(word)), i + 1
            except ValueError:
                fail(f"malformed number {word!r}", where)
        if kind == "name":
            if word not in variables:
                fail(f"unknown variable {word!r} (this force's variables: {', '.join(variables)})", where)
            return ("var", word), i + 1
        if kind == "(":
            tree, i = expression(i + 1, 0)
            if at_end(i) or tokens[i][0] != ")":
                fail("unbalanced parentheses", position(i))
            return tree, i + 1
        if kind == "function":
            args, i = [], i + 1
            while True:
                arg, i = expression(i, 0)
                args.append(arg)
                if not at_end(i) and tokens[i][0] == ",":
                    i += 1
                    continue
                break
            if at_end(i) or tokens[i][0] != ")":
                fail("unbalanced parentheses", position(i))
            arity = 1 if word in _UNARY else 2 if word in _BINARY_FUNCTIONS else None
            if arity is None:
                fail(f"unknown function {word!r}", where)
            if len(args) != arity:
                fail(f"{word} takes {arity} argument(s), got {len(args)}", where)
            return (word, *args), i + 1
        if kind == "op" and word == "-":
            operand, i = expression(i + 1, _NEGATE_PRECEDENCE)
            return ("neg", operand), i
        fail(f"unexpected {word!r}", where)

    def expression(i, precedence):
        tree, i = value(i)
        while not at_end(i) and tokens[i][0] == "op":
            op = tokens[i][1]
            op_precedence, left = _OPERATORS[op]
            if op_precedence < precedence:
                break
            rhs, i = expression(i + 1, op_precedence + 1 if left else op_precedence)
            tree = (op, tree, rhs)
        return tree, i

    tree, i = expression(0, 0)
    if not at_end(i):
        fail(f"unexpected text at end of expression: {tokens[i][1]!r}", position(i))
    return tree


def evaluate(tree, values: dict):
    """The value of a parsed expression, ``values``: variable name -> jnp scalar (or arrays, elementwise)."""
    kind = tree[0]
    if kind == "const":
        return jnp.asarray(tree[1], dtype=next(iter(values.values())).dtype) if values else jnp.asarray(tree[1])
    if kind == "var":
        return values[tree[1]]
    if kind == "neg":
        return -evaluate(tree[1], values)
    args = [evaluate(t, values) for t in tree[1:]]
    return (_UNARY[kind] if kind in _UNARY else _BINARY[kind])(*args)
