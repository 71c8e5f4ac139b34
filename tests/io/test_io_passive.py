"""Passive joint physics read from the files: springs, dampers, fixed-tendon spring-dampers and limit stops.

MJCF against MuJoCo 4.0 (tests/io/golden/mujoco_passive_*.npz from tests/io/generate_passive_golden.py) on
tests/models/passive.xml (hinge and slide springs with springref, dampers, ball and free springs with a rotated
reference, a fixed tendon with a spring length range) and the unmodified MJX humanoid. MuJoCo ran with every
constraint disabled (contacts, limits, friction loss) and passive forces on, armature as in the files (the
humanoid has 0.01 on every body joint, passive.xml 0.05 on the shoulder; jaxbody adds it to M's diagonal),
and the models are loaded with ``joint_limits=False`` and ``friction="ignore"`` (MuJoCo's limits and friction
loss are constraints, off here and not in qfrc_passive; passive.xml's shoulder has frictionloss 0.3).
Compared: udot mapped to qacc (to 1e-10) and the passive generalized forces (qfrc_spring + qfrc_damper).
The limit stops are checked against their documented formula (jaxbody.io._passive) beyond the bounds, with
M_ii from jaxbody's own mass matrix, for both formats; URDF damping against -c u; MJCF frictionloss and URDF
friction as MobilitySmoothCoulombFriction elements with the file's numbers (or warned with ``friction="ignore"``).
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
from jaxbody.io._passive import FRICTION_TRANSITION_VELOCITY, LIMIT_DISSIPATION, LIMIT_TIME_CONSTANT

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")


def coordinate_map(imported, model, qpos, qvel):
    """(q, u, T): ``imported.from_mujoco`` of a batch, and qvel = T u from ``to_mujoco``'s Jacobian."""
    q, u = imported.from_mujoco(qpos, qvel)
    s0 = model.default_state()
    T = jax.vmap(lambda q, u: jax.jacfwd(lambda u: imported.to_mujoco(s0.set_q(q).set_u(u))[1])(u))(q, u)
    return np.asarray(q), np.asarray(u), np.asarray(T)


