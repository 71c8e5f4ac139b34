"""``jb.Force.InertiaBoxFluid``: MuJoCo's inertia-box fluid forces on one body (jaxbody._dynamics.force_elements.fluid).

Validates on the host (InvalidArgument naming the body) and registers a handle whose element keeps every
number (box, centre of mass, inertial axes, density, viscosity, wind) as Model leaves.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.force_checks import check_mobod, scalar, vec3
from jaxbody._api.force_handles import ForceHandle
from jaxbody._dynamics.force_elements import fluid
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
        R = np.asarray(inertial_axes, dtype=float)
        if R.shape != (3, 3):
            raise InvalidArgument(f"{label}: inertial_axes must be a rotation matrix (3, 3), got {inertial_axes!r}")
        failed = first_failure(rotation_failures(R))  # the builders' rotation check (jaxbody._math.validity)
        if failed:
            raise InvalidArgument(f"{label}: " + message(failed[0], "inertial_axes", R))
        p, w = vec3(com_station, f"{label}: com_station"), vec3(wind, f"{label}: wind")
        rho = scalar(density, f"{label}: density", True)
        mu = scalar(viscosity, f"{label}: viscosity", True)
        return ForceHandle(forces, lambda: fluid.InertiaBoxFluid(
            body=mobod.index, box=b, p_BI=p, R_BI=jnp.asarray(R), density=rho, viscosity=mu, wind=w), label)
