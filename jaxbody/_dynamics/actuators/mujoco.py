"""MuJoCo's actuators (mj_transmission + mj_fwdActuation, MuJoCo 4.0) as one force element for a whole model.

Per actuator i, with ``ctrl`` its entry of ``State.controls`` (MuJoCo's ``d.ctrl``; clipped to ctrlrange when
ctrllimited) and ``act`` its activation (the element's ``State.z``, MuJoCo's ``d.act`` order):

* transmission: a joint on a hinge or slide, or a fixed tendon: ``length = gear (c . q)``, ``moment = gear c``
  over the scalar joints' dofs (``coupling`` row c: 1 on the joint, or the tendon's coefficients); a spatial
  tendon or a site (``transmissions``, jaxbody._dynamics.actuators.mujoco_transmissions: the tendon's length and
  dL/du times gear; a site's length and moment with its own 6-vector gear); ``velocity = moment . u``;
* ``act_dot``: integrator ``ctrl``; filter and filterexact ``(ctrl - act) / max(1e-15, tau)``; muscle
  mju_muscleDynamics (jaxbody._dynamics.actuators.mujoco_curves). With actlimited, an activation at a bound of
  actrange does not move outward (the continuous-time form of MuJoCo's clamp after each step; inside the
  range ``act_dot`` is MuJoCo's);
* input: ctrl without dynamics, else act, or with actearly MuJoCo's next activation
  ``clip(act + timestep act_dot)`` (filterexact: ``act + act_dot tau (1 - exp(-timestep / tau))``);
* ``force = gain input + bias``, gain fixed ``gainprm[0]``, affine ``gainprm[0] + gainprm[1] length +
  gainprm[2] velocity`` or muscle mju_muscleGain; bias none, affine (biasprm likewise) or muscle mju_muscleBias;
  clipped to forcerange when forcelimited;
* ``qfrc_actuator = moment^T force``, clipped per dof to a joint's actfrcrange when actfrclimited.

``moment`` rows are mobility forces in jaxbody's u (MuJoCo's actuator_moment in qvel where u = qvel: hinges
and slides).

Every number is a leaf (gear, tendon coefficients, gain/bias/dyn parameters, ranges, lengthrange, acc0 and
the timestep actearly uses, the transmissions' paths, stations and gears); the actuator types are static, and each formula runs on the actuators of its type
only. An actuator MuJoCo computes in a way jaxbody does not (``active`` false: another transmission, a
plugin, PID or DC-motor types, delay; the importer warns naming it) keeps its control slot and gives no force.
Cost: O(nactuator nu) plus O(nbodies) per path or site transmission per evaluation; Dynamics stage (needs
Velocity).
"""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.actuators import mujoco_curves as curves
from jaxbody._dynamics.actuators.mujoco_transmissions import PathTransmission
from jaxbody._dynamics.forces import ForceElement, no_body_forces


class ActuatorOutputs(NamedTuple):
    """MuJoCo's mjData actuator fields: actuator_length, actuator_velocity, actuator_moment (nactuator, nu) as
    mobility forces in jaxbody's u, actuator_force (nactuator,), act_dot (na,), and qfrc_actuator as jaxbody
    mobility forces (nu,)."""

    length: jnp.ndarray
    velocity: jnp.ndarray
    moment: jnp.ndarray
    force: jnp.ndarray
    act_dot: jnp.ndarray
    mobility_forces: jnp.ndarray


def _by_kind(kinds, dtype, formulas):
    """(n,): per actuator the formula of its kind (``kinds``: static, one per actuator), each formula evaluated on
    the rows (static index array) of its kind only; 0 for a kind without a formula (bias "none", dyn "none")."""
    out = jnp.zeros(len(kinds), dtype)
    for kind, formula in formulas.items():
        rows = np.array([i for i, k in enumerate(kinds) if k == kind], dtype=int)
        if rows.size:
            out = out.at[rows].set(formula(rows))
    return out


