"""The immutable State pytree and its per-stage caches.

A State holds what evolves (t, q, u, z), the inputs a user sets on it (the actuators' controls; applied
forces, Simbody's DiscreteForces), and one cache per realized stage. Setters return a new State with the
caches that the change invalidates dropped, as Simbody invalidates stages: q drops Position and later, u drops
Velocity and later, t drops everything from Time on, z, controls and applied forces drop Dynamics and later. A dropped cache is an ``Unrealized`` placeholder (no leaves, like None); reading any field of it
raises StageViolation naming the State's stage and the realize call to make, so a stale cache can never be
read.
"""

from __future__ import annotations

import dataclasses
import functools

import equinox as eqx
import jax.numpy as jnp

from jaxbody._dynamics.articulated import ArticulatedInertias
from jaxbody._dynamics.state_stages import STAGE_OF_VARIABLE
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument, StageViolation


class PositionCache(eqx.Module):
    """Position kinematics, all per body (nbodies rows, Ground first), in Ground unless named.

    R_FM, p_FM: mobilizer transform X_FM (nbodies, 3, 3), (nbodies, 3).
    R_GB, p_GB: body transforms X_GB.
    p_PB_G: vector from parent origin to body origin, in G (nbodies, 3).
    H_FM: hinge matrix in F, (nbodies, 6, nu_max), padded columns zero.
    H_PB_G: hinge matrix mapping u to V_PB in G, (nbodies, 6, nu_max).
    r_MB_F: ``R_FM p_MB``, from Mo to Bo expressed in F (nbodies, 3).
    R_GF: rotation of the inboard frame F in G.
    Mk_G: spatial inertia about Bo in G (nbodies, 6, 6).
    p_GBc: mass-center locations in G (nbodies, 3).
    quaternion_errors: |q| - 1 per quaternion in use, in Simbody's pool order.
    position_errors: constraint position errors perr (mp,), Simbody's order; 0 for disabled constraints.
    """

    R_FM: jnp.ndarray
    p_FM: jnp.ndarray
    R_GB: jnp.ndarray
    p_GB: jnp.ndarray
    p_PB_G: jnp.ndarray
    H_FM: jnp.ndarray
    H_PB_G: jnp.ndarray
    r_MB_F: jnp.ndarray
    R_GF: jnp.ndarray
    Mk_G: jnp.ndarray
    p_GBc: jnp.ndarray
    quaternion_errors: jnp.ndarray
    position_errors: jnp.ndarray | None = None


class VelocityCache(eqx.Module):
    """Velocity kinematics (all spatial vectors (nbodies, 2, 3), at Bo, in G).

    qdot: (nq,). V_GB: body spatial velocities. V_PB_G: ``H u`` (velocity across
    each mobilizer, in G). V_FM: mobilizer velocity in F. HDot_FM_u: ``HDot_FM u`` (nbodies, 2, 3) in F, the
    mobilizer's bias acceleration (Ground's zero; the compiled kernels read it for their GENERIC bodies).
    HDot_PB_G: (nbodies, 6, nu_max). mobilizer_coriolis: A_b. total_coriolis: ``Jdot u``, the body
    accelerations at udot = 0. gyroscopic: b. centrifugal: ``Mk a + b``.
    velocity_errors: constraint velocity errors (pverr, verr) (mp + mv,); 0 for disabled constraints.
    """

    qdot: jnp.ndarray
    V_GB: jnp.ndarray
    V_PB_G: jnp.ndarray
    V_FM: jnp.ndarray
    HDot_FM_u: jnp.ndarray
    HDot_PB_G: jnp.ndarray
    mobilizer_coriolis: jnp.ndarray
    total_coriolis: jnp.ndarray
    gyroscopic: jnp.ndarray
    centrifugal: jnp.ndarray
    velocity_errors: jnp.ndarray | None = None


class DynamicsCache(eqx.Module):
    """Forces and articulated-body inertias.

    body_forces: total applied spatial forces (nbodies, 2, 3) at Bo in G (force
    elements plus the State's applied body forces). mobility_forces: (nu,).
    potential_energy: scalar. articulated: ArticulatedInertias (I_A, D_inv, UDinv,
    udot_known) of jaxbody._dynamics.articulated, RBDA pass 2's inertia part;
    for a body whose udot is known I_A passes through (``I_a = I_A``), D_inv is the
    identity and UDinv is zero. udot_prescribed: (nu,) the known udots (Simbody's
    presUDot pool, unpacked; zero on free mobilities). zdot: (nz,) the force elements' state-variable
    derivatives dz/dt (Simbody computes them at Acceleration; none of jaxbody's depend on udot).
    gravity_weights: (nbodies, 3) the gravity elements' weights m g (N, in G) at the mass centers, and
    body_forces_without_gravity (nbodies, 2, 3): body_forces less those weights' forces (the compiled kernels
    apply the weights themselves, so forward dynamics needs no position kinematics from the JAX path).
    """

    body_forces: jnp.ndarray
    mobility_forces: jnp.ndarray
    potential_energy: jnp.ndarray
    articulated: ArticulatedInertias
    udot_prescribed: jnp.ndarray
    zdot: jnp.ndarray
    gravity_weights: jnp.ndarray
    body_forces_without_gravity: jnp.ndarray


