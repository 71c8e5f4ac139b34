"""``jb.Force.*`` builders of OpenSim's muscles (Thelen2003Muscle, DeGrooteFregly2016Muscle, Millard2012EquilibriumMuscle,
RigidTendonMuscle) on a path
(jaxbody._dynamics.paths), and ``MuscleHandle``: OpenSim's muscle getters in snake_case, the setters of a
muscle's state variables, and its equilibrium.

A muscle reads one control, its excitation, named after the muscle (``model.get_control_index(name)``,
``handle.set_controls(state, [e])``), and owns its state variables in ``State.z`` (OpenSim's order: activation,
then fiber_length or normalized_tendon_force). Getters that depend on the model's numbers take the Model after
the State (``handle.get_tendon_force(state, model)``) and need a State realized to Velocity (the path's speed).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxbody._api.force_handles import ForceHandle
from jaxbody._api.force_path import check_path
from jaxbody._api.muscle_equilibrium import has_equilibrium, muscle_equilibrium_z
from jaxbody._api.muscle_parameters import (
    check_default,
    degroote2016_parameters,
    millard2012_parameters,
    thelen2003_parameters,
)
from jaxbody._api.path_moment_arms import compute_moment_arm
from jaxbody._api.spline_parameters import rigid_tendon_parameters
from jaxbody._dynamics.muscles.degroote2016 import DeGrooteFregly2016Muscle
from jaxbody._dynamics.muscles.degroote2016_equilibrium import degroote2016_equilibrium_residual
from jaxbody._dynamics.muscles.info import MuscleInfo
from jaxbody._dynamics.muscles.millard2012 import Millard2012EquilibriumMuscle
from jaxbody._dynamics.muscles.rigid_tendon import RigidTendonMuscle
from jaxbody._dynamics.muscles.thelen2003 import Thelen2003Muscle
from jaxbody._dynamics.paths.base import Path
from jaxbody._dynamics.state import State, require
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument


class MuscleHandle(ForceHandle):
    """A muscle: ``state_names`` (its State.z entries in order), getters of its path and mechanics, setters."""

    def __init__(self, forces, build, name: str, state_names: tuple[str, ...], controls: tuple[str, ...] = ()):
        self.state_names = tuple(state_names)
        super().__init__(forces, build, name, num_z=len(state_names), controls=tuple(controls) or (name,))

    def _set_leaf_path(self, model, fields: tuple[str, ...], value):
        """A new Model with this muscle's leaf ``element.<fields...>`` (e.g. ("parameters", "max_isometric_force"))
        set to ``value``; traced values are fine (nothing recompiles)."""
        def where(m):
            node = m.forces[self.index]
            for f in fields:
                node = getattr(node, f)
            return node
        return eqx.tree_at(where, model, jnp.asarray(value, where(model).dtype))

    def set_parameter(self, model, name: str, value):
        """A new Model with the muscle model's parameter ``name`` (a field of its parameters Module) set."""
        if name not in type(self._element(model).parameters).__dataclass_fields__:
            raise InvalidArgument(f"muscle {self.name!r}: no parameter {name!r}")
        return self._set_leaf_path(model, ("parameters", name), value)

    def get_parameter(self, model, name: str):
        return getattr(self._element(model).parameters, name)

    # ----- state variables ---------------------------------------------------------------------------------
    def _z_index(self, variable: str) -> int:
        if variable not in self.state_names:
            raise InvalidArgument(f"muscle {self.name!r} has no state variable {variable!r} (it has "
                                  f"{', '.join(self.state_names) or 'none'})")
        return self.z_slice.start + self.state_names.index(variable)

    def get_state_variable(self, state: State, variable: str):
        return self._check(state, f"get {variable}").z[self._z_index(variable)]

    def set_state_variable(self, state: State, variable: str, value) -> State:
        """A new State with this muscle's ``variable`` (activation, fiber_length, normalized_tendon_force) set."""
        self._check(state, f"set {variable}")
        return state.set_z(state.z.at[self._z_index(variable)].set(value))

    def set_activation(self, state: State, activation) -> State:
        return self.set_state_variable(state, "activation", activation)

    def set_fiber_length(self, state: State, fiber_length) -> State:
        return self.set_state_variable(state, "fiber_length", fiber_length)

    def set_normalized_tendon_force(self, state: State, value) -> State:
        return self.set_state_variable(state, "normalized_tendon_force", value)

    def set_excitation(self, state: State, excitation) -> State:
        """This muscle's (first) control (OpenSim's excitation)."""
        self._check(state, "set_excitation")
        return state.set_controls(state.controls.at[self.control_slice.start].set(jnp.reshape(jnp.asarray(excitation), ())))

    def get_excitation(self, state: State):
        return self.get_controls(state)[0]

    def set_normalized_tendon_force_derivative(self, state: State, value) -> State:
        """DeGrooteFregly2016Muscle in implicit tendon mode: its implicitderiv_normalized_tendon_force input (1/s),
        its second control."""
        if self.num_controls != 2:
            raise InvalidArgument(f"muscle {self.name!r} has no implicitderiv_normalized_tendon_force (only a "
                                  "DeGrooteFregly2016Muscle with implicit tendon compliance dynamics has)")
        self._check(state, "set_normalized_tendon_force_derivative")
        return state.set_controls(state.controls.at[self.control_slice.start + 1].set(value))

    # ----- path ------------------------------------------------------------------------------------------------
    def _realized(self, state: State, model, what: str, stage=Stage.Velocity):
        self._check(state, what)
        require(state, stage, f"{self.name}.{what}")
        return self._element(model)

    def get_path(self, model) -> Path:
        return self._element(model).path

    def get_length(self, state: State, model):
        """Path length (m). Needs Position."""
        return self._realized(state, model, "get_length", Stage.Position).path.calc_length(model, state)

    def get_lengthening_speed(self, state: State, model):
        """Path lengthening speed (m/s). Needs Velocity."""
        return self._realized(state, model, "get_lengthening_speed").path.calc_lengthening_speed(model, state)

    def compute_moment_arm(self, state: State, model, mobod, which_u: int = 0):
        """Moment arm (m) about the coordinate of ``mobod``'s mobility ``which_u`` (OpenSim's computeMomentArm: the
        generalized forces of a unit tension along the path against the coordinate's coupling vector through the
        constraints; -dL/dq where the path's forces are the length's gradient, not over OpenSim's cylinder and
        ellipsoid tangent points). Needs Position (computes it from q)."""
        self._check(state, "compute_moment_arm")
        return compute_moment_arm(model, state, self.get_path(model), mobod.u_start + which_u)

    # ----- mechanics ---------------------------------------------------------------------------------------
    def get_muscle_info(self, state: State, model) -> MuscleInfo:
        """Everything the muscle model reports (jaxbody._dynamics.muscles.info.MuscleInfo). Needs Velocity."""
        element = self._realized(state, model, "get_muscle_info")
        return element.calc_info_at(model, state, state.z[self.z_slice])

    def get_activation(self, state: State, model):
        return self.get_muscle_info(state, model).activation

    def get_fiber_length(self, state: State, model):
        return self.get_muscle_info(state, model).fiber_length

    def get_fiber_velocity(self, state: State, model):
        return self.get_muscle_info(state, model).fiber_velocity

    def get_pennation_angle(self, state: State, model):
        return self.get_muscle_info(state, model).pennation_angle

    def get_tendon_length(self, state: State, model):
        return self.get_muscle_info(state, model).tendon_length

    def get_active_fiber_force(self, state: State, model):
        return self.get_muscle_info(state, model).active_fiber_force

    def get_passive_fiber_force(self, state: State, model):
        return self.get_muscle_info(state, model).passive_fiber_force

    def get_tendon_force(self, state: State, model):
        """Tension (N) the muscle applies along its path."""
        return self.get_muscle_info(state, model).tendon_force

    def get_equilibrium_residual(self, state: State, model):
        """DeGrooteFregly2016Muscle's getEquilibriumResidual (normalized force): the tendon force minus the fiber
        force along the tendon with the fiber velocity from the normalized tendon force's derivative (the implicit
        input, or the explicit model's derivative); 0 with a rigid tendon. Needs Velocity."""
        element = self._realized(state, model, "get_equilibrium_residual")
        if not isinstance(element, DeGrooteFregly2016Muscle):
            raise InvalidArgument(f"muscle {self.name!r}: get_equilibrium_residual is DeGrooteFregly2016Muscle's, "
                                  f"not {type(element).__name__}'s")
        if element.ignore_tendon_compliance:
            return jnp.zeros((), state.q.dtype)
        z = state.z[self.z_slice]
        info = element.calc_info_at(model, state, z)
        return degroote2016_equilibrium_residual(
            element.parameters, element.path.calc_length(model, state), element.path.calc_lengthening_speed(model, state),
            info.activation, z[-1], info.fiber_length_dot)

    def compute_equilibrium(self, state: State, model) -> State:
        """A new State with this muscle's fiber state at equilibrium (OpenSim's computeInitialFiberEquilibrium;
        jaxbody._api.muscle_equilibrium) for its current activation, path length and speed; needs Velocity."""
        element = self._realized(state, model, "compute_equilibrium")
        if not has_equilibrium(element):
            raise InvalidArgument(f"muscle {self.name!r}: no equilibrium is implemented for {type(element).__name__}")
        z = muscle_equilibrium_z(element, model, state, state.z[self.z_slice])
        return state.set_z(state.z.at[self.z_slice].set(z))


