"""OpenSim's RigidTendonMuscle, Ligament, PathSpring and PathActuator imported by load_osim, against OpenSim 4.6
(tests/path_forces/generate_path_force_golden.py; tests/models/osim/path_forces.osim): each force's generalized
forces alone, its path length and speed and its tension (and a muscle's fiber length, pennation, fiber forces)
at random states and excitations, to 1e-9, all states in one jit(vmap); derivatives against central
differences along a random direction in (q, u, controls, every force leaf including the spline knots); the
JAX SimmSpline against the host port of OpenSim's and its reverse-mode gradient;
bad input named."""

from __future__ import annotations

import functools
import json
import pathlib
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close

import jaxbody as jb
from jaxbody.errors import InvalidArgument
from jaxbody._dynamics.muscles.simm_spline import SimmSplineCurve
from jaxbody.io import load_osim
from jaxbody.io.opensim_functions import simm_spline

HERE = pathlib.Path(__file__).parent
MODEL_FILE = HERE.parent / "models" / "osim" / "path_forces.osim"
GOLDEN = json.loads((HERE / "golden" / "path_forces.json").read_text())
MUSCLE_INFO = ("fiber_length", "pennation_angle", "active_fiber_force", "passive_fiber_force", "fiber_velocity")


@functools.lru_cache(maxsize=None)
def imported():
    imp = load_osim(MODEL_FILE)
    return imp, imp.system.realize_topology()


def golden_state(imp, model, record):
    state = imp.default_state(model)
    q, u = np.array(state.q), np.array(state.u)
    for name, value in record["q"].items():
        q[imp.q_index(name)] = value
    for name, value in record["u"].items():
        u[imp.u_index(name)] = value
    controls = np.zeros(model.num_controls)
    for name, value in record["controls"].items():
        controls[model.get_control_index(name)] = value
    return state.set_q(q).set_u(u).set_controls(controls)


def outputs(model, handles, state):
    """(per force: f + J^T F (len(handles), nu), path lengths, speeds, tensions, muscle infos) at one State."""
    state = model.realize(state, jb.Stage.Velocity)
    alone = jnp.eye(len(model.forces), dtype=bool)[jnp.array([h.index for h in handles])]

    def one(enabled):
        F, f = model.calc_force_contributions_sum(state.set_force_enabled(enabled), handles)
        return f + model.multiply_by_system_jacobian_transpose(state, F)

    elements = [model.forces[h.index] for h in handles]
    lengths = jnp.stack([e.path.calc_length(model, state) for e in elements])
    speeds = jnp.stack([e.path.calc_lengthening_speed(model, state) for e in elements])
    infos = {h.name: h.get_muscle_info(state, model) for h in handles if hasattr(h, "get_muscle_info")}
    tensions = jnp.stack([infos[h.name].tendon_force if h.name in infos else e.calc_tension(model, state)
                          for h, e in zip(handles, elements)])
    return jax.vmap(one)(alone), lengths, speeds, tensions, infos


@pytest.fixture(scope="module")
def setup():
    imp, model = imported()
    handles = [imp.forces_by_name[n] for n in GOLDEN["forces"]]
    states = [golden_state(imp, model, r) for r in GOLDEN["states"]]
    batch = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)
    return imp, model, handles, states, batch


def test_every_force_is_imported():
    imp, model = imported()
    assert list(imp.forces_by_name) == GOLDEN["forces"] and imp.skipped == []
    assert model.control_names == ("rtm_default", "rtm_pennated", "path_actuator") and imp.default_state(model).z.shape == (0,)


def test_matches_opensim_under_jit_and_vmap(setup):
    imp, model, handles, _, batch = setup
    taus, lengths, speeds, tensions, infos = jax.jit(jax.vmap(lambda s: outputs(model, handles, s)))(batch)
    for k, record in enumerate(GOLDEN["states"]):
        for i, force in enumerate(GOLDEN["forces"]):
            expected = record["forces"][force]
            assert_close([float(taus[k, i, imp.u_index(c)]) for c in expected], list(expected.values()), 1e-9,
                         f"state {k}: {force} generalized forces")
            path = record["paths"][force]
            assert_close(lengths[k, i], path["length"], 1e-12, f"state {k}: {force} length")
            assert_close(speeds[k, i], path["speed"], 1e-12, f"state {k}: {force} speed")
            assert_close(tensions[k, i], path["tension"], 1e-9, f"state {k}: {force} tension")
            for field in MUSCLE_INFO if force in infos else ():
                assert_close(getattr(infos[force], field)[k], path[field], 1e-9, f"state {k}: {force} {field}")


