"""load_mjcf against MuJoCo 4.0 where the compiled model decides: mujoco-mjx's ``pendula.xml`` (generated names
never collide with the file's: its unnamed ball joint sits beside a joint named ``joint7``; ``<option><flag>``
honoured as MuJoCo honours it, jaxbody.io.mjcf_options), dm_control's ``finger`` and ``manipulator`` (hinge and
slide ``ref`` != 0: q = qpos, springs from springref) and ``body_sameframe`` (inertial frame taken as the body's).

Reference: tests/io/golden/mujoco_pendula.npz from tests/io/generate_robust_io_golden.py. M vs mj_fullM,
unconstrained udot vs M^-1 (tau - qfrc_bias), body poses vs xpos/xmat, and jaxbody's passive generalized
forces (its springs and dampers, joint and tendon) vs MuJoCo's qfrc_spring + qfrc_damper under each flag variant,
all to 1e-10 relative after jaxbody.io.mjcf's coordinate map.
"""

import functools
import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close

import jaxbody as jb

pytest.importorskip("mujoco", reason="load_mjcf parses with MuJoCo's compiler (extra jaxbody[io])")

HERE = os.path.dirname(os.path.abspath(__file__))
PENDULA = os.path.join(HERE, "..", "models", "pendula.xml")
FREE, BALL = 0, 1
FLAG_LINE = '<flag contact="disable" />'


def variant(flags: str) -> str:
    text = open(PENDULA).read()
    return text.replace(FLAG_LINE, '<flag contact="disable"' + "".join(f' {f}="disable"' for f in flags.split()) + " />")


def quaternion_matrix(q):
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def coordinate_map(imported, g, qpos):
    """(q_jb, T) with qvel = T u_jb (jaxbody.io.mjcf's map), joints in MuJoCo's order = the record's order."""
    nv = g["M"].shape[-1]
    q_jb, T = np.zeros(len(qpos)), np.zeros((nv, nv))
    for c, jtype, a, d in zip(imported.coordinates.values(), g["jnt_type"], g["jnt_qposadr"], g["jnt_dofadr"]):
        jq, ju = c.mobilized_body.get_first_q_index() + c.q_index, c.mobilized_body.get_first_u_index()
        if jtype == FREE:
            q_jb[jq:jq + 4], q_jb[jq + 4:jq + 7] = qpos[a + 3:a + 7], qpos[a:a + 3]
            T[d:d + 3, ju + 3:ju + 6], T[d + 3:d + 6, ju:ju + 3] = np.eye(3), quaternion_matrix(qpos[a + 3:a + 7]).T
        elif jtype == BALL:
            q_jb[jq:jq + 4] = qpos[a:a + 4]
            T[d:d + 3, ju:ju + 3] = quaternion_matrix(qpos[a:a + 4]).T
        else:
            q_jb[jq], T[d, ju] = qpos[a], 1.0
    return q_jb, T


@functools.cache
def build(flags="", source=None, golden="mujoco_pendula.npz"):
    with warnings.catch_warnings():   # frictionloss is a constraint in MuJoCo, not in qfrc_passive: left out
        warnings.simplefilter("ignore")
        # contact-free by design (finger, manipulator): the golden numbers are MuJoCo's with contact disabled
        imported = jb.io.load_mjcf(variant(flags) if source is None else source, joint_limits=False, friction="ignore",
                                   contact=False)
    model = imported.system.realize_topology()
    g = dict(np.load(os.path.join(HERE, "golden", golden)))
    names = [n for n in imported.bodies if "/" not in n][1:]   # the file's bodies, MuJoCo's order (world left out)
    without_passive = model.default_state()
    for handle in (h for hs in imported.passive_forces.values() for h in hs):
        without_passive = imported.forces.set_force_is_disabled(without_passive, handle, True)
    without_actuators = model.default_state()   # MuJoCo's qfrc_bias and qfrc_passive hold no actuator force (its
    if imported.actuators is not None:          # tendon position servo pushes even at ctrl = 0)
        without_actuators = imported.forces.set_force_is_disabled(without_actuators, imported.actuators, True)
        without_passive = imported.forces.set_force_is_disabled(without_passive, imported.actuators, True)

    @jax.jit
    @jax.vmap
    def evaluate(q, u, tau):
        s = model.realize(without_passive.set_q(q).set_u(u).set_mobility_forces(tau), jb.Stage.Dynamics)
        udot, _ = model.calc_acceleration_ignoring_constraints(s, s.dynamics.mobility_forces, s.dynamics.body_forces)
        X = [imported.bodies[n].get_body_transform(s) for n in names]
        with_passive = model.realize(without_actuators.set_q(q).set_u(u), jb.Stage.Dynamics)
        return (model.calc_m(s), udot, jnp.stack([x.R for x in X]), jnp.stack([x.p for x in X]),
                with_passive.dynamics.mobility_forces)

    q, T = (np.array(x) for x in zip(*[coordinate_map(imported, g, qpos) for qpos in g["qpos"]]))
    u = np.linalg.solve(T, g["qvel"][..., None])[..., 0]
    M, udot, R, p, f = evaluate(q, u, np.einsum("kij,ki->kj", T, g["tau"]))
    return {"g": g, "T": T, "M": M, "udot": udot, "R": R, "p": p, "f": f, "imported": imported, "model": model}


def test_generated_names_never_collide():
    imported = build()["imported"]
    names = list(imported.coordinates)
    assert len(names) == len(set(names)) == len(build()["g"]["jnt_type"]) == 20
    assert names[7:9] == ["joint7_", "joint7"]   # the unnamed ball (MuJoCo id 7) beside the file's joint7 (id 8)
    assert imported.coordinates["joint7_"].nq == 4 and imported.coordinates["joint7"].nq == 1


