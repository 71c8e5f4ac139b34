"""The models of benchmarks/simulation.py, each loaded from one MJCF file by jaxbody (jb.io.load_mjcf) and by
MuJoCo, with the same per-lane initial states, and the MuJoCo C / MJX rollouts (RK4, dt = 1 ms).

MuJoCo is set up to integrate the same equations as jaxbody: contacts, joint limits, springs, dampers,
friction loss and actuation disabled, armature zeroed. Its equality constraints stay soft (MuJoCo's
constraint solver); jaxbody's are exact (projection).
"""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np

import jaxbody as jb

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = {"fourbar": os.path.join(HERE, "fourbar.xml"),
         "humanoid": os.path.join(HERE, "..", "tests", "models", "mjx_humanoid.xml")}
DT = 1e-3


def mujoco_model(name):
    import mujoco

    m = mujoco.MjModel.from_xml_path(FILES[name])
    d = mujoco.mjtDisableBit
    m.opt.disableflags |= (d.mjDSBL_CONTACT | d.mjDSBL_LIMIT | d.mjDSBL_SPRING | d.mjDSBL_DAMPER | d.mjDSBL_FRICTIONLOSS
                           | d.mjDSBL_ACTUATION)
    m.dof_armature[:] = 0.0
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    m.opt.timestep = DT
    return m


class Case:
    """One model in both engines. ``lanes(n)`` -> (q, u) jaxbody arrays (n, nq), (n, nu) and (qpos, qvel) for
    MuJoCo (n, nq_mj), (n, nv): hinge angles and rates set per lane by joint name, a free joint left at rest."""

    def __init__(self, name):
        import mujoco

        self.name = name
        imported = jb.io.load_mjcf(FILES[name], contact=False)  # MuJoCo runs with contact disabled (mujoco_model)
        self.model = imported.system.realize_topology()
        self.mj = mujoco_model(name)
        hinge = mujoco.mjtJoint.mjJNT_HINGE
        self.hinges = []  # (jaxbody q index, jaxbody u index, mujoco qpos address, mujoco dof address)
        for j in range(self.mj.njnt):
            if self.mj.jnt_type[j] != hinge:
                continue
            c = imported.coordinates[mujoco.mj_id2name(self.mj, mujoco.mjtObj.mjOBJ_JOINT, j)]
            mb = c.mobilized_body
            self.hinges.append((mb.get_first_q_index() + c.q_index, mb.get_first_u_index() + c.q_index,
                                int(self.mj.jnt_qposadr[j]), int(self.mj.jnt_dofadr[j])))

    def lanes(self, n, seed=0):
        if self.name == "fourbar":
            theta, w = np.linspace(-0.5, 1.0, n), np.linspace(-3.0, 3.0, n)
            angles, rates = np.stack([theta, -theta, theta], -1), np.stack([w, -w, w], -1)
        else:
            rng = np.random.default_rng(seed)
            angles = rng.normal(0.0, 0.1, (n, len(self.hinges)))
            rates = rng.normal(0.0, 0.5, (n, len(self.hinges)))
        q = np.tile(np.asarray(self.model.default_state().q), (n, 1))
        u = np.zeros((n, self.model.topology.nu))
        qpos = np.tile(self.mj.qpos0, (n, 1))
        qvel = np.zeros((n, self.mj.nv))
        for k, (iq, iu, aq, av) in enumerate(self.hinges):
            q[:, iq], u[:, iu], qpos[:, aq], qvel[:, av] = angles[:, k], rates[:, k], angles[:, k], rates[:, k]
        return jnp.asarray(q), jnp.asarray(u), qpos, qvel


def mujoco_c_rollout(m, qpos, qvel, steps):
    """mj_step ``steps`` times per lane, lanes one after another (one thread); returns the final qpos."""
    import mujoco

    d = mujoco.MjData(m)
    out = np.empty_like(qpos)
    for lane in range(len(qpos)):
        mujoco.mj_resetData(m, d)
        d.qpos[:], d.qvel[:] = qpos[lane], qvel[lane]
        for _ in range(steps):
            mujoco.mj_step(m, d)
        out[lane] = d.qpos
    return out


def mjx_rollout_fn(m, steps):
    """jit(vmap) of ``steps`` mjx.step calls (lax.scan) from (qpos, qvel) per lane; returns the final qpos."""
    from mujoco import mjx

    mx = mjx.put_model(m, impl="jax")
    d0 = mjx.make_data(mx, impl="jax")

    def rollout(qpos, qvel):
        d = d0.replace(qpos=qpos, qvel=qvel)
        d, _ = jax.lax.scan(lambda d, _: (mjx.step(mx, d), None), d, None, length=steps)
        return d.qpos

    return jax.jit(jax.vmap(rollout))


def mjx_loss_fn(m, qpos, steps):
    """A final-state loss of ``steps`` mjx.step calls as a function of the initial qvel (batch 1)."""
    from mujoco import mjx

    mx = mjx.put_model(m, impl="jax")
    d0 = mjx.make_data(mx, impl="jax")

    def loss(qvel):
        d = d0.replace(qpos=jnp.asarray(qpos), qvel=qvel)
        d, _ = jax.lax.scan(lambda d, _: (mjx.step(mx, d), None), d, None, length=steps)
        return jnp.sum(d.qpos**2) + jnp.sum(d.qvel**2)

    return loss