class MujocoActuators(ForceElement):
    """All of a MuJoCo model's actuators (module docstring). Static: per actuator ``gain_type`` ("fixed",
    "affine", "muscle"), ``bias_type`` ("none", "affine", "muscle"), ``dyn_type`` ("none", "integrator",
    "filter", "filterexact", "muscle"), ``act_index`` (its z index or -1), ``actearly``, ``ctrllimited``,
    ``forcelimited``, ``actlimited``, ``active``; ``dof_q``/``dof_u`` the scalar joints' q and u indices;
    ``clamped_dofs`` the dofs with a joint actfrcrange; ``num_act`` MuJoCo's na (this element's z). Leaves: gear
    (n,) (MuJoCo's gear[0]; a site transmission has its own), coupling (n, ndof), gainprm, biasprm, dynprm
    (n, 10), ctrlrange, forcerange, actrange, lengthrange (n, 2), acc0 (n,), actfrcrange (ndof, 2), timestep (),
    ``transmissions`` (a tuple of PathTransmission / SiteTransmission, each naming its actuator row)."""

    gain_type: tuple = eqx.field(static=True)
    bias_type: tuple = eqx.field(static=True)
    dyn_type: tuple = eqx.field(static=True)
    act_index: tuple = eqx.field(static=True)
    actearly: tuple = eqx.field(static=True)
    ctrllimited: tuple = eqx.field(static=True)
    forcelimited: tuple = eqx.field(static=True)
    actlimited: tuple = eqx.field(static=True)
    active: tuple = eqx.field(static=True)
    dof_q: tuple = eqx.field(static=True)
    dof_u: tuple = eqx.field(static=True)
    clamped_dofs: tuple = eqx.field(static=True)
    num_act: int = eqx.field(static=True)
    gear: jnp.ndarray
    coupling: jnp.ndarray
    gainprm: jnp.ndarray
    biasprm: jnp.ndarray
    dynprm: jnp.ndarray
    ctrlrange: jnp.ndarray
    forcerange: jnp.ndarray
    actrange: jnp.ndarray
    lengthrange: jnp.ndarray
    acc0: jnp.ndarray
    actfrcrange: jnp.ndarray
    timestep: jnp.ndarray
    transmissions: tuple = ()
    first_control: int = eqx.field(static=True, default=-1)

    def num_controls(self) -> int:
        return len(self.gain_type)

    def num_z(self) -> int:
        return self.num_act

    def calc(self, model, state):
        raise NotImplementedError("MujocoActuators reads its activations from State.z: use calc_with_z")

    def calc_with_z(self, model, state, z):
        out = self.calc_outputs(model, state, z)
        return no_body_forces(model, out.force.dtype), out.mobility_forces, jnp.zeros((), out.force.dtype)

    def calc_z_dot(self, model, state, z):
        return self.calc_outputs(model, state, z).act_dot

    def _controls(self, state):
        ctrl = state.controls[self.first_control: self.first_control + self.num_controls()]
        clipped = jnp.clip(ctrl, self.ctrlrange[:, 0], self.ctrlrange[:, 1])
        return jnp.where(np.array(self.ctrllimited, bool), clipped, ctrl)

    def _lengths_and_moments(self, model, state):
        """``(length (n,), moment (n, nu))``: every actuator's transmission (module doc). Needs Position."""
        joint_moment = self.gear[:, None] * self.coupling
        length = joint_moment @ state.q[np.array(self.dof_q, int)]
        moment = jnp.zeros((self.num_controls(), model.topology.nu), length.dtype)
        moment = moment.at[:, np.array(self.dof_u, int)].set(joint_moment)
        for t in self.transmissions:
            L, row = t.length_and_moment(model, state)
            scale = self.gear[t.row] if isinstance(t, PathTransmission) else 1.0
            length, moment = length.at[t.row].set(scale * L), moment.at[t.row].set(scale * row)
        return length, moment

    def calc_outputs(self, model, state, z) -> ActuatorOutputs:
        """MuJoCo's actuator fields at ``state`` (realized to Velocity) with activations ``z`` (na,)."""
        dtype = state.q.dtype
        n = self.num_controls()
        length, moment = self._lengths_and_moments(model, state)
        velocity = moment @ state.u
        ctrl = self._controls(state)
        with_act = np.array([a >= 0 for a in self.act_index])
        act_rows, act_slots = np.flatnonzero(with_act), np.array([a for a in self.act_index if a >= 0], int)
        act = jnp.zeros(n, dtype).at[act_rows].set(z[act_slots])
        tau = jnp.maximum(curves.MINVAL, self.dynprm[:, 0])
        act_dot = _by_kind(self.dyn_type, dtype, {
            "integrator": lambda r: ctrl[r],
            "filter": lambda r: (ctrl[r] - act[r]) / tau[r],
            "filterexact": lambda r: (ctrl[r] - act[r]) / tau[r],
            "muscle": lambda r: curves.muscle_dynamics(ctrl[r], act[r], self.dynprm[r])})
        lo, hi = self.actrange[:, 0], self.actrange[:, 1]
        limited = np.array(self.actlimited, bool)
        step = jnp.where(np.array(self.dyn_type) == "filterexact",
                         act_dot * tau * (1 - jnp.exp(-self.timestep / tau)), act_dot * self.timestep)
        early = jnp.where(limited, jnp.clip(act + step, lo, hi), act + step)
        used = jnp.where(np.array(self.actearly, bool), early, act)
        drive = jnp.where(with_act, used, ctrl)
        def affine(prm, r):
            return prm[r, 0] + prm[r, 1] * length[r] + prm[r, 2] * velocity[r]

        gain = _by_kind(self.gain_type, dtype, {
            "fixed": lambda r: self.gainprm[r, 0],
            "affine": lambda r: affine(self.gainprm, r),
            "muscle": lambda r: curves.muscle_gain(length[r], velocity[r], self.lengthrange[r], self.acc0[r],
                                                   self.gainprm[r])})
        bias = _by_kind(self.bias_type, dtype, {
            "affine": lambda r: affine(self.biasprm, r),
            "muscle": lambda r: curves.muscle_bias(length[r], self.lengthrange[r], self.acc0[r], self.biasprm[r])})
        force = gain * drive + bias
        force = jnp.where(np.array(self.forcelimited, bool),
                          jnp.clip(force, self.forcerange[:, 0], self.forcerange[:, 1]), force)
        force = jnp.where(np.array(self.active, bool), force, 0.0)
        f = moment.T @ force
        clamped = np.array(self.clamped_dofs, int)
        u = np.array(self.dof_u, int)[clamped]
        f = f.at[u].set(jnp.clip(f[u], self.actfrcrange[clamped, 0], self.actfrcrange[clamped, 1]))
        outward = limited & (((act >= hi) & (act_dot > 0)) | ((act <= lo) & (act_dot < 0)))
        act_dot = jnp.where(outward, 0.0, act_dot)
        zdot = jnp.zeros(self.num_act, dtype).at[act_slots].set(act_dot[act_rows])
        return ActuatorOutputs(length, velocity, moment, force, zdot, f)
