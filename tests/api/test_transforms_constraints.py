"""JAX transformations of the constraint, projection, Motion and lock operators (test_transforms covers the tree).

One small system carries all of them: the README's Ball four-bar, a slider driven by Motion.Sinusoid, and a
pendulum that each state may lock. One function ``ops`` evaluates every operator on one state; it is compiled
once per transformation:

* ``jax.vmap`` over 4096 states (half of them with the pendulum locked) matches single-state calls;
* ``jax.grad`` of a weighted scalar of every output with respect to q and u matches central differences.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from helpers import central_difference


def _system():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, [0, -9.81, 0])
    link = jb.Body.Rigid(jb.MassProperties(1.0, [0, -0.5, 0], jb.Inertia(0.34, 0.01, 0.34)))
    G = matter.Ground()
    crank = jb.MobilizedBody.Pin(G, jb.Transform(), link, jb.Transform())
    coupler = jb.MobilizedBody.Pin(crank, jb.Transform([0, -1, 0]), link, jb.Transform())
    rocker = jb.MobilizedBody.Pin(G, jb.Transform([1, 0, 0]), link, jb.Transform())
    ball = jb.Constraint.Ball(coupler, [1, 0, 0], rocker, [0, -1, 0])
    slider = jb.MobilizedBody.Slider(G, jb.Transform([3, 0, 0]), link, jb.Transform())
    slider.adopt_motion(jb.Motion.Sinusoid(jb.Motion.Position, 0.2, 3.0, 0.1))
    pendulum = jb.MobilizedBody.Pin(G, jb.Transform([5, 0, 0]), link, jb.Transform())
    return system, ball, slider, pendulum


SYSTEM, BALL, SLIDER, PENDULUM = _system()
MODEL = SYSTEM.realize_topology()
BASE = MODEL.default_state().set_time(0.3)
OPTIONS = jb.ProjectOptions(accuracy=1e-10)


def ops(q, u, locked):
    """Every constraint, projection, Motion and lock operator on one state; ``locked`` (bool) locks the pendulum."""
    s = BASE.set_q(q).set_u(u)
    s = jax.lax.cond(locked, lambda s: PENDULUM.lock(s, jb.Motion.Velocity), lambda s: s, s)
    s = MODEL.prescribe(s)
    sp = MODEL.realize(s, jb.Stage.Position)
    sv = MODEL.realize(sp, jb.Stage.Velocity)
    sa = MODEL.realize(sv)
    lam = MODEL.get_constraint_multipliers(sa)
    projected, _ = SYSTEM.project(s, options=OPTIONS)
    return {
        "udot": sa.get_u_dot(),
        "perr": MODEL.calc_constraint_position_errors(sp),
        "verr": MODEL.calc_constraint_velocity_errors(sp, u),
        "G_u": MODEL.multiply_by_g(sv, u),
        "G": MODEL.calc_g(sv),
        "G_T_lambda": MODEL.multiply_by_g_transpose(sv, lam),
        "bias": MODEL.calc_bias_for_acceleration_constraints(sv),
        "Pq": MODEL.calc_pq(sp),
        "G_Minv_GT": MODEL.calc_projected_m_inv(sv),
        "impulses": MODEL.solve_for_constraint_impulses(sv, jnp.arange(1.0, 4.0)),
        "multipliers": lam,
        "constraint_forces": MODEL.find_constraint_forces(sa)[0],
        "constraint_power": MODEL.calc_constraint_power(sa),
        "ball_perr": BALL.get_position_errors_as_vector(sa),
        "ball_multipliers": BALL.get_multipliers_as_vector(sa),
        "projected_q": projected.q,
        "projected_u": projected.u,
        "motion_forces": MODEL.find_motion_forces(sa),
        "motion_power": MODEL.calc_motion_power(sa),
        "motion_errors": MODEL.calc_motion_errors(sa, jb.Stage.Acceleration, packed=False),
        "slider_tau": SLIDER.get_tau_as_vector(sa),
        "free_u_mask": MODEL.get_free_u_mask(s).astype(q.dtype),
        "lock_level": PENDULUM.get_lock_level(s).astype(q.dtype),
    }


def _states(n, seed):
    rng = np.random.default_rng(seed)
    theta = rng.uniform(-0.4, 0.4, n)
    q = np.zeros((n, MODEL.get_num_q()))
    q[:, 0], q[:, 1], q[:, 2] = theta, -theta, theta  # an assembled parallelogram
    q[:, :3] += 1e-3 * rng.normal(size=(n, 3))  # slightly off the manifold, for projection
    q[:, 4] = rng.uniform(-1, 1, n)
    u = rng.normal(size=(n, MODEL.get_num_u()))
    return jnp.asarray(q), jnp.asarray(u), jnp.asarray(np.arange(n) % 2 == 1)


one = jax.jit(ops)


@pytest.mark.long  # 42 s (CI budget); CI keeps the LAPACK-chunking guard on 4096-lane programs (tests/constraints/test_lapack_batching.py)
def test_vmap_4096_matches_single_states():
    """4096 states under one jit(vmap) equal single-state calls lane by lane (per-lane locks included).

    This program (every constraint, projection, Motion and lock operator at once) hung in XLA three times on
    this machine while it was --long only: jaxlib 0.10.2 split its batched SVDs over the thread pool and
    deadlocked when two ran at once. jaxbody's pseudo-inverses now run such batches in inline-sized chunks
    (jaxbody/_math/lapack.py, tests/constraints/test_lapack_batching.py), and ran in CI until the CI budget moved it to --long again (the guard itself stays in CI).
    """
    q, u, locked = _states(4096, 1)
    batch = jax.jit(jax.vmap(ops))(q, u, locked)
    for lane in (0, 1, 4094, 4095):
        single = one(q[lane], u[lane], locked[lane])
        for key, value in single.items():
            np.testing.assert_allclose(batch[key][lane], value, rtol=1e-9, atol=1e-9, err_msg=key)
    assert np.all(np.asarray(batch["lock_level"])[1::2] == jb.Motion.Velocity)
    assert np.all(np.asarray(batch["lock_level"])[0::2] == jb.Motion.NoLevel)
    # a locked pendulum keeps its u (velocity lock: udot = 0) and gets a lock force; a free one swings
    pin_u = PENDULUM.get_first_u_index()
    assert np.all(np.asarray(batch["udot"])[1::2, pin_u] == 0.0)
    assert np.all(np.abs(np.asarray(batch["udot"])[0::2, pin_u]) > 1e-6)


@pytest.mark.long  # ~76 s of compile (CI time budget); CI still checks projection and four-bar gradients vs FD (tests/constraints/)
def test_grad_matches_finite_differences():
    """Free and locked pendulum through the same compiled gradient (``locked`` is traced)."""
    q, u, _ = _states(1, 2)
    q, u = q[0], u[0]
    out = one(q, u, jnp.asarray(False))
    rng = np.random.default_rng(3)
    weights = {k: jnp.asarray(rng.normal(size=np.shape(v))) for k, v in out.items()}

    def scalar(q, u, locked):
        o = ops(q, u, locked)
        return sum(jnp.sum(weights[k] * o[k]) for k in o)

    grad = jax.jit(jax.grad(scalar, argnums=(0, 1)))
    scalar_jit = jax.jit(scalar)
    for locked in (jnp.asarray(False), jnp.asarray(True)):
        gq, gu = grad(q, u, locked)
        for g, which in ((gq, 0), (gu, 1)):
            d = jnp.asarray(rng.normal(size=g.shape))
            along = (lambda x: scalar_jit(x, u, locked)) if which == 0 else (lambda x: scalar_jit(q, x, locked))  # noqa: E731
            fd = central_difference(along, (q, u)[which], 1e-6, direction=d)
            np.testing.assert_allclose(float(g @ d), float(fd), rtol=1e-5, atol=1e-6, err_msg=f"locked={bool(locked)}")
