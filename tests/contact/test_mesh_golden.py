"""ElasticFoundationForce against OpenSim 4.6 / Simbody 3.9 (golden file from generate_mesh_golden.py).

A 2 kg ball on a Free mobilizer carries an 80-face icosphere mesh (tests/models/contact/icosphere_r0.1.obj) at a
tilted frame; Ground carries a half-space, a sphere, or a second icosphere mesh. The jaxbody state is
q = (quaternion of R_GB, p_GB), u = V_GB from the golden file's realized values (as in test_contact_golden.py);
OpenSim's record values give the body forces of ball and Ground (torque about each origin, force; in G); gravity
is off so the potential energy is the element's. Tolerance: 1e-10 relative to the case's largest force entry.
"""

import json
import os

import jax
import numpy as np
import pytest
from ball_models import _ball_system, golden_q_u
from mesh_models import MODELS, read_obj

import jaxbody as jb

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "mesh_golden.json")) as _f:
    GOLDEN = json.load(_f)
KINDS = ("half_space", "sphere", "mesh")
NAMES = ("stiffness", "dissipation", "static_friction", "dynamic_friction", "viscous_friction")


def meshed_ball(kind, gravity=None):
    """The golden file's model for ``kind``: (realized system, ball, handle)."""
    system, matter, forces, ball = _ball_system(gravity)
    ef = jb.ElasticFoundationForce(forces, transition_velocity=GOLDEN["transition_velocity"])
    v, f = read_obj(os.path.join(MODELS, "icosphere_r0.1.obj"))
    X_BM = jb.Transform(jb.Rotation(np.asarray(GOLDEN["mesh_R_BM"])), GOLDEN["mesh_location"])
    ef.add_mesh(ball, v, f, X_BM, **dict(zip(NAMES, GOLDEN["parameters"])))
    other = GOLDEN[kind]
    X_GO = jb.Transform(jb.Rotation(np.asarray(other["R_GO"])), other["location"])
    if kind == "half_space":
        ef.add_half_space(matter.Ground(), X_GO)
    elif kind == "sphere":
        ef.add_sphere(matter.Ground(), other["size"], other["location"])
    else:
        v2, f2 = read_obj(os.path.join(MODELS, "icosphere_r0.12.obj"))
        ef.add_mesh(matter.Ground(), v2, f2, X_GO, **dict(zip(NAMES, GOLDEN["parameters"])))
    return system.realize_topology(), ball, ef


@jax.jit
def forces_and_energy(model, q, u):
    s = model.default_state().set_q(q).set_u(u)
    dyn = model.realize(s, jb.Stage.Dynamics).dynamics
    return dyn.body_forces, dyn.potential_energy


@pytest.fixture(scope="module")
def models():
    return {kind: meshed_ball(kind)[0] for kind in KINDS}


@pytest.mark.parametrize("kind", KINDS)
def test_elastic_foundation_matches_opensim(models, kind):
    for case in GOLDEN[kind]["cases"]:
        q, u = golden_q_u(case)
        F, pe = forces_and_energy(models[kind], q, u)
        expected = np.asarray(case["body_forces"])
        scale = max(np.max(np.abs(expected)), 1.0)
        err = np.max(np.abs(np.asarray(F) - expected))
        assert err <= 1e-10 * scale, f"{kind} {case['name']}: body forces off by {err:.3e} (scale {scale:.3e})"
        pe_err = abs(float(pe) - case["potential_energy"])
        assert pe_err <= 1e-10 * max(abs(case["potential_energy"]), 1.0), f"{kind} {case['name']}: PE off by {pe_err:.3e}"


def test_golden_states_cover_contact_regimes():
    """Every kind has a force-free separated case, a barely touching one (< 100 N) and large forces."""
    for kind in KINDS:
        peak = [np.max(np.abs(c["body_forces"])) for c in GOLDEN[kind]["cases"]]
        assert peak[-1] == 0 and 0 < peak[3] < 100 and min(peak[:3]) > 1000, (kind, peak)
