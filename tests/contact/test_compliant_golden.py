"""CompliantContactSubsystem against OpenSim 4.6 / Simbody 3.9 (golden file from generate_compliant_golden.py).

Sphere/half-space and sphere/sphere: Simbody's HertzCircular with Hunt-Crossley dissipation and friction equal
OpenSim's HuntCrossleyForce at these materials and slips (see the generator's docstring), so body forces (torque
about each body origin, force; in G) and potential energy are compared directly, to 1e-10 relative to the case's
largest force entry (1e-13 N absolute for the separated case). Ellipsoid/half-space: OpenSim's
GeneralContactSubsystem uses the effective radius ``R_gcs = sqrt(r1 r2)`` (its approximate radii, computed here in
numpy from the golden pose), jaxbody Simbody CompliantContactSubsystem's HertzElliptical (``e sqrt(R)`` with
R = 2/(kmax + kmin) from the true curvatures); every force and the PE then differ by the one factor
``e sqrt(R / R_gcs)``, which the test applies: depth, contact point, normal, velocities and the dissipation and
friction laws are compared to 1e-10. The curvatures themselves are checked in test_compliant_trackers.py.
"""

import jax
import numpy as np
import pytest
from compliant_models import GOLDEN, euler_xyz, golden_model, golden_q_u, with_materials

import jaxbody as jb
from jaxbody._dynamics.contact.compliant_models import eccentricity_correction

PAIRS = ("sphere_half_space", "sphere_sphere", "ellipsoid_half_space")


@jax.jit
def _forces_and_energy(model, q, u):
    s = model.default_state().set_q(q).set_u(u)
    dyn = model.realize(s, jb.Stage.Dynamics).dynamics
    return dyn.body_forces, dyn.potential_energy


@pytest.fixture(scope="module")
def models():
    return {pair: golden_model(pair) for pair in PAIRS}


def _gcs_ellipsoid_scale(case, model, contact):
    """``e sqrt(R / R_gcs)`` at this pose: jaxbody's Hertz factor over GeneralContactSubsystem's."""
    g = GOLDEN
    R_GH = euler_xyz(g["half_space"]["orientation"])
    R_GE = np.asarray(case["R_GB"][0]) @ euler_xyz(g["ellipsoid"]["orientation"])
    R_HE = R_GH.T @ R_GE
    ri2 = 1 / np.asarray(g["ellipsoid"]["radii"]) ** 2
    v1, v2 = R_HE.T @ [0, 1, 0], R_HE.T @ [0, 0, 1]
    dxx, dyy, dxy = np.sum(v1 * v1 * ri2), np.sum(v2 * v2 * ri2), np.sum(v1 * v2 * ri2)
    eig = np.roots([1, -dxx - dyy, dxx * dyy - dxy * dxy]).real
    r_gcs = np.sqrt(1 / np.sqrt(eig[0]) * 1 / np.sqrt(eig[1]))
    q, u = golden_q_u(case)
    state = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Velocity)
    element = contact.force._element(model)
    group = element.groups[0]
    from jaxbody._dynamics.contact.trackers.table import PAIR_TABLE  # the tracker alone: its curvatures

    pos = state.position
    R1, p1 = pos.R_GB[0] @ element.R_BS[0], pos.p_GB[0] + pos.R_GB[0] @ element.p_BS[0]
    R2, p2 = pos.R_GB[1] @ element.R_BS[1], pos.p_GB[1] + pos.R_GB[1] @ element.p_BS[1]
    c = PAIR_TABLE[group.kinds].track(R1[None], p1[None], element.shapes[0], R2[None], p2[None], element.shapes[1])
    kmax, kmin = float(c.curvatures[0, 0, 0]), float(c.curvatures[0, 0, 1])
    return float(eccentricity_correction(kmax, kmin)) * np.sqrt(2 / (kmax + kmin) / r_gcs)


@pytest.mark.parametrize("pair", PAIRS)
@pytest.mark.parametrize("index", range(6))
def test_compliant_contact_matches_opensim(models, pair, index):
    case = GOLDEN[pair][index]
    model, contact = models[pair]
    model = with_materials(model, contact, case["material"])
    q, u = golden_q_u(case)
    F, pe = _forces_and_energy(model, q, u)
    expected = np.asarray(case["body_forces"])
    expected_pe = case["potential_energy"]
    if pair == "ellipsoid_half_space" and case["name"] != "separated":
        scale = _gcs_ellipsoid_scale(case, model, contact)
        expected, expected_pe = expected * scale, expected_pe * scale
    size = np.max(np.abs(expected))
    err = np.max(np.abs(np.asarray(F) - expected))
    assert err <= 1e-10 * size + 1e-13, f"{pair} {case['name']}: body forces off by {err:.3e} (scale {size:.3e})"
    pe_err = abs(float(pe) - expected_pe)
    assert pe_err <= 1e-10 * max(abs(expected_pe), 1e-3), f"{pair} {case['name']}: PE off by {pe_err:.3e}"


def test_golden_cases_cover_regimes():
    """Each pair has a no-force (separated), tiny (touching) and large-force case, with and without friction."""
    for pair in PAIRS:
        sizes = [np.max(np.abs(c["body_forces"])) for c in GOLDEN[pair]]
        assert sizes[2] == 0 and 0 < min(sizes[1], sizes[4]) < 0.1 and min(sizes[0], sizes[3], sizes[5]) > 10
        assert {c["material"] for c in GOLDEN[pair]} == {"sliding", "frictionless"}