class AccelerationCache(eqx.Module):
    """udot (nu,), qdotdot (nq,), A_GB (nbodies, 2, 3) at Bo in G.

    motion_forces (nu,): Simbody's prescribed-motion forces (its motion multipliers, "tau" in the RBDA) unpacked
    into u slots, zero on free mobilities; they sit on the left of
    ``M udot + motion_forces = f - c``, so the applied force that produces the motion is -motion_forces.

    With constraints also the constraint matrix G (m, nu) formed for the multipliers (``model.calc_g`` reads it),
    acceleration_errors (m,) = G udot + bias, multipliers lambda (m,), and the
    constraint forces ``G^T lambda = J^T constraint_body_forces + constraint_mobility_forces`` ((nbodies, 2, 3)
    at Bo in G, (nu,)), with the sign of G^T lambda (the negative of what the constraints apply).
    """

    udot: jnp.ndarray
    qdotdot: jnp.ndarray
    A_GB: jnp.ndarray
    motion_forces: jnp.ndarray
    constraint_matrix: jnp.ndarray | None = None
    acceleration_errors: jnp.ndarray | None = None
    multipliers: jnp.ndarray | None = None
    constraint_body_forces: jnp.ndarray | None = None
    constraint_mobility_forces: jnp.ndarray | None = None


@dataclasses.dataclass(frozen=True)
class SystemSignature:
    """Which system a Model or State belongs to, by structure (static; hashed and compared by ``digest``).

    digest: a hash of the system's structure: each body's name, parent, mobilizer type (quaternion-mode
    prototype) and q/u slots, and each constraint's type, bodies and selected q/u. Parameters, force elements
    and the Euler/quaternion choice are not part of it. Two systems built the same way have the same
    signature, so they share compiled code and their handles are interchangeable (a handle's index means the
    same body in both). description: the bodies, for error messages.
    """

    digest: str
    description: str = dataclasses.field(compare=False)

    def __str__(self) -> str:
        return self.description


class Unrealized(eqx.Module):
    """A State's stage cache that is not realized: ``cache`` (static) names it, ``state_stage`` (static) is the
    stage the State is realized to. It has no leaves (jit, vmap, grad and scan see a fixed structure, as with
    None) and reading any of its fields raises StageViolation saying what to call. Test with
    ``state.get_system_stage()``; ``State`` makes these itself (a cache given as None becomes one).
    """

    cache: str = eqx.field(static=True)
    state_stage: Stage = eqx.field(static=True)

    def __getattr__(self, name):
        if name.startswith("_"):  # Python's protocol look-ups (copy, pickle, ...) keep AttributeError
            raise AttributeError(name)
        needed = _CACHE_STAGE[self.cache]
        raise StageViolation(
            f"State.{self.cache}.{name}: the State is realized to Stage.{self.state_stage.name}, and "
            f"State.{self.cache} needs Stage.{needed.name}; call model.realize(state, jb.Stage.{needed.name}) first"
        )


@functools.lru_cache(maxsize=None)
def _unrealized(cache: str, state_stage: Stage) -> Unrealized:
    return Unrealized(cache, state_stage)


_CACHE_FIELDS = ("position", "velocity", "dynamics", "acceleration")
_CACHE_STAGE = {
    "position": Stage.Position,
    "velocity": Stage.Velocity,
    "dynamics": Stage.Dynamics,
    "acceleration": Stage.Acceleration,
}


