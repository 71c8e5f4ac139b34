"""``jb.Force.*`` builders of OpenSim's non-muscle forces along a path (jaxbody._dynamics.path_forces):
Ligament, PathSpring, PathActuator. Host-side checks name the force; every number is a Model leaf."""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._api.force_checks import check_forces
from jaxbody._api.force_handles import ForceHandle
from jaxbody._api.spline_parameters import positive, spline_curve
from jaxbody._dynamics.muscles import default_splines
from jaxbody._dynamics.path_forces import path_spring
from jaxbody._dynamics.path_forces.ligament import Ligament as LigamentElement
from jaxbody._dynamics.paths.base import Path
from jaxbody.errors import InvalidArgument


def check_path(forces, path, kind: str, name: str) -> Path:
    """``path`` if it is a jaxbody path; InvalidArgument naming ``kind name`` otherwise."""
    check_forces(forces, name)
    if not isinstance(path, Path):
        raise InvalidArgument(f"{kind} {name!r}: path must be a jaxbody path (e.g. jb.GeometryPath), got "
                              f"{type(path).__name__}")
    return path


class PathForces:
    """OpenSim's Ligament, PathSpring and PathActuator."""

    @staticmethod
    def Ligament(forces, name: str, path, resting_length, pcsa_force, force_length_curve=None) -> ForceHandle:
        """OpenSim Ligament on ``path``: tension ``pcsa_force (N) * curve(L / resting_length (m))`` when the path
        is longer than its resting length, else 0. ``force_length_curve``: ``(x, y)`` SimmSpline knots (Model
        leaves), OpenSim 4.6's default curve when None."""
        path = check_path(forces, path, "Ligament", name)
        rest = jnp.asarray(positive("Ligament", name, "resting_length", resting_length))
        pcsa = jnp.asarray(positive("Ligament", name, "pcsa_force", pcsa_force, allow_zero=True))
        curve = spline_curve("Ligament", name, "force_length_curve",
                             default_splines.LIGAMENT_FORCE_LENGTH if force_length_curve is None else force_length_curve)
        return ForceHandle(forces, lambda: LigamentElement(path=path, resting_length=rest, pcsa_force=pcsa,
                                                           force_length_curve=curve), name)

    @staticmethod
    def PathSpring(forces, name: str, path, resting_length, stiffness, dissipation) -> ForceHandle:
        """OpenSim PathSpring on ``path``: tension ``stiffness (N/m) * max(0, L - resting_length (m)) *
        (1 + dissipation (s/m) * dL/dt)``; each number >= 0 (OpenSim's check)."""
        path = check_path(forces, path, "PathSpring", name)
        values = {field: jnp.asarray(positive("PathSpring", name, field, value, allow_zero=True)) for field, value in
                  (("resting_length", resting_length), ("stiffness", stiffness), ("dissipation", dissipation))}
        return ForceHandle(forces, lambda: path_spring.PathSpring(path=path, **values), name)

    @staticmethod
    def PathActuator(forces, name: str, path, optimal_force=1.0) -> ForceHandle:
        """OpenSim PathActuator on ``path``: tension ``optimal_force (N) * control`` (one control, named ``name``)."""
        path = check_path(forces, path, "PathActuator", name)
        force = jnp.asarray(positive("PathActuator", name, "optimal_force", optimal_force, allow_zero=True))
        return ForceHandle(forces, lambda: path_spring.PathActuator(path=path, optimal_force=force), name,
                           controls=(name,))
