"""MobilizedBody.FunctionBased against Simbody's (OpenSim CustomJoint): X_GB, V_GB, M and tree forward dynamics.

Data: tests/golden/simbody/function_based*.json, written by tests/golden/generate_function_based_case.py.
"""

import jax
import jax.numpy as jnp

import jaxbody as jb
from golden_cases import RTOL, load_case, transform_from_json
from helpers import assert_close


def _function(spec):
    if spec["type"] == "linear":
        return lambda x: spec["slope"] * x[0] + spec["intercept"]
    if spec["type"] == "sine":
        return lambda x: spec["amplitude"] * jnp.sin(spec["omega"] * x[0] + spec["phase"])
    return lambda x: jnp.asarray(spec["value"], dtype=float)


def build(case):
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, case["gravity"])
    handles = {"ground": matter.Ground()}
    for b in case["bodies"]:
        xx, yy, zz, xy, xz, yz = b["inertia_com"]
        mp = jb.MassProperties.from_central_inertia(b["mass"], b["com"], jb.Inertia(xx, yy, zz, xy, xz, yz))
        axes = b["axes"]
        handles[b["name"]] = jb.MobilizedBody.FunctionBased(
            handles[b["parent"]], transform_from_json(b["X_PF"]), jb.Body.Rigid(mp), transform_from_json(b["X_BM"]), b["n"],
            [_function(a["function"]) for a in axes],
            [[] if a["coordinate"] is None else [a["coordinate"]] for a in axes],
            rotation_axes=[a["axis"] for a in axes[:3]], translation_axes=[a["axis"] for a in axes[3:]],
            name=b["name"],
        )
        assert handles[b["name"]].q_start == b["q_start"]
    return system.realize_topology()


def test_function_based_matches_simbody_custom_joint():
    case, results = load_case("function_based")
    model = build(case)

    @jax.jit
    def evaluate(q, u, tau):
        s = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Velocity)
        udot, A = model.calc_acceleration_ignoring_constraints(s, tau, model.get_gravity_body_forces(s))
        return s.position.R_GB, s.position.p_GB, s.velocity.V_GB, model.calc_m(s), udot, A

    for k, (sample, result) in enumerate(zip(case["samples"], results["samples"])):
        R, p, V, M, udot, A = evaluate(*(jnp.asarray(sample[x]) for x in ("q", "u", "tau")))
        assert_close(R[1:].reshape(-1, 9), [x["R"] for x in result["X_GB"]], RTOL, f"sample {k} R_GB")
        assert_close(p[1:], [x["p"] for x in result["X_GB"]], RTOL, f"sample {k} p_GB")
        assert_close(V[1:].reshape(-1, 6), result["V_GB"], RTOL, f"sample {k} V_GB")
        assert_close(M, result["M"], RTOL, f"sample {k} M")
        assert_close(udot, result["udot_ignoring_constraints"], RTOL, f"sample {k} udot")
        assert_close(A.reshape(-1, 6), result["A_GB_ignoring_constraints"], RTOL, f"sample {k} A_GB")
