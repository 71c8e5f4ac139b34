"""OpenSim 4.6's ``DeGrooteFregly2016Muscle``: De Groote 2016's curves (``degroote_curves``), a pennated fiber of
constant width w = l_opt sin(phi_opt), smoothed first-order activation, and either an elastic tendon whose
normalized force is a state (OpenSim's "explicit" tendon dynamics: the fiber velocity follows from inverting the
force-velocity curve) or a rigid one (``ignore_tendon_compliance``).

With ``implicit_tendon_dynamics`` (OpenSim's tendon_compliance_dynamics_mode "implicit", as Moco uses it) the
derivative of the normalized tendon force is an input, OpenSim's discrete variable
``implicitderiv_normalized_tendon_force``: here the muscle's second control. The fiber velocity then follows
from the tendon's (``v_M = (v_MT - l_s d(tl_n)/dt) cos(phi)``), the state's derivative is that input, and
muscle-tendon equilibrium is a residual for the solver to drive to zero
(jaxbody._dynamics.muscles.degroote2016_equilibrium.degroote2016_equilibrium_residual).

State variables (OpenSim's order): activation (unless ``ignore_activation_dynamics``: activation is then the
excitation) and normalized_tendon_force (unless the tendon is rigid). Tension: F_iso times the normalized tendon
force (elastic) or the fiber force along the tendon (rigid). Parameters are array leaves of
``DeGrooteFregly2016Parameters``; cost: a few dozen flops, no iteration.
"""

from __future__ import annotations


import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbody._dynamics.muscles import degroote_curves as curves
from jaxbody._dynamics.muscles.info import MuscleInfo
from jaxbody._dynamics.muscles.path_muscle import PathMuscle
from jaxbody.errors import InvalidArgument


class DeGrooteFregly2016Parameters(eqx.Module):
    """Every number of a DeGrooteFregly2016Muscle (OpenSim's property names; SI units, angles in rad)."""

    max_isometric_force: jax.Array
    optimal_fiber_length: jax.Array
    tendon_slack_length: jax.Array
    pennation_angle_at_optimal: jax.Array
    max_contraction_velocity: jax.Array  # optimal fiber lengths per second
    activation_time_constant: jax.Array
    deactivation_time_constant: jax.Array
    active_force_width_scale: jax.Array
    fiber_damping: jax.Array
    passive_fiber_strain_at_one_norm_force: jax.Array
    tendon_strain_at_one_norm_force: jax.Array
    activation_dynamics_smoothing: jax.Array


DEGROOTE2016_DEFAULTS = dict(
    max_contraction_velocity=10.0,
    activation_time_constant=0.015,
    deactivation_time_constant=0.060,
    active_force_width_scale=1.0,
    fiber_damping=0.0,
    passive_fiber_strain_at_one_norm_force=0.6,
    tendon_strain_at_one_norm_force=0.049,
    activation_dynamics_smoothing=0.1,
)
"""OpenSim 4.6's defaults for the DeGrooteFregly2016Muscle properties that have one."""


def degroote2016_activation_derivative(p: DeGrooteFregly2016Parameters, activation, excitation):
    """da/dt (1/s): ``[(f + 1/2) / (tau_a (1/2 + 3a/2)) + (1/2 - f)(1/2 + 3a/2) / tau_d] (e - a)``,
    f = tanh(b (e - a)) / 2 (b: activation_dynamics_smoothing); activation not clamped (as OpenSim)."""
    z = 0.5 + 1.5 * activation
    f = 0.5 * jnp.tanh(p.activation_dynamics_smoothing * (excitation - activation))
    rate = (f + 0.5) / (p.activation_time_constant * z) + (0.5 - f) * z / p.deactivation_time_constant
    return rate * (excitation - activation)


