"""FunctionBasedPath forces read by load_osim (OpenSim 4.5+'s ``<FunctionBasedPath>`` with a
MultivariatePolynomialFunction length): a DeGrooteFregly2016Muscle, a Thelen2003Muscle and two PathActuators
(one with OpenSim's moment_arm_functions and lengthening_speed_function) on arm26's skeleton (generate_function_path_golden.py) against OpenSim 4.6 at random states — path length, speed
and moment arms, fiber length and velocity, tendon force, state derivatives and the model's udot — all states
by one jit(vmap); the polynomial's coefficients are Model leaves (gradient against central differences);
malformed paths raise naming the force and line."""

import json
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close
from muscle_golden import GOLDEN

import jaxbody as jb
from jaxbody._dynamics.paths.function_based_path import FunctionBasedPath, MultivariatePolynomial
from jaxbody.errors import InvalidArgument

DATA = json.loads((GOLDEN / "function_paths.json").read_text())
MODEL_FILE = GOLDEN / "function_paths.osim"
FORCES = ("poly_degroote", "poly_thelen", "poly_actuator", "poly_explicit")
MUSCLES = ("poly_degroote", "poly_thelen")


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # arm26's mesh files are not shipped
        return jb.io.load_osim(str(path))


@pytest.fixture(scope="module")
def evaluated():
    imp = _load(MODEL_FILE)
    model = imp.system.realize_topology()
    handles = {n: imp.forces_by_name[n] for n in FORCES}
    base = imp.default_state(model)
    coords = DATA["coordinates"]
    batch = []
    for record in DATA["states"]:
        qs, us, zs, cs = (np.array(a) for a in (base.q, base.u, base.z, base.controls))
        for name in coords:
            qs[imp.q_index(name)], us[imp.u_index(name)] = record["q"][name], record["u"][name]
        for name in MUSCLES:
            zs[handles[name].z_slice] = record["z"][name]
        for name, value in zip(FORCES, record["controls"]):
            cs[handles[name].control_slice] = value
        batch.append((qs, us, zs, cs))
    batch = tuple(jnp.asarray(np.stack(a)) for a in zip(*batch))
    ui = np.array([imp.u_index(c) for c in coords])

    @jax.jit
    @jax.vmap
    def evaluate(q, u, z, c):
        s = model.realize(base.set_q(q).set_u(u).set_z(z).set_controls(c), jb.Stage.Acceleration)
        out = {}
        for name, h in handles.items():
            path = imp.paths[name]
            out[name] = {"length": path.calc_length(model, s), "lengthening_speed": path.calc_lengthening_speed(model, s),
                         "moment_arms": path.calc_moment_arms(model, s)[ui]}
        for name in MUSCLES:
            info = handles[name].get_muscle_info(s, model)
            out[name].update(fiber_length=info.fiber_length, fiber_velocity=info.fiber_velocity,
                             tendon_force=info.tendon_force)
        return out, s.dynamics.zdot, s.acceleration.udot[ui]

    return imp, model, handles, evaluate(*batch)


def _golden(force, field):
    return np.array([r["forces"][force][field] for r in DATA["states"]])


def test_paths_are_function_based(evaluated):
    imp, _, _, _ = evaluated
    assert not [s for s in imp.skipped if "poly" in s]
    for name in FORCES:
        path = imp.paths[name]
        assert isinstance(path, FunctionBasedPath) and isinstance(path.length_function, MultivariatePolynomial)
        assert (path.moment_arm_functions is not None) == (name == "poly_explicit")


@pytest.mark.parametrize("force", FORCES)
def test_path_matches_opensim(evaluated, force):
    out = evaluated[3][0][force]
    for field in ("length", "lengthening_speed"):
        assert_close(out[field], _golden(force, field), 1e-12, f"{force}: {field}", per_entry=True)
    expected = np.array([[r["forces"][force]["moment_arms"][c] for c in DATA["coordinates"]] for r in DATA["states"]])
    assert_close(out["moment_arms"], expected, 1e-12, f"{force}: moment arms", per_entry=True)


@pytest.mark.parametrize("force", MUSCLES)
def test_muscle_matches_opensim(evaluated, force):
    out = evaluated[3][0][force]
    for field in ("fiber_length", "fiber_velocity", "tendon_force"):
        assert_close(out[field], _golden(force, field), 1e-10, f"{force}: {field}", per_entry=True)


