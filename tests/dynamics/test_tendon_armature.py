"""Tendon armature (jb.TendonArmature, jaxbody._dynamics.tendon_armature) with known udots and on both backends.

A chain built in code (three Pins and a Slider, a Ball on the end) with a spatial tendon from Ground through
two bodies and a fixed tendon over a Pin and the Slider. With one Pin locked at a velocity (its udot known),
the free udots must solve ``M'_rr udot_r = -r0_r`` with ``M' = calc_m`` (tendon armature included) and ``r0``
the inverse dynamics at udot = 0 (``c - f + J^T A b``), and the locked mobility's motion force (``M udot +
motion_forces = f - c``) must be ``-(M' udot + r0)_p``: a dense, independent route to the Woodbury correction.
JAX path and compiled kernels agree. With gravity only, the energy (the armature's 1/2 a Ldot^2 included) is
conserved along (qdot, udot).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

import jaxbody as jb
import systems
from helpers import assert_close
from jaxbody._kernels import backend


@functools.cache
def chain():
    system = jb.MultibodySystem()
    matter, forces = jb.SimbodyMatterSubsystem(system), jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    body = jb.Body.Rigid(jb.MassProperties(1.3, [0.2, 0.01, 0.0], jb.Inertia(0.2, 0.25, 0.22)))
    X = jb.Transform(np.eye(3), [0.4, 0.0, 0.0])
    a = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), body, jb.Transform(), name="a")
    b = jb.MobilizedBody.Pin(a, X, body, jb.Transform(), name="b")
    c = jb.MobilizedBody.Slider(b, X, body, jb.Transform(), name="c")
    d = jb.MobilizedBody.Ball(c, X, body, jb.Transform(), name="d")
    jb.TendonArmature.Spatial(matter, "cable", 2.5, [(matter.Ground(), [0.1, 0.5, 0.0]), (b, [0.2, 0.05, 0.0]),
                                                     (d, [0.1, -0.05, 0.02])])
    jb.TendonArmature.Fixed(matter, "coupler", 0.8, [(a, 0, 1.5), (c, 0, -2.0)])
    model = system.realize_topology()
    return model, b, systems.random_state(model, 3)


@jax.jit
def locked_dynamics(model, state):
    s = model.realize(state, jb.Stage.Acceleration)
    dyn = s.dynamics
    r0 = model.calc_residual_force_ignoring_constraints(s, dyn.mobility_forces, dyn.body_forces,
                                                        jnp.zeros_like(s.u))
    return model.calc_m(s), r0, s.acceleration.udot, s.acceleration.motion_forces


def test_known_udots_and_backends():
    model, b, state = chain()
    locked = b.lock_at(state, 0.7, jb.Motion.Velocity)
    with jb.use_backend("jax"):
        M, r0, udot, motion = (np.asarray(x) for x in locked_dynamics(model, locked))
    p = b.get_first_u_index()
    r = np.array([i for i in range(len(udot)) if i != p])
    assert udot[p] == 0.0
    assert_close(udot[r], np.linalg.solve(M[np.ix_(r, r)], -r0[r]), 1e-12, "free udots vs the dense M' solve")
    assert_close(motion[p], -(M @ udot + r0)[p], 1e-10, "locked mobility's motion force")
    assert abs(motion[p]) > 1e-3 and np.max(np.abs(M - np.asarray(M).T)) < 1e-12
    if backend.runs_compiled(model.topology, jnp.float64):
        with jb.use_backend("compiled"):
            _, _, udot_c, motion_c = (np.asarray(x) for x in locked_dynamics(model, locked))
        assert_close(udot_c, udot, 1e-12, "compiled vs JAX udot (locked)")
        assert_close(motion_c, motion, 1e-12, "compiled vs JAX motion forces (locked)")


def test_energy_is_conserved():
    """With gravity only, d(KE + PE)/dt = 0 along (qdot, udot): the kinetic energy's ``1/2 a Ldot^2`` and the
    forward dynamics' ``M'`` and bias ``J^T A b`` agree (a power balance, independent of MuJoCo)."""
    model, _, state = chain()

    @jax.jit
    def rate_of_energy(model, q, u):
        s = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Acceleration)
        energy = lambda q, u: model.calc_energy(  # noqa: E731
            model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Dynamics))
        return jax.jvp(energy, (q, u), (s.get_q_dot(), s.acceleration.udot))[1], energy(q, u)

    rate, energy = rate_of_energy(model, state.q, state.u)
    assert abs(float(rate)) < 1e-11 * max(1.0, abs(float(energy)))
