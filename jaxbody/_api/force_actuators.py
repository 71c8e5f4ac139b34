"""``jb.Force.*`` builders of OpenSim's coordinate actuators (OpenSim's names and defaults; host-side checks as in
jaxbody._api.force_basic). Each registers a handle that names its controls (``name``, default the element's
label), so ``model.get_control_index(name)`` and ``handle.set_controls(state, x)`` find them.
"""

from __future__ import annotations

from jaxbody._api.force_checks import check_mobod, check_which_u, direction_vector, positive, scalar, vec3
from jaxbody._api.force_handles import ForceHandle
from jaxbody._dynamics.actuators import coordinate, point_torque


class ActuatorForces:
    """OpenSim's actuator builders of ``jb.Force``: CoordinateActuator, ActivationCoordinateActuator,
    PointActuator, TorqueActuator."""

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

    @staticmethod
    def PointActuator(forces, mobod, point, direction, optimal_force=1.0, point_is_global=False,
                      force_is_global=False, name=None) -> ForceHandle:
        """OpenSim PointActuator: force ``optimal_force * control * direction/|direction|`` (N) on ``mobod``
        at ``point`` (in the body, or a Ground point if ``point_is_global``), the direction in the body frame
        unless ``force_is_global`` (OpenSim 4.6 defaults: point 0, direction (1, 0, 0), both flags false)."""
        check_mobod(forces, mobod, "PointActuator")
        label = name or f"PointActuator on {mobod.name}"
        p, d = vec3(point, f"{label}: point"), direction_vector(direction, f"{label}: direction")
        f0 = scalar(optimal_force, f"{label}: optimal_force")
        return ForceHandle(forces, lambda: point_torque.PointActuator(
            body=mobod.index, point=p, direction=d, optimal_force=f0, point_is_global=bool(point_is_global),
            force_is_global=bool(force_is_global)), label, controls=(label,))

    @staticmethod
    def TorqueActuator(forces, body_a, body_b, axis, optimal_force=1.0, torque_is_global=True,
                       name=None) -> ForceHandle:
        """OpenSim TorqueActuator: torque ``optimal_force * control * axis/|axis|`` (N m) on ``body_a`` and its
        opposite on ``body_b``, the axis in body A's frame unless ``torque_is_global`` (OpenSim's default: true)."""
        check_mobod(forces, body_a, "TorqueActuator", "body_a")
        check_mobod(forces, body_b, "TorqueActuator", "body_b")
        label = name or f"TorqueActuator between {body_a.name} and {body_b.name}"
        a = direction_vector(axis, f"{label}: axis")
        f0 = scalar(optimal_force, f"{label}: optimal_force")
        return ForceHandle(forces, lambda: point_torque.TorqueActuator(
            body_a=body_a.index, body_b=body_b.index, axis=a, optimal_force=f0,
            torque_is_global=bool(torque_is_global)), label, controls=(label,))

