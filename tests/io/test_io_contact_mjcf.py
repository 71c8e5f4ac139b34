"""load_mjcf's contact (jaxbody.io.mjcf_contact): MuJoCo's pair rules and pair parameters against MuJoCo's own
collision pass, the solref/solimp -> Hunt-Crossley rule through the compliant contact force, warnings naming the
geoms, jit/vmap/grad of an imported contact model, and MJX's humanoid and dm_control's walker landing on their
floors.

Pair rules: with every margin set to 100 m, MuJoCo's ``mj_forward`` makes a contact for every pair it tests, so
its contact list is its pair list, and each contact carries the pair's mixed condim, friction, solref, solimp.
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

from jaxbody.io.mjcf_contact_material import compliant_parameters  # noqa: E402
from jaxbody.io.mjcf_contact_pairs import read_mjcf_contact  # noqa: E402
from jaxbody.io.mjcf_parts import names  # noqa: E402

MODELS = pathlib.Path(__file__).parent.parent / "models"

# every filter: priority, solmix, condim, friction max, explicit pair, exclude, bit masks, parent/child, world-welded body
RULES = """<mujoco><option timestep="0.002"/><worldbody>
<geom name="floor" type="plane" size="5 5 .1" contype="1" conaffinity="1" friction="0.9 0.01 0.001"/>
<body name="e" pos="2 0 0.5"><geom name="e_sph" type="sphere" size=".1"/></body>
<body name="a" pos="0 0 1"><freejoint name="a_free"/>
  <geom name="a_sphere" type="sphere" size=".1" pos=".2 0 0" solref=".01 .5"/>
  <geom name="a_capsule" type="capsule" size=".05 .2" priority="1" friction=".5 .02 .003" condim="4"/>
  <body name="b" pos="0 0 -.5"><joint name="b_hinge" type="hinge"/>
    <geom name="b_box" type="box" size=".1 .1 .1" margin="0.01"/></body></body>
<body name="c" pos="1 0 1"><freejoint/>
  <geom name="c_ell" type="ellipsoid" size=".1 .2 .15" contype="2" conaffinity="2"/></body>
<body name="d" pos="-1 0 1"><freejoint/>
  <geom name="d_cyl" type="cylinder" size=".1 .2" solmix="3" solref=".03 .8" solimp=".8 .9 .01 .4 3"/></body>