def test_mass_matrix_accelerations_poses():
    case = build()
    g, T = case["g"], case["T"]
    assert_close(case["M"], np.einsum("kai,kab,kbj->kij", T, g["M"], T), 1e-10, "M = T^T M_mj T")
    assert_close(np.einsum("kij,kj->ki", T, case["udot"]), g["qacc_free"], 1e-10, "udot vs M^-1 (tau - bias)")
    assert_close(case["R"], g["xmat"][:, 1:], 1e-10, "R_GB vs xmat")
    assert_close(case["p"], g["xpos"][:, 1:], 1e-10, "p_GB vs xpos")


@pytest.mark.parametrize("flags", ["", pytest.param("spring", marks=pytest.mark.long),
                                   pytest.param("damper", marks=pytest.mark.long), "spring damper"])
def test_spring_and_damper_flags(flags):
    """Springs and dampers on the right joints (ball, slide, hinges, stacked; fixed tendons), and the
    ``spring``/``damper`` flags switch off exactly what MuJoCo's switch off: f_jb = T^T (qfrc_spring + qfrc_damper)."""
    case = build(flags)
    golden = case["g"][f"passive_{flags.replace(' ', '_') or 'as_written'}"]
    expected = np.einsum("kij,ki->kj", case["T"], golden)
    assert_close(case["f"], expected, 1e-10, f"passive forces, {flags or 'as written'}")
    if flags == "spring damper":
        assert not case["imported"].passive_forces and np.max(np.abs(golden)) == 0


LIMITED = """<mujoco><compiler angle="radian"/><option timestep="0.005" integrator="RK4"><flag {flags}/></option>
  <worldbody><body name="a"><joint name="h" type="hinge" range="-0.5 0.5" frictionloss="0.3"/><geom size="0.1"/>
  <body name="b" pos="0 0 -0.5"><joint name="k" type="hinge" range="-0.5 0.5"/><geom size="0.1"/></body>
  </body></worldbody><equality><joint joint1="h" joint2="k"/></equality></mujoco>"""


def load_limited(flags):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return jb.io.load_mjcf(LIMITED.format(flags=flags))


def test_limit_frictionloss_equality_flags_and_options():
    plain = load_limited("")
    assert set(plain.limit_stops) == {"h", "k"} and "h" in plain.passive_forces and plain.mjcf_disabled == frozenset()
    assert (plain.timestep, plain.integrator) == (0.005, "RK4")
    off = load_limited('limit="disable" frictionloss="disable" equality="disable" gravity="disable"')
    assert off.limit_stops == {} and off.passive_forces == {} and np.array_equal(off.gravity, np.zeros(3))
    assert off.joint_limits == {"h": (-0.5, 0.5), "k": (-0.5, 0.5)}            # metadata kept
    assert off.mjcf_disabled == {"limit", "frictionloss", "equality", "gravity"}
    assert list(off.constraints) == ["equality0"]
    assert all(c.is_disabled_by_default() for c in off.constraints.values())
    assert not any(c.is_disabled_by_default() for c in plain.constraints.values())
    every = load_limited('constraint="disable"')                              # all constraint kinds
    assert every.limit_stops == {} and every.passive_forces == {}
    assert every.mjcf_disabled >= {"equality", "limit", "frictionloss", "contact"}
    assert all(c.is_disabled_by_default() for c in every.constraints.values())


DM_CONTROL = os.path.join(HERE, "..", "models", "dm_control")
SAMEFRAME_XML = """<mujoco><worldbody><body name="a" pos="0 0 1"><freejoint/>
  <inertial pos="2.4e-9 0 0" mass="1000" diaginertia="1 2 3"/></body></worldbody></mujoco>"""


@pytest.mark.parametrize("stem", ["finger", "manipulator"])
def test_joint_ref_as_mujoco(stem):
    """Hinges and slides with ref != 0 (refused before): M, udot, body poses and the springs and dampers (from
    springref) at states around qpos0 = ref, to 1e-10; at q = qpos0 every body sits where MuJoCo compiled it."""
    case = build(source=os.path.join(DM_CONTROL, f"{stem}.xml"), golden=f"mujoco_ref_{stem}.npz")
    g, T = case["g"], case["T"]
    assert np.any(g["qpos0"] != 0)
    assert_close(case["M"], np.einsum("kai,kab,kbj->kij", T, g["M"], T), 1e-10, "M")
    assert_close(np.einsum("kij,kj->ki", T, case["udot"]), g["qacc_free"], 1e-10, "udot")
    assert_close(case["R"], g["xmat"][:, 1:], 1e-10, "R_GB vs xmat")
    assert_close(case["p"], g["xpos"][:, 1:], 1e-10, "p_GB vs xpos")
    assert_close(case["f"], np.einsum("kij,ki->kj", T, g["passive"]), 1e-10, "springs and dampers")


def test_body_sameframe_from_the_compiled_model():
    """MuJoCo's compiler takes a 2.4e-9 m inertial offset as the body frame (body_sameframe = 1): M as MuJoCo's
    (it was off by m |ipos| in the coupling terms)."""
    case = build(source=SAMEFRAME_XML, golden="mujoco_sameframe.npz")
    g, T = case["g"], case["T"]
    assert_close(case["M"], np.einsum("kai,kab,kbj->kij", T, g["M"], T), 1e-13, "M")
