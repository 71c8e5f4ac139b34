"""OpenSim's actuators and passive forces imported by load_osim, against OpenSim 4.6's generalized forces
(tests/actuators/generate_osim_actuator_golden.py): every force of tests/models/osim/actuators.osim (one of each
kind), a 3.x document's forces (opensim3/actuators_3x.osim), MoBL_ARMS's CoordinateLimitForces and gait9dof18musc's (CustomJoint coordinates), at random states with
random controls and activations, to 1e-9; the state-variable derivatives (activation, dissipated energies) too."""

from __future__ import annotations

import functools
import json
import pathlib
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close

import jaxbody as jb
from jaxbody.io import load_osim

HERE = pathlib.Path(__file__).parent
MODELS = HERE.parent / "models" / "osim"
GOLDEN = json.loads((HERE / "golden" / "osim_actuators.json").read_text())


@functools.lru_cache(maxsize=None)
def imported(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imp = load_osim(MODELS / GOLDEN[name]["file"])
    return imp, imp.system.realize_topology()


def golden_state(imp, model, record):
    state = imp.default_state(model)
    q, u = np.array(state.q), np.array(state.u)
    for name, value in record["q"].items():
        q[imp.q_index(name)] = value
    for name, value in record["u"].items():
        u[imp.u_index(name)] = value
    controls = np.zeros(model.num_controls)
    for name, value in record["controls"].items():
        controls[model.get_control_index(name)] = value
    z = np.array(state.z)
    for name, value in record["activations"].items():
        z[imp.forces_by_name[name].z_slice.start] = value
    return state.set_q(q).set_u(u).set_controls(controls).set_z(z)


def generalized_forces(model, handles):
    """jit(vmap(state -> per force: f + J^T F (len(handles), nu))): each force alone by switching the others off
    (``force_enabled``), all forces by one vmap over the switches, so the force sum is traced once."""
    alone = jnp.zeros((len(handles), len(model.forces)), bool).at[jnp.arange(len(handles)), jnp.array(
        [h.index for h in handles])].set(True)

    def one(state, enabled):
        F, f = model.calc_force_contributions_sum(state.set_force_enabled(enabled), handles)
        return f + model.multiply_by_system_jacobian_transpose(state, F)

    return jax.jit(jax.vmap(lambda s: jax.vmap(one, in_axes=(None, 0))(model.realize(s, jb.Stage.Velocity), alone)))


@jax.jit
def z_dot(model, states):
    return jax.vmap(lambda s: model.realize(s, jb.Stage.Dynamics).dynamics.zdot)(states)


@pytest.mark.parametrize("name", ["actuators", pytest.param("actuators_3x", marks=pytest.mark.long),
                                  pytest.param("gait9dof18musc", marks=pytest.mark.long),
                                  pytest.param("MoBL_ARMS", marks=pytest.mark.long)])  # ~20 s each (import, compile)
def test_generalized_forces_match_opensim(name):
    imp, model = imported(name)
    golden = GOLDEN[name]
    assert set(golden["forces"]) <= set(imp.forces_by_name), "every OpenSim force of the family is imported"
    handles = [imp.forces_by_name[n] for n in golden["forces"]]
    states = [golden_state(imp, model, r) for r in golden["states"]]
    batch = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)
    taus = generalized_forces(model, handles)(batch)
    zdots = z_dot(model, batch) if golden["states"][0]["derivatives"] else None
    for k, record in enumerate(golden["states"]):
        for i, force in enumerate(golden["forces"]):
            expected = record["forces"][force]
            ours = [float(taus[k, i, imp.u_index(c)]) for c in expected]
            assert_close(ours, list(expected.values()), 1e-9, f"{name} state {k}: {force}")
        for path, value in record["derivatives"].items():
            force = path.split("/")[2]
            assert_close(zdots[k, imp.forces_by_name[force].z_slice.start], value, 1e-9, f"{name} state {k}: d/dt {path}")


@pytest.mark.long  # 10 s in CI
def test_opensim3_fields_and_is_disabled():
    """The 3.x document's two-frame forces (body_1, location/orientation_body_1), PointToPointSpring (body1) and
    ``isDisabled``: built, and the disabled one off in the default state (its numbers: the parametrized test)."""
    imp, model = imported("actuators_3x")
    assert list(imp.forces_by_name) == GOLDEN["actuators_3x"]["forces"] and imp.disabled_forces == ["sgf3"]
    assert bool(imp.forces_by_name["sgf3"].is_disabled(imp.default_state(model)))


def test_every_force_of_the_model_file_is_imported_and_named():
    imp, model = imported("actuators")
    assert list(imp.forces_by_name) == GOLDEN["actuators"]["forces"] and imp.skipped == []
    assert model.control_names == ("ca_pin", "aca_slide", "pa", "pa_global", "ta")
    assert float(imp.default_state(model).z[imp.forces_by_name["aca_slide"].z_slice.start]) == 0.2  # default_activation


def test_gradients_match_central_differences():
    """d (w . generalized forces) (forward mode) along a random direction in (q, u, controls, every force leaf), against central
    differences, at a golden state of the one-of-each model (all kinds, limit forces in their transitions)."""
    imp, model = imported("actuators")
    handles = tuple(imp.forces_by_name.values())
    state = golden_state(imp, model, GOLDEN["actuators"]["states"][1])
    rng = np.random.default_rng(3)
    weights = jnp.asarray(rng.normal(size=model.get_num_u()))

    def total(x):
        q, u, controls, forces = x
        m = eqx.tree_at(lambda m: m.forces, model, forces)
        s = m.realize(state.set_q(q).set_u(u).set_controls(controls), jb.Stage.Velocity)
        F, f = m.calc_force_contributions_sum(s, handles)
        return jnp.dot(weights, f + m.multiply_by_system_jacobian_transpose(s, F))

    x = (state.q, state.u, state.controls, model.forces)
    direction = jax.tree_util.tree_map(lambda a: jnp.asarray(rng.normal(size=jnp.shape(a))), x)
    jvp = jax.jit(lambda x: jax.jvp(total, (x,), (direction,)))  # one compilation: tangent and FD values
    shifted = [jvp(jax.tree_util.tree_map(lambda a, d, k=k: a + k * 1e-6 * d, x, direction))[0] for k in (1, -1)]
    assert_close(jvp(x)[1], (shifted[0] - shifted[1]) / 2e-6, 1e-7, "directional derivative")
