"""jaxbody's force elements against real Simbody (through OpenSim 4.6): udot and potential energy at sampled
states, with every element on and with gravity plus each element alone (tests/forces/generate_force_golden.py).

OpenSim element -> jaxbody: gravity -> UniformGravity; SpringGeneralizedForce -> MobilityLinearSpring +
MobilityLinearDamper; PointToPointSpring -> TwoPointLinearSpring; BushingForce -> LinearBushing (stiffness and
damping reordered rotational-first). The per-element runs switch elements off with set_force_is_disabled in
one compiled function.

Potential energy: OpenSim's SpringGeneralizedForce reports none, and its BushingForce reports ``q^T K q``, twice
Simbody's LinearBushing energy ``q^T K q / 2`` (the forces agree: -K q is the gradient of the latter; the
energy-power test in test_force_energy.py checks it). So the comparison counts the bushing twice and the
mobility springs not at all.
"""

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close

import jaxbody as jb

GOLDEN = np.load(pathlib.Path(__file__).parent / "golden" / "opensim_forces.npz")
ELEMENTS = ("gravity", "springA", "springB", "p2p", "bushing")


def _frame(location, angles):
    return jb.Transform(jb.Rotation.from_body_fixed_xyz(angles), location)


@pytest.fixture(scope="module")
def rebuilt():
    """(model, element name -> handles, jitted (q, u, enabled) -> (udot, pe))."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    bodies = {"ground": matter.Ground()}
    # Simbody's mobilized-body order in OpenSim's model is A, C, B (the q and u of the golden file).
    for name, kind, parent in (("A", jb.MobilizedBody.Pin, "ground"), ("C", jb.MobilizedBody.Pin, "ground"),
                               ("B", jb.MobilizedBody.Slider, "A")):
        m, com, inertia = GOLDEN[f"body_{name}"][0], GOLDEN[f"body_{name}"][1:4], GOLDEN[f"body_{name}"][4:]
        j = GOLDEN[f"joint_{name}"]
        mass = jb.MassProperties.from_central_inertia(m, com, jb.Inertia(*inertia))
        bodies[name] = kind(bodies[parent], _frame(j[0:3], j[3:6]), jb.Body.Rigid(mass), _frame(j[6:9], j[9:12]), name=name)
    handles = {"gravity": [jb.Force.UniformGravity(forces, matter, GOLDEN["gravity"])]}
    for coord in "AB":
        k, q0, c = GOLDEN[f"spring_{coord}"]
        handles["spring" + coord] = [jb.Force.MobilityLinearSpring(forces, bodies[coord], 0, k, q0),
                                     jb.Force.MobilityLinearDamper(forces, bodies[coord], 0, c)]
    p = GOLDEN["p2p"]
    handles["p2p"] = [jb.Force.TwoPointLinearSpring(forces, bodies["B"], p[0:3], bodies["C"], p[3:6], p[6], p[7])]
    b = GOLDEN["bushing"]  # translational k, rotational k, translational c, rotational c
    handles["bushing"] = [jb.Force.LinearBushing(forces, bodies["A"], None, bodies["C"], None,
                                                 np.r_[b[3:6], b[0:3]], np.r_[b[9:12], b[6:9]])]
    model = system.realize_topology()

    @jax.jit
    def udot_and_pe(q, u, enabled):
        """udot and the potential energy OpenSim reports (see the module docstring)."""
        state = model.default_state().set_q(q).set_u(u).set_force_enabled(enabled)
        state = model.realize(state)
        reported = handles["gravity"] + handles["p2p"] + handles["bushing"] * 2
        return state.acceleration.udot, model.calc_force_potential_energy_sum(state, reported)

    return model, handles, udot_and_pe


@pytest.mark.parametrize("only", ("all",) + ELEMENTS)
def test_udot_and_potential_energy_match_simbody(rebuilt, only):
    model, handles, udot_and_pe = rebuilt
    enabled = np.zeros(len(model.forces), bool)
    for name, hs in handles.items():
        for h in hs:
            enabled[h.index] = only in ("all", name) or name == "gravity"
    for i, (q, u) in enumerate(zip(GOLDEN["q"], GOLDEN["u"])):
        udot, pe = udot_and_pe(jnp.asarray(q), jnp.asarray(u), jnp.asarray(enabled))
        assert_close(udot, GOLDEN[f"udot_{only}"][i], 1e-10, f"udot, {only}, state {i}")
        assert_close(pe, GOLDEN[f"pe_{only}"][i], 1e-10, f"potential energy, {only}, state {i}")