def test_state_derivatives_and_accelerations_match_opensim(evaluated):
    imp, model, handles, (_, zdot, udot) = evaluated
    for name in MUSCLES:
        zs = handles[name].z_slice
        expected = np.stack([_golden(name, "activation_dot"), _golden(name, "second_state_dot")], 1)
        assert_close(zdot[:, zs], expected, 1e-10, f"{name}: zdot", per_entry=True)
    expected = np.array([[r["udot"][c] for c in DATA["coordinates"]] for r in DATA["states"]])
    assert_close(udot, expected, 1e-10, "udot", per_entry=True)


def test_coefficients_are_model_leaves_with_exact_gradients(evaluated):
    imp, model, handles, _ = evaluated
    path = imp.paths["poly_thelen"]
    s = model.realize(imp.default_state(model), jb.Stage.Position)

    def length(c):
        return FunctionBasedPath(MultivariatePolynomial(c, path.length_function.exponents), path.coordinates).calc_length(model, s)

    c = path.length_function.coefficients
    g = jax.jit(jax.grad(length))(c)
    h = 1e-6
    fd = np.array([(length(c.at[k].add(h)) - length(c.at[k].add(-h))) / (2 * h) for k in range(c.size)])
    assert_close(g, fd, 1e-9, "d length / d coefficients")


def _edited(tmp_path, old, new):
    text = MODEL_FILE.read_text()
    assert old in text
    path = tmp_path / "edited.osim"
    path.write_text(text.replace(old, new, 1))
    return path


def test_malformed_function_paths_raise_naming_the_force(tmp_path):
    with pytest.raises(InvalidArgument, match=r"poly_degroote.*names no coordinate"):
        _load(_edited(tmp_path, "/jointset/r_elbow/r_elbow_flex", "/jointset/r_elbow/nope"))
    with pytest.raises(InvalidArgument, match=r"poly_degroote.*dimension \(3\) must equal"):
        _load(_edited(tmp_path, "<dimension>2</dimension>", "<dimension>3</dimension>"))
    with pytest.raises(InvalidArgument, match=r"line \d+.*poly_degroote.*needs 6 coefficients, got \(10,\)"):
        _load(_edited(tmp_path, "<order>3</order>", "<order>2</order>"))


def test_moment_arm_functions_must_match_the_coordinates(tmp_path):
    text = MODEL_FILE.read_text()
    start = text.index("<moment_arm_functions>")
    first = text.index("</MultivariatePolynomialFunction>", start) + len("</MultivariatePolynomialFunction>")
    end = text.index("</moment_arm_functions>", start)
    edited = tmp_path / "one_arm.osim"
    edited.write_text(text[:first] + text[end:])
    with pytest.raises(InvalidArgument, match=r"line \d+.*poly_explicit.*one function per coordinate \(2\), got 1"):
        _load(edited)


def test_other_length_functions_are_static_callables(tmp_path):
    """A length function other than a MultivariatePolynomialFunction (here OpenSim's LinearFunction of the two
    coordinates) is read through jaxbody.io.opensim_functions: length a.q + b, moment arms -a, under jit."""
    text = MODEL_FILE.read_text()
    start = text.index("<MultivariatePolynomialFunction>", text.index('<PathActuator name="poly_actuator">'))
    end = text.index("</MultivariatePolynomialFunction>", start) + len("</MultivariatePolynomialFunction>")
    edited = tmp_path / "linear.osim"
    edited.write_text(text[:start] + "<LinearFunction><coefficients>0.02 -0.03 0.25</coefficients></LinearFunction>"
                      + text[end:])
    imp = _load(edited)
    model = imp.system.realize_topology()
    path = imp.paths["poly_actuator"]
    assert not isinstance(path.length_function, MultivariatePolynomial)
    qi = [imp.q_index(c) for c in DATA["coordinates"]]
    ui = np.array([imp.u_index(c) for c in DATA["coordinates"]])

    @jax.jit
    def numbers(q):
        s = model.realize(imp.default_state(model).set_q(q), jb.Stage.Position)
        return path.calc_length(model, s), path.calc_moment_arms(model, s)[ui]

    q = jnp.zeros(model.topology.nq).at[jnp.asarray(qi)].set(jnp.array([0.4, 1.1]))
    length, arms = numbers(q)
    assert_close(length, 0.02 * 0.4 - 0.03 * 1.1 + 0.25, 1e-15, "linear length")
    assert_close(arms, [-0.02, 0.03], 1e-15, "linear moment arms")
