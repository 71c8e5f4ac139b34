"""OpenSim 4.5+'s ``<FunctionBasedPath>`` (a muscle's or path actuator's path whose length is a function of a few
coordinates, as Moco's polynomial path fits write it) as a jaxbody FunctionBasedPath, read without OpenSim.

* ``coordinate_paths``: the coordinates (component paths; the last component names the coordinate), in the
  order of the length function's arguments; at least one, none twice.
* ``length_function``: a ``MultivariatePolynomialFunction`` (dimension = the number of coordinates, order,
  C(dimension + order, order) coefficients in OpenSim's monomial order; the coefficients are Model leaves), or
  any function jaxbody.io.opensim_functions reads (a static callable of the coordinate values).
* ``moment_arm_functions`` (one per coordinate, functions of the coordinate values) and
  ``lengthening_speed_function`` (a function of the values and then the speeds): read the same way and used as
  OpenSim uses them (jaxbody._dynamics.paths.function_based_path); absent, moment arms, speed and generalized
  forces are the length function's derivatives. Each coordinate's speed is its mobilizer's u at its q's offset
  (as the coordinate actuators read it).

Errors (InvalidArgument) name the file, line and force.
"""

from __future__ import annotations

from typing import Callable

import equinox as eqx

from jaxbody._dynamics.paths.function_based_path import FunctionBasedPath, MultivariatePolynomial
from jaxbody.errors import InvalidArgument
from jaxbody.io.opensim_functions import parse_function
from jaxbody.io.osim_xml import OsimDocument, element_error, names, numbers


class StaticFunction(eqx.Module):
    """A path function whose numbers are not Model leaves (an imported OpenSim function other than a
    MultivariatePolynomialFunction): ``function(x) -> scalar``, static."""

    function: Callable = eqx.field(static=True)

    def __call__(self, x):
        return self.function(x)


def _integer(doc, element, field: str, owner: str) -> int:
    value = numbers(doc, element, field, owner, 1)[0]
    if value != int(value) or value < 0:
        raise element_error(doc, element, owner, f"<{field}> must be a non-negative integer, got {value}")
    return int(value)


def _one_function(doc: OsimDocument, holder, owner: str, dimension: int):
    functions = list(holder)
    if len(functions) != 1:
        raise element_error(doc, holder, owner, f"<{holder.tag}> must hold exactly one function, got {len(functions)}")
    return _function(doc, functions[0], owner, dimension)


def _function(doc: OsimDocument, f, owner: str, dimension: int):
    """One OpenSim function of ``dimension`` arguments: a MultivariatePolynomial (leaves) or a static callable."""
    if f.tag != "MultivariatePolynomialFunction":
        return StaticFunction(parse_function(doc, f, owner))
    given = _integer(doc, f, "dimension", owner)
    if given != dimension:
        raise element_error(doc, f, owner, f"the function's dimension ({given}) must equal {dimension} (the number "
                            "of coordinates in <coordinate_paths>, twice that for a lengthening_speed_function)")
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
    q, u = [], []
    for path in paths:
        name = path.rstrip("/").split("/")[-1]
        if name not in coordinates:
            raise element_error(doc, element, owner, f"coordinate_paths {path!r} names no coordinate of the model")
        info = coordinates[name]
        q.append(info.body.q_start + info.q_index)
        u.append(info.body.u_start + info.q_index)
    holder = element.find("length_function")
    if holder is None:
        raise element_error(doc, element, owner, "a FunctionBasedPath needs a <length_function>")
    d = len(paths)
    length = _one_function(doc, holder, owner, d)
    arms_holder, speed_holder = element.find("moment_arm_functions"), element.find("lengthening_speed_function")
    arms = None if arms_holder is None or not len(arms_holder) else list(arms_holder)
    if arms is not None and len(arms) != d:
        raise element_error(doc, arms_holder, owner, f"<moment_arm_functions> needs one function per coordinate ({d}), "
                            f"got {len(arms)}")
    speed = None if speed_holder is None or not len(speed_holder) else _one_function(doc, speed_holder, owner, 2 * d)
    if arms is None and speed is None:
        return FunctionBasedPath(length, tuple(q))
    return FunctionBasedPath(length, tuple(q), None if arms is None else tuple(_function(doc, f, owner, d) for f in arms),
                             speed, tuple(u))
