"""Gradients of udot (and of the potential energy) through every force element: with respect to q, u and each
element's parameters (model leaves, replaced with ``eqx.tree_at``), against central finite differences, from
one jitted jax.grad."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from force_systems import all_forces_model
from helpers import assert_close, central_difference
from systems import random_state

import jaxbody as jb

PARAMETERS = (  # (element, field) of every force parameter of the model
    ("Gravity", "magnitude"), ("Gravity", "down"), ("Gravity", "zero_height"), ("UniformGravity", "gravity"),
    ("MobilityLinearSpring", "stiffness"), ("MobilityLinearSpring", "q0"),
    ("MobilityLinearStop", "stiffness"), ("MobilityLinearStop", "q_high"),
    ("MobilityLinearStopDissipative", "dissipation"), ("MobilityLinearStopDissipative", "q_low"),
    ("TwoPointLinearSpring", "stiffness"), ("TwoPointLinearSpring", "rest_length"), ("TwoPointLinearSpring", "station1"),
    ("LinearBushing", "stiffness"), ("LinearBushing", "p_B1F"), ("LinearBushingDamped", "damping"),
    ("Custom", "k"), ("MobilityLinearDamper", "damping"), ("TwoPointLinearDamper", "damping"),
    ("GlobalDamper", "damping"), ("MobilitySmoothCoulombFriction", "friction"),
    ("MobilitySmoothCoulombFriction", "transition_velocity"), ("MobilitySmoothCoulombFrictionBall", "friction"), ("MobilityConstantForce", "force"), ("TwoPointConstantForce", "force"),
    ("ConstantForce", "force"), ("ConstantForce", "station"), ("ConstantTorque", "torque"),
)


def _leaf(handles, element, field):
    index = handles[element].index
    if element == "Custom":
        return lambda m: m.forces[index].parameters[field]
    return lambda m: getattr(m.forces[index], field)


@pytest.fixture(scope="module")
def problem():
    model, handles, bodies = all_forces_model("all")
    state = random_state(model, 5)
    q = np.asarray(state.q).copy()
    q[bodies["slide"].q_start] = 0.08  # both stops engaged, away from their kinks
    q[bodies["arm"].q_start] = -0.17
    u = np.asarray(state.u).copy()
    u[bodies["arm"].u_start] = 0.5  # the lower stop pushes (1 - d qdot > 0)
    state = state.set_q(q).set_u(u)
    getters = [_leaf(handles, e, f) for e, f in PARAMETERS]
    params0 = [g(model) for g in getters]
    w = jnp.asarray(np.random.default_rng(1).normal(size=model.get_num_u()))

    def objective(params, q, u):
        m = eqx.tree_at(lambda m: [g(m) for g in getters], model, params)
        s = m.realize(state.set_q(q).set_u(u))
        return jnp.dot(w, s.acceleration.udot) + m.calc_potential_energy(s)

    return jax.jit(objective), jax.jit(jax.grad(objective, argnums=(0, 1, 2))), params0, state


def test_grad_udot_wrt_q_and_u(problem):
    objective, grad, params, state = problem
    _, g_q, g_u = grad(params, state.q, state.u)
    rng = np.random.default_rng(2)
    for what, g, x, f in (("q", g_q, state.q, lambda x: objective(params, x, state.u)),
                          ("u", g_u, state.u, lambda x: objective(params, state.q, x))):
        direction = jnp.asarray(rng.normal(size=x.shape))
        fd = central_difference(f, x, 1e-6, direction)
        assert abs(float(fd)) > 1e-3
        assert_close(jnp.dot(g, direction), fd, 1e-6, f"d(w . udot + PE)/d{what}")


def test_grad_udot_wrt_every_force_parameter(problem):
    objective, grad, params, state = problem
    g_params, _, _ = grad(params, state.q, state.u)
    for i, (element, field) in enumerate(PARAMETERS):
        def along(x, i=i):
            return objective(params[:i] + [x] + params[i + 1 :], state.q, state.u)

        fd = central_difference(along, params[i], 1e-6)
        assert np.any(np.abs(fd) > 1e-6), f"{element}.{field} moves udot at this state"
        assert_close(g_params[i], fd, 1e-6, f"d(w . udot + PE)/d {element}.{field}")


@pytest.mark.parametrize("name, body, which_u", [("MobilitySmoothCoulombFriction", "arm", 0),
                                                 ("MobilitySmoothCoulombFrictionBall", "ball", 1)])
def test_smooth_coulomb_friction_under_jit_vmap_and_grad(name, body, which_u):
    """The friction element's own force, vmapped over lanes of (u, friction leaf) in one jit: value
    ``-F tanh(u / v_t)``, and jax.grad of it w.r.t. u and w.r.t. the friction leaf against central differences."""
    model, handles, bodies = all_forces_model("all")
    h, k = handles[name], bodies[body].u_start + which_u
    state = random_state(model, 3)
    v_t = float(model.forces[h.index].transition_velocity)

    def force(u_k, friction):
        m = eqx.tree_at(lambda m: m.forces[h.index].friction, model, friction)
        s = m.realize(state.set_u(state.u.at[k].set(u_k)), jb.Stage.Velocity)
        return m.calc_force_contributions_sum(s, (h,))[1][k]

    u = jnp.linspace(-3.0 * v_t, 2.0 * v_t, 5)
    friction = jnp.linspace(0.2, 1.5, 5)
    value, (d_u, d_friction) = jax.jit(jax.vmap(jax.value_and_grad(force, argnums=(0, 1))))(u, friction)
    assert_close(value, -friction * np.tanh(u / v_t), 1e-14, f"{name}: -F tanh(u / v_t)")
    assert np.all(np.asarray(value * u) < 0), f"{name}: its power f u is negative (dissipative) on every lane"
    for lane in range(len(u)):
        fd_u = central_difference(lambda x: force(x, friction[lane]), u[lane], 1e-6)
        fd_f = central_difference(lambda x: force(u[lane], x), friction[lane], 1e-6)
        assert abs(float(fd_u)) > 1e-3 and abs(float(fd_f)) > 1e-3
        assert_close(d_u[lane], fd_u, 1e-6, f"{name}: df/du, lane {lane}")
        assert_close(d_friction[lane], fd_f, 1e-6, f"{name}: df/dF, lane {lane}")
