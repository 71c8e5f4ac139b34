"""Host-side builder of ``jb.ExponentialSpringForce`` and Simbody's ``jb.ExponentialSpringParameters``."""

from __future__ import annotations

import dataclasses
import math

import jax.numpy as jnp
import numpy as np

from jaxbody._api.contact_force import frame_on_body
from jaxbody._api.force_checks import check_mobod as _check_mobod
from jaxbody._api.force_checks import vec3 as _vec3
from jaxbody._api.force_handles import ForceHandle
from jaxbody._dynamics.contact import exponential_spring
from jaxbody._math import spatial
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument


@dataclasses.dataclass(frozen=True)
class ExponentialSpringParameters:
    """Simbody's ExponentialSpringParameters, with its defaults (SI units).

    ``shape`` (d0 m, d1 N, d2 1/m), ``normal_viscosity`` cz (s/m), ``max_normal_force`` (N),
    ``friction_elasticity`` kxy (N/m), ``friction_viscosity`` cxy (N s/m; default ``2 sqrt(kxy * 1 kg)``,
    Simbody's critical damping for a 1 kg mass), ``settle_velocity`` (m/s), ``initial_mu_static``,
    ``initial_mu_kinetic``; jaxbody's ``sliding_time_constant`` (s) of the continuous anchor dynamics.
    """

    shape: tuple = (0.0065905, 0.5336, 1150.0)
    normal_viscosity: float = 0.5
    max_normal_force: float = 100000.0
    friction_elasticity: float = 20000.0
    friction_viscosity: float = 2.0 * math.sqrt(20000.0)
    settle_velocity: float = 0.01
    initial_mu_static: float = 0.7
    initial_mu_kinetic: float = 0.5
    sliding_time_constant: float = 0.005

    def checked(self, label) -> dict:
        """The element's parameter leaves; InvalidArgument (naming ``label``) for values Simbody rejects."""
        d0, d1, d2 = (float(x) for x in self.shape)
        values = {"d0": d0, "d1": d1, "d2": d2, "normal_viscosity": self.normal_viscosity, "max_normal_force": self.max_normal_force,
                      "friction_elasticity": self.friction_elasticity, "friction_viscosity": self.friction_viscosity,
                      "settle_velocity": self.settle_velocity, "mu_static": self.initial_mu_static,
                      "mu_kinetic": min(self.initial_mu_kinetic, self.initial_mu_static),
                      "sliding_time_constant": self.sliding_time_constant}
        for name, v in values.items():
            v = float(v)
            if not math.isfinite(v) or (name != "d0" and v < 0) or (name in ("d1", "d2", "friction_elasticity",
                                                                            "settle_velocity", "sliding_time_constant", "max_normal_force") and v <= 0):
                raise InvalidArgument(f"{label}: parameter {name} = {v!r} is out of range")
        return {k: jnp.asarray(float(v)) for k, v in values.items()}


class ExponentialSpringForce(ForceHandle):
    """``jb.ExponentialSpringForce(forces, X_GP, body, station, params)``: Simbody's exponential spring of a
    body station against the contact plane X_GP (z = normal) fixed in Ground.

    ``add_station(body, station)`` adds more springs sharing the plane and parameters (evaluated together,
    vectorized); each has state variables (p0x, p0y, K) in ``State.z`` (default p0 = 0, K = 1 as Simbody).
    ``reset_anchor_points(model, state)`` puts every anchor under its station (Simbody's resetAnchorPoint).
    """

    def __init__(self, forces, X_GP, body, station, params: ExponentialSpringParameters | None = None):
        self._forces, self._stations = forces, []
        self._X_GP = frame_on_body(X_GP, "ExponentialSpringForce X_GP")
        params = ExponentialSpringParameters() if params is None else params
        if not isinstance(params, ExponentialSpringParameters):
            raise InvalidArgument(f"ExponentialSpringForce params must be jb.ExponentialSpringParameters, got {type(params).__name__}")
        self._params = params.checked("ExponentialSpringForce")
        super().__init__(forces, self._make, "ExponentialSpringForce")
        self.add_station(body, station)

    def add_station(self, body, station) -> int:
        _check_mobod(self._forces, body, "ExponentialSpringForce")
        if body.index == 0:
            raise InvalidArgument("ExponentialSpringForce: the station's body is Ground; the plane is fixed in Ground")
        self._stations.append((body.index, np.asarray(_vec3(station, f"ExponentialSpringForce on {body.name!r}: station"))))
        return len(self._stations) - 1

    @property
    def num_z(self) -> int:
        """(p0x, p0y, K) per station, laid out by ``ForceHandle.z_slice``."""
        return 3 * len(self._stations)

    def _make(self):
        n = len(self._stations)
        initial = np.tile([0.0, 0.0, 1.0], (n, 1))
        return exponential_spring.ExponentialSpringForce(
            body=tuple(b for b, _ in self._stations), R_GP=jnp.asarray(self._X_GP[0]), p_GP=jnp.asarray(self._X_GP[1]),
            station=jnp.asarray(np.stack([s for _, s in self._stations])), initial_z=jnp.asarray(initial), **self._params,
        )

    def reset_anchor_points(self, model, state):
        """State with each anchor p0 at its station's projection on the plane (K unchanged); needs nothing realized."""
        element, z_slice = model.forces[self.index], self.z_slice
        pos = model.realize(state, Stage.Position).position
        p_G = pos.p_GB[np.asarray(element.body)] + spatial.matvec(pos.R_GB[np.asarray(element.body)], element.station)
        p_P = spatial.mattvec(element.R_GP, p_G - element.p_GP)
        z = state.z[z_slice].reshape(-1, 3).at[:, :2].set(p_P[:, :2])
        return state.set_z(state.z.at[z_slice].set(z.reshape(-1)))
