"""Force elements of one type are evaluated by one vmap (jaxbody._dynamics.force_groups): the grouped sum equals
the sum of the elements one by one, a switch inside a group removes exactly that element, and gradients reach
each element's own parameters."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close

import jaxbody as jb
from jaxbody._dynamics.force_groups import group_positions


@pytest.fixture(scope="module")
def chain():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    mass = jb.MassProperties.from_central_inertia(1.0, [0.0, -0.2, 0.1], jb.Inertia(0.1, 0.12, 0.08))
    parent, bodies = matter.Ground(), []
    for i in range(4):
        parent = jb.MobilizedBody.Pin(parent, jb.Transform(jb.Rotation.about_axis(0.3 * i, [1.0, 0.0, 0.0]), [0, -0.5, 0]),
                                      jb.Body.Rigid(mass), jb.Transform())
        bodies.append(parent)
    springs = [jb.Force.MobilityLinearSpring(forces, b, 0, 1.0 + i, 0.1 * i) for i, b in enumerate(bodies)]
    links = [jb.Force.TwoPointLinearSpring(forces, bodies[i], [0.1, 0, 0], bodies[i + 1], [0, 0.1, 0.05], 3.0 + i, 0.2)
             for i in range(3)]
    torques = [jb.Force.ConstantTorque(forces, b, [0.1 * i, 0.2, -0.1]) for i, b in enumerate(bodies)]
    model = system.realize_topology()
    state = model.default_state().set_q([0.3, -0.2, 0.5, 0.1]).set_u([1.0, 2.0, -1.0, 0.5])
    return model, springs + links + torques, state


def test_one_group_per_type(chain):
    model, handles, _ = chain
    assert group_positions(model.forces, range(len(model.forces))) == [(0, 1, 2, 3), (4, 5, 6), (7, 8, 9, 10)]


def test_grouped_sum_is_the_sum_of_the_elements(chain):
    model, handles, state = chain

    @jax.jit
    def totals_and_parts(state):
        s = model.realize(state, jb.Stage.Dynamics)
        parts = [model.calc_force_contributions_sum(s, (h,)) + (model.calc_force_potential_energy_sum(s, (h,)),)
                 for h in handles]
        return s.dynamics.body_forces, s.dynamics.mobility_forces, s.dynamics.potential_energy, parts

    F, f, pe, parts = totals_and_parts(state)
    assert_close(F, sum(p[0] for p in parts), 1e-13, "body forces")
    assert_close(f, sum(p[1] for p in parts), 1e-13, "mobility forces")
    assert_close(pe, sum(p[2] for p in parts), 1e-13, "potential energy")
    off = handles[5].set_disabled(handles[1].set_disabled(state))
    F_off, f_off, pe_off, _ = totals_and_parts(off)
    assert_close(F_off, F - parts[5][0], 1e-13, "one link off")
    assert_close(f_off, f - parts[1][1], 1e-13, "one spring off")
    assert_close(pe_off, pe - parts[1][2] - parts[5][2], 1e-13, "their energy off")


def test_gradient_reaches_each_grouped_parameter(chain):
    model, handles, state = chain
    springs = handles[:4]

    def pe(stiffnesses):
        m = eqx.tree_at(lambda m: [m.forces[h.index].stiffness for h in springs], model, list(stiffnesses))
        return m.calc_potential_energy(m.realize(state, jb.Stage.Dynamics))

    grad = jax.jit(jax.grad(pe))([model.forces[h.index].stiffness for h in springs])
    q0 = 0.1 * np.arange(4)
    assert_close(jnp.stack(grad), 0.5 * (np.asarray(state.q) - q0) ** 2, 1e-14, "dPE/dk_i = (q_i - q0_i)^2 / 2")
