"""Contact forces against OpenSim 4.6 / Simbody 3.9 (golden file from generate_contact_golden.py).

Mapping: OpenSim's FreeJoint ball has u = V_GB, and the golden file stores the realized X_GB and V_GB, so the
jaxbody state is q = (quaternion of R_GB, p_GB), u = V_GB; half-space and plane frames are OpenSim's realized
rotation matrices. OpenSim's record values (force, torque per body, in G about each body origin) are compared
with jaxbody's body_forces rows (torque, force) for Ground and the ball; gravity is off in both, so the
potential energy is the element's. ExponentialContactForce: jaxbody's z = (p0x, p0y, K) set to the golden
anchor point (in the plane frame) and sliding state. Tolerance: 1e-10 relative to the case's largest force
entry (plus 1e-13 N absolute for the exactly-zero separated case).
"""

import jax
import numpy as np
import pytest
from ball_models import (
    GOLDEN,
    exponential_ball,
    golden_q_u,
    hunt_crossley_ball,
    smooth_ball,
)

import jaxbody as jb


@jax.jit
def _forces_and_energy(model, q, u, z):
    s = model.default_state().set_q(q).set_u(u).set_z(z)
    dyn = model.realize(s, jb.Stage.Dynamics).dynamics
    return dyn.body_forces, dyn.potential_energy


@pytest.fixture(scope="module")
def models():
    return {"hunt_crossley": hunt_crossley_ball()[0], "smooth": smooth_ball()[0], "exponential": exponential_ball()[0]}


def _check(model, case, z, what):
    q, u = golden_q_u(case)
    F, pe = _forces_and_energy(model, q, u, z)
    expected = np.asarray(case["body_forces"])
    scale = np.max(np.abs(expected))
    err = np.max(np.abs(np.asarray(F) - expected))
    assert err <= 1e-10 * scale + 1e-13, f"{what}: body forces off by {err:.3e} (scale {scale:.3e})"
    pe_err = abs(float(pe) - case["potential_energy"])
    assert pe_err <= 1e-10 * max(abs(case["potential_energy"]), 1e-3), f"{what}: PE off by {pe_err:.3e}"


@pytest.mark.parametrize("kind", ["hunt_crossley", "smooth"])
@pytest.mark.parametrize("index", range(5))
def test_sphere_half_space_matches_opensim(models, kind, index):
    case = GOLDEN[kind][index]
    _check(models[kind], case, np.zeros(0), f"{kind} {case['name']}")


@pytest.mark.parametrize("index", range(10))
def test_exponential_spring_matches_opensim(models, index):
    case = GOLDEN["exponential"][index]
    z = np.asarray([case["anchor"][0], case["anchor"][1], case["sliding"]])
    _check(models["exponential"], case, z, f"exponential {case['name']}")


def test_golden_states_cover_contact_regimes():
    """The golden states include no-force (separated HC), tiny (touching) and large forces, and friction."""
    hc = [np.max(np.abs(c["body_forces"])) for c in GOLDEN["hunt_crossley"]]
    assert hc[-1] == 0 and 0 < min(hc[2:4]) < 0.1 and min(hc[:2]) > 10
    assert {c["sliding"] for c in GOLDEN["exponential"]} == {0.0, 0.3, 0.6, 1.0}
