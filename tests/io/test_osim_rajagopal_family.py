"""A Rajagopal-family model against OpenSim 4.6 (issue 37): tests/models/osim/rajagopal_family.osim, written by
hand after the structure of Rajagopal2016 (whose file has no licence): a six-coordinate pelvis CustomJoint, a
walker knee (one coordinate; two rotations and two translations are SimmSplines of the knee angle), a
patellofemoral CustomJoint whose coordinate a CoordinateCouplerConstraint ties to the knee angle, a locked mtp
PinJoint and toes with the family's impossible inertia diag(1e-4, 2e-4, 1e-3). Numbers:
tests/io/golden/rajagopal_family.npz from tests/io/generate_rajagopal_family_golden.py.

The knee's velocity terms: Simbody 3.9's MobilizedBody::FunctionBased builds HDot with WDot = [0, w1 x W1,
w12 x W2] where w1 is the angular velocity of the first mobility's u alone (H column 0 times u0; all of
H u when the joint has one mobility) and w12 that of the first two, not the rates of the first one and two
rotation angles. The two agree when rotation i is a function of coordinate i only (pelvis, hips). On the
walker knee all three rotations are functions of the one coordinate, and Simbody's angular bias of the tibia
is off by thetadot2 thetadot3 (W2 x W1): HDot is not the time derivative of H, and OpenSim's udot is not that
of its own kinematics (C(q, u) off the Lagrangian route by up to 3.8e-3 on Rajagopal2016). jaxbody keeps the
exact HDot by default (the model's own Lagrangian dynamics) and load_osim warns, naming the joint
(jaxbody.io.osim_joints); ``load_osim(..., custom_joint_hdot="simbody")`` takes Simbody's formula instead. The
tests show both: jaxbody's velocity forces equal the Lagrangian route's, and with Simbody's formula the same
file reproduces OpenSim's udot to 1e-10, so that formula is the whole difference.
"""

import dataclasses
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from helpers import assert_close
from jaxbody._mobilizers.function_based import FunctionBasedTransform
from test_osim_models import MODELS, TOL, Case

PATH = MODELS / "rajagopal_family.osim"


@pytest.fixture(scope="module")
def case():
    return Case(PATH, "rajagopal_family")


def test_loads_with_warnings_naming_the_toes_and_the_knee(case):
    """Two warnings: the toes' inertia (body and inequality) and the walker knee's velocity terms (the joint)."""
    assert len(case.warnings) == 2, case.warnings
    inertia, knee = sorted(case.warnings, key=lambda w: "inertia" not in w)
    assert "Body 'toes_r'" in inertia and "Ixx + Iyy >= Izz (0.0001 + 0.0002 < 0.001)" in inertia
    assert knee.startswith("CustomJoint 'walker_knee_r'") and "Simbody 3.9's FunctionBased HDot" in knee
    assert [n for n in case.imported.constraints if not n.endswith("/locked")] == ["patellofemoral_knee_angle_r_con"]
    assert case.imported.coordinate_info["mtp_angle_r"].locked


