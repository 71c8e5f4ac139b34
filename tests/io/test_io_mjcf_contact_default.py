"""load_mjcf applies contact by default, as MuJoCo does (issue 34: "MJX's own humanoid falls through its floor"),
and honours the file's ``<option><flag>``: ``contact`` or ``constraint`` disabled -> no contact; ``actuation``
disabled -> the actuators stay (controls, activation slots) but give no force and no act_dot, as MuJoCo's
mj_forward; ``gravity`` disabled -> zero gravity, contact kept.

MuJoCo runs here as the reference: MJX's humanoid stands on its feet from qpos0 in MuJoCo (torso height after
0.3 s), and MuJoCo's actuator_force / act_dot with the actuation flag off and with an actuator group disabled.
"""

from __future__ import annotations

import functools
import pathlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody.io import load_mjcf

mujoco = pytest.importorskip("mujoco", reason="load_mjcf parses with MuJoCo's compiler (extra jaxbody[io])")

HUMANOID = pathlib.Path(__file__).parent.parent / "models" / "mjx_humanoid.xml"
SECONDS, DT = 0.3, 1e-3


def _quiet_load(source, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_mjcf(source, **kwargs)


def _humanoid_flagged(flags: str) -> str:
    """MJX's humanoid with ``<flag X="disable"/>`` for each name in ``flags`` added to its ``<option>``."""
    text = HUMANOID.read_text()
    old = '<flag eulerdamp="disable"/>'
    assert old in text
    return text.replace(old, '<flag eulerdamp="disable"' + "".join(f' {f}="disable"' for f in flags.split()) + "/>")


@functools.cache
def humanoid():
    imp = _quiet_load(HUMANOID)  # no contact argument: the default
    return imp, imp.system.realize_topology()


def _mujoco_torso_height(seconds):
    """MuJoCo's torso height after ``seconds`` from qpos0 (its own solver and timestep), and its weight m g."""
    m = mujoco.MjModel.from_xml_path(str(HUMANOID))
    d = mujoco.MjData(m)
    for _ in range(int(round(seconds / m.opt.timestep))):
        mujoco.mj_step(m, d)
    return float(d.xpos[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "torso"), 2]), float(m.body_subtreemass[0]) * 9.81


def test_humanoid_stands_on_its_feet_from_the_files_default_state():
    """From the file's default State (MuJoCo's qpos0: the foot capsules touch the floor), 0.3 s of semi-explicit
    Euler (dt 1 ms): the torso stays within 2 cm of where MuJoCo has it (without contact it falls 0.44 m), the
    floor carries load and no foot sinks 2 cm."""
    imp, model = humanoid()
    assert imp.contact is not None, "load_mjcf's default must build MuJoCo's contact"
    assert sorted((p.geom1, p.geom2) for p in imp.contact.pairs) == sorted(
        ("floor", f"foot{i}_{s}") for i in (1, 2) for s in ("left", "right"))
    torso, subsystem = imp.bodies["torso"], imp.contact.subsystem
    z_mujoco, weight = _mujoco_torso_height(SECONDS)
    steps = int(round(SECONDS / DT))

    @jax.jit
    def run(state):
        final, _ = jb.simulate(model, state, DT, steps, "semi_explicit_euler", save_every=steps)
        s = model.realize(final, jb.Stage.Velocity)
        report = subsystem.get_contact_forces(s, model)
        return torso.get_body_origin_location(s)[2], report.force_G[:, 2].sum(), report.depth.max(), final.q

    z, lift, depth, q = run(imp.default_state(model))
    assert bool(jnp.all(jnp.isfinite(q)))
    assert float(z) == pytest.approx(z_mujoco, abs=0.02)
    assert 0.5 * weight < float(lift) < 2 * weight  # 1.015 m g measured
    assert float(depth) < 0.02


@pytest.mark.parametrize("flag", ["contact", "constraint"])
def test_contact_flag_disabled_gives_no_contact(flag):
    imp = _quiet_load(_humanoid_flagged(flag))
    assert "contact" in imp.mjcf_disabled and imp.contact is None
    assert all(not mb.get_body().contact_surfaces for mb in imp.bodies.values())
    assert _quiet_load(HUMANOID, contact=False).contact is None  # the explicit opt-out


def test_gravity_flag_disabled_keeps_contact():
    imp = _quiet_load(_humanoid_flagged("gravity"))
    assert np.array_equal(imp.gravity, np.zeros(3)) and imp.contact is not None


ACTUATED = """<mujoco><option{group}><flag{flag}/></option><worldbody><body><joint name="j" type="hinge"/>
<geom size=".1"/></body></worldbody><actuator><general name="filtered" joint="j" group="1" dyntype="filter"
dynprm="0.1" gainprm="2"/><motor name="motor" joint="j" gear="3"/></actuator></mujoco>"""
CASES = {"as written": ("", ""), "actuation disabled": ("", ' actuation="disable"'),
         "group 1 disabled": (' actuatorgroupdisable="1"', "")}


@pytest.mark.parametrize("case", list(CASES))
def test_actuation_flag_matches_mujoco(case):
    """actuator_force, qfrc_actuator and act_dot against MuJoCo's mj_forward at 8 (ctrl, act, qvel) under jit and
    vmap; with the actuation flag off the actuators keep their controls and activation but do nothing."""
    group, flag = CASES[case]
    xml = ACTUATED.format(group=group, flag=flag)
    imp = _quiet_load(xml)
    model = imp.system.realize_topology()
    assert model.control_names == ("filtered", "motor") and imp.actuators.get_act(model.default_state()).shape == (1,)
    rng = np.random.default_rng(0)
    ctrl, act, qvel = rng.normal(size=(8, 2)), rng.normal(size=(8, 1)), rng.normal(size=(8, 1))
    handle = imp.actuators

    @jax.jit
    @jax.vmap
    def outputs(c, a, v):
        s = handle.set_act(handle.set_ctrl(model.default_state().set_u(v), c), a)
        out = handle.calc_actuator_outputs(model, model.realize(s, jb.Stage.Velocity))
        return out.force, out.mobility_forces, out.act_dot

    force, qfrc, act_dot = outputs(jnp.asarray(ctrl), jnp.asarray(act), jnp.asarray(qvel))
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    for k in range(8):
        d.ctrl[:], d.act[:], d.qvel[:] = ctrl[k], act[k], qvel[k]
        mujoco.mj_forward(m, d)
        np.testing.assert_allclose(force[k], d.actuator_force, rtol=1e-12, atol=1e-12, err_msg=f"{case} {k}")
        np.testing.assert_allclose(qfrc[k], d.qfrc_actuator, rtol=1e-12, atol=1e-12, err_msg=f"{case} {k}")
        np.testing.assert_allclose(act_dot[k], d.act_dot, rtol=1e-12, atol=1e-12, err_msg=f"{case} {k}")
    assert (np.max(np.abs(act_dot)) == 0) == (case == "actuation disabled")
    assert (np.max(np.abs(force)) == 0) == (case == "actuation disabled")  # the group-0 motor acts otherwise
