"""``jb.Force.InertiaBoxFluid`` and ``jb.Force.EllipsoidFluid``: MuJoCo's inertia-box fluid forces on one body
(jaxbody._dynamics.force_elements.fluid) and its ellipsoid fluid forces on one geom
(jaxbody._dynamics.force_elements.fluid_ellipsoid).

Validates on the host (InvalidArgument naming the body) and registers a handle whose element keeps every
number (sizes, frames, coefficients, density, viscosity, wind) as Model leaves.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.force_checks import check_mobod, scalar, vec3
from jaxbody._api.force_handles import ForceHandle
from jaxbody._dynamics.force_elements import fluid, fluid_ellipsoid
from jaxbody._math.validity import first_failure, message, rotation_failures
from jaxbody.errors import InvalidArgument


class FluidForces:
    """Fluid-force builders of ``jb.Force``."""

    @staticmethod
    def InertiaBoxFluid(forces, mobod, box, com_station, inertial_axes, density, viscosity,
                        wind=(0.0, 0.0, 0.0)) -> ForceHandle:
        """Drag and viscous forces on ``mobod`` of a box ``box`` (3,) (m, full sizes along the inertial axes)
        centred at ``com_station`` (3,) (m, in B) with axes ``inertial_axes`` (3, 3) (columns in B, a rotation),
        in a fluid of ``density`` (kg/m^3, >= 0) and dynamic ``viscosity`` (Pa s, >= 0) moving at ``wind`` (3,)
        (m/s, in G); formulas in jaxbody._dynamics.force_elements.fluid."""
        label = f"InertiaBoxFluid on {getattr(mobod, 'name', mobod)!r}"
        check_mobod(forces, mobod, label)
        b = vec3(box, f"{label}: box")
        if np.any(np.asarray(b) < 0):
            raise InvalidArgument(f"{label}: box sizes must be non-negative, got {box!r}")
        R = _rotation(inertial_axes, label, "inertial_axes")
        p, w = vec3(com_station, f"{label}: com_station"), vec3(wind, f"{label}: wind")
        rho = scalar(density, f"{label}: density", True)
        mu = scalar(viscosity, f"{label}: viscosity", True)
        return ForceHandle(forces, lambda: fluid.InertiaBoxFluid(
            body=mobod.index, box=b, p_BI=p, R_BI=R, density=rho, viscosity=mu, wind=w), label)

    @staticmethod
    def EllipsoidFluid(forces, mobod, geom_station, geom_axes, semiaxes, virtual_mass, virtual_inertia, density,
                       viscosity, wind=(0.0, 0.0, 0.0), blunt_drag=0.5, slender_drag=0.25, angular_drag=1.5,
                       kutta_lift=1.0, magnus_lift=1.0, interaction=1.0, name=None) -> ForceHandle:
        """MuJoCo's ellipsoid fluid forces on one geom of ``mobod``: an ellipsoid of ``semiaxes`` (3,) (m, > 0)
        centred at ``geom_station`` (3,) (m, in B) with axes ``geom_axes`` (3, 3) (columns in B, a rotation), with
        the added-mass factors ``virtual_mass`` (3,) (m^3) and ``virtual_inertia`` (3,) (m^5) (MuJoCo's compiler
        derives them from the semi-axes: ``MjModel.geom_fluid[g, 6:12]``), in a fluid of ``density`` (kg/m^3,
        >= 0) and dynamic ``viscosity`` (Pa s, >= 0) moving at ``wind`` (3,) (m/s, in G); the drag and lift
        coefficients default to MJCF's ``fluidcoef`` and ``interaction`` scales the whole force (MuJoCo's
        ``geom_fluid[g, 0]``). Formulas in jaxbody._dynamics.force_elements.fluid_ellipsoid."""
        label = name or f"EllipsoidFluid on {getattr(mobod, 'name', mobod)!r}"
        check_mobod(forces, mobod, label)
        s = vec3(semiaxes, f"{label}: semiaxes")
        if not np.all(np.asarray(s) > 0):
            raise InvalidArgument(f"{label}: semiaxes must be positive, got {semiaxes!r}")
        R = _rotation(geom_axes, label, "geom_axes")
        p, w = vec3(geom_station, f"{label}: geom_station"), vec3(wind, f"{label}: wind")
        vm, vi = vec3(virtual_mass, f"{label}: virtual_mass"), vec3(virtual_inertia, f"{label}: virtual_inertia")
        coefficients = jnp.stack([scalar(c, f"{label}: {what}", what != "interaction") for c, what in (
            (interaction, "interaction"), (blunt_drag, "blunt_drag"), (slender_drag, "slender_drag"),
            (angular_drag, "angular_drag"), (kutta_lift, "kutta_lift"), (magnus_lift, "magnus_lift"))])
        rho = scalar(density, f"{label}: density", True)
        mu = scalar(viscosity, f"{label}: viscosity", True)
        return ForceHandle(forces, lambda: fluid_ellipsoid.EllipsoidFluid(
            body=mobod.index, p_BE=p, R_BE=R, semiaxes=s, coefficients=coefficients, virtual_mass=vm,
            virtual_inertia=vi, density=rho, viscosity=mu, wind=w), label)


def _rotation(axes, label, what):
    """``axes`` as a (3, 3) rotation matrix leaf (InvalidArgument naming ``label`` otherwise)."""
    R = np.asarray(axes, dtype=float)
    if R.shape != (3, 3):
        raise InvalidArgument(f"{label}: {what} must be a rotation matrix (3, 3), got {axes!r}")
    failed = first_failure(rotation_failures(R))  # the builders' rotation check (jaxbody._math.validity)
    if failed:
        raise InvalidArgument(f"{label}: " + message(failed[0], what, R))
    return jnp.asarray(R)