def test_strict_inertia_refuses_naming_the_toes():
    with pytest.raises(jb.InvalidArgument, match=r"toes_r.*triangle"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            jb.io.load_osim(PATH, strict_inertia=True)


def test_positions_and_mass_matrix_match_opensim(case):
    g = case.golden
    out = case.in_opensim_order(g)
    for key in ("M", "R_GB", "p_GB", "qerr", "uerr"):
        assert_close(out[key], g[key], TOL, key)
    q_perturbed, _ = case.to_jaxbody(g["q_perturbed"], g["u"])
    assert_close(case.qerr(q_perturbed), g["qerr_perturbed"], TOL, "QErr off the manifold")


@pytest.mark.long    # ~30 s: M's derivatives compile slowly (tests/io/compare_rajagopal.py checks this by hand)
def test_velocity_forces_equal_the_lagrangian_route(case):
    """C(q, u) = Mdot u - d(u^T M u / 2)/dq (qdot = u for every coordinate) at OpenSim's first state."""
    model, state0 = case.model, case.model.default_state()
    q, u = (x[0] for x in case.to_jaxbody(case.golden["q"][:1], case.golden["u"][:1]))
    zero_forces = jnp.zeros((model.topology.nbodies, 2, 3))

    def mass_matrix(qq):
        return model.calc_m(model.realize(state0.set_q(qq), jb.Stage.Position))

    def residual(uu):  # gravity cancels in the difference with u = 0
        s = model.realize(state0.set_q(q).set_u(uu), jb.Stage.Velocity)
        return model.calc_residual_force_ignoring_constraints(s, jnp.zeros_like(uu), zero_forces, jnp.zeros_like(uu))

    c = jax.jit(lambda: residual(u) - residual(jnp.zeros_like(u)))()
    c_lagrange = jax.jit(lambda: jax.jvp(mass_matrix, (q,), (u,))[1] @ u
                         - jax.grad(lambda qq: 0.5 * u @ mass_matrix(qq) @ u)(q))()
    assert float(jnp.max(jnp.abs(c))) > 0.1
    assert_close(c, c_lagrange, 1e-12, "C(q, u) vs the Lagrangian route")


def test_udot_is_opensims_with_simbodys_function_based_hdot(case):
    """jaxbody's exact udot differs from OpenSim's (the knee's HDot, see the module docstring); with
    ``custom_joint_hdot="simbody"`` the same file reproduces OpenSim's udot to 1e-10, without the knee's warning."""
    g = case.golden
    exact = np.asarray(case.in_opensim_order(g)["udot"])
    assert np.max(np.abs(exact - g["udot"])) > 1e-5, "the knee's velocity terms differ from OpenSim's"
    as_simbody = Case(PATH, "rajagopal_family", custom_joint_hdot="simbody")
    assert [w for w in as_simbody.warnings if "walker_knee_r" in w] == []
    assert_close(as_simbody.in_opensim_order(g)["udot"], g["udot"], TOL, "udot with Simbody's HDot")


def test_custom_joint_hdot_is_checked():
    with pytest.raises(jb.InvalidArgument, match=r"custom_joint_hdot must be one of \('exact', 'simbody'\)"):
        jb.io.load_osim(PATH, custom_joint_hdot="opensim")


def test_the_warning_rule_is_where_the_two_hdots_differ():
    """jaxbody.io.osim_joints' rule (which coordinates drive which rotations) against the two formulas themselves
    on random joints: 1-4 coordinates, each rotation driven by up to two of them (sin of a linear combination)."""
    from jaxbody.io.osim_joints import _warn_coupled_rotation_rates

    rng, outcomes = np.random.default_rng(0), set()
    for _ in range(12):
        n = int(rng.integers(1, 5))
        indices = [tuple(rng.choice(n, size=int(rng.integers(0, min(n, 2) + 1)), replace=False).tolist())
                   for _ in range(3)] + [(), (), ()]
        functions = tuple((lambda w, c: lambda x: jnp.sin(x @ w + c))(jnp.asarray(rng.normal(size=len(i))),
                                                                       rng.normal()) for i in indices)
        axes = tuple(map(tuple, np.linalg.qr(rng.normal(size=(3, 3)))[0].tolist()))
        joint = FunctionBasedTransform(functions, tuple(indices), axes, tuple(map(tuple, np.eye(3).tolist())))
        q, u = jnp.asarray(rng.normal(size=n)), jnp.asarray(rng.normal(size=n))
        simbody = dataclasses.replace(joint, hdot="simbody")
        differs = float(jnp.max(jnp.abs(joint.hinge_dot(q, u, None) - simbody.hinge_dot(q, u, None)))) > 1e-12
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _warn_coupled_rotation_rates(indices, "CustomJoint 'j'")
        assert bool(caught) == differs, (n, indices[:3])
        outcomes.add(differs)
    assert outcomes == {True, False}
