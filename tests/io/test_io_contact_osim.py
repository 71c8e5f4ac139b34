"""load_osim's contact (jaxbody.io.osim_contact) against OpenSim 4.6: body forces and potential energy of
HuntCrossleyForce (two ContactParameters, a free ball and a pinned link over a floor) and SmoothSphereHalfSpaceForce
(tests/models/osim/contact_forces.osim), and the osim-rl gait model's foot contact (gait9dof18musc), at
penetrating, touching, separated, sliding and sticking states, to 1e-10.

Reference: tests/io/golden/contact_osim.json from tests/io/generate_contact_osim_golden.py (OpenSim's
getRecordValues: force and torque about the body origin, in Ground, per body; PE with gravity off).
"""

from __future__ import annotations

import functools
import json
import pathlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody.io import load_osim

HERE = pathlib.Path(__file__).parent
MODELS = HERE.parent / "models" / "osim"
GOLDEN = json.loads((HERE / "golden" / "contact_osim.json").read_text())
TOL = 1e-10


@functools.cache
def imported(name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        imp = load_osim(MODELS / f"{name}.osim")
    model = imp.system.realize_topology()
    g = GOLDEN[name]
    qi = np.array([imp.q_index(c) for c in g["coordinates"]])
    ui = np.array([imp.u_index(c) for c in g["coordinates"]])
    state0 = model.default_state()
    q = jnp.asarray(np.zeros((len(g["q"]), state0.q.size))).at[:, qi].set(jnp.asarray(g["q"]))
    u = jnp.asarray(np.zeros((len(g["u"]), state0.u.size))).at[:, ui].set(jnp.asarray(g["u"]))
    handles = {n: imp.forces_by_name[n] for n in g["forces"]}

    def evaluate(q, u):
        s = model.realize(state0.set_q(q).set_u(u), jb.Stage.Velocity)
        return {n: (h.calc_force_contribution(model, s)[0], model.calc_force_potential_energy_sum(s, [h]))
                for n, h in handles.items()}

    return imp, model, state0, q, u, [str(w.message) for w in caught], evaluate


@functools.cache
def results(name):
    *_, q, u, _, evaluate = imported(name)
    return jax.jit(jax.vmap(evaluate))(q, u)


@pytest.mark.parametrize("name", ["contact_forces", "gait9dof18musc"])
def test_body_forces_and_energy_match_opensim(name):
    imp, model = imported(name)[:2]
    out = results(name)
    golden = GOLDEN[name]["forces"]
    assert set(golden) <= set(imp.forces_by_name), "every OpenSim contact force is imported"
    for force, g in golden.items():
        values = np.asarray(g["values"])          # (states, 6 per label body)
        F, pe = (np.asarray(x) for x in out[force])
        for k in range(0, len(g["labels"]), 6):
            body = imp.bodies[g["bodies"][k]].index
            ours = np.concatenate([F[:, body, 1], F[:, body, 0]], -1)  # OpenSim: force then torque
            scale = max(1.0, np.abs(values).max())
            np.testing.assert_allclose(ours, values[:, k:k + 6], rtol=0, atol=TOL * scale,
                                       err_msg=f"{name} {force} on {g['bodies'][k]}")
        np.testing.assert_allclose(pe, g["potential_energy"], rtol=0, atol=TOL * max(1.0, max(g["potential_energy"])))
    assert np.abs(np.asarray(GOLDEN[name]["forces"][next(iter(golden))]["values"])).max() > 1.0, "states in contact"


def test_unevaluated_pairs_and_skipped_forces_are_named():
    msgs = imported("gait9dof18musc")[5]
    assert any("HuntCrossleyForce 'foot_r'" in m and "r_heel/r_toe" in m for m in msgs), msgs
    imp = imported("gait9dof18musc")[0]
    assert {"foot_r", "foot_l"} <= set(imp.forces_by_name)
    assert not any("HuntCrossleyForce" in s for s in imp.skipped)


def test_gradient_through_contact_matches_central_differences():
    imp, model, state0, q, u, _, _ = imported("contact_forces")
    h = imp.forces_by_name["hc"]
    ball = imp.bodies["ball"].index

    def lift(q0, u0):  # the floor's force on the ball along y, penetrating state
        s = model.realize(state0.set_q(q0).set_u(u0), jb.Stage.Velocity)
        return h.calc_force_contribution(model, s)[0][ball, 1, 1]

    q0, u0 = q[0], u[0]
    assert lift(q0, u0) > 1.0
    gq, gu = jax.jit(jax.grad(lift, argnums=(0, 1)))(q0, u0)
    eps = 1e-6
    for i in range(q0.size):
        e = jnp.zeros_like(q0).at[i].set(eps)
        fd = (lift(q0 + e, u0) - lift(q0 - e, u0)) / (2 * eps)
        assert abs(gq[i] - fd) <= 1e-5 * max(1.0, abs(fd)), (i, gq[i], fd)
    for i in range(u0.size):
        e = jnp.zeros_like(u0).at[i].set(eps)
        fd = (lift(q0, u0 + e) - lift(q0, u0 - e)) / (2 * eps)
        assert abs(gu[i] - fd) <= 1e-5 * max(1.0, abs(fd)), (i, gu[i], fd)


_MODEL = """<OpenSimDocument Version="40000"><Model name="m"><Ground name="ground"/>
<BodySet><objects><Body name="ball"><mass>1</mass><inertia>0.1 0.1 0.1 0 0 0</inertia></Body></objects></BodySet>
<JointSet><objects><WeldJoint name="weld"><socket_parent_frame>/ground</socket_parent_frame>
<socket_child_frame>/bodyset/ball</socket_child_frame></WeldJoint></objects></JointSet>
<ContactGeometrySet><objects>
<ContactHalfSpace name="floor"><socket_frame>/ground</socket_frame><orientation>0 0 -1.5707963267948966</orientation></ContactHalfSpace>
<ContactSphere name="s"><socket_frame>/bodyset/ball</socket_frame><radius>0.1</radius></ContactSphere>
</objects></ContactGeometrySet>
<ForceSet><objects>FORCE</objects></ForceSet></Model></OpenSimDocument>"""


@pytest.mark.parametrize("force, message", [
    ("<HuntCrossleyForce name='hc'><HuntCrossleyForce::ContactParametersSet><objects><HuntCrossleyForce::ContactParameters>"
     "<geometry>floor nosuch</geometry><stiffness>1e6</stiffness></HuntCrossleyForce::ContactParameters></objects>"
     "</HuntCrossleyForce::ContactParametersSet></HuntCrossleyForce>", "HuntCrossleyForce 'hc'.*'nosuch' is not in"),
    ("<SmoothSphereHalfSpaceForce name='ss'><socket_sphere>/contactgeometryset/floor</socket_sphere>"
     "<socket_half_space>/contactgeometryset/s</socket_half_space></SmoothSphereHalfSpaceForce>",
     "SmoothSphereHalfSpaceForce 'ss'.*must name a ContactSphere"),
])
def test_bad_references_raise_naming_the_force(force, message):
    with pytest.raises(jb.errors.InvalidArgument, match=message), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        load_osim(_MODEL.replace("FORCE", force))


def test_bad_geometry_raises_naming_it():
    force = ("<SmoothSphereHalfSpaceForce name='ss'><socket_sphere>/contactgeometryset/s</socket_sphere>"
             "<socket_half_space>/contactgeometryset/floor</socket_half_space></SmoothSphereHalfSpaceForce>")
    bad = _MODEL.replace("<radius>0.1</radius>", "<radius>-0.1</radius>").replace("FORCE", force)
    with pytest.raises(jb.errors.InvalidArgument, match="ContactSphere 's'.*radius must be positive"):
        load_osim(bad)


_MESH = pathlib.Path(__file__).parent.parent / "models" / "contact" / "icosphere_r0.1.obj"
_EF = ("<ElasticFoundationForce name='ef'><ElasticFoundationForce::ContactParametersSet><objects>"
       "<ElasticFoundationForce::ContactParameters><geometry>floor m</geometry><stiffness>1e6</stiffness>"
       "<dissipation>0.5</dissipation><static_friction>0.8</static_friction><dynamic_friction>0.6</dynamic_friction>"
       "</ElasticFoundationForce::ContactParameters></objects></ElasticFoundationForce::ContactParametersSet>"
       "</ElasticFoundationForce>")


def _mesh_model(mesh_file):
    mesh = f"<ContactMesh name='m'><socket_frame>/bodyset/ball</socket_frame><filename>{mesh_file}</filename></ContactMesh>"
    return _MODEL.replace("</objects></ContactGeometrySet>", mesh + "</objects></ContactGeometrySet>").replace("FORCE", _EF)


def test_elastic_foundation_mesh_on_the_floor_and_missing_mesh_named():
    pytest.importorskip("trimesh")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imp = load_osim(_mesh_model(_MESH))
    model = imp.system.realize_topology()
    state = model.realize(model.default_state(), jb.Stage.Velocity)  # the ball's mesh (r 0.1) at the origin: half sunk
    F, _ = imp.forces_by_name["ef"].calc_force_contribution(model, state)
    assert float(F[imp.bodies["ball"].index, 1, 1]) > 1.0  # the floor pushes the mesh up (+y)
    with pytest.warns(UserWarning, match=r"ElasticFoundationForce ef \(ContactMesh 'm': mesh file 'nowhere.obj' not found\)"):
        imp = load_osim(_mesh_model("nowhere.obj"))
    assert "ElasticFoundationForce ef" in imp.skipped
