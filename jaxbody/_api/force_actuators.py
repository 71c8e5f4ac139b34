"""``jb.Force.*`` builders of OpenSim's coordinate actuators (OpenSim's names and defaults; host-side checks as in
jaxbody._api.force_basic). Each registers a handle that names its controls (``name``, default the element's
label), so ``model.get_control_index(name)`` and ``handle.set_controls(state, x)`` find them.
"""

from __future__ import annotations

from jaxbody._api.force_checks import check_mobod, check_which_u, positive, scalar
from jaxbody._api.force_handles import ForceHandle
from jaxbody._dynamics.actuators import coordinate


class ActuatorForces:
    """OpenSim's actuator builders of ``jb.Force``: CoordinateActuator, ActivationCoordinateActuator."""

    @staticmethod
    def CoordinateActuator(forces, mobod, which_u, optimal_force=1.0, name=None) -> ForceHandle:
        """OpenSim CoordinateActuator: ``optimal_force * control`` (N or N m) on mobility ``which_u`` of ``mobod``.

        Reads one control, named ``name`` (default ``"CoordinateActuator on <body>[which_u]"``)."""
        check_mobod(forces, mobod, "CoordinateActuator")
        label = name or f"CoordinateActuator on {mobod.name}[{which_u}]"
        which_u = check_which_u(mobod, which_u, label)
        f0 = scalar(optimal_force, f"{label}: optimal_force")
        return ForceHandle(forces, lambda: coordinate.CoordinateActuator(
            u_index=mobod.u_start + which_u, optimal_force=f0), label, controls=(label,))

    @staticmethod
    def ActivationCoordinateActuator(forces, mobod, which_u, optimal_force=1.0, activation_time_constant=0.01,
                                     default_activation=0.5, name=None) -> ForceHandle:
        """OpenSim ActivationCoordinateActuator: ``optimal_force * a``, ``da/dt = (control - a) / tau`` with its
        activation ``a`` in ``State.z`` (OpenSim 4.6 defaults: tau 0.01 s, default activation 0.5)."""
        check_mobod(forces, mobod, "ActivationCoordinateActuator")
        label = name or f"ActivationCoordinateActuator on {mobod.name}[{which_u}]"
        which_u = check_which_u(mobod, which_u, label)
        f0 = scalar(optimal_force, f"{label}: optimal_force")
        tau = positive(activation_time_constant, f"{label}: activation_time_constant")
        a0 = scalar(default_activation, f"{label}: default_activation")
        return ForceHandle(forces, lambda: coordinate.ActivationCoordinateActuator(
            u_index=mobod.u_start + which_u, optimal_force=f0, activation_time_constant=tau, default_activation=a0),
            label, num_z=1, controls=(label,))
