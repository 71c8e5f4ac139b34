"""Muscles imported by load_osim, end to end: gait9dof18musc's 18 Thelen2003Muscles on their imported paths,
at OpenSim's random states (tests/muscles/generate_muscle_golden.py), against OpenSim 4.6 — path length, fiber
length and velocity, forces, state derivatives in ``DynamicsCache.zdot``, and the generalized forces the
tendons apply against OpenSim's tension x moment arm; ``jb.equilibrate_muscles`` against
``Model::equilibrateMuscles`` (--long); all 8 states by one vmap; bad parameters raise naming the muscle.
Gradients and simulation through a model with muscles: tests/muscles/test_muscle_system.py."""

import json
import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close, central_difference
from muscle_golden import GOLDEN

import jaxbody as jb
from jaxbody._dynamics.paths.geometry_path import GeometryPath
from jaxbody.errors import InvalidArgument


@pytest.fixture(scope="module")
def gait():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its contact and coordinate-limit forces are not imported
        imp = jb.io.load_osim(str(GOLDEN.parent.parent / "models" / "osim" / "gait9dof18musc.osim"))
    model = imp.system.realize_topology()
    golden = json.loads((GOLDEN / "gait9dof18musc_muscles.json").read_text())
    muscles = golden["muscles"]
    handles = [imp.forces_by_name[m] for m in muscles]
    base = imp.default_state(model)
    q, u, z, c = [], [], [], []
    for record in golden["states"]:
        s = base
        qs, us = np.array(s.q), np.array(s.u)
        for name, (qv, uv) in record["coordinates"].items():
            qs[imp.q_index(name)], us[imp.u_index(name)] = qv, uv
        zs, cs = np.array(s.z), np.array(s.controls)
        for h, m in zip(handles, muscles):
            g = record["muscles"][m]
            zs[h.z_slice] = [g["activation"], g["fiber_length_state"]]
            cs[h.control_slice] = g["excitation"]
        q.append(qs), u.append(us), z.append(zs), c.append(cs)
    batch = tuple(jnp.asarray(np.stack(x)) for x in (q, u, z, c))

    def golden_field(field):
        return np.array([[r["muscles"][m][field] for m in muscles] for r in golden["states"]])

    return imp, model, handles, base, batch, golden_field, golden


def _state(base, q, u, z, c):
    return base.set_q(q).set_u(u).set_z(z).set_controls(c)


def test_gait9dof18musc_imports_all_muscles(gait):
    imp, model, handles, *_ = gait
    assert len(handles) == 18
    assert not [s for s in imp.skipped if "Muscle" in s]
    assert model.num_controls == 18 and model.control_names[0] == "hamstrings_r"


#: CI checks two muscles end to end (a biarticular one, hamstrings_r, and soleus_r, whose fibers OpenSim clamps
#: at some of these states); ``--long`` checks all 18 and the State's zdot from a Dynamics realize. Tracing and
#: compiling all 18 imported paths three times over (length, speed, tension) takes about a minute here.
CI_MUSCLES = (0, 7)


def _evaluate(gait, which, whole_model: bool):
    """At the 8 states by one jit(vmap): the chosen muscles' info and path length, their zdot, and the generalized
    forces of their tensions (J^T F + f). ``whole_model``: zdot from a Dynamics realize (the muscles carry the
    model's only state variables; its foot contacts and coordinate-limit forces have none)."""
    imp, model, handles, base, batch, *_ = gait
    chosen = [handles[k] for k in which]

    @jax.jit
    @jax.vmap
    def evaluate(q, u, z, c):
        s = model.realize(_state(base, q, u, z, c), jb.Stage.Velocity)
        infos = [h.get_muscle_info(s, model) for h in chosen]
        stacked = {k: jnp.stack([getattr(i, k) for i in infos]) for k in infos[0]._fields}
        stacked["length"] = jnp.stack([h.get_length(s, model) for h in chosen])
        F, f = model.calc_force_contributions_sum(s, tuple(chosen))
        if whole_model:
            zdot = model.realize(s, jb.Stage.Dynamics).dynamics.zdot
        else:
            zdot = jnp.concatenate([h._element(model).calc_z_dot(model, s, s.z[h.z_slice]) for h in chosen])
        return stacked, zdot, model.multiply_by_system_jacobian_transpose(s, F) + f

    return evaluate(*batch), list(which)