def degroote2016_info(p: DeGrooteFregly2016Parameters, length, lengthening_speed, activation,
                      normalized_tendon_force, excitation, ignore_tendon_compliance: bool = False,
                      normalized_tendon_force_dot=None) -> MuscleInfo:
    """The muscle at path length (m), lengthening speed (m/s), activation, normalized tendon force (ignored with a
    rigid tendon) and excitation. ``activation_dot`` is the smoothed first-order model's; ``fiber_length_dot``
    holds d(normalized tendon force)/dt (0 with a rigid tendon). ``normalized_tendon_force_dot`` (1/s): given,
    the implicit tendon dynamics (the fiber velocity from the tendon's; this rate returned as the state's);
    None, the explicit ones."""
    ofl, tsl, fiso = p.optimal_fiber_length, p.tendon_slack_length, p.max_isometric_force
    width = ofl * jnp.sin(p.pennation_angle_at_optimal)
    v_max = p.max_contraction_velocity * ofl
    tl_n = 1.0 if ignore_tendon_compliance else curves.tendon_force_length_inverse(
        normalized_tendon_force, p.tendon_strain_at_one_norm_force)
    tendon_length = tsl * tl_n * jnp.ones_like(length)
    along = length - tendon_length
    lce = jnp.sqrt(along * along + width * width)
    lce_n = lce / ofl
    cos_phi = along / lce
    phi = jnp.arcsin(width / lce)
    fpe = curves.passive_force_length(lce_n, p.passive_fiber_strain_at_one_norm_force)
    fal = curves.active_force_length(lce_n, p.active_force_width_scale)
    if ignore_tendon_compliance:
        dlce = lengthening_speed * cos_phi
        v_n = dlce / v_max
        fv = curves.force_velocity(v_n)
        tendon_speed = jnp.zeros_like(length)
    elif normalized_tendon_force_dot is not None:
        tendon_speed = tsl * curves.tendon_length_rate(normalized_tendon_force_dot, tl_n,
                                                       p.tendon_strain_at_one_norm_force)
        dlce = (lengthening_speed - tendon_speed) * cos_phi
        v_n = dlce / v_max
        fv = curves.force_velocity(v_n)
    else:
        fv = (normalized_tendon_force / cos_phi - fpe) / (activation * fal)
        v_n = curves.force_velocity_inverse(fv)
        dlce = v_n * v_max
        tendon_speed = lengthening_speed - dlce / cos_phi
    active = fiso * activation * fal * fv
    passive = fiso * fpe + fiso * p.fiber_damping * v_n
    if ignore_tendon_compliance:
        tendon_force = (active + passive) * cos_phi
        ntf_dot = jnp.zeros_like(length)
    elif normalized_tendon_force_dot is not None:
        tendon_force = fiso * normalized_tendon_force
        ntf_dot = normalized_tendon_force_dot * jnp.ones_like(length)
    else:
        tendon_force = fiso * normalized_tendon_force
        k_t = curves.tendon_stiffness_parameter(p.tendon_strain_at_one_norm_force)
        ntf_dot = tendon_speed / tsl * curves.C1 * k_t * jnp.exp(k_t * (tl_n - curves.C2))
    return MuscleInfo(
        activation=activation,
        fiber_length=lce,
        fiber_velocity=dlce,
        pennation_angle=phi,
        tendon_length=tendon_length,
        active_fiber_force=active,
        passive_fiber_force=passive,
        tendon_force=tendon_force,
        activation_dot=degroote2016_activation_derivative(p, activation, excitation),
        fiber_length_dot=ntf_dot,
    )


class DeGrooteFregly2016Muscle(PathMuscle):
    """OpenSim's DeGrooteFregly2016Muscle on a path ("explicit" or "implicit" elastic tendon, or rigid tendon;
    activation dynamics or activation = excitation). ``state_names`` follows the static switches. With implicit
    tendon dynamics (and an elastic tendon) it reads two controls, its excitation and
    implicitderiv_normalized_tendon_force, and is evaluated on its own (no stack)."""

    ignore_tendon_compliance: bool = eqx.field(static=True, default=False)
    ignore_activation_dynamics: bool = eqx.field(static=True, default=False)
    implicit_tendon_dynamics: bool = eqx.field(static=True, default=False)

    @property
    def state_names(self) -> tuple[str, ...]:
        return (() if self.ignore_activation_dynamics else ("activation",)) + (
            () if self.ignore_tendon_compliance else ("normalized_tendon_force",))

    @property
    def implicit(self) -> bool:
        """Whether the normalized tendon force's derivative is an input (an elastic tendon in implicit mode)."""
        return self.implicit_tendon_dynamics and not self.ignore_tendon_compliance

    def num_controls(self) -> int:
        return 2 if self.implicit else 1

    def stack_key(self):
        return None if self.implicit else super().stack_key()

    def calc_info(self, length, lengthening_speed, z, excitation, normalized_tendon_force_dot=None) -> MuscleInfo:
        if self.implicit and normalized_tendon_force_dot is None:
            raise InvalidArgument("an implicit DeGrooteFregly2016Muscle needs normalized_tendon_force_dot")
        a = excitation if self.ignore_activation_dynamics else z[0]
        ntf = jnp.zeros_like(length) if self.ignore_tendon_compliance else z[-1]
        return degroote2016_info(self.parameters, length, lengthening_speed, a, ntf, excitation,
                                 self.ignore_tendon_compliance, normalized_tendon_force_dot)

    def normalized_tendon_force_dot(self, state):
        """The implicitderiv_normalized_tendon_force input (1/s): this muscle's second control (implicit only)."""
        return state.controls[self.first_control + 1]

    def calc_info_at(self, model, state, z) -> MuscleInfo:
        if not self.implicit:
            return super().calc_info_at(model, state, z)
        return self.calc_info(self.path.calc_length(model, state), self.path.calc_lengthening_speed(model, state),
                              z, self.excitation(state), self.normalized_tendon_force_dot(state))
