"""Wrap objects (OpenSim's WrapObject): the common record and the result of wrapping one straight segment.

A wrap object is fixed on a body: ``body`` (static index), its frame W's pose in the body (R_BW (3, 3),
p_BW (3,) m, OpenSim's ``xyz_body_rotation`` and ``translation``), ``quadrant`` as (axis, sign) (static:
``(0, 0)`` for "all", ``(1, -1)`` for "-y", ...) and ``active`` (static). Each type's ``wrap_line(p1, p2,
single_wrap)`` takes the segment's end points in W and returns a :class:`WrapLine`, exactly as the type's
OpenSim ``wrapLine`` (WrapSphere.cpp, WrapCylinder.cpp) with every early return turned into a masked code,
so shapes are fixed and the function vmaps over candidate segments.
"""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.paths.wrap_math import NO_WRAP

QUADRANTS = {"all": (0, 0), "x": (0, 1), "+x": (0, 1), "-x": (0, -1), "y": (1, 1), "+y": (1, 1), "-y": (1, -1),
             "z": (2, 1), "+z": (2, 1), "-z": (2, -1)}


class WrapLine(NamedTuple):
    """One segment's wrap: ``code`` (NO_WRAP, INSIDE_RADIUS, WRAPPED, MANDATORY_WRAP), tangent points r1, r2 (3,)
    in W (m) and the length on the surface between them (m; OpenSim's wrap_path_length)."""

    code: jnp.ndarray
    r1: jnp.ndarray
    r2: jnp.ndarray
    length: jnp.ndarray


def no_wrap(p1) -> WrapLine:
    return WrapLine(jnp.asarray(NO_WRAP), jnp.zeros_like(p1), jnp.zeros_like(p1), jnp.zeros_like(p1[0]))


class WrapObject(eqx.Module):
    """Common fields of the wrap object types (see the module docstring)."""

    body: int = eqx.field(static=True)
    R_BW: jnp.ndarray
    p_BW: jnp.ndarray
    quadrant: tuple = eqx.field(static=True)
    active: bool = eqx.field(static=True)
    name: str = eqx.field(static=True)

    def wrap_line(self, p1, p2, single_wrap: bool) -> WrapLine:
        raise NotImplementedError


class PathWrap(eqx.Module):
    """One entry of a path's PathWrapSet: its wrap object and the 0-based range [start, end] of path points
    considered for wrapping (OpenSim's 1-based ``range``; -1 = first/last point). Static except the object's
    numbers."""

    wrap: WrapObject
    start: int = eqx.field(static=True)
    end: int = eqx.field(static=True)