@pytest.mark.long  # 10 s in CI
def test_derivatives_match_central_differences(setup):
    """d (w . generalized forces of all six) along a random direction in (q, u, controls, every force leaf:
    parameters, path points, spline knots and values), forward mode, against central differences."""
    imp, model, handles, states, _ = setup
    state = states[1]
    rng = np.random.default_rng(5)
    weights = jnp.asarray(rng.normal(size=model.get_num_u()))

    def total(x):
        q, u, controls, forces = x
        m = eqx.tree_at(lambda m: m.forces, model, forces)
        s = m.realize(state.set_q(q).set_u(u).set_controls(controls), jb.Stage.Velocity)
        F, f = m.calc_force_contributions_sum(s, handles)
        return jnp.dot(weights, f + m.multiply_by_system_jacobian_transpose(s, F))

    x = (state.q, state.u, state.controls, model.forces)
    direction = jax.tree_util.tree_map(lambda a: jnp.asarray(rng.normal(size=jnp.shape(a))), x)
    jvp = jax.jit(lambda x: jax.jvp(total, (x,), (direction,)))  # one compilation: tangent and FD values
    shifted = [jvp(jax.tree_util.tree_map(lambda a, d, k=k: a + k * 1e-6 * d, x, direction))[0] for k in (1, -1)]
    fd = (shifted[0] - shifted[1]) / 2e-6
    assert abs(fd) > 1.0
    assert_close(jvp(x)[1], fd, 1e-6 * abs(fd), "directional derivative")


def test_spline_curve_matches_host_twin_and_its_gradient_central_differences():
    """SimmSplineCurve (coefficients from its leaves in JAX) against the host float64 port of OpenSim's
    SimmSpline::calcCoefficients, in and outside the knots, for 2, 3, 4 and 42 knots; jax.grad in (t, x, y) against
    central differences."""
    rng = np.random.default_rng(7)
    for n in (2, 3, 4, 42):
        x, y = np.sort(rng.uniform(-2, 2, n)), rng.normal(size=n)
        host = simm_spline(x, y)
        curve = SimmSplineCurve(jnp.asarray(x), jnp.asarray(y))
        t = np.linspace(-3, 3, 61)
        assert_close(jax.vmap(curve)(jnp.asarray(t)), jax.vmap(lambda v: host(v[None]))(jnp.asarray(t)), 1e-12,
                     f"n={n}")
    f = jax.jit(lambda p: p[0](p[1]))
    point = (curve, jnp.asarray(0.37))
    grad = jax.grad(lambda p: f(p))(point)
    direction = jax.tree_util.tree_map(lambda a: jnp.asarray(rng.normal(size=jnp.shape(a))) * 1e-2, point)
    shifted = [f(jax.tree_util.tree_map(lambda a, d, k=k: a + k * 1e-6 * d, point, direction)) for k in (1, -1)]
    reverse = sum(jnp.vdot(g, d) for g, d in zip(jax.tree_util.tree_leaves(grad), jax.tree_util.tree_leaves(direction)))
    assert_close(reverse, (shifted[0] - shifted[1]) / 2e-6, 1e-7, "reverse-mode derivative in (knots, values, t)")


def _with(text: str, tmp_path, old: str, new: str):
    assert old in text
    path = tmp_path / "edited.osim"
    path.write_text(text.replace(old, new, 1))
    return path


def test_bad_input_is_named(tmp_path):
    text = MODEL_FILE.read_text()
    with pytest.raises(InvalidArgument, match=r"lig_default.*resting_length"):
        load_osim(_with(text, tmp_path, "<resting_length>0.35999999999999999</resting_length>",
                        "<resting_length>0</resting_length>"))
    with pytest.raises(InvalidArgument, match=r"rtm_pennated.*force_velocity_curve x must be strictly increasing"):
        load_osim(_with(text, tmp_path, "<x> -1 -0.5 0 0.5 1</x>", "<x> -1 0.5 0 0.5 1</x>"))
    edited = _with(text, tmp_path, '<SimmSpline name="force_length_curve">', '<Constant name="force_length_curve">')
    edited.write_text(edited.read_text().replace("</y>\n\t\t\t\t\t</SimmSpline>\n\t\t\t\t</Ligament>",
                                                 "</y>\n\t\t\t\t\t</Constant>\n\t\t\t\t</Ligament>"))
    with pytest.warns(UserWarning, match=r"Ligament lig_custom \(force_length_curve <Constant>"):
        load_osim(edited)
    forces = jb.GeneralForceSubsystem(jb.MultibodySystem())
    with pytest.raises(InvalidArgument, match="Ligament 'x': path must be a jaxbody path"):
        jb.Force.Ligament(forces, "x", None, 0.1, 10.0)


def test_function_based_path_without_coordinates_raises(tmp_path):
    """An empty FunctionBasedPath (OpenSim refuses it: no coordinate, no length function) raises naming the
    force; FunctionBasedPaths themselves: tests/muscles/test_function_path_import.py."""
    text = MODEL_FILE.read_text()
    start = text.index('<GeometryPath name="path">', text.index('<PathActuator name="path_actuator">'))
    end = text.index("</GeometryPath>", start) + len("</GeometryPath>")
    edited = tmp_path / "function_based.osim"
    edited.write_text(text[:start] + '<FunctionBasedPath name="path"/>' + text[end:])
    with pytest.raises(InvalidArgument, match=r"PathActuator 'path_actuator'.*needs at least one coordinate"):
        load_osim(edited)