def load(loader, path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return loader(path, **kwargs)


@functools.cache
def against_mujoco(stem, xml=None):
    """udot and the passive forces of jaxbody at MuJoCo's golden states, mapped to MuJoCo's coordinates."""
    # contact-free by design: the golden numbers are MuJoCo's with contact disabled
    imported = load(jb.io.load_mjcf, xml or os.path.join(MODELS, f"{stem}.xml"), joint_limits=False, friction="ignore",
                    contact=False)
    model = imported.system.realize_topology()
    g = dict(np.load(os.path.join(HERE, "golden", f"mujoco_passive_{stem}.npz")))
    passive = tuple(h for hs in imported.passive_forces.values() for h in hs)

    @jax.jit
    @jax.vmap
    def evaluate(q, u, tau):
        s = model.realize(model.default_state().set_q(q).set_u(u).set_mobility_forces(tau), jb.Stage.Dynamics)
        udot, _ = model.calc_acceleration_ignoring_constraints(s, s.dynamics.mobility_forces, s.dynamics.body_forces)
        return udot, model.calc_force_contributions_sum(s, passive)[1]

    q, u, T = coordinate_map(imported, model, g["qpos"], g["qvel"])
    udot, f = evaluate(q, u, np.einsum("kij,ki->kj", T, g["tau"]))   # forces: f_jb = T^T f_mj
    return g, np.einsum("kij,kj->ki", T, udot), np.linalg.solve(np.swapaxes(T, 1, 2), f[..., None])[..., 0]


@pytest.mark.parametrize("stem", ["passive", "mjx_humanoid"])
def test_mjcf_passive_forces_and_accelerations_match_mujoco(stem):
    g, qacc, qfrc_passive = against_mujoco(stem)
    assert np.min(np.max(np.abs(g["qfrc_passive"]), axis=1)) > 0.1   # every state has passive forces to compare
    assert_close(qfrc_passive, g["qfrc_passive"], 1e-10, "passive forces vs qfrc_spring + qfrc_damper")
    assert_close(qacc, g["qacc"], 1e-10, "udot vs qacc (passive forces on)")


@pytest.mark.long
def test_mjcf_comparison_fails_on_a_broken_spring():
    """The check above can fail: the passive model with the sign of its slide spring's reference flipped."""
    with open(os.path.join(MODELS, "passive.xml")) as f:
        broken = f.read().replace('springref="0.05"', 'springref="-0.05"')
    g, qacc, qfrc_passive = against_mujoco("passive", broken)
    assert np.max(np.abs(qfrc_passive - g["qfrc_passive"])) > 1.0
    assert np.max(np.abs(qacc - g["qacc"])) > 1.0


def test_mjcf_armature_is_what_brings_udot_to_mujocos():
    """Without the file's armature (0.01 on every body joint of the humanoid) udot no longer matches qacc."""
    with open(os.path.join(MODELS, "mjx_humanoid.xml")) as f:
        xml = f.read()
    assert 'armature=".01"' in xml
    g, qacc, _ = against_mujoco("mjx_humanoid", xml.replace('armature=".01"', 'armature="0"'))
    assert np.max(np.abs(qacc - g["qacc"])) > 1e-3


def stop_expected(k, d, q, qdot, lower, upper):
    """jaxbody.io._passive's stop force (Simbody's MobilityLinearStop), written out."""
    if q > upper:
        return min(0.0, -k * (q - upper) * (1 + d * qdot))
    if q < lower:
        return max(0.0, -k * (q - lower) * (1 - d * qdot))
    return 0.0


def check_stops(imported, states):
    """Each stop's force at one state with every joint of ``states`` (name -> (q, qdot)) beyond a bound equals
    the formula with k = M_ii(default q) / tau^2 (each stop acts on its own u alone)."""
    model = imported.system.realize_topology()
    s0 = model.default_state()
    M = np.asarray(model.calc_m(model.realize(s0, jb.Stage.Position)))
    q, u, expected = np.array(s0.q), np.array(s0.u), np.zeros(len(s0.u))
    for name, (q_j, qdot) in states.items():
        c = imported.coordinates[name]
        i = c.mobilized_body.get_first_u_index()
        q[c.mobilized_body.get_first_q_index()], u[i] = q_j, qdot
        expected[i] = stop_expected(M[i, i] / LIMIT_TIME_CONSTANT**2, LIMIT_DISSIPATION, q_j, qdot, *imported.joint_limits[name])
        assert abs(expected[i]) > 1e-3, name
    s = model.realize(s0.set_q(q).set_u(u), jb.Stage.Velocity)
    f = np.asarray(model.calc_force_contributions_sum(s, tuple(imported.limit_stops.values()))[1])
    np.testing.assert_allclose(f, expected, rtol=1e-10, atol=0)


def test_mjcf_limit_stops_follow_the_documented_formula():
    imported = load(jb.io.load_mjcf, os.path.join(MODELS, "passive.xml"))
    assert sorted(imported.limit_stops) == ["elbow", "extend", "shoulder"]   # ball and free: no range
    check_stops(imported, {"shoulder": (1.0, 0.3), "elbow": (-0.2, -0.5), "extend": (0.15, 0.1)})
    assert load(jb.io.load_mjcf, os.path.join(MODELS, "passive.xml"), joint_limits=False).limit_stops == {}


def test_urdf_limit_stops_follow_the_documented_formula():
    """The Panda (fused hand, prismatic fingers): k from M_ii at q = 0 computed by the importer vs jaxbody's M."""
    imported = load(jb.io.load_urdf, os.path.join(MODELS, "panda.urdf"))
    assert len(imported.limit_stops) == 9
    check_stops(imported, {"panda_joint2": (1.9, 0.4), "panda_joint4": (0.2, -0.5), "panda_joint7": (-3.0, -0.2),
                           "panda_finger_joint1": (0.05, 0.3), "panda_finger_joint2": (-0.01, -0.2)})
    assert load(jb.io.load_urdf, os.path.join(MODELS, "panda.urdf"), joint_limits=False).limit_stops == {}


def test_urdf_damping_is_a_mobility_damper():
    """Panda: damping 0.003 on the arm joints, 0.3 on the fingers: the passive force is -c u on each joint."""
    imported = load(jb.io.load_urdf, os.path.join(MODELS, "panda.urdf"), joint_limits=False)
    model = imported.system.realize_topology()
    u = jnp.linspace(-1.0, 1.0, model.get_num_u())
    s = model.realize(model.default_state().set_u(u), jb.Stage.Velocity)
    handles = tuple(h for hs in imported.passive_forces.values() for h in hs)
    f = np.asarray(model.calc_force_contributions_sum(s, handles)[1])
    c = np.zeros(model.get_num_u())
    for name, damping in imported.damping.items():
        c[imported.coordinates[name].mobilized_body.get_first_u_index()] = damping
    assert sorted(set(c)) == [0.003, 0.3]
    np.testing.assert_allclose(f, -c * np.asarray(u), rtol=1e-14, atol=0)


def test_unmodelled_attributes_warn_naming_the_joints():
    xml = """<mujoco><worldbody><body><joint name="a" type="hinge" frictionloss="1" stiffness="1 2"/>
      <geom size="0.1" pos="0.2 0 0"/><body gravcomp="1" name="b"><joint name="c" type="ball" range="0 30"/>
      <geom size="0.1" pos="0.2 0 0"/></body></body></worldbody>
      <tendon><fixed name="t" limited="true" range="-1 1" frictionloss="0.5"><joint joint="a" coef="1"/></fixed></tendon>
      </mujoco>"""
    with pytest.warns(UserWarning) as record:
        jb.io.load_mjcf(xml, friction="ignore")
    messages = "\n".join(str(w.message) for w in record)
    for expected in ("joint frictionloss is not modelled by jaxbody (ignored): ['a']",
                     "polynomial joint stiffness (stiffness beyond its first value) is not modelled by jaxbody "
                     "(ignored): ['a']", "ball joint cone limit (range) is not modelled by jaxbody (ignored): ['c']",
                     "tendon frictionloss is not modelled by jaxbody (ignored): ['t']",
                     "body gravcomp is not modelled by jaxbody (ignored): ['b']"):
        assert expected in messages
    assert "limit" not in messages.replace("cone limit", "")   # fixed-tendon limits are modelled (mjcf_tendons)
    assert all(w.filename == __file__ for w in record)   # the warnings point at the caller
    with pytest.warns(UserWarning, match=r"URDF: <dynamics friction> \(Coulomb friction\) is not modelled by jaxbody "
                                         r"\(ignored\): \['panda_finger_joint1', 'panda_finger_joint2'\]"):
        jb.io.load_urdf(open(os.path.join(MODELS, "panda.urdf")).read().replace('damping="0.3"',
                                                                               'damping="0.3" friction="2"'),
                        friction="ignore")


FRICTION_MJCF = """<mujoco><worldbody>
  <body name="upper"><joint name="hinge" type="hinge" axis="0 1 0" frictionloss="0.4" damping="0.2"/>
    <geom size="0.1" pos="0.2 0 0"/>
    <body name="carriage" pos="0.4 0 0"><joint name="slide" type="slide" axis="1 0 0" frictionloss="1.5"/>
      <geom size="0.05"/>
      <body name="head" pos="0.1 0 0"><joint name="ball" type="ball" frictionloss="0.25"/><geom size="0.05"/></body>
    </body></body>
  <body name="plain" pos="0 1 0"><joint name="free" type="free"/><geom size="0.1"/></body>
</worldbody></mujoco>"""

FRICTION_URDF = """<robot name="r"><link name="base"/>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="finger"><inertial><mass value="0.2"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <dynamics damping="0.1" friction="0.8"/></joint>
  <joint name="grip" type="prismatic"><parent link="arm"/><child link="finger"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.1" effort="1" velocity="1"/><dynamics friction="0"/></joint>
</robot>"""


def friction_elements(imported):
    """(joint name -> [(u index in the State, friction, transition velocity)] of its MobilitySmoothCoulombFriction
    elements, read from the realized model's leaves; their handles; the model)."""
    model = imported.system.realize_topology()
    out, friction_handles = {}, []
    for name, handles in imported.passive_forces.items():
        for h in handles:
            e = model.forces[h.index]
            if type(e).__name__ == "MobilitySmoothCoulombFriction":
                out.setdefault(name, []).append((e.u_index, float(e.friction), float(e.transition_velocity)))
                friction_handles.append(h)
    return out, tuple(friction_handles), model


def test_mjcf_frictionloss_is_smooth_coulomb_friction():
    """Each dof with frictionloss F gets -F tanh(u / v_t) on its u (v_t the importer's default or the option)."""
    imported = load(jb.io.load_mjcf, FRICTION_MJCF)
    elements, handles, model = friction_elements(imported)
    v = FRICTION_TRANSITION_VELOCITY
    u0 = {n: imported.u_index(n) for n in ("hinge", "slide", "ball")}
    assert elements == {"hinge": [(u0["hinge"], 0.4, v)], "slide": [(u0["slide"], 1.5, v)],
                        "ball": [(u0["ball"] + i, 0.25, v) for i in range(3)]}
    assert imported.friction == {"hinge": 0.4, "slide": 1.5, "ball": 0.25}
    u = jnp.linspace(-0.3, 0.25, model.get_num_u())
    s = model.realize(model.default_state().set_u(u), jb.Stage.Velocity)
    f = np.asarray(model.calc_force_contributions_sum(s, handles)[1])
    expected = np.zeros(model.get_num_u())
    for entries in elements.values():
        for k, F, v_t in entries:
            expected[k] = -F * np.tanh(float(u[k]) / v_t)
    np.testing.assert_allclose(f, expected, rtol=1e-14, atol=0)
    assert np.count_nonzero(expected) == 5
    wide, _, _ = friction_elements(load(jb.io.load_mjcf, FRICTION_MJCF, friction_transition_velocity=0.5))
    assert wide["slide"] == [(u0["slide"], 1.5, 0.5)]


def test_urdf_friction_is_smooth_coulomb_friction():
    imported = load(jb.io.load_urdf, FRICTION_URDF)
    elements, _, _ = friction_elements(imported)
    assert elements == {"shoulder": [(imported.u_index("shoulder"), 0.8, FRICTION_TRANSITION_VELOCITY)]}
    assert imported.friction == {"shoulder": 0.8} and len(imported.passive_forces["shoulder"]) == 2  # + damper


@pytest.mark.parametrize("loader, text, message", [
    (jb.io.load_mjcf, FRICTION_MJCF, "MJCF: joint frictionloss is not modelled by jaxbody (ignored): ['ball', 'hinge', 'slide']"),
    (jb.io.load_urdf, FRICTION_URDF, "URDF: <dynamics friction> (Coulomb friction) is not modelled by jaxbody "
                                     "(ignored): ['shoulder']")])
def test_friction_ignore_warns_naming_the_joints(loader, text, message):
    with pytest.warns(UserWarning) as record:
        imported = loader(text, friction="ignore")
    assert message in "\n".join(str(w.message) for w in record)
    assert friction_elements(imported)[0] == {}
    with pytest.raises(jb.InvalidArgument, match="friction must be one of"):
        loader(text, friction="dry")
    with pytest.raises(jb.InvalidArgument, match="friction_transition_velocity must be a positive number"):
        loader(text, friction_transition_velocity=0.0)


def test_urdf_inverted_limits_are_rejected_naming_joint_and_file(tmp_path):
    path = tmp_path / "inverted.urdf"
    path.write_text(open(os.path.join(MODELS, "panda.urdf")).read().replace(
        'lower="-1.7628" upper="1.7628"', 'lower="1" upper="-1"'))
    with pytest.raises(jb.InvalidArgument, match=rf"URDF file '{path}', <joint name='panda_joint2'> \(line \d+\): "
                                                 r"joint 'panda_joint2' has <limit> lower = 1.0 > upper = -1.0"):
        jb.io.load_urdf(path, joint_limits=False)