class State(eqx.Module):
    """Time, generalized coordinates and speeds, auxiliary states, applied forces, stage caches.

    t: scalar (s). q: (nq,) laid out as Simbody's State q (see README, "q
    layout"). u: (nu,). z: (nz,). controls: (num_controls,) the actuators' inputs (OpenSim's controls,
    MuJoCo's ctrl), in ``model.control_names`` order, held constant over an integrator step (zero-order
    hold); set with ``set_controls``. mobility_forces: applied generalized forces
    (nu,). body_forces: applied spatial forces (nbodies, 2, 3) at each body
    origin, in Ground (Ground's row is ignored). use_euler_angles: how q's
    orientation slots are to be read (static; must match the model realizing it).
    Locks (Instance-stage variables, see jaxbody._api.mobilized_body_motion): lock_level (nbodies,)
    int32 per body, a Motion level or Motion.NoLevel (-1, unlocked); lock_q (nq,)
    the locked q of position-level locks; lock_u (nu,) the locked u (velocity
    level) or udot (acceleration level). Arrays, so one compiled function serves
    states with different locks.
    constraint_enabled: (nconstraints,) bool, which constraints are enforced (Simbody's
    Constraint::disable/enable; an Instance-stage change: setting it drops every cache).
    motion_enabled: (nbodies,) bool, whether each body's adopted Motion drives it (Simbody's
    Motion::disable/enable; Instance stage, drops every cache; a body without a Motion ignores it).
    force_enabled: (nforces,) bool, which force elements of ``model.forces`` act (Simbody's
    setForceIsDisabled; setting it drops Dynamics and later). An array, so one compiled function serves
    states with different switches (and vmap lanes with different ones).
    system: the SystemSignature of the model that made it (``model.default_state()``; static). Model
    operators and MobilizedBody/Constraint handles compare it with their own system's and raise
    InvalidArgument for a State of another system.
    position, velocity, dynamics, acceleration: the stage caches, ``Unrealized`` until realized (given as None,
    they become one; no leaves, so jit and vmap see a fixed structure): ``model.realize(s,
    Stage.Dynamics).acceleration.udot`` raises StageViolation saying the State is at Stage.Dynamics and to call
    ``model.realize(state, jb.Stage.Acceleration)``; the getters (``get_u_dot``, ...) and operators raise it too.
    """

    t: jnp.ndarray
    q: jnp.ndarray
    u: jnp.ndarray
    z: jnp.ndarray
    controls: jnp.ndarray
    mobility_forces: jnp.ndarray
    body_forces: jnp.ndarray
    constraint_enabled: jnp.ndarray
    lock_level: jnp.ndarray
    lock_q: jnp.ndarray
    lock_u: jnp.ndarray
    motion_enabled: jnp.ndarray
    force_enabled: jnp.ndarray
    use_euler_angles: bool = eqx.field(static=True, default=False)
    system: SystemSignature | None = eqx.field(static=True, default=None)
    position: PositionCache | Unrealized | None = None
    velocity: VelocityCache | Unrealized | None = None
    dynamics: DynamicsCache | Unrealized | None = None
    acceleration: AccelerationCache | Unrealized | None = None

    def __post_init__(self):
        """Each cache not realized (None, or an Unrealized of another stage) becomes the Unrealized of this
        State's stage."""
        stage = self.get_system_stage()
        for name in _CACHE_FIELDS:
            if _is_unrealized(getattr(self, name)):
                setattr(self, name, _unrealized(name, stage))

    # -- stage bookkeeping ----------------------------------------------------

    def get_system_stage(self) -> Stage:
        """Highest stage whose cache is valid (Time when nothing is realized)."""
        stage = Stage.Time
        for name in _CACHE_FIELDS:
            if _is_unrealized(getattr(self, name)):
                break
            stage = _CACHE_STAGE[name]
        return stage

    def _with_variables(self, **values) -> "State":
        """A copy with State variables replaced and every cache of their lowest variable stage and later dropped."""
        stage = min(STAGE_OF_VARIABLE[name] for name in values)
        caches = {name: None if _CACHE_STAGE[name] >= stage else getattr(self, name) for name in _CACHE_FIELDS}
        return dataclasses.replace(self, **caches, **values)

    # -- setters (each returns a new State) ----------------------------------

    def drop_caches(self) -> "State":
        """The same variables with every realized cache dropped (an unrealized State): what a loop carry or a
        ``jnp.where`` between states needs, so every branch has the same structure."""
        return self._with_variables(t=self.t)

    def set_time(self, t) -> "State":
        return self._with_variables(t=_array(t, self.t.dtype, "t"))

    def set_q(self, q) -> "State":
        q = _array(q, self.q.dtype, "q")
        _check_shape(q, self.q.shape, "q")
        return self._with_variables(q=q)

    def set_u(self, u) -> "State":
        u = _array(u, self.u.dtype, "u")
        _check_shape(u, self.u.shape, "u")
        return self._with_variables(u=u)

    def set_z(self, z) -> "State":
        z = _array(z, self.z.dtype, "z")
        _check_shape(z, self.z.shape, "z")
        return self._with_variables(z=z)

    def set_controls(self, controls) -> "State":
        """Set every control (num_controls,), in ``model.control_names`` order; drops Dynamics and later.

        The length is checked on the host (InvalidArgument naming the expected count). A handle's
        ``set_controls`` sets one actuator's; ``model.get_control_index(name)`` finds one by name."""
        controls = _array(controls, self.controls.dtype, "controls")
        if controls.shape != self.controls.shape:
            raise InvalidArgument(f"set_controls: expected {self.controls.shape[-1] if self.controls.ndim else 0} "
                                  f"controls (shape {self.controls.shape}; one per model.control_names), got shape {controls.shape}")
        return self._with_variables(controls=controls)

    def set_mobility_forces(self, f) -> "State":
        """Set the applied generalized forces (nu,); drops Dynamics and later."""
        f = _array(f, self.mobility_forces.dtype, "mobility_forces")
        _check_shape(f, self.mobility_forces.shape, "mobility_forces")
        return self._with_variables(mobility_forces=f)

    def set_body_forces(self, F) -> "State":
        """Set the applied body spatial forces (nbodies, 2, 3) at Bo in G; drops Dynamics and later."""
        F = _array(F, self.body_forces.dtype, "body_forces")
        _check_shape(F, self.body_forces.shape, "body_forces")
        return self._with_variables(body_forces=F)

    def set_constraint_enabled(self, enabled) -> "State":
        """Set which constraints are enforced, (nconstraints,) bool; drops every cache (Instance stage)."""
        enabled = jnp.asarray(enabled, bool)
        _check_shape(enabled, self.constraint_enabled.shape, "constraint_enabled")
        return self._with_variables(constraint_enabled=enabled)

    def set_force_enabled(self, enabled) -> "State":
        """Set which force elements act, (nforces,) bool in ``model.forces`` order; drops Dynamics and later."""
        enabled = jnp.asarray(enabled, bool)
        _check_shape(enabled, self.force_enabled.shape, "force_enabled")
        return self._with_variables(force_enabled=enabled)

    def set_locks(self, lock_level, lock_q, lock_u) -> "State":
        """Replace every lock (an Instance-stage change: drops all caches)."""
        lock_level = jnp.asarray(lock_level, self.lock_level.dtype)
        lock_q = jnp.asarray(lock_q, self.lock_q.dtype)
        lock_u = jnp.asarray(lock_u, self.lock_u.dtype)
        _check_shape(lock_level, self.lock_level.shape, "lock_level")
        _check_shape(lock_q, self.lock_q.shape, "lock_q")
        _check_shape(lock_u, self.lock_u.shape, "lock_u")
        return self._with_variables(lock_level=lock_level, lock_q=lock_q, lock_u=lock_u)

    def set_motion_enabled(self, enabled) -> "State":
        """Set which bodies' Motions are enforced, (nbodies,) bool; drops every cache (Instance stage)."""
        enabled = jnp.asarray(enabled, bool)
        _check_shape(enabled, self.motion_enabled.shape, "motion_enabled")
        return self._with_variables(motion_enabled=enabled)

    # -- simple getters -------------------------------------------------------

    def get_time(self):
        return self.t

    def get_q(self):
        return self.q

    def get_u(self):
        return self.u

    def get_z(self):
        return self.z

    def get_controls(self):
        return self.controls

    def get_nq(self) -> int:
        return self.q.shape[-1]

    def get_nu(self) -> int:
        return self.u.shape[-1]

    def get_q_dot(self):
        return require(self, Stage.Velocity, "State.get_q_dot").velocity.qdot

    def get_u_dot(self):
        return require(self, Stage.Acceleration, "State.get_u_dot").acceleration.udot

    def get_q_dot_dot(self):
        return require(self, Stage.Acceleration, "State.get_q_dot_dot").acceleration.qdotdot


def _is_unrealized(cache) -> bool:
    return cache is None or isinstance(cache, Unrealized)


def _array(x, dtype, what):
    """``jnp.asarray(x, dtype)``, with InvalidArgument naming ``what`` for values that are not numbers."""
    try:
        return jnp.asarray(x, dtype)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{what} must be numbers, got {x!r}") from None


def _check_shape(x, shape, what):
    if x.shape != shape:
        raise InvalidArgument(f"{what} must have shape {shape}, got {x.shape}")


def require(state: State, stage: Stage, operation: str) -> State:
    """Raise StageViolation (at trace time) unless ``state`` is realized to ``stage``."""
    if state.get_system_stage() < stage:
        raise StageViolation(
            f"{operation} needs the state realized to Stage.{stage.name}; "
            f"it is at Stage.{state.get_system_stage().name}. Call model.realize(state, jb.Stage.{stage.name}) first."
        )
    return state