class MuscleForces:
    """OpenSim's muscle builders of ``jb.Force``: Thelen2003Muscle, DeGrooteFregly2016Muscle,
    Millard2012EquilibriumMuscle, RigidTendonMuscle."""

    @staticmethod
    def Thelen2003Muscle(forces, name: str, path, max_isometric_force, optimal_fiber_length, tendon_slack_length,
                         pennation_angle_at_optimal=0.0, *, default_activation=0.05, default_fiber_length=0.1,
                         **properties) -> MuscleHandle:
        """OpenSim Thelen2003Muscle on ``path``: forces (N), lengths (m), angles (rad). ``properties``: any other
        Thelen2003Parameters field (OpenSim 4.6 defaults otherwise). OpenSim's default_fiber_length is 0.1 m
        unless set (it does not follow optimal_fiber_length)."""
        path = check_path(forces, path, "muscle", name)
        p = thelen2003_parameters(name, max_isometric_force=max_isometric_force,
                                  optimal_fiber_length=optimal_fiber_length, tendon_slack_length=tendon_slack_length,
                                  pennation_angle_at_optimal=pennation_angle_at_optimal, **properties)
        z0 = jnp.asarray([check_default(name, "default_activation", default_activation, 0.0, 1.0),
                          check_default(name, "default_fiber_length", default_fiber_length, 0.0)])
        return MuscleHandle(forces, lambda: Thelen2003Muscle(path=path, parameters=p, default_state=z0), name,
                            Thelen2003Muscle.state_names)

    @staticmethod
    def DeGrooteFregly2016Muscle(forces, name: str, path, max_isometric_force, optimal_fiber_length,
                                 tendon_slack_length, pennation_angle_at_optimal=0.0, *, default_activation=0.5,
                                 default_normalized_tendon_force=0.5, ignore_tendon_compliance=False,
                                 ignore_activation_dynamics=False, tendon_compliance_dynamics_mode="explicit",
                                 **properties) -> MuscleHandle:
        """OpenSim DeGrooteFregly2016Muscle on ``path`` with "explicit" or "implicit" tendon dynamics (or a rigid
        tendon); ``properties``: any other DeGrooteFregly2016Parameters field (OpenSim 4.6 defaults otherwise).
        In "implicit" mode (elastic tendon) its controls are (excitation, implicitderiv_normalized_tendon_force)."""
        path = check_path(forces, path, "muscle", name)
        if tendon_compliance_dynamics_mode not in ("explicit", "implicit"):
            raise InvalidArgument(f"muscle {name!r}: tendon_compliance_dynamics_mode must be 'explicit' or "
                                  f"'implicit', got {tendon_compliance_dynamics_mode!r}")
        p = degroote2016_parameters(name, max_isometric_force=max_isometric_force,
                                    optimal_fiber_length=optimal_fiber_length, tendon_slack_length=tendon_slack_length,
                                    pennation_angle_at_optimal=pennation_angle_at_optimal, **properties)
        structure = dict(ignore_tendon_compliance=bool(ignore_tendon_compliance),
                         ignore_activation_dynamics=bool(ignore_activation_dynamics),
                         implicit_tendon_dynamics=tendon_compliance_dynamics_mode == "implicit")
        template = DeGrooteFregly2016Muscle(path=path, parameters=p, default_state=jnp.zeros(0), **structure)
        defaults = {"activation": check_default(name, "default_activation", default_activation, 1e-300, 1.0),
                    "normalized_tendon_force": check_default(name, "default_normalized_tendon_force",
                                                             default_normalized_tendon_force, 0.0, 5.0)}
        z0 = jnp.asarray([defaults[v] for v in template.state_names])
        controls = (name, f"{name}/implicitderiv_normalized_tendon_force")[:template.num_controls()]
        return MuscleHandle(forces, lambda: DeGrooteFregly2016Muscle(path=path, parameters=p, default_state=z0,
                                                                     **structure),
                            name, template.state_names, controls)

    @staticmethod
    def Millard2012EquilibriumMuscle(forces, name: str, path, max_isometric_force, optimal_fiber_length,
                                     tendon_slack_length, pennation_angle_at_optimal=0.0, *, default_activation=0.05,
                                     default_fiber_length=0.1, ignore_tendon_compliance=False,
                                     ignore_activation_dynamics=False, curves=None, **properties) -> MuscleHandle:
        """OpenSim Millard2012EquilibriumMuscle on ``path`` (fiber_damping 0.1 by default: the damped model).
        ``curves``: {"active_force_length_curve" | "force_velocity_curve" | "fiber_force_length_curve" |
        "tendon_force_length_curve": {OpenSim property: value}}; ``properties``: its scalar properties. OpenSim's
        finalize-time curve adjustments are applied (jaxbody._api.muscle_parameters.millard2012_parameters)."""
        path = check_path(forces, path, "muscle", name)
        rigid = bool(ignore_tendon_compliance)
        p, damped = millard2012_parameters(
            name, curves or {}, rigid, max_isometric_force=max_isometric_force,
            optimal_fiber_length=optimal_fiber_length, tendon_slack_length=tendon_slack_length,
            pennation_angle_at_optimal=pennation_angle_at_optimal, **properties)
        structure = dict(rigid_tendon=rigid, damped=damped, ignore_activation_dynamics=bool(ignore_activation_dynamics))
        template = Millard2012EquilibriumMuscle(path=path, parameters=p, default_state=jnp.zeros(0), **structure)
        defaults = {"activation": check_default(name, "default_activation", default_activation, 0.0, 1.0),
                    "fiber_length": check_default(name, "default_fiber_length", default_fiber_length, 0.0)}
        z0 = jnp.asarray([defaults[v] for v in template.state_names])
        return MuscleHandle(forces, lambda: Millard2012EquilibriumMuscle(path=path, parameters=p, default_state=z0,
                                                                        **structure), name, template.state_names)

    @staticmethod
    def RigidTendonMuscle(forces, name: str, path, max_isometric_force, optimal_fiber_length, tendon_slack_length,
                          pennation_angle_at_optimal=0.0, *, max_contraction_velocity=10.0,
                          active_force_length_curve=None, passive_force_length_curve=None,
                          force_velocity_curve=None) -> MuscleHandle:
        """OpenSim RigidTendonMuscle on ``path``: no state variables, activation = excitation. Each curve is
        ``(x, y)`` SimmSpline knots (normalized fiber length or velocity -> normalized force; Model leaves),
        OpenSim 4.6's default curve when None."""
        path = check_path(forces, path, "muscle", name)
        p = rigid_tendon_parameters(name, max_isometric_force, optimal_fiber_length, tendon_slack_length,
                                    pennation_angle_at_optimal, max_contraction_velocity, active_force_length_curve,
                                    passive_force_length_curve, force_velocity_curve)
        return MuscleHandle(forces, lambda: RigidTendonMuscle(path=path, parameters=p, default_state=jnp.zeros(0)),
                            name, RigidTendonMuscle.state_names)