</worldbody><contact><exclude body1="a" body2="d"/>
<pair geom1="c_ell" geom2="floor" condim="1" friction=".3 .3 .01 .001 .001"/></contact></mujoco>"""


def _records(m):
    return read_mjcf_contact(mujoco, m, names(mujoco, m, mujoco.mjtObj.mjOBJ_GEOM, m.ngeom, "geom"),
                             names(mujoco, m, mujoco.mjtObj.mjOBJ_BODY, m.nbody, "body"))


def test_pairs_and_their_parameters_are_mujocos():
    _, pairs = _records(mujoco.MjModel.from_xml_string(RULES))
    wide = RULES.replace("<worldbody>", '<default><geom margin="100"/></default><worldbody>', 1)
    wide = wide.replace(' margin="0.01"', "").replace('condim="1"', 'condim="1" margin="100"')
    m = mujoco.MjModel.from_xml_string(wide)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    geom = names(mujoco, m, mujoco.mjtObj.mjOBJ_GEOM, m.ngeom, "geom")
    tested = {frozenset((geom[c.geom[0]], geom[c.geom[1]])): c for c in d.contact[:d.ncon]}
    assert set(tested) == {frozenset((p.geom1, p.geom2)) for p in pairs}
    assert len(pairs) == 10 and len(tested) == 10
    for p in pairs:
        c = tested[frozenset((p.geom1, p.geom2))]
        assert c.dim == p.condim, p
        np.testing.assert_allclose(c.friction[[0, 2, 3]], p.friction, rtol=1e-12, err_msg=str(p))
        np.testing.assert_allclose(c.solref, p.solref, rtol=1e-12, err_msg=str(p))
        np.testing.assert_allclose(c.solimp, p.solimp, rtol=1e-12, err_msg=str(p))


def test_humanoid_pairs_are_its_explicit_pairs():
    _, pairs = _records(mujoco.MjModel.from_xml_path(str(MODELS / "mjx_humanoid.xml")))
    assert sorted((p.geom1, p.geom2, p.explicit) for p in pairs) == sorted(
        ("floor", f"foot{i}_{s}", True) for i in (1, 2) for s in ("left", "right"))


def test_unmodelled_attributes_and_untracked_pairs_warn_naming_geoms():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        imp = load_mjcf(RULES, contact=True)
    text = "\n".join(str(w.message) for w in caught)
    assert "torsional friction" in text and "floor/a_capsule" in text
    assert "margin and gap" in text and "floor/b_box" in text
    assert "left out" not in text  # every convex pair has a tracker (box/cylinder: GJK/EPA)
    modelled = {(p.geom1, p.geom2) for p in imp.contact.pairs}
    assert {("floor", "a_sphere"), ("floor", "c_ell"), ("floor", "d_cyl"), ("b_box", "d_cyl")} <= modelled
    assert imp.contact.left_out == []
    assert imp.contact.materials["c_ell"].static_friction == 0.0  # condim 1: frictionless


def test_bad_transition_velocity_raises():
    with pytest.raises(jb.errors.InvalidArgument, match="transition velocity"):
        load_mjcf(RULES, contact=True, contact_transition_velocity=-1.0)


BALL = """<mujoco><option timestep="0.001"/><worldbody>
<geom name="floor" type="plane" size="5 5 .1"/>
<body name="ball" pos="0 0 1"><freejoint name="free"/><geom name="ball" type="sphere" size=".05" mass="2"
 solref=".02 1" solimp=".9 .95 .001" friction=".8"/></body></worldbody></mujoco>"""


@functools.cache
def ball():
    imp = load_mjcf(BALL, contact=True)
    model = imp.system.realize_topology()
    m = mujoco.MjModel.from_xml_string(BALL)
    lift = jax.jit(lambda h, vz, vx: _lift(imp, model, h, vz, vx))
    return imp, model, m, lift


def _state_at(model, height, vz=0.0, vx=0.0):
    s = model.default_state()
    return s.set_q(s.q.at[6].set(height)).set_u(s.u.at[5].set(vz).at[3].set(vx))


def _lift(imp, model, height, vz=0.0, vx=0.0):
    s = model.realize(_state_at(model, height, vz, vx), jb.Stage.Velocity)
    return imp.contact.subsystem.get_contact_forces(s, model).force_G[0]


def test_material_rule_gives_mujocos_time_constant_and_damping_at_the_reference_load():
    imp, model, m, jitted = ball()
    p = compliant_parameters([0.02, 1.0], [0.9, 0.95, 0.001, 0.5, 2.0], 9.81, 1 / m.body_invweight0[1][0], 0.001)
    assert p.reference_mass == pytest.approx(2.0, rel=1e-3)  # a lone free body: its mass
    r, g = 0.05, 9.81
    lift = lambda h, v=0.0: float(jitted(h, v, 0.0)[2])  # noqa: E731
    rest = r - p.penetration
    assert lift(rest) == pytest.approx(p.reference_mass * g, rel=1e-10)  # rests at delta_e under m_ref g
    eps = 1e-7
    omega2 = (lift(rest - eps) - lift(rest + eps)) / (2 * eps) / p.reference_mass
    assert omega2 == pytest.approx(1 / (0.02 * 1.0) ** 2, rel=1e-5)  # MuJoCo's 1 / (tc zeta)^2
    beta = (lift(rest, -1e-6) - lift(rest, 1e-6)) / 2e-6 / p.reference_mass
    assert beta == pytest.approx(2 / 0.02, rel=1e-5)  # MuJoCo's 2 / tc
    assert lift(r + 1e-3) == 0.0  # apart


def test_contact_force_under_jit_vmap_and_grad():
    imp, model, _, jitted = ball()
    heights = jnp.linspace(0.03, 0.06, 64)
    forces = jax.jit(jax.vmap(lambda h: _lift(imp, model, h, -0.1, 0.3)))(heights)
    assert forces.shape == (64, 3) and bool(jnp.all(jnp.isfinite(forces)))
    assert bool(jnp.all((forces[:, 2] > 0) == (heights < 0.05)))
    assert bool(jnp.all(forces[heights < 0.05, 0] < 0))  # friction opposes the slip
    f = lambda h, vz, vx: jnp.sum(jitted(h, vz, vx)[jnp.array([0, 2])])  # noqa: E731
    args = (0.048, -0.05, 0.02)
    grad = jax.jit(jax.grad(f, argnums=(0, 1, 2)))(*args)
    for i in range(3):
        e = [0.0, 0.0, 0.0]
        e[i] = 1e-7
        plus = [a + b for a, b in zip(args, e)]
        minus = [a - b for a, b in zip(args, e)]
        fd = (f(*plus) - f(*minus)) / 2e-7
        assert float(grad[i]) == pytest.approx(float(fd), rel=1e-5), i


def _qpos0_state(imp, model, m, drop):
    """jaxbody's q at MuJoCo's qpos0 (free joints: qpos (p, quat) -> q (quat, p)), raised by ``drop`` m."""
    q = np.array(model.default_state().q)
    for name, c in imp.coordinates.items():
        a = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)]
        i = imp.q_index(name)
        q[i:i + c.nq] = np.r_[m.qpos0[a + 3:a + 7], m.qpos0[a:a + 3]] if c.nq == 7 else m.qpos0[a:a + c.nq]
    root = next(iter(imp.coordinates))  # the free joint (z last) or the walker's rootz slide
    q[imp.q_index(root) + (6 if imp.coordinates[root].nq == 7 else 0)] += drop
    return model.default_state().set_q(jnp.asarray(q))


@pytest.mark.parametrize("path, drop, seconds", [("mjx_humanoid.xml", 0.03, 0.6), ("dm_control/walker.xml", 0.02, 3.0)])
def test_lands_on_its_contact_geoms_and_settles(path, drop, seconds):
    """Dropped from qpos0 raised by ``drop``: after landing the floor carries the weight (mean vertical force
    over the last 0.2 s within 15% of m g), nothing sinks more than 2 cm, and the state stays finite
    (semi-explicit Euler, dt 1 ms: MuJoCo's contact stiffness needs a step this short explicitly)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imp = load_mjcf(MODELS / path, contact=True)
    model = imp.system.realize_topology()
    m = mujoco.MjModel.from_xml_path(str(MODELS / path))
    weight = float(m.body_subtreemass[0]) * 9.81
    dt, save = 0.001, 20
    state = _qpos0_state(imp, model, m, drop)
    subsystem = imp.contact.subsystem

    @jax.jit
    def run(state):
        _, traj = jb.simulate(model, state, dt, int(round(seconds / dt)), "semi_explicit_euler", save_every=save)

        def report(q, u):
            s = model.realize(state.set_q(q).set_u(u), jb.Stage.Velocity)
            r = subsystem.get_contact_forces(s, model)
            return r.force_G[:, 2].sum(), r.depth.max()
        return jax.vmap(report)(traj.q, traj.u), traj.q

    (lift, depth), q = run(state)
    assert bool(jnp.all(jnp.isfinite(q)))
    assert float(lift[0]) == 0.0 or float(depth[0]) <= 0.0  # starts in the air
    tail = int(round(0.2 / dt / save))
    assert float(jnp.mean(lift[-tail:])) == pytest.approx(weight, rel=0.15)
    assert float(depth.max()) < 0.02
