"""``jb.Force.*`` builders of OpenSim's passive forces that Simbody has no element for: SpringGeneralizedForce,
CoordinateLimitForce, ExpressionBasedCoordinateForce, ExpressionBasedBushingForce (OpenSim's names, fields and
4.6 defaults; host-side checks naming the element as in jaxbody._api.force_basic). OpenSim's PointToPointSpring
and BushingForce are Simbody's TwoPointLinearSpring and LinearBushing (jaxbody._api.force_compound).
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._api.body import host_transform
from jaxbody._api.arguments import integer
from jaxbody._api.force_checks import check_mobod, positive, scalar, vec3
from jaxbody._api.force_handles import ForceHandle
from jaxbody._dynamics.force_elements import expression_bushing, opensim_coordinate
from jaxbody._math import lepton
from jaxbody.errors import InvalidArgument


def _coordinate(forces, mobod, which, element, name):
    """OpenSim's coordinate ``which`` of ``mobod``: its value q[which] and its speed u[which] (as OpenSim pairs
    them; for a Ball or Free rotation in Euler mode u is an angular-velocity component, not the angle's rate)."""
    check_mobod(forces, mobod, element)
    label = name or f"{element} on {mobod.name}[{which}]"
    which = integer(which, f"{label}: which_q")
    n = min(mobod.get_num_q(), mobod.get_num_u())
    if not 0 <= which < n:
        raise InvalidArgument(f"{label}: coordinate index {which} out of range 0..{n - 1} of {mobod.name!r}")
    return label, mobod.q_start + which, mobod.u_start + which


class OpenSimPassiveForces:
    """SpringGeneralizedForce, CoordinateLimitForce, ExpressionBasedCoordinateForce, ExpressionBasedBushingForce."""

    @staticmethod
    def SpringGeneralizedForce(forces, mobod, which_q, stiffness=0.0, rest_length=0.0, viscosity=0.0,
                               name=None) -> ForceHandle:
        """OpenSim SpringGeneralizedForce: ``-stiffness (q - rest_length) - viscosity u`` on coordinate
        ``which_q`` of ``mobod`` (its q and u slot ``which_q``, as OpenSim's coordinate value and speed)."""
        label, qi, ui = _coordinate(forces, mobod, which_q, "SpringGeneralizedForce", name)
        k, x0, c = (scalar(v, f"{label}: {w}") for v, w in
                    ((stiffness, "stiffness"), (rest_length, "rest_length"), (viscosity, "viscosity")))
        return ForceHandle(forces, lambda: opensim_coordinate.SpringGeneralizedForce(
            q_index=qi, u_index=ui, stiffness=k, rest_length=x0, viscosity=c), label)

    @staticmethod
    def CoordinateLimitForce(forces, mobod, which_q, upper_stiffness=1.0, upper_limit=0.0, lower_stiffness=1.0,
                             lower_limit=0.0, damping=0.001, transition=0.1, rotational=True,
                             compute_dissipation_energy=False, name=None) -> ForceHandle:
        """OpenSim CoordinateLimitForce (jaxbody._dynamics.force_elements.opensim_coordinate), its 4.6 defaults.
        ``rotational``: limits and transition in degrees, stiffness and damping per degree (OpenSim's rule for
        a rotational coordinate), else in the coordinate's units. transition > 0, lower_limit <= upper_limit."""
        label, qi, ui = _coordinate(forces, mobod, which_q, "CoordinateLimitForce", name)
        values = {w: scalar(v, f"{label}: {w}") for v, w in (
            (upper_stiffness, "upper_stiffness"), (upper_limit, "upper_limit"), (lower_stiffness, "lower_stiffness"),
            (lower_limit, "lower_limit"), (damping, "damping"))}
        values["transition"] = positive(transition, f"{label}: transition")
        if not values["lower_limit"] <= values["upper_limit"]:
            raise InvalidArgument(f"{label}: lower_limit ({float(values['lower_limit'])}) must not exceed "
                                  f"upper_limit ({float(values['upper_limit'])})")
        dissipation = bool(compute_dissipation_energy)
        return ForceHandle(forces, lambda: opensim_coordinate.CoordinateLimitForce(
            q_index=qi, u_index=ui, rotational=bool(rotational), compute_dissipation_energy=dissipation, **values),
            label, num_z=int(dissipation))

    @staticmethod
    def ExpressionBasedCoordinateForce(forces, mobod, which_q, expression="0.0", name=None) -> ForceHandle:
        """OpenSim ExpressionBasedCoordinateForce: generalized force ``expression(q, qdot)`` (OpenSim's grammar,
        jaxbody._math.lepton; whitespace is removed first, as OpenSim does). An expression OpenSim cannot parse
        raises InvalidArgument naming the force and the position."""
        label, qi, ui = _coordinate(forces, mobod, which_q, "ExpressionBasedCoordinateForce", name)
        tree = lepton.parse("".join(str(expression).split()), ("q", "qdot"), label)
        return ForceHandle(forces, lambda: opensim_coordinate.ExpressionBasedCoordinateForce(
            q_index=qi, u_index=ui, expression=tree), label)

    @staticmethod
    def ExpressionBasedBushingForce(forces, body1, X_B1F, body2, X_B2M, Mx_expression="0.0", My_expression="0.0",
                                    Mz_expression="0.0", Fx_expression="0.0", Fy_expression="0.0",
                                    Fz_expression="0.0", rotational_damping=(0, 0, 0), translational_damping=(0, 0, 0),
                                    name=None) -> ForceHandle:
        """OpenSim ExpressionBasedBushingForce between frame F (X_B1F on body1) and M (X_B2M on body2): moments
        and forces are expressions of theta_x, theta_y, theta_z (body-fixed XYZ angles of R_FM) and delta_x,
        delta_y, delta_z (p_FM in F); damping per coordinate rate."""
        check_mobod(forces, body1, "ExpressionBasedBushingForce", "body1")
        check_mobod(forces, body2, "ExpressionBasedBushingForce", "body2")
        label = name or f"ExpressionBasedBushingForce between {body1.name} and {body2.name}"
        R1, p1 = host_transform(X_B1F, "X_B1F", label)
        R2, p2 = host_transform(X_B2M, "X_B2M", label)
        texts = (Mx_expression, My_expression, Mz_expression, Fx_expression, Fy_expression, Fz_expression)
        trees = tuple(lepton.parse("".join(str(t).split()), expression_bushing.DEFLECTIONS, f"{label} {w}_expression")
                      for t, w in zip(texts, ("Mx", "My", "Mz", "Fx", "Fy", "Fz")))
        c = jnp.concatenate([vec3(rotational_damping, f"{label}: rotational_damping"),
                             vec3(translational_damping, f"{label}: translational_damping")])
        return ForceHandle(forces, lambda: expression_bushing.ExpressionBasedBushingForce(
            body1=body1.index, body2=body2.index, R_B1F=jnp.asarray(R1), p_B1F=jnp.asarray(p1), R_B2M=jnp.asarray(R2),
            p_B2M=jnp.asarray(p2), damping=c, expressions=trees), label)
