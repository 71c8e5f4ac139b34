"""MJCF fluid forces (MuJoCo's inertia-box and ellipsoid models; jaxbody.io.mjcf_fluid, Force.InertiaBoxFluid,
Force.EllipsoidFluid) against MuJoCo 4.0.

Golden numbers: tests/io/golden/mujoco_fluid_*.npz from tests/io/generate_fluid_golden.py on dm_control's fish
(free joint) and 6-link swimmer, tests/models/fluid.xml (viscosity and wind too; rotated and offset
inertial frames; ball, hinge and slide joints; a massless body) and tests/models/fluid_ellipsoid.xml (the
ellipsoid model on every geom type, geoms at the body and inertial frames, custom fluidcoef, a skipped geom, an
inertia-box body among ellipsoid ones). Compared at 13 states per model: the fluid
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
FILES = {"fish": "dm_control/fish.xml", "swimmer6": "dm_control/swimmer6.xml", "fluid": "fluid.xml",
         "ellipsoid": "fluid_ellipsoid.xml"}


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
    # fluid.xml: the massless body gets none; fluid_ellipsoid.xml: one element per ellipsoid geom (the plain
    # sphere on the hull is skipped) and one inertia box (box_body)
    assert len(fluid) == {"fish": 5, "swimmer6": 6, "fluid": 3, "ellipsoid": 7}[stem]
    assert np.min(np.max(np.abs(g["qfrc_fluid"][1:]), axis=1)) > 0.1
    assert_close(qfrc_fluid, g["qfrc_fluid"], 1e-10, f"{stem}: fluid forces vs qfrc_fluid")
    assert_close(qacc, g["qacc"], 1e-10, f"{stem}: udot vs qacc (fluid and passive forces on)")


@pytest.mark.parametrize("stem", ["fluid", "ellipsoid"])
def test_fluid_gradients_match_central_differences(stem):
    """d(fluid force)/du by jax.jacfwd and d/d(density) of one element's leaf by jax.grad, vs central
    differences, at a random state of fluid.xml and fluid_ellipsoid.xml (wind and viscosity on)."""
    g, _, _, imported, model, fluid = against_mujoco(stem)
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


def test_ellipsoid_wrench_derivatives_are_finite_at_rest():
    """The ellipsoid model's norms and square root have gradient-safe branches: finite derivatives at w = v = 0."""
    from jaxbody._dynamics.force_elements.fluid_ellipsoid import ellipsoid_fluid_wrench

    def wrench(x):
        t, f = ellipsoid_fluid_wrench(x[:3], x[3:], jnp.array([0.1, 0.2, 0.05]), jnp.array([1, .5, .25, 1.5, 1, 1.]),
                                      jnp.ones(3), jnp.ones(3), 1000.0, 0.1)
        return jnp.concatenate([t, f])

    J = np.asarray(jax.jacfwd(wrench)(jnp.zeros(6)))
    assert np.all(np.isfinite(J)) and np.all(np.isfinite(np.asarray(jax.jacrev(wrench)(jnp.zeros(6)))))


@pytest.mark.long
def test_broken_fluid_fails_the_comparison():
    """The comparison can fail: fluid.xml with a different wind."""
    with open(os.path.join(MODELS, FILES["fluid"])) as f:
        broken = f.read().replace('wind="0.5 -1.2 0.3"', 'wind="0.5 -1.2 0.4"')
    g, _, qfrc_fluid, *_ = against_mujoco("fluid", broken)
    assert np.max(np.abs(qfrc_fluid - g["qfrc_fluid"])) > 1e-4


def test_ellipsoid_model_selection_and_bad_input_refused():
    """mj_fluid's selection: a body with any ellipsoid geom gets the ellipsoid model on its geoms whose
    interaction coefficient is nonzero, every other body the inertia box; nothing is warned. Bad builder input
    raises, naming the body."""
    xml = open(os.path.join(MODELS, FILES["fluid"])).read().replace(
        '<geom type="box" size="0.2 0.1 0.05"', '<geom type="box" size="0.2 0.1 0.05" fluidshape="ellipsoid"')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        imported = jb.io.load_mjcf(xml)
    kinds = {name: [h.name for h in hs] for name, hs in imported.passive_forces.items() if name.startswith("fluid ")}
    assert kinds["fluid hull"][0].startswith("EllipsoidFluid") and kinds["fluid fin"][0].startswith("InertiaBoxFluid")
    _, _, _, ellipsoid, _, _ = against_mujoco("ellipsoid")
    assert len(ellipsoid.passive_forces["fluid hull"]) == 2 and len(ellipsoid.passive_forces["fluid box_body"]) == 1
    system = jb.MultibodySystem()
    matter, forces = jb.SimbodyMatterSubsystem(system), jb.GeneralForceSubsystem(system)
    body = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(jb.MassProperties(1.0, [0, 0, 0],
                                                                                                 jb.Inertia(1.0))),
                                jb.Transform(), name="paddle")
    with pytest.raises(jb.errors.InvalidArgument, match="paddle.*viscosity"):
        jb.Force.InertiaBoxFluid(forces, body, [1, 1, 1], [0, 0, 0], np.eye(3), 1.0, -0.1)
    with pytest.raises(jb.errors.InvalidArgument, match="paddle.*rotation"):
        jb.Force.InertiaBoxFluid(forces, body, [1, 1, 1], [0, 0, 0], 2 * np.eye(3), 1.0, 0.1)
    ellipsoid_args = ([0, 0, 0], np.eye(3), [0.1, 0.2, 0.3], [1, 1, 1], [1, 1, 1], 1.0, 0.1)
    with pytest.raises(jb.errors.InvalidArgument, match="paddle.*semiaxes"):
        jb.Force.EllipsoidFluid(forces, body, [0, 0, 0], np.eye(3), [0.1, 0.0, 0.3], [1, 1, 1], [1, 1, 1], 1.0, 0.1)
    with pytest.raises(jb.errors.InvalidArgument, match="paddle.*blunt_drag"):
        jb.Force.EllipsoidFluid(forces, body, *ellipsoid_args, blunt_drag=-1.0)
    with pytest.raises(jb.errors.InvalidArgument, match="paddle.*geom_axes"):
        jb.Force.EllipsoidFluid(forces, body, [0, 0, 0], 2 * np.eye(3), *ellipsoid_args[2:])
