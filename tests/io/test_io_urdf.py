"""load_urdf against Pinocchio on real robots (Panda, UR5, Solo12, the Gepetto human; fixed and floating base).

Reference: tests/io/golden/pinocchio_*.npz from tests/io/generate_urdf_mjcf_golden.py (pin.crba, pin.aba,
pin.rnea, data.oMi at 10 random states). jaxbody's M, forward dynamics (udot, gravity and random tau),
inverse dynamics and the joint frames X_GB equal Pinocchio's to 1e-10 relative after the public coordinate map
``ImportedModel.from_pinocchio`` (jaxbody.io.engine_coordinates; a floating base: q = (quaternion w first, position), u = (w, v) in Ground, vs Pinocchio's
(position, quaternion x,y,z,w) and body-frame (v, w)). The Panda's mimic finger is a CoordinateCoupler;
the comparison is of the tree (constraints ignored), as Pinocchio builds it without mimic.

Armature: the Panda (fixed) and Solo12 (floating) again with Pinocchio's ``model.armature`` on every dof and the
same values set on jaxbody's Model (``jb.replace_parameters(model, armature=...)``, mapped to jaxbody's u order):
M, forward and inverse dynamics to 1e-10 as above.
"""

import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close

import jaxbody as jb

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
CASES = [(f, b) for f in ("panda", "ur5_robot", "solo12", "human") for b in ("fixed", "floating")] + [
    ("panda", "armature_fixed"), ("solo12", "armature_floating")]
FILES = {"panda": "panda.urdf", "ur5_robot": "ur5_robot.urdf", "solo12": "solo12.urdf", "human": "human.urdf"}


def coordinate_map(imported, model, golden):
    """(q_jb, u_jb, T, bias) of the golden states by the public converter ``imported.from_pinocchio``, with T the
    Jacobian of ``to_pinocchio``'s v in u: v_pin = T u_jb and d/dt v_pin = T udot_jb - bias (a free flyer's
    d/dt(R^T v) = R^T a - w x (R^T v), body frame)."""
    q, u = imported.from_pinocchio(golden["q"], golden["v"])
    s0 = model.default_state()
    T = jax.vmap(lambda q, u: jax.jacfwd(lambda u: imported.to_pinocchio(s0.set_q(q).set_u(u))[1])(u))(q, u)
    v_pin, bias = golden["v"], np.zeros_like(golden["v"])
    for e in imported.engine_joints:
        if e.kind == "pinocchio_free":
            d = e.v_adr
            bias[:, d:d + 3] = np.cross(v_pin[:, d + 3:d + 6], v_pin[:, d:d + 3])
    return np.asarray(q), np.asarray(u), np.asarray(T), bias


def armature_in_u_order(imported, golden, nu):
    """Pinocchio's armature (v order) in jaxbody's u order (a free flyer's (linear, angular) -> (w, v))."""
    armature = np.zeros(nu)
    for name, iv in zip(golden["joint_names"], golden["idx_v"]):
        c = imported.coordinates[str(name)]
        ju = c.mobilized_body.get_first_u_index()
        if c.nu == 1:
            armature[ju] = golden["armature"][iv]
        else:
            armature[ju:ju + 3], armature[ju + 3:ju + 6] = golden["armature"][iv + 3:iv + 6], golden["armature"][iv:iv + 3]
    return armature


@pytest.fixture(scope="module", params=CASES, ids=[f"{f}-{b}" for f, b in CASES])
def case(request):
    stem, base = request.param
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imported = jb.io.load_urdf(os.path.join(MODELS, FILES[stem]), floating_base=base.endswith("floating"),
                                   joint_limits=False)   # Pinocchio's aba/rnea have no limits and no damping:
    model = imported.system.realize_topology()
    golden = dict(np.load(os.path.join(HERE, "golden", f"pinocchio_{stem}_{base}.npz")))
    if base.startswith("armature"):
        model = jb.replace_parameters(model, armature=armature_in_u_order(imported, golden, model.topology.nu))
    without_passive = model.default_state()               # the dampers are switched off per State
    for handle in (h for hs in imported.passive_forces.values() for h in hs):
        without_passive = imported.forces.set_force_is_disabled(without_passive, handle, True)
    mobods = [imported.coordinates[str(n)].mobilized_body for n in golden["joint_names"]]
    frames = [imported.frames[str(n)] for n in golden["link_names"]]

    @jax.jit
    @jax.vmap
    def evaluate(q, u, tau, udot_id):
        s = model.realize(without_passive.set_q(q).set_u(u).set_mobility_forces(tau), jb.Stage.Dynamics)
        udot, _ = model.calc_acceleration_ignoring_constraints(s, s.dynamics.mobility_forces, s.dynamics.body_forces)
        residual = model.calc_residual_force_ignoring_constraints(s, jnp.zeros_like(u), s.dynamics.body_forces, udot_id)
        X = [b.get_body_transform(s) for b in mobods] + [f.mobilized_body.get_body_transform(s) * f.X_BF for f in frames]
        return model.calc_m(s), udot, residual, jnp.stack([x.R for x in X]), jnp.stack([x.p for x in X])

    q, u, T, bias = coordinate_map(imported, model, golden)
    tau = np.einsum("kij,ki->kj", T, golden["tau"])                                    # tau_jb = T^T tau_pin
    udot_id = np.linalg.solve(T, (golden["a"] + bias)[..., None])[..., 0]
    M, udot, residual, R, p = evaluate(q, u, tau, udot_id)
    return {"golden": golden, "T": T, "bias": bias, "M": M, "udot": udot, "residual": residual, "R": R, "p": p,
            "imported": imported}


def test_mass_matrix(case):
    g, T = case["golden"], case["T"]
    assert_close(case["M"], np.einsum("kai,kab,kbj->kij", T, g["M"], T), 1e-10, "M = T^T M_pin T")


def test_forward_dynamics(case):
    g, T = case["golden"], case["T"]
    assert np.array_equal(case["imported"].gravity, g["gravity"])   # load_urdf's default is Pinocchio's
    assert_close(np.einsum("kij,kj->ki", T, case["udot"]) - case["bias"], g["ddq"], 1e-10, "udot vs pin.aba")


def test_inverse_dynamics(case):
    g, T = case["golden"], case["T"]
    assert_close(case["residual"], np.einsum("kij,ki->kj", T, g["rnea"]), 1e-10, "residual vs pin.rnea")


def test_joint_and_link_placements(case):
    """Every joint frame (X_GB vs oMi) and every link frame, fused links included (X_GB X_BF vs oMf)."""
    g = case["golden"]
    placements = np.concatenate([g["oMi"], g["oMf"]], axis=1)
    assert_close(case["R"], placements[..., :3, :3], 1e-10, "R_GB vs oMi, oMf")
    assert_close(case["p"], placements[..., :3, 3], 1e-10, "p_GB vs oMi, oMf")
