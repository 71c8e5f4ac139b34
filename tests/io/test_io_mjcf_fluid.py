"""MJCF fluid forces (MuJoCo's inertia-box model; jaxbody.io.mjcf_fluid, Force.InertiaBoxFluid) against MuJoCo 4.0.

Golden numbers: tests/io/golden/mujoco_fluid_*.npz from tests/io/generate_fluid_golden.py on dm_control's fish
(free joint) and 6-link swimmer, and tests/models/fluid.xml (viscosity and wind too; rotated and offset
inertial frames; ball, hinge and slide joints; a massless body). Compared at 13 states per model: the fluid
elements' generalized force vs MuJoCo's qfrc_fluid and, with every element but the actuators on, udot vs
qacc (MuJoCo ran with constraints and actuation disabled), both to 1e-10 in MuJoCo's coordinates. Under
jit(vmap); the force's gradient w.r.t. u and w.r.t. the density leaf against central differences.
"""

import functools
import os
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close

import jaxbody as jb

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
FILES = {"fish": "dm_control/fish.xml", "swimmer6": "dm_control/swimmer6.xml", "fluid": "fluid.xml"}


def coordinate_map(imported, model, qpos, qvel):
    """(q, u, T): ``imported.from_mujoco`` of a batch, and qvel = T u from ``to_mujoco``'s Jacobian."""
    q, u = imported.from_mujoco(qpos, qvel)
    s0 = model.default_state()
    T = jax.vmap(lambda q, u: jax.jacfwd(lambda u: imported.to_mujoco(s0.set_q(q).set_u(u))[1])(u))(q, u)
    return np.asarray(q), np.asarray(u), np.asarray(T)


@functools.cache
def against_mujoco(stem, xml=None):
    """(golden, jaxbody's fluid force and udot in MuJoCo's coordinates, imported, model)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imported = jb.io.load_mjcf(xml or os.path.join(MODELS, FILES[stem]), joint_limits=False, friction="ignore")
    model = imported.system.realize_topology()
    g = dict(np.load(os.path.join(HERE, "golden", f"mujoco_fluid_{stem}.npz")))
    fluid = tuple(h for name, hs in imported.passive_forces.items() if name.startswith("fluid ") for h in hs)
    actuators = imported.actuators

    @jax.jit
    @jax.vmap
    def evaluate(q, u):
        s = model.default_state().set_q(q).set_u(u)
        if actuators is not None:
            s = actuators.set_disabled(s, True)
        s = model.realize(s, jb.Stage.Dynamics)
        udot, _ = model.calc_acceleration_ignoring_constraints(s, s.dynamics.mobility_forces, s.dynamics.body_forces)
        F, f = model.calc_force_contributions_sum(s, fluid)
        return udot, f + model.multiply_by_system_jacobian_transpose(s, F)

    q, u, T = coordinate_map(imported, model, g["qpos"], g["qvel"])
    udot, f = evaluate(q, u)
    return (g, np.einsum("kij,kj->ki", T, udot), np.linalg.solve(np.swapaxes(T, 1, 2), f[..., None])[..., 0],
            imported, model, fluid)


@pytest.mark.parametrize("stem", list(FILES))
def test_fluid_forces_and_accelerations_match_mujoco(stem):
    g, qacc, qfrc_fluid, imported, _, fluid = against_mujoco(stem)
    assert len(fluid) == {"fish": 5, "swimmer6": 6, "fluid": 3}[stem]   # fluid.xml: the massless body gets none
    assert np.min(np.max(np.abs(g["qfrc_fluid"][1:]), axis=1)) > 0.1
    assert_close(qfrc_fluid, g["qfrc_fluid"], 1e-10, f"{stem}: fluid forces vs qfrc_fluid")
    assert_close(qacc, g["qacc"], 1e-10, f"{stem}: udot vs qacc (fluid and passive forces on)")


def test_fluid_gradients_match_central_differences():
    """d(fluid force)/du by jax.jacfwd and d/d(density) of one element's leaf by jax.grad, vs central
    differences, at a random state of fluid.xml (wind and viscosity on)."""
    g, _, _, imported, model, fluid = against_mujoco("fluid")
    q, u, _ = coordinate_map(imported, model, g["qpos"][3:4], g["qvel"][3:4])
    index = fluid[0].get_force_index()

    @jax.jit
    def force(model, u):
        s = model.realize(model.default_state().set_q(q[0]).set_u(u), jb.Stage.Velocity)
        F, f = model.calc_force_contributions_sum(s, fluid)
        return f + model.multiply_by_system_jacobian_transpose(s, F)

    def with_density(rho):
        return eqx.tree_at(lambda m: m.forces[index].density, model, rho)

    J = np.asarray(jax.jacfwd(lambda u: force(model, u))(jnp.asarray(u[0])))
    h = 1e-6
    fd = np.stack([(np.asarray(force(model, u[0] + h * e)) - np.asarray(force(model, u[0] - h * e))) / (2 * h)
                   for e in np.eye(len(u[0]))], axis=1)
    assert_close(J, fd, 1e-6 * np.max(np.abs(J)), "d(fluid force)/du vs central differences")
    rho = model.forces[index].density
    dk = np.asarray(jax.jacfwd(lambda r: force(with_density(r), jnp.asarray(u[0])))(rho))
    fd = (np.asarray(force(with_density(rho + 1e-4), u[0])) - np.asarray(force(with_density(rho - 1e-4), u[0]))) / 2e-4
    assert np.max(np.abs(dk)) > 1e-3
    assert_close(dk, fd, 1e-6 * np.max(np.abs(dk)), "d(fluid force)/d(density) vs central differences")


@pytest.mark.long
def test_broken_fluid_fails_the_comparison():
    """The comparison can fail: fluid.xml with a different wind."""
    with open(os.path.join(MODELS, FILES["fluid"])) as f:
        broken = f.read().replace('wind="0.5 -1.2 0.3"', 'wind="0.5 -1.2 0.4"')
    g, _, qfrc_fluid, *_ = against_mujoco("fluid", broken)
    assert np.max(np.abs(qfrc_fluid - g["qfrc_fluid"])) > 1e-4


def test_ellipsoid_model_is_warned_and_bad_input_refused():
    xml = open(os.path.join(MODELS, FILES["fluid"])).read().replace(
        '<geom type="box" size="0.2 0.1 0.05"', '<geom type="box" size="0.2 0.1 0.05" fluidshape="ellipsoid"')
    with pytest.warns(UserWarning, match=r"ellipsoid fluid model \(fluidshape\).*\['hull'\]"):
        imported = jb.io.load_mjcf(xml)
    assert "fluid hull" not in imported.passive_forces and "fluid fin" in imported.passive_forces
    system = jb.MultibodySystem()
    matter, forces = jb.SimbodyMatterSubsystem(system), jb.GeneralForceSubsystem(system)
    body = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(jb.MassProperties(1.0, [0, 0, 0],
                                                                                                 jb.Inertia(1.0))),
                                jb.Transform(), name="paddle")
    with pytest.raises(jb.errors.InvalidArgument, match="paddle.*viscosity"):
        jb.Force.InertiaBoxFluid(forces, body, [1, 1, 1], [0, 0, 0], np.eye(3), 1.0, -0.1)
    with pytest.raises(jb.errors.InvalidArgument, match="paddle.*rotation"):
        jb.Force.InertiaBoxFluid(forces, body, [1, 1, 1], [0, 0, 0], 2 * np.eye(3), 1.0, 0.1)
