"""MJCF actuators imported by load_mjcf against MuJoCo 4.0 (tests/actuators/generate_mjcf_actuator_golden.py):
actuator_length, actuator_velocity, actuator_moment, actuator_force, qfrc_actuator and act_dot to 1e-10 for a
model with every actuator type (tests/models/actuators.xml) and dm_control's cheetah; unsupported actuators
warn by name and keep their control slot; gradients of the forces against central differences."""

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
from helpers import assert_close, assert_grad_matches_fd

import jaxbody as jb
from jaxbody.io import load_mjcf

HERE = pathlib.Path(__file__).parent
GOLDEN = json.loads((HERE / "golden" / "mjcf_actuators.json").read_text())


@functools.lru_cache(maxsize=None)
def imported(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imp = load_mjcf(HERE.parent / GOLDEN[name]["file"], joint_limits=False, contact=False)  # actuators only
    return imp, imp.system.realize_topology()


def states_of(imp, model, golden):
    """The golden states as one batched jaxbody State (hinge and slide joints: q = qpos, u = qvel)."""
    states = []
    for record in golden["states"]:
        s = model.default_state()
        q, u = np.array(s.q), np.array(s.u)
        for j, name in enumerate(golden["joints"]):
            q[imp.q_index(name)], u[imp.u_index(name)] = record["qpos"][j], record["qvel"][j]
        s = imp.actuators.set_ctrl(s.set_q(q).set_u(u), jnp.asarray(record["ctrl"]))
        states.append(imp.actuators.set_act(s, jnp.asarray(record["act"])))
    return jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)


@pytest.mark.parametrize("name", ["actuators", "cheetah"])
def test_actuator_fields_match_mujoco(name):
    imp, model = imported(name)
    golden = GOLDEN[name]
    handle = imp.actuators
    out = jax.jit(jax.vmap(lambda s: handle.calc_actuator_outputs(model, model.realize(s, jb.Stage.Velocity))))(
        states_of(imp, model, golden))
    for k, record in enumerate(golden["states"]):
        what = f"{name} state {k}"
        assert_close(out.length[k], record["actuator_length"], 1e-10, f"{what}: actuator_length")
        assert_close(out.velocity[k], record["actuator_velocity"], 1e-10, f"{what}: actuator_velocity")
        assert_close(out.force[k], record["actuator_force"], 1e-10, f"{what}: actuator_force")
        assert_close(out.act_dot[k], record["act_dot"], 1e-10, f"{what}: act_dot")
        u_of_dof = [imp.u_index(j) for j in golden["dof_joint"]]
        assert_close(out.mobility_forces[k][jnp.array(u_of_dof)], record["qfrc_actuator"], 1e-10, f"{what}: qfrc_actuator")
        moment = np.asarray(out.moment[k])   # (nactuator, nu) in jaxbody's u
        assert_close(moment[:, u_of_dof], record["actuator_moment"], 1e-10, f"{what}: actuator_moment")


def test_realize_applies_the_actuators_and_their_activation_dynamics():
    imp, model = imported("actuators")
    golden = GOLDEN["actuators"]
    batch = states_of(imp, model, golden)
    dyn = jax.jit(jax.vmap(lambda s: model.realize(s, jb.Stage.Dynamics).dynamics))(batch)
    z = imp.actuators.z_slice
    for k, record in enumerate(golden["states"]):
        assert_close(dyn.zdot[k][z], record["act_dot"], 1e-10, f"state {k}: zdot is MuJoCo's act_dot")
    assert model.control_names == imp.actuators.actuator_names and model.num_controls == 12


def test_force_gradients_match_central_differences():
    imp, model = imported("actuators")
    state = jax.tree_util.tree_map(lambda x: x[1], states_of(imp, model, GOLDEN["actuators"]))
    handle = imp.actuators

    def total(q, controls, gainprm):
        m = eqx.tree_at(lambda mm: mm.forces[handle.index].gainprm, model, gainprm)
        s = m.realize(state.set_q(q).set_controls(controls), jb.Stage.Velocity)
        out = handle.calc_actuator_outputs(m, s)
        return jnp.sum(jnp.sin(out.force)) + jnp.sum(out.act_dot ** 2)

    args = (state.q, state.controls, model.forces[handle.index].gainprm)
    grads = jax.jit(jax.grad(total, argnums=(0, 1, 2)))(*args)
    for i, what in enumerate(("q", "controls", "gainprm")):
        f = jax.jit(lambda x, i=i: total(*[x if j == i else a for j, a in enumerate(args)]))
        assert_grad_matches_fd(f, args[i], 1e-6, 1e-6, f"d/d {what}", grad=grads[i])


def test_unsupported_actuators_warn_by_name_and_keep_their_control():
    xml = """<mujoco><worldbody><body name="b"><joint name="j" type="hinge"/><geom size=".1"/>
             <body pos="0 0 -0.3"><joint name="ball" type="ball"/><geom size=".1"/></body></body></worldbody>
             <actuator><motor name="ok" joint="j"/><adhesion name="on_body" body="b" ctrlrange="0 1"/>
             <motor name="on_ball" joint="ball"/></actuator></mujoco>"""
    with pytest.warns(UserWarning, match=r"on_body \(a body \(adhesion.*on_ball \(a transmission on ball/free"):
        imp = load_mjcf(xml)
    model = imp.system.realize_topology()
    assert model.control_names == ("ok", "on_body", "on_ball")
    out = imp.actuators.calc_actuator_outputs(model, model.realize(
        model.default_state().set_controls(jnp.array([1.0, 1.0, 1.0])), jb.Stage.Velocity))
    assert_close(out.force, [1.0, 0.0, 0.0], 0, "only the supported actuator acts")
