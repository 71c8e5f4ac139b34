"""``jb.Force.*`` builders of two-point elements, LinearBushing, Thermostat, DiscreteForces and Custom
(Simbody's argument order; host-side checks as in jaxbody._api.force_basic)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody._api.arguments import integer
from jaxbody._api.body import host_transform
from jaxbody._api.force_checks import (
    check_forces,
    check_matter,
    check_mobod,
    positive,
    scalar,
    vec3,
    vec6,
)
from jaxbody._api.force_handles import (
    DiscreteForcesHandle,
    ForceHandle,
    LinearBushingHandle,
    ThermostatHandle,
)
from jaxbody._dynamics.force_elements import bushing, custom, thermostat, two_point
from jaxbody.errors import InvalidArgument


def _two_point(forces, body1, station1, body2, station2, element):
    check_mobod(forces, body1, element, "body1")
    check_mobod(forces, body2, element, "body2")
    label = f"{element} between {body1.name!r} and {body2.name!r}"
    return label, vec3(station1, f"{label}: station1"), vec3(station2, f"{label}: station2")


class CompoundForces:
    """Two-point, bushing, thermostat, discrete and custom builders of ``jb.Force``."""

    @staticmethod
    def TwoPointLinearSpring(forces, body1, station1, body2, station2, stiffness, rest_length) -> ForceHandle:
        """Spring between station1 (in body1) and station2 (in body2): stiffness k (N/m), rest length x0 (m)."""
        label, s1, s2 = _two_point(forces, body1, station1, body2, station2, "TwoPointLinearSpring")
        k, x0 = scalar(stiffness, f"{label}: stiffness", True), scalar(rest_length, f"{label}: rest_length", True)
        return ForceHandle(forces, lambda: two_point.TwoPointLinearSpring(
            body1=body1.index, body2=body2.index, station1=s1, station2=s2, stiffness=k, rest_length=x0), label)

    @staticmethod
    def TwoPointLinearDamper(forces, body1, station1, body2, station2, damping) -> ForceHandle:
        """Damper along the line between the stations: damping c (N s/m)."""
        label, s1, s2 = _two_point(forces, body1, station1, body2, station2, "TwoPointLinearDamper")
        c = scalar(damping, f"{label}: damping", True)
        return ForceHandle(forces, lambda: two_point.TwoPointLinearDamper(
            body1=body1.index, body2=body2.index, station1=s1, station2=s2, damping=c), label)

    @staticmethod
    def TwoPointConstantForce(forces, body1, station1, body2, station2, force) -> ForceHandle:
        """Constant force (N) along the line between the stations; positive pushes them apart."""
        label, s1, s2 = _two_point(forces, body1, station1, body2, station2, "TwoPointConstantForce")
        f = scalar(force, f"{label}: force")
        return ForceHandle(forces, lambda: two_point.TwoPointConstantForce(
            body1=body1.index, body2=body2.index, station1=s1, station2=s2, force=f), label)

    @staticmethod
    def LinearBushing(forces, body1, X_B1F, body2, X_B2M, stiffness, damping) -> LinearBushingHandle:
        """Simbody's 6-dof bushing between frame F (X_B1F on body1) and M (X_B2M on body2).

        stiffness, damping: 6 non-negative numbers each, rotational (XYZ body-fixed angles of R_FM) first.
        ``X_B1F`` / ``X_B2M`` may be None (the body frames).
        """
        check_mobod(forces, body1, "LinearBushing", "body1")
        check_mobod(forces, body2, "LinearBushing", "body2")
        label = f"LinearBushing between {body1.name!r} and {body2.name!r}"
        if body1 is body2:
            raise InvalidArgument(f"{label}: the two bodies must differ")
        R1, p1 = host_transform(X_B1F, "X_B1F", label)
        R2, p2 = host_transform(X_B2M, "X_B2M", label)
        k, c = vec6(stiffness, f"{label}: stiffness"), vec6(damping, f"{label}: damping")
        return LinearBushingHandle(forces, lambda: bushing.LinearBushing(
            body1=body1.index, body2=body2.index, R_B1F=jnp.asarray(R1), p_B1F=jnp.asarray(p1),
            R_B2M=jnp.asarray(R2), p_B2M=jnp.asarray(p2), stiffness=k, damping=c), label, num_z=1)

    @staticmethod
    def Thermostat(forces, matter, boltzmanns_constant, bath_temperature, relaxation_time,
                   num_excluded_dofs=0, num_chains=3) -> ThermostatHandle:
        """Nose-Hoover chain thermostat on every mobility (Simbody's Force::Thermostat; default 3 chains)."""
        check_matter(forces, matter, "Thermostat")
        kb = positive(boltzmanns_constant, "Thermostat boltzmanns_constant")
        tb = positive(bath_temperature, "Thermostat bath_temperature")
        tau = positive(relaxation_time, "Thermostat relaxation_time")
        excluded = integer(num_excluded_dofs, "Thermostat num_excluded_dofs")
        chains = integer(num_chains, "Thermostat num_chains")
        if not 0 <= excluded <= 6:
            raise InvalidArgument(f"Thermostat num_excluded_dofs must be 0..6 (rigid-body dofs), got {excluded}")
        if chains < 1:
            raise InvalidArgument(f"Thermostat num_chains must be at least 1, got {chains}")
        return ThermostatHandle(forces, lambda: thermostat.Thermostat(
            boltzmanns_constant=kb, bath_temperature=tb, relaxation_time=tau, num_chains=chains,
            num_excluded_dofs=excluded), "Thermostat", num_z=2 * chains + 1)

    @staticmethod
    def DiscreteForces(forces, matter) -> DiscreteForcesHandle:
        """The State's applied forces as a force element (one per system), with Simbody's DiscreteForces API."""
        check_matter(forces, matter, "DiscreteForces")
        if any(isinstance(h, DiscreteForcesHandle) for fs in forces.system._force_subsystems for h in fs._elements):
            raise InvalidArgument("DiscreteForces: this system already has one (all share the State's applied forces)")
        return DiscreteForcesHandle(forces, custom.DiscreteForces, "DiscreteForces")

    @staticmethod
    def Custom(forces, calc_force, calc_potential_energy=None, parameters=None, name="Custom") -> ForceHandle:
        """User forces: ``calc_force(model, state[, parameters]) -> (body_forces (nbodies, 2, 3), mobility_forces
        (nu,))``, optional ``calc_potential_energy(model, state[, parameters]) -> scalar``; ``parameters`` (a pytree
        of arrays) become model leaves. The functions must be pure JAX (they are traced)."""
        check_forces(forces, name)
        if not callable(calc_force):
            raise InvalidArgument(f"{name}: calc_force must be a function (model, state) -> (body_forces, mobility_forces)")
        if calc_potential_energy is not None and not callable(calc_potential_energy):
            raise InvalidArgument(f"{name}: calc_potential_energy must be a function (model, state) -> scalar or None")
        params = None if parameters is None else jax.tree_util.tree_map(jnp.asarray, parameters)
        return ForceHandle(forces, lambda: custom.Custom(calc_force=calc_force, calc_potential_energy=calc_potential_energy,
                                                         parameters=params), name)
