"""OpenSim 4.5+'s ``<FunctionBasedPath>`` (a muscle's or path actuator's path whose length is a function of a few
coordinates, as Moco's polynomial path fits write it) as a jaxbody FunctionBasedPath, read without OpenSim.

* ``coordinate_paths``: the coordinates (component paths; the last component names the coordinate), in the
  order of the length function's arguments; at least one, none twice.
* ``length_function``: a ``MultivariatePolynomialFunction`` (dimension = the number of coordinates, order,
  C(dimension + order, order) coefficients in OpenSim's monomial order; the coefficients are Model leaves), or
  any function jaxbody.io.opensim_functions reads (a static callable of the coordinate values).
* Moment arms, speed and generalized forces are the length function's derivatives, as OpenSim computes them
  when ``moment_arm_functions`` and ``lengthening_speed_function`` are absent. A path that gives those
  functions is not built (``UnsupportedFunctionPath``: OpenSim would use them instead of the derivatives).

Errors (InvalidArgument) name the file, line and force.
"""

from __future__ import annotations

from typing import Callable

import equinox as eqx

from jaxbody._dynamics.paths.function_based_path import FunctionBasedPath, MultivariatePolynomial
from jaxbody.errors import InvalidArgument
from jaxbody.io.opensim_functions import parse_function
from jaxbody.io.osim_xml import OsimDocument, element_error, names, numbers


class UnsupportedFunctionPath(InvalidArgument):
    """A FunctionBasedPath jaxbody cannot compute faithfully; ``reason`` says why."""

    def __init__(self, where: str, reason: str):
        super().__init__(f"{where}: {reason}")
        self.reason = reason


class StaticLengthFunction(eqx.Module):
    """A length function whose numbers are not Model leaves (an imported OpenSim function other than a
    MultivariatePolynomialFunction): ``function(x (d,)) -> scalar``, static."""

    function: Callable = eqx.field(static=True)

    def __call__(self, x):
        return self.function(x)


def _integer(doc, element, field: str, owner: str) -> int:
    value = numbers(doc, element, field, owner, 1)[0]
    if value != int(value) or value < 0:
        raise element_error(doc, element, owner, f"<{field}> must be a non-negative integer, got {value}")
    return int(value)


def _length_function(doc: OsimDocument, holder, owner: str, dimension: int):
    functions = list(holder)
    if len(functions) != 1:
        raise element_error(doc, holder, owner, f"<length_function> must hold exactly one function, got {len(functions)}")
    f = functions[0]
    if f.tag != "MultivariatePolynomialFunction":
        return StaticLengthFunction(parse_function(doc, f, owner))
    given = _integer(doc, f, "dimension", owner)
    if given != dimension:
        raise element_error(doc, f, owner, f"the length function's dimension ({given}) must equal the number of "
                            f"coordinates in <coordinate_paths> ({dimension})")
    try:
        return MultivariatePolynomial.of(given, _integer(doc, f, "order", owner), numbers(doc, f, "coefficients", owner))
    except InvalidArgument as e:
        raise element_error(doc, f, owner, str(e)) from None


def build_function_based_path(doc: OsimDocument, coordinates: dict, element, owner: str) -> FunctionBasedPath:
    """The FunctionBasedPath ``element`` of the force ``owner``; ``coordinates`` maps coordinate names to
    CoordinateInfo (as load_osim builds them)."""
    paths = names(doc, element, "coordinate_paths", owner)
    if not paths:
        raise element_error(doc, element, owner, "a FunctionBasedPath needs at least one coordinate in <coordinate_paths>")
    if len(set(paths)) != len(paths):
        raise element_error(doc, element, owner, f"a coordinate is given more than once in <coordinate_paths>: {paths}")
    q = []
    for path in paths:
        name = path.rstrip("/").split("/")[-1]
        if name not in coordinates:
            raise element_error(doc, element, owner, f"coordinate_paths {path!r} names no coordinate of the model")
        info = coordinates[name]
        q.append(info.body.q_start + info.q_index)
    for field in ("moment_arm_functions", "lengthening_speed_function"):
        holder = element.find(field)
        if holder is not None and len(holder):
            raise UnsupportedFunctionPath(f"{doc.source}: line {doc.line(holder)}", f"FunctionBasedPath <{field}> "
                                          "(jaxbody differentiates the length function; OpenSim would use these)")
    holder = element.find("length_function")
    if holder is None:
        raise element_error(doc, element, owner, "a FunctionBasedPath needs a <length_function>")
    return FunctionBasedPath(_length_function(doc, holder, owner, len(paths)), tuple(q))