@pytest.fixture(scope="module")
def evaluated(gait, request):
    if request.config.getoption("--long"):
        return _evaluate(gait, range(18), True)
    return _evaluate(gait, CI_MUSCLES, False)


@pytest.mark.parametrize("field", ["length", "fiber_length", "fiber_velocity", "pennation_angle", "tendon_length",
                                   "active_fiber_force", "passive_fiber_force", "tendon_force", "activation_dot",
                                   "fiber_length_dot"])
def test_muscles_match_opensim_at_random_states(gait, evaluated, field):
    golden_field = gait[5]
    (info, _, _), which = evaluated
    assert_close(info[field], golden_field(field)[:, which], 1e-9, field, per_entry=True)


def test_state_derivatives(gait, evaluated):
    golden_field = gait[5]
    (_, zdot, _), which = evaluated
    a_dot, l_dot = golden_field("activation_dot")[:, which], golden_field("fiber_length_dot")[:, which]
    expected = np.stack([a_dot, l_dot], 2).reshape(len(a_dot), 2 * len(which))
    assert_close(zdot, expected, 1e-9, "zdot (activation, fiber length per muscle)", per_entry=True)


def test_generalized_forces_match_tension_times_moment_arm(gait, evaluated):
    """The tendons' generalized forces (J^T F + f of the tensions along the imported paths) against OpenSim's
    sum over the muscles of tendon force x computeMomentArm, per coordinate."""
    imp, golden_field = gait[0], gait[5]
    (_, _, generalized), which = evaluated
    tension, moment_arms = golden_field("tendon_force")[:, which], golden_field("moment_arms")[:, which]
    for name in moment_arms[0, 0]:
        expected = np.array([sum(t * ma[name] for t, ma in zip(tension[s], moment_arms[s]))
                             for s in range(len(tension))])
        assert_close(generalized[:, imp.u_index(name)], expected, 1e-9, f"generalized force on {name}",
                     per_entry=True)


@pytest.mark.long
def test_equilibrate_muscles_matches_opensim(gait):
    """jb.equilibrate_muscles on the whole model (about 80 s to compile here; the per-muscle equilibrium against
    OpenSim runs in CI in test_thelen2003.py)."""
    imp, model, handles, base, batch, golden_field, _ = gait
    equilibrate = jax.jit(jax.vmap(lambda q, u, z, c: jb.equilibrate_muscles(model, _state(base, q, u, z, c)).z))
    z = equilibrate(*batch)
    lce = np.stack([z[:, h.z_slice.start + 1] for h in handles], 1)
    assert_close(lce, golden_field("equilibrium_fiber_length"), 1e-8, "equilibrium fiber lengths")


@pytest.mark.parametrize("bad,message", [
    (dict(optimal_fiber_length=0.0), "optimal_fiber_length must be positive"),
    (dict(pennation_angle_at_optimal=np.pi / 2), "pennation_angle_at_optimal must be in [0, pi/2)"),
    (dict(flen=1.0), "flen must be greater than 1"),
    (dict(max_isometric_force=float("nan")), "max_isometric_force must be a finite number"),
])
def test_bad_parameters_raise_naming_the_muscle(bad, message):
    system = jb.MultibodySystem()
    matter, forces = jb.SimbodyMatterSubsystem(system), jb.GeneralForceSubsystem(system)
    mp = jb.MassProperties.from_central_inertia(1.0, [0.0, -0.5, 0.0], jb.Inertia(0.1))
    body = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="arm")
    path = GeometryPath.fixed([0, body.index], np.array([[0.0, 0.3, 0.0], [0.0, -0.2, 0.0]]))
    kw = dict(max_isometric_force=100.0, optimal_fiber_length=0.1, tendon_slack_length=0.2,
              pennation_angle_at_optimal=0.1)
    kw.update(bad)
    with pytest.raises(InvalidArgument, match="muscle 'biceps'.*" + re.escape(message)):
        jb.Force.Thelen2003Muscle(forces, "biceps", path, **kw)
